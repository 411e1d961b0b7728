// The eviction planner shared by preempt and reclaim: make room for one pending task by
// evicting the fewest, least important running tasks the plugins allow.
//
// For every node the task could use if resources were free (predicates that eviction cannot
// fix — selectors, taints — rule a node out), the planner asks the Preemptable (or
// Reclaimable) tier rules which of the node's tasks may go, orders them least important first
// (lower job priority, lower task priority, bigger request first so fewer go, then the job
// JobOrder puts last), and takes the shortest prefix that frees enough. The node needing the
// fewest victims wins. Running gangs only give up tasks above their minimum; if no node works
// that way, the planner evicts one whole lower-priority gang (the smallest that frees enough on
// some node) rather than breaking any gang in half. The task is then pipelined onto the node:
// it will be bound once the victims are gone.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "scheduler/framework/session.h"

namespace tephra::scheduler {

struct VictimScope {
  enum class Kind { kSameQueue, kOtherQueues, kSameJob };
  Kind kind = Kind::kSameQueue;
  bool reclaim = false;  // ask Reclaimable (and require reclaimable queues) instead of Preemptable
};

// The pending, ungated tasks of job `j` in the order they ask for room: TaskOrder first; among
// tasks the plugins rank equal, bigger requests first — placing big tasks before small ones
// finds room for a whole gang far more often (first-fit decreasing) than creation order.
std::vector<std::string> TasksNeedingRoom(const Session& ssn, size_t j);

// A stand-in task for a job that has no pods yet (a Pending PodGroup): it requests the job's
// minResources at the job's priority, so the Preemptive/Preemptable/Reclaimable rules can be
// asked on the job's behalf before it is admitted.
TaskInfo AdmissionProxy(const JobInfo& job);

class VictimPlanner {
 public:
  VictimPlanner(Session& session, VictimScope scope) : session_(session), scope_(scope) {}

  // Tries to make room for task `uid` of job `job` in `stmt`: evictions plus a Pipeline.
  // On failure nothing is added to `stmt` and `why` says what was tried.
  bool MakeRoom(Statement& stmt, size_t job, const std::string& uid, const std::string& reason,
                FitErrors* why);
  // Looks only at nodes with (*member)[node] set (null: every node) until told otherwise.
  void Restrict(const std::vector<bool>* member) { member_ = member; }

 private:
  struct Victim {
    size_t job;
    std::string uid;
    int32_t job_priority;
    int32_t priority;
    int64_t size;  // milli-cpu + memory in MiB: a rough "how much does this free"
  };
  // Victims on `node` the plugins allow for the preemptor, least important first.
  std::vector<Victim> Candidates(const TaskInfo& preemptor, size_t preemptor_job, size_t node);
  // The fewest victims on `node` that free enough for the task (none: it cannot be done there).
  struct Plan {
    size_t node = 0;
    std::vector<Victim> victims;
    int32_t top_priority = 0;  // the highest job priority among the victims
    bool tried = false;
    size_t count() const { return victims.size(); }
  };
  std::optional<Plan> PlanOn(const TaskInfo& task, size_t job, size_t node);
  bool Eligible(const TaskInfo& preemptor, size_t preemptor_job, const TaskInfo& victim,
                size_t victim_job) const;
  bool WholeGang(Statement& stmt, size_t job, const std::string& uid, const std::string& reason,
                 const std::vector<size_t>& nodes);
  // What one node offers a pending task before the plugins speak: whether it fits there now,
  // and otherwise the fewest eligible victims that could free enough (a lower bound on any
  // plan there: plugins only remove victims, and a gang's slack only shrinks as the session
  // evicts) and the lowest priority among them.
  struct NodeScan {
    uint64_t version = 0;
    bool valid = false;
    Fit fit;
    bool room = false;    // fits in the node's future idle resources: no victim needed
    bool enough = false;  // evicting every eligible task would free enough
    size_t lower_bound = 0;
    int32_t min_priority = 0;
    // Per other job with eligible tasks here: what evicting all of them here frees.
    std::vector<std::pair<size_t, api::Resources>> whole_gangs;
  };
  // Scans are kept per node for consecutive calls with the same job and pod spec and redone
  // only for nodes that changed since — a 100-pod gang costs one pass over the cluster, not
  // a hundred. Specs with inter-pod terms are rescanned every time: their fit on one node
  // depends on pods elsewhere.
  const NodeScan& Scan(const TaskInfo& task, size_t job, size_t node);
  // The session's index of the job a pod on a node belongs to (none for pods not in our jobs),
  // remembered per pod: the planner asks for every pod of every node, for every pending task.
  std::optional<size_t> JobOf(const NodeTask& nt);

  Session& session_;
  VictimScope scope_;
  std::unordered_map<const PodInfo*, std::optional<size_t>> job_of_;
  size_t scan_job_ = 0;
  const SchedulingSpec* scan_spec_ = nullptr;
  std::vector<NodeScan> scans_;
  const std::vector<bool>* member_ = nullptr;
};

// Runs `attempt` (fill a statement; commit it and return true if the job is then pipelined)
// with `planner` over every node; or, for a job with a network topology under the
// network-topology-aware plugin, once per candidate HyperNode, tier by tier, with the planner
// restricted to it, until an attempt succeeds: victims come from inside the HyperNode the job
// will use, never across it (docs/scheduler.md, "Network topology").
bool WithinTopology(Session& ssn, VictimPlanner& planner, size_t job,
                    const std::function<bool()>& attempt);

// Makes room for job `job`'s tasks (TasksNeedingRoom, while it starves; skipping preemptionPolicy
// Never and tasks `may_ask` refuses) with `planner`, WithinTopology; commits once the job is
// pipelined, else discards. Returns the evictions committed.
size_t EvictForJob(Session& ssn, VictimPlanner& planner, size_t job, const std::string& reason,
                   const std::function<bool(const TaskInfo&)>& may_ask);

}  // namespace tephra::scheduler
