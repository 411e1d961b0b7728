// preempt: a starving job (JobStarving) takes resources from lower-priority, preemptable tasks
// of other jobs in its own queue — victims chosen by the Preemptable tier rules and the
// planner in victims.h — and then from lower-priority tasks of its own job. The preemptor's
// tasks are pipelined onto the nodes being freed; its statement is committed (evictions sent)
// only if the whole job becomes pipelined, so no pod is evicted for a gang that still could
// not run. Tasks with preemptionPolicy: Never never preempt. A job with a network topology takes
// its victims inside one HyperNode it may use (WithinTopology).
#include <map>

#include "scheduler/actions/actions.h"
#include "scheduler/actions/victims.h"

namespace tephra::scheduler {
namespace {

class PreemptAction : public Action {
 public:
  std::string_view name() const override { return "preempt"; }
  // Volcano's cache of failed tasks (only allocate keeps one) and its topology-aware preemption
  // with candidate-node limits: Tephra's victim planner visits nodes by a lower bound on their
  // victims instead (docs/scheduler.md, "Choosing victims").
  std::vector<std::string_view> RecognisedArguments() const override {
    return {"predicateErrorCacheEnable",     "enableTopologyAwarePreemption",
            "topologyAwarePreemptWorkerNum", "minCandidateNodesPercentage",
            "minCandidateNodesAbsolute",     "maxCandidateNodesAbsolute"};
  }

  void Execute(Session& ssn) override {
    // Starving, admitted, valid jobs grouped by queue, best first.
    std::map<std::string, std::vector<size_t>> by_queue;
    for (size_t j = 0; j < ssn.job_count(); ++j) {
      const JobInfo& job = ssn.job(j);
      if (job.IsPending() || job.Count(TaskStatus::kPending) == 0) continue;
      if (!ssn.JobValid(job).pass || !ssn.JobStarving(job)) continue;
      by_queue[job.queue].push_back(j);
    }
    VictimPlanner planner(ssn, {VictimScope::Kind::kSameQueue, false});
    for (auto& [queue, jobs] : by_queue) {
      std::sort(jobs.begin(), jobs.end(),
                [&ssn](size_t a, size_t b) { return ssn.JobOrder(ssn.job(a), ssn.job(b)); });
      for (size_t j : jobs) PreemptFor(ssn, planner, j);
    }
    // Within a job: pending tasks may displace lower-priority tasks of the same job.
    VictimPlanner same_job(ssn, {VictimScope::Kind::kSameJob, false});
    for (size_t j = 0; j < ssn.job_count(); ++j) {
      const JobInfo& job = ssn.job(j);
      if (job.IsPending() || job.Count(TaskStatus::kPending) == 0) continue;
      if (job.Count(TaskStatus::kRunning) == 0 || !ssn.JobValid(job).pass) continue;
      for (const auto& uid : TasksNeedingRoom(ssn, j)) {
        const TaskInfo& t = ssn.job(j).tasks.at(uid);
        if (t.pod->spec->preempt_never) continue;
        Statement stmt(ssn);
        if (!same_job.MakeRoom(
                stmt, j, uid, "preempted by a higher-priority task of its own job " + ssn.job(j).id,
                nullptr)) {
          break;
        }
        stmt.Commit();
      }
    }
  }

 private:
  void PreemptFor(Session& ssn, VictimPlanner& planner, size_t j) {
    const std::string preemptor = ssn.job(j).id;
    const std::string reason = "preempted by job " + preemptor + " (priority " +
                               std::to_string(ssn.job(j).priority) + ") in queue " +
                               ssn.job(j).queue;
    size_t victims = EvictForJob(ssn, planner, j, reason, [](const TaskInfo&) { return true; });
    NoteWaiting(ssn, j, victims);
  }

  // The preemptor's condition says what it waits for.
  static void NoteWaiting(Session& ssn, size_t j, size_t victims) {
    if (victims == 0) return;
    for (const auto& [uid, t] : ssn.job(j).tasks) {
      if (t.status != TaskStatus::kPipelined) continue;
      FitErrors e;
      e.other = "waiting for " + std::to_string(victims) + " preempted pod(s) to terminate";
      ssn.RecordFitErrors(j, t.uid(), std::move(e));
    }
  }
};

}  // namespace

std::unique_ptr<Action> NewPreemptAction(const Arguments&) {
  return std::make_unique<PreemptAction>();
}

}  // namespace tephra::scheduler
