#include "scheduler/framework/outcome.h"

#include "api/labels.h"

namespace tephra::scheduler {

api::PodGroup WrittenPodGroup(const api::PodGroup& pg, const PodGroupUpdate& update) {
  api::PodGroup out = pg;
  out.status = update.status;
  if (!update.allocated_hypernode.empty()) {
    out.metadata.annotations[std::string(api::kJobAllocatedHyperNodeAnnotation)] =
        update.allocated_hypernode;
  }
  return out;
}

SessionOutcome ComputeOutcome(const Session& ssn) {
  SessionOutcome out;
  // Whole seconds, as the API server keeps them: the written status then equals its echo.
  const base::Time now = std::chrono::floor<std::chrono::seconds>(ssn.Now());
  std::map<std::string, api::Resources> queue_allocated;  // pods included until the end
  // Jobs of one queue tend to be adjacent: the last queue's sum saves a map lookup per job.
  const std::string* last_queue = nullptr;
  api::Resources* last_sum = nullptr;
  for (size_t j = 0; j < ssn.job_count(); ++j) {
    const JobInfo& job = ssn.job(j);
    if (last_queue == nullptr || *last_queue != job.queue) {
      last_queue = &job.queue;
      last_sum = &queue_allocated[job.queue];
    }
    last_sum->Add(job.allocated);
    if (!job.pod_group) continue;
    if (std::optional<PodGroupUpdate> u = PodGroupUpdateAfter(ssn, j, now)) {
      out.pod_groups.push_back(std::move(*u));
    }
    AppendPodConditionUpdates(ssn, j, &out.pods);
  }
  for (auto& [name, used] : queue_allocated) used.Erase(api::kResourcePods);
  const std::map<std::string, api::Resources> rolled =
      RollUpQueueAllocations(queue_allocated, ssn.queues());
  out.queue_warnings = QueueWarningsFor(ssn.queues(), ssn.total_resource());
  out.queues = QueueUpdatesFor(rolled, ssn.queues());
  return out;
}

}  // namespace tephra::scheduler
