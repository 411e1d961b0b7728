// The PodScheduled condition of pods a session left pending: the piece of ComputeOutcome
// (outcome.h) for pods.
#include "scheduler/framework/outcome.h"

namespace tephra::scheduler {

void AppendPodConditionUpdates(const Session& ssn, size_t j, std::vector<PodConditionUpdate>* out) {
  // Pods left pending for a reason: PodScheduled=False with that reason, when it changed.
  // Pods the session did not try (the gang was already lost) carry the gang's reason.
  const JobInfo& job = ssn.job(j);
  const auto* errors = ssn.JobFitErrors(j);
  const auto& cond = ssn.JobCondition(j);
  bool gang_blocked = cond && cond->type == "Unschedulable";
  if (errors == nullptr && !gang_blocked) return;
  for (const auto& [uid, task] : job.tasks) {
    bool pipelined = task.status == TaskStatus::kPipelined;
    if (task.status != TaskStatus::kPending && !pipelined) continue;
    // A gated pod's PodScheduled condition is the API server's (SchedulingGated).
    if (!task.pod->spec->scheduling_gates.empty()) continue;
    std::string message;
    if (errors != nullptr) {
      auto e = errors->find(task.uid());
      if (e != errors->end()) message = e->second.ToString();
    }
    if (message.empty() && pipelined) {
      message = "waiting on node " + task.node + " for resources being released";
    }
    if (message.empty()) {
      if (!gang_blocked) continue;
      message = cond->message;
    }
    ScheduledCondition want{"False", "Unschedulable", std::move(message)};
    std::string nominated = pipelined ? task.node : "";
    const auto& have = task.pod->scheduled;
    bool same_node = nominated.empty() || nominated == task.pod->nominated_node;
    if (have && have->status == want.status && have->reason == want.reason &&
        have->message == want.message && same_node) {
      continue;
    }
    out->push_back(
        {job.namespace_, task.name(), task.uid(), std::move(want), std::move(nominated)});
  }
}

}  // namespace tephra::scheduler
