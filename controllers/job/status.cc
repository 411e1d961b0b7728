#include "controllers/job/status.h"

#include "api/labels.h"

namespace tephra::controllers::job {

PodCounts CountPods(const std::vector<std::shared_ptr<const api::Pod>>& pods,
                    const std::set<std::string>& deleted_now,
                    const std::vector<std::pair<std::string, std::string>>& created_now) {
  PodCounts c;
  for (const auto& pod : pods) {
    const std::string phase =
        pod->status.phase.empty() ? std::string(api::pod_phase::kPending) : pod->status.phase;
    const std::string task = pod->metadata.Label(api::kTaskSpecKey);
    if (!task.empty()) ++c.per_task[task][phase];
    if (pod->metadata.deletion_timestamp || deleted_now.count(pod->metadata.name) != 0) {
      ++c.terminating;
    } else if (phase == api::pod_phase::kPending) {
      ++c.pending;
    } else if (phase == api::pod_phase::kRunning) {
      ++c.running;
    } else if (phase == api::pod_phase::kSucceeded) {
      ++c.succeeded;
    } else if (phase == api::pod_phase::kFailed) {
      ++c.failed;
    } else {
      ++c.unknown;
    }
  }
  for (const auto& [name, task] : created_now) {
    (void)name;
    ++c.pending;
    ++c.per_task[task][std::string(api::pod_phase::kPending)];
  }
  return c;
}

std::optional<Phase> DecideRunning(const api::Job& job, const PodCounts& counts) {
  const int32_t replicas = job.TotalReplicas();
  if (replicas == 0) return std::nullopt;
  const auto& min_success = job.spec.min_success;
  if (min_success && counts.succeeded >= *min_success) return Phase::kCompleted;
  if (counts.succeeded + counts.failed == replicas) {
    int64_t task_min_sum = 0;
    for (const auto& task : job.spec.tasks) task_min_sum += task.min_available.value_or(0);
    if (job.spec.min_available >= task_min_sum) {
      for (const auto& task : job.spec.tasks) {
        if (!task.min_available) continue;
        auto it = counts.per_task.find(task.name);
        if (it == counts.per_task.end()) continue;
        auto succeeded = it->second.find(std::string(api::pod_phase::kSucceeded));
        int32_t n = succeeded == it->second.end() ? 0 : succeeded->second;
        if (n < *task.min_available) return Phase::kFailed;
      }
    }
    if (min_success && counts.succeeded < *min_success) return Phase::kFailed;
    return counts.succeeded >= job.spec.min_available ? Phase::kCompleted : Phase::kFailed;
  }
  if (counts.pending > replicas - job.spec.min_available) return Phase::kPending;
  return std::nullopt;
}

PhaseInputs MakePhaseInputs(const api::Job& job, const PodCounts& counts, int32_t retry_count) {
  PhaseInputs in;
  static_cast<PodPhaseCounts&>(in) = counts;
  in.total_replicas = job.TotalReplicas();
  in.min_available = job.spec.min_available;
  in.status_min_available = job.status.min_available;
  in.retry_count = retry_count;
  in.max_retry = job.spec.max_retry;
  in.running_verdict = DecideRunning(job, counts);
  return in;
}

void SetCounts(const PodCounts& counts, api::JobStatus* status) {
  status->pending = counts.pending;
  status->running = counts.running;
  status->succeeded = counts.succeeded;
  status->failed = counts.failed;
  status->terminating = counts.terminating;
  status->unknown = counts.unknown;
  status->task_status_count = counts.per_task;
}

bool SetPhase(Phase phase, std::string_view reason, std::string_view message, base::Time now,
              std::optional<base::Time> creation, api::JobStatus* status) {
  if (status->state.phase == PhaseName(phase)) return false;
  status->state.phase = std::string(PhaseName(phase));
  status->state.reason = std::string(reason);
  status->state.message = std::string(message);
  // The API keeps whole seconds; storing them avoids a status that never compares equal.
  now = std::chrono::time_point_cast<std::chrono::seconds>(now);
  status->state.last_transition_time = now;
  status->conditions.push_back(api::JobCondition{status->state.phase, now});
  if (creation) {
    auto d = now - *creation;
    status->running_duration =
        std::chrono::duration_cast<api::Duration>(d.count() < 0 ? decltype(d)::zero() : d);
  }
  return true;
}

PhaseChange AdvanceStatus(const api::Job& job, const PodCounts& counts, const JobPass& pass,
                          base::Time now, api::JobStatus* status) {
  const bool invalid = !pass.verdict.invalid.empty();
  PhaseInputs inputs = MakePhaseInputs(job, counts, status->retry_count);
  inputs.status_min_available = status->min_available;
  // A delayed action (a policy timeout, a restart back-off) decides how the job goes on: until
  // it runs, pods that finished do not finish the job (docs/compatibility.md §2.1).
  if (inputs.running_verdict && IsFinished(*inputs.running_verdict) && pass.action_waiting) {
    inputs.running_verdict.reset();
  }
  PhaseChange out;
  out.next = invalid ? Phase::kFailed : Evaluate(pass.phase, pass.rule, inputs);
  // A finished or aborted job keeps no pod counters (docs/compatibility.md §2.3, step 5).
  SetCounts(IsFinished(out.next) || out.next == Phase::kAborted ? PodCounts{} : counts, status);
  std::string state_reason =
      pass.action == Action::kSyncJob ? std::string() : std::string(ActionName(pass.action));
  std::string state_message = pass.reason;
  if (invalid) {
    state_reason = std::string(kInvalidJobReason);
    state_message = DescribeErrors(pass.verdict.invalid);
  }
  out.changed =
      SetPhase(out.next, state_reason, state_message, now, job.metadata.creation_timestamp, status);
  if (!pass.plugin_error.empty()) {
    status->state.reason = "PluginError";
    status->state.message = pass.plugin_error;
  }
  if (pass.waiting_for_queue && out.next == Phase::kPending) {
    status->state.reason = std::string(kQueueNotFoundReason);
    status->state.message =
        DescribeErrors(pass.verdict.missing_queue) + "; the job starts once the queue is created";
  } else if (status->state.reason == kQueueNotFoundReason) {
    status->state.reason.clear();
    status->state.message.clear();
  }
  return out;
}

}  // namespace tephra::controllers::job
