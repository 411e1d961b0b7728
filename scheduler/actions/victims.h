// The eviction planner shared by preempt and reclaim: make room for one pending task by
// evicting the fewest, least important running tasks the plugins allow.
//
// For every node the task could use if resources were free (predicates that eviction cannot
// fix — selectors, taints — rule a node out), the planner asks the Preemptable (or
// Reclaimable) tier rules which of the node's tasks may go, orders them least important first
// (lower job priority, lower task priority, bigger request first so fewer go), and takes the
// shortest prefix that frees enough. The node needing the fewest victims wins. Running gangs
// only give up tasks above their minimum; if no node works that way, the planner evicts one
// whole lower-priority gang (the smallest that frees enough on some node) rather than
// breaking any gang in half. The task is then pipelined onto the node: it will be bound once
// the victims are gone.
#pragma once

#include <string>
#include <vector>

#include "scheduler/framework/session.h"

namespace tephra::scheduler {

struct VictimScope {
  enum class Kind { kSameQueue, kOtherQueues, kSameJob };
  Kind kind = Kind::kSameQueue;
  bool reclaim = false;  // ask Reclaimable (and require reclaimable queues) instead of Preemptable
};

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
  bool Eligible(const TaskInfo& preemptor, size_t preemptor_job, const TaskInfo& victim,
                size_t victim_job) const;
  bool WholeGang(Statement& stmt, size_t job, const std::string& uid, const std::string& reason,
                 const std::vector<size_t>& nodes);

  Session& session_;
  VictimScope scope_;
};

}  // namespace tephra::scheduler
