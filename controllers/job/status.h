// Job status derivation: pod counts per phase and per task, the Running-phase completion
// rules, the bookkeeping of a phase change, and the status a job controller pass leaves
// (AdvanceStatus). Pure functions of (job, pods, time).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "api/batch.h"
#include "api/core.h"
#include "base/time.h"
#include "controllers/job/state_machine.h"
#include "controllers/job/verdict.h"

namespace tephra::controllers::job {

struct PodCounts : PodPhaseCounts {
  // task name → pod phase → count (status.taskStatusCount).
  std::map<std::string, std::map<std::string, int32_t>> per_task;

  bool operator==(const PodCounts&) const = default;
};

// Counts the job's pods. A pod being deleted (deletionTimestamp set, or named in
// `deleted_now` because this pass just deleted it) is terminating; every other pod counts
// under its phase (an empty phase is Pending). `created_now` names pods this pass created that
// the cache does not show yet: they count as pending. per_task counts every pod by phase.
PodCounts CountPods(const std::vector<std::shared_ptr<const api::Pod>>& pods,
                    const std::set<std::string>& deleted_now,
                    const std::vector<std::pair<std::string, std::string>>& created_now = {});

// The Running-phase completion rules (docs/compatibility.md §2.2), in order:
//   1. no replicas at all (scaled to zero): no verdict, the phase stays;
//   2. minSuccess set and reached: Completed;
//   3. every pod finished: Failed when the job's minAvailable covers the tasks' and a task has
//      fewer Succeeded pods than its minAvailable, or when minSuccess is not reached; else
//      Completed when succeeded ≥ minAvailable, else Failed;
//   4. more pods pending than the gang can spare (pending > replicas − minAvailable): Pending.
// nullopt: stay Running.
std::optional<Phase> DecideRunning(const api::Job& job, const PodCounts& counts);

// Inputs of the state machine's rules from a job and its counts (retry count as given).
PhaseInputs MakePhaseInputs(const api::Job& job, const PodCounts& counts, int32_t retry_count);

// Writes the counters into status.
void SetCounts(const PodCounts& counts, api::JobStatus* status);

// Moves status to `phase` if it differs: state.phase, reason and message, lastTransitionTime,
// a new conditions[] entry and runningDuration (lastTransitionTime − creation). Returns whether
// the phase changed.
bool SetPhase(Phase phase, std::string_view reason, std::string_view message, base::Time now,
              std::optional<base::Time> creation, api::JobStatus* status);

// What one pass of the job controller decided and met, as far as the job's status tells it.
struct JobPass {
  Phase phase = Phase::kPending;      // the job's phase when the pass began
  NextPhase rule = NextPhase::kKeep;  // the rule of the state machine's cell
  Action action = Action::kSyncJob;   // the action the pass ran
  std::string reason;                 // why: the matched policy, the Command, ...
  // The controller's own admission check: a job that breaks its own rules fails.
  JobVerdict verdict;
  // The job waits for its queue (verdict.missing_queue) instead of syncing its pods.
  bool waiting_for_queue = false;
  std::string plugin_error;  // a job plugin refused the job
  // A delayed action (a policy timeout, a restart back-off) waits for the job.
  bool action_waiting = false;
};

struct PhaseChange {
  Phase next = Phase::kPending;
  bool changed = false;
};

// Moves `status` (the job's, with the pass's retry count and status.minAvailable) on after a
// pass that leaves the pods `counts`: the next phase by the pass's rule (Failed for an invalid
// job; while a delayed action waits, pods that finished do not finish the job,
// docs/compatibility.md §2.1), the pod counters (none for a finished or aborted job, §2.3) and
// state.reason and message: the action and its reason, or InvalidJob, PluginError, or
// QueueNotFound while a Pending job waits for its queue (cleared once it no longer does).
PhaseChange AdvanceStatus(const api::Job& job, const PodCounts& counts, const JobPass& pass,
                          base::Time now, api::JobStatus* status);

}  // namespace tephra::controllers::job
