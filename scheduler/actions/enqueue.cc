// enqueue: admit PodGroups (Pending → Inqueue) while their queue and the cluster have room,
// so the controller starts creating their pods. Queues by QueueOrder, jobs by JobOrder; a job
// without minResources is always admitted; otherwise every JobEnqueueable plugin (proportion,
// overcommit, ...) must agree. Admission is by aggregate resources, not placement.
//
// With the preempt action configured, a job refused for lack of room is asked again with the
// resources of lower-priority, preemptable tasks of its own queue counted as free (as far as
// the Preemptable rules allow taking them). Admitted, it gets its pods and preempt makes the
// real, placement-aware choice — so a high-priority gang is never stuck behind the very jobs
// it may preempt (Volcano admits only into idle room, so preemption never starts).
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "base/time.h"
#include "scheduler/actions/actions.h"
#include "scheduler/actions/victims.h"

namespace tephra::scheduler {
namespace {

class EnqueueAction : public Action {
 public:
  std::string_view name() const override { return "enqueue"; }

  void Execute(Session& ssn) override {
    const auto& actions = ssn.conf().actions;
    const bool preempts = std::find(actions.begin(), actions.end(), "preempt") != actions.end();
    std::unordered_set<std::string> promised;   // victims already counted for an admitted job
    std::vector<const QueueInfo*> queue_infos;  // by slot, looked up once
    std::unordered_map<std::string, size_t> slot;
    std::vector<IndexHeap> heaps;
    auto job_first = [&ssn](size_t a, size_t b) { return ssn.JobOrder(ssn.job(a), ssn.job(b)); };
    std::vector<bool> timed_out = ReleaseTimedOut(ssn);
    for (size_t j = 0; j < ssn.job_count(); ++j) {
      const JobInfo& job = ssn.job(j);
      if (!job.IsPending()) continue;
      const QueueInfo* queue = ssn.queue(job.queue);
      if (queue == nullptr || timed_out[j] || BackingOff(ssn, job)) continue;
      auto [it, inserted] = slot.try_emplace(job.queue, heaps.size());
      if (inserted) {
        queue_infos.push_back(queue);
        heaps.emplace_back(job_first);
      }
      heaps[it->second].Push(j);
    }
    IndexHeap queues(
        [&](size_t a, size_t b) { return ssn.QueueOrder(*queue_infos[a], *queue_infos[b]); });
    for (size_t q = 0; q < queue_infos.size(); ++q) queues.Push(q);
    while (!queues.empty()) {
      size_t q = queues.Pop();
      size_t j = heaps[q].Pop();
      const JobInfo& job = ssn.job(j);
      const std::vector<JobNote>* noted = ssn.JobNotes(j);
      const size_t notes_before = noted != nullptr ? noted->size() : 0;
      if (!job.min_resources || ssn.JobEnqueueable(job) ||
          (preempts && AdmitByPreemption(ssn, j, promised))) {
        ssn.ClearJobNotes(j);  // a first refusal the preemption credit overturned
        ssn.JobEnqueued(job);
        ssn.SetJobPhase(j, api::PodGroupPhase::kInqueue);
      } else {
        // The plugin that refused says why (a quota, the queue's capability, ...) in the first
        // note of its vote; notes from before (a deadline, ...) are not reasons.
        const std::vector<JobNote>* notes = ssn.JobNotes(j);
        std::string why = notes != nullptr && notes->size() > notes_before
                              ? (*notes)[notes_before].message
                              : "minResources (" + WithoutPods(*job.min_resources).ToString() +
                                    ") exceed what queue " + job.queue + " or the cluster has left";
        ssn.SetJobCondition(
            j, {"Unschedulable", "True", "NotEnoughResources", "not admitted: " + why});
      }
      if (!heaps[q].empty()) queues.Push(q);
    }
  }

 private:
  // Admitted gangs that went unplaced for their schedule timeout, never having started, give
  // their admission back (Pending again, with an Unschedulable condition of reason
  // ScheduleTimeout); returns which jobs did.
  static std::vector<bool> ReleaseTimedOut(Session& ssn) {
    std::vector<bool> released(ssn.job_count(), false);
    const base::Time now = ssn.Now();
    for (size_t j = 0; j < ssn.job_count(); ++j) {
      const JobInfo& job = ssn.job(j);
      if (job.phase != api::PodGroupPhase::kInqueue || !job.schedule_timeout ||
          !job.admitted_since || now - *job.admitted_since < *job.schedule_timeout ||
          EverPlaced(job)) {
        continue;
      }
      // Why it did not fit, from the gang's last condition (never an earlier timeout's, which
      // would nest one more message per release).
      std::string why;
      if (job.pod_group != nullptr) {
        for (const auto& c : job.pod_group->status.conditions) {
          if (c.type == "Unschedulable" && c.status == "True" && !c.message.empty() &&
              c.reason != kScheduleTimeoutReason)
            why = " (" + c.message + ")";
        }
      }
      const std::chrono::nanoseconds backoff = job.schedule_backoff.value_or(*job.schedule_timeout);
      std::string message = "not placed within " + base::FormatDuration(*job.schedule_timeout) +
                            " of admission" + why + ": admission given back, next try in " +
                            base::FormatDuration(backoff);
      ssn.SetJobPhase(j, api::PodGroupPhase::kPending);
      ssn.AddJobNote(j, {"enqueue", message, ""});
      ssn.SetJobCondition(j, {"Unschedulable", "True", kScheduleTimeoutReason, std::move(message)});
      released[j] = true;
    }
    return released;
  }

  // Whether any task of the job got a node (placed, running or finished).
  static bool EverPlaced(const JobInfo& job) {
    for (TaskStatus s :
         {TaskStatus::kAllocated, TaskStatus::kBinding, TaskStatus::kBound, TaskStatus::kRunning,
          TaskStatus::kReleasing, TaskStatus::kSucceeded, TaskStatus::kFailed}) {
      if (job.Count(s) > 0) return true;
    }
    return false;
  }

  // A job released for its schedule timeout waits out its back-off (default: the timeout).
  static bool BackingOff(const Session& ssn, const JobInfo& job) {
    if (!job.timed_out_at || !job.schedule_timeout) return false;
    return ssn.Now() < *job.timed_out_at + job.schedule_backoff.value_or(*job.schedule_timeout);
  }

  // Asks again with the job's preemption credit; on success the victims counted are promised
  // to this job so that no second job counts them too.
  static bool AdmitByPreemption(Session& ssn, size_t j, std::unordered_set<std::string>& promised) {
    const JobInfo& job = ssn.job(j);
    std::vector<const TaskInfo*> candidates;
    for (size_t v = 0; v < ssn.job_count(); ++v) {
      const JobInfo& victim = ssn.job(v);
      if (v == j || victim.queue != job.queue || victim.priority >= job.priority) continue;
      for (const auto& [uid, t] : victim.tasks) {
        if (t.Evictable() && t.pod->preemptable && promised.count(t.uid()) == 0)
          candidates.push_back(&t);
      }
    }
    if (candidates.empty()) return false;
    TaskInfo proxy = AdmissionProxy(job);
    std::vector<const TaskInfo*> allowed = ssn.Preemptable(proxy, candidates);
    if (allowed.empty()) return false;
    api::Resources credit;
    for (const TaskInfo* t : allowed) credit.Add(t->request());
    if (!ssn.JobEnqueueable(job, credit)) return false;
    for (const TaskInfo* t : allowed) promised.insert(t->uid());
    return true;
  }
};

}  // namespace

std::unique_ptr<Action> NewEnqueueAction(const Arguments&) {
  return std::make_unique<EnqueueAction>();
}

}  // namespace tephra::scheduler
