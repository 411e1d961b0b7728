#include "controllers/job/state_machine.h"

#include <array>

namespace tephra::controllers::job {
namespace {

constexpr std::array<std::string_view, kPhaseCount> kPhaseNames = {
    "Pending",    "Running",   "Restarting",  "Aborting",   "Aborted",
    "Completing", "Completed", "Terminating", "Terminated", "Failed"};

constexpr std::array<std::string_view, kActionCount> kActionNames = {
    "RestartJob",   "RestartTask", "RestartPod", "RestartPartition", "AbortJob",
    "TerminateJob", "CompleteJob", "ResumeJob",  "SyncJob"};

constexpr Transition Cell(Kill kill, bool retry, NextPhase next, bool sync_pods = false) {
  return Transition{kill, retry, next, sync_pods};
}

// Pending and Running share every cell except the plain sync, whose rule differs.
Transition ActiveCell(Action action, NextPhase sync_rule) {
  switch (action) {
    case Action::kRestartJob:
      return Cell(Kill::kHard, true, NextPhase::kRestarting);
    case Action::kRestartTask:
    case Action::kRestartPod:
    case Action::kRestartPartition:
      return Cell(Kill::kTarget, true, NextPhase::kRestarting);
    case Action::kAbortJob:
      return Cell(Kill::kSoft, false, NextPhase::kAborting);
    case Action::kTerminateJob:
      return Cell(Kill::kSoft, false, NextPhase::kTerminating);
    case Action::kCompleteJob:
      return Cell(Kill::kSoft, false, NextPhase::kCompleting);
    case Action::kResumeJob:  // nothing to resume: behaves as a sync
    case Action::kSyncJob:
      return Cell(Kill::kNone, false, sync_rule, true);
  }
  return Cell(Kill::kNone, false, NextPhase::kKeep);
}

Transition RestartingCell(Action action) {
  switch (action) {
    case Action::kSyncJob:
      return Cell(Kill::kNone, false, NextPhase::kRestartEval);
    case Action::kRestartTask:
    case Action::kRestartPod:
    case Action::kRestartPartition:
      return Cell(Kill::kTarget, false, NextPhase::kRestartEval);
    default:
      return Cell(Kill::kHard, false, NextPhase::kRestartEval);
  }
}

Transition AbortCell(Action action, NextPhase otherwise) {
  if (action == Action::kResumeJob) return Cell(Kill::kSoft, true, NextPhase::kRestarting);
  return Cell(Kill::kSoft, false, otherwise);
}

}  // namespace

std::optional<Phase> ParsePhase(std::string_view phase) {
  if (phase.empty()) return Phase::kPending;
  for (size_t i = 0; i < kPhaseNames.size(); ++i) {
    if (kPhaseNames[i] == phase) return static_cast<Phase>(i);
  }
  return std::nullopt;
}

std::string_view PhaseName(Phase phase) {
  return kPhaseNames[static_cast<size_t>(phase)];
}

std::optional<Action> ParseAction(std::string_view action) {
  if (action.empty() || action == "EnqueueJob") return Action::kSyncJob;
  for (size_t i = 0; i < kActionNames.size(); ++i) {
    if (kActionNames[i] == action) return static_cast<Action>(i);
  }
  return std::nullopt;
}

std::string_view ActionName(Action action) {
  return kActionNames[static_cast<size_t>(action)];
}

bool IsFinished(Phase phase) {
  return phase == Phase::kCompleted || phase == Phase::kTerminated || phase == Phase::kFailed;
}

bool IsTargetedRestart(Action action) {
  return action == Action::kRestartTask || action == Action::kRestartPod ||
         action == Action::kRestartPartition;
}

Transition Lookup(Phase phase, Action action) {
  switch (phase) {
    case Phase::kPending:
      return ActiveCell(action, NextPhase::kPendingSync);
    case Phase::kRunning:
      return ActiveCell(action, NextPhase::kRunningSync);
    case Phase::kRestarting:
      return RestartingCell(action);
    case Phase::kAborting:
      return AbortCell(action, NextPhase::kAbortEval);
    case Phase::kAborted:
      return AbortCell(action, NextPhase::kKeep);
    case Phase::kCompleting:
      return Cell(Kill::kSoft, false, NextPhase::kCompleteEval);
    case Phase::kTerminating:
      return Cell(Kill::kSoft, false, NextPhase::kTerminateEval);
    case Phase::kCompleted:
    case Phase::kTerminated:
    case Phase::kFailed:
      return Cell(Kill::kSoft, false, NextPhase::kKeep);
  }
  return Cell(Kill::kNone, false, NextPhase::kKeep);
}

Kill EffectiveKill(const Transition& cell, int32_t retry_count, int32_t max_retry) {
  if (cell.next == NextPhase::kRestartEval && retry_count >= max_retry) {
    return Kill::kSoft;
  }
  if (cell.kill == Kill::kHard && retry_count >= max_retry - 1) return Kill::kSoft;
  return cell.kill;
}

Phase Evaluate(Phase current, NextPhase rule, const PhaseInputs& in) {
  const bool pods_active = in.pending + in.running + in.terminating > 0;
  switch (rule) {
    case NextPhase::kKeep:
      return current;
    case NextPhase::kPendingSync:
      return in.min_available <= in.running + in.succeeded + in.failed ? Phase::kRunning
                                                                       : Phase::kPending;
    case NextPhase::kRunningSync:
      if (!in.running_verdict) return current;
      // Never report Completed while pods still run or terminate: finish through Completing.
      if (*in.running_verdict == Phase::kCompleted && pods_active) return Phase::kCompleting;
      return *in.running_verdict;
    case NextPhase::kRestarting:
      return Phase::kRestarting;
    case NextPhase::kAborting:
      return Phase::kAborting;
    case NextPhase::kCompleting:
      return Phase::kCompleting;
    case NextPhase::kTerminating:
      return Phase::kTerminating;
    case NextPhase::kRestartEval:
      if (in.retry_count >= in.max_retry) {
        // Failed is final: wait until the killed pods are gone so it is never reported early.
        return pods_active ? Phase::kRestarting : Phase::kFailed;
      }
      return in.total_replicas - in.terminating >= in.status_min_available ? Phase::kPending
                                                                           : Phase::kRestarting;
    case NextPhase::kAbortEval:
      return pods_active ? Phase::kAborting : Phase::kAborted;
    case NextPhase::kCompleteEval:
      return pods_active ? Phase::kCompleting : Phase::kCompleted;
    case NextPhase::kTerminateEval:
      return pods_active ? Phase::kTerminating : Phase::kTerminated;
  }
  return current;
}

}  // namespace tephra::controllers::job
