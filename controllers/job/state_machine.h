// The job phase state machine (docs/compatibility.md §2.2) as an explicit table:
// (phase × action) → what to kill, whether the retry count grows, and which rule picks the
// next phase. Pure data and pure functions, so a unit test can walk every cell.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tephra::controllers::job {

enum class Phase {
  kPending,
  kRunning,
  kRestarting,
  kAborting,
  kAborted,
  kCompleting,
  kCompleted,
  kTerminating,
  kTerminated,
  kFailed,
};
inline constexpr int kPhaseCount = 10;

enum class Action {
  kRestartJob,
  kRestartTask,
  kRestartPod,
  kRestartPartition,
  kAbortJob,
  kTerminateJob,
  kCompleteJob,
  kResumeJob,
  kSyncJob,
};
inline constexpr int kActionCount = 9;

// "" (a new job) reads as Pending; an unknown phase as nullopt.
std::optional<Phase> ParsePhase(std::string_view phase);
std::string_view PhaseName(Phase phase);
// Internal actions that behave as SyncJob (EnqueueJob) map to kSyncJob; unknown → nullopt.
std::optional<Action> ParseAction(std::string_view action);
std::string_view ActionName(Action action);

// Completed, Terminated and Failed: nothing more happens to the job except clean-up.
bool IsFinished(Phase phase);
// RestartTask, RestartPod and RestartPartition: they kill only the target's pods.
bool IsTargetedRestart(Action action);

// Which pods a cell deletes.
enum class Kill {
  kNone,    // nothing
  kSoft,    // every pod except Succeeded and Failed ones
  kHard,    // every pod (on the last retry: like kSoft, so finished pods stay for the record)
  kTarget,  // only the pods of the request's task / pod / partition
};

// How the next phase is chosen once the kill (if any) is done. Rules read the pod counts
// after the kill, with the pods just deleted counted as terminating.
enum class NextPhase {
  kKeep,         // no change
  kPendingSync,  // → Running when minAvailable ≤ running + succeeded + failed
  kRunningSync,  // completion rules (status.h DecideRunning)
  kRestarting,
  kAborting,
  kCompleting,
  kTerminating,
  kRestartEval,    // → Failed when retries are used up, → Pending once enough pods can run
  kAbortEval,      // → Aborted when no pod is pending, running or terminating
  kCompleteEval,   // → Completed likewise
  kTerminateEval,  // → Terminated likewise
};

struct Transition {
  Kill kill = Kill::kNone;
  bool increment_retry = false;
  NextPhase next = NextPhase::kKeep;
  // Create missing pods, delete surplus ones (scale down) and keep the PodGroup in step.
  bool sync_pods = false;

  bool operator==(const Transition&) const = default;
};

// The table cell for (phase, action).
Transition Lookup(Phase phase, Action action);

// A job's pods by what they are doing.
struct PodPhaseCounts {
  int32_t pending = 0;
  int32_t running = 0;
  int32_t succeeded = 0;
  int32_t failed = 0;
  int32_t terminating = 0;  // being deleted, whatever their phase
  int32_t unknown = 0;

  bool operator==(const PodPhaseCounts&) const = default;
};

// What the evaluating rules need to know after the kill.
struct PhaseInputs : PodPhaseCounts {
  int32_t total_replicas = 0;        // Σ tasks' replicas
  int32_t min_available = 0;         // spec.minAvailable
  int32_t status_min_available = 0;  // status.minAvailable
  int32_t retry_count = 0;           // after any increment
  int32_t max_retry = 0;
  // The Running completion rules' verdict (see status.h); only read for kRunningSync.
  std::optional<Phase> running_verdict;
};

// The kill a cell really performs given the job's retries (before any increment):
//   * on the last retry (retry_count ≥ maxRetry − 1) kHard keeps finished pods (kSoft), so the
//     record of what failed survives the final attempt;
//   * in Restarting with the retries used up every live pod goes (at least kSoft), because the
//     job is about to fail and Failed is never reported while pods still run.
Kill EffectiveKill(const Transition& cell, int32_t retry_count, int32_t max_retry);

// Applies a NextPhase rule to the current phase.
Phase Evaluate(Phase current, NextPhase rule, const PhaseInputs& in);

}  // namespace tephra::controllers::job
