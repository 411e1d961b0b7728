// enqueue: admit PodGroups (Pending → Inqueue) while their queue and the cluster have room,
// so the controller starts creating their pods. Queues by QueueOrder, jobs by JobOrder; a job
// without minResources is always admitted; otherwise every JobEnqueueable plugin (proportion,
// overcommit, ...) must agree. Admission is by aggregate resources, not placement.
#include <unordered_map>

#include "scheduler/actions/actions.h"

namespace tephra::scheduler {
namespace {

class EnqueueAction : public Action {
 public:
  std::string_view name() const override { return "enqueue"; }

  void Execute(Session& ssn) override {
    std::vector<std::string> queue_names;
    std::unordered_map<std::string, size_t> slot;
    std::vector<IndexHeap> heaps;
    auto job_first = [&ssn](size_t a, size_t b) { return ssn.JobOrder(ssn.job(a), ssn.job(b)); };
    for (size_t j = 0; j < ssn.job_count(); ++j) {
      const JobInfo& job = ssn.job(j);
      if (!job.IsPending() || ssn.queue(job.queue) == nullptr) continue;
      auto [it, inserted] = slot.try_emplace(job.queue, heaps.size());
      if (inserted) {
        queue_names.push_back(job.queue);
        heaps.emplace_back(job_first);
      }
      heaps[it->second].Push(j);
    }
    IndexHeap queues([&](size_t a, size_t b) {
      return ssn.QueueOrder(*ssn.queue(queue_names[a]), *ssn.queue(queue_names[b]));
    });
    for (size_t q = 0; q < queue_names.size(); ++q) queues.Push(q);
    while (!queues.empty()) {
      size_t q = queues.Pop();
      size_t j = heaps[q].Pop();
      const JobInfo& job = ssn.job(j);
      if (!job.min_resources || ssn.JobEnqueueable(job)) {
        ssn.JobEnqueued(job);
        ssn.SetJobPhase(j, "Inqueue");
      } else {
        ssn.SetJobCondition(j, {"Unschedulable", "True", "NotEnoughResources",
                                "not admitted: minResources (" +
                                    WithoutPods(*job.min_resources).ToString() + ") exceed what queue " +
                                    job.queue + " or the cluster has left"});
      }
      if (!heaps[q].empty()) queues.Push(q);
    }
  }
};

}  // namespace

std::unique_ptr<Action> NewEnqueueAction(const Arguments&) {
  return std::make_unique<EnqueueAction>();
}

}  // namespace tephra::scheduler
