// Walks every cell of the job state machine (docs/compatibility.md §2.2) and the
// rules that pick the next phase.
#include "controllers/job/state_machine.h"

#include <map>

#include <catch2/catch.hpp>

namespace tephra::controllers::job {
namespace {

using A = Action;
using K = Kill;
using N = NextPhase;
using P = Phase;

struct Expected {
  Kill kill;
  bool retry;
  NextPhase next;
  bool sync_pods;
};

// The whole table, written out cell by cell from the reference so that a change to any cell
// fails here.
std::map<std::pair<P, A>, Expected> Table() {
  std::map<std::pair<P, A>, Expected> t;
  for (P p : {P::kPending, P::kRunning}) {
    N sync = p == P::kPending ? N::kPendingSync : N::kRunningSync;
    t[{p, A::kRestartJob}] = {K::kHard, true, N::kRestarting, false};
    t[{p, A::kRestartTask}] = {K::kTarget, true, N::kRestarting, false};
    t[{p, A::kRestartPod}] = {K::kTarget, true, N::kRestarting, false};
    t[{p, A::kRestartPartition}] = {K::kTarget, true, N::kRestarting, false};
    t[{p, A::kAbortJob}] = {K::kSoft, false, N::kAborting, false};
    t[{p, A::kTerminateJob}] = {K::kSoft, false, N::kTerminating, false};
    t[{p, A::kCompleteJob}] = {K::kSoft, false, N::kCompleting, false};
    t[{p, A::kResumeJob}] = {K::kNone, false, sync, true};
    t[{p, A::kSyncJob}] = {K::kNone, false, sync, true};
  }
  for (A a : {A::kRestartJob, A::kAbortJob, A::kTerminateJob, A::kCompleteJob, A::kResumeJob}) {
    t[{P::kRestarting, a}] = {K::kHard, false, N::kRestartEval, false};
  }
  for (A a : {A::kRestartTask, A::kRestartPod, A::kRestartPartition}) {
    t[{P::kRestarting, a}] = {K::kTarget, false, N::kRestartEval, false};
  }
  t[{P::kRestarting, A::kSyncJob}] = {K::kNone, false, N::kRestartEval, false};
  for (int i = 0; i < kActionCount; ++i) {
    A a = static_cast<A>(i);
    bool resume = a == A::kResumeJob;
    t[{P::kAborting, a}] = {K::kSoft, resume, resume ? N::kRestarting : N::kAbortEval, false};
    t[{P::kAborted, a}] = {K::kSoft, resume, resume ? N::kRestarting : N::kKeep, false};
    t[{P::kCompleting, a}] = {K::kSoft, false, N::kCompleteEval, false};
    t[{P::kTerminating, a}] = {K::kSoft, false, N::kTerminateEval, false};
    for (P done : {P::kCompleted, P::kTerminated, P::kFailed}) {
      t[{done, a}] = {K::kSoft, false, N::kKeep, false};
    }
  }
  return t;
}

TEST_CASE("every phase x action cell matches the reference table") {
  auto table = Table();
  REQUIRE(table.size() == static_cast<size_t>(kPhaseCount * kActionCount));
  for (int p = 0; p < kPhaseCount; ++p) {
    for (int a = 0; a < kActionCount; ++a) {
      P phase = static_cast<P>(p);
      A action = static_cast<A>(a);
      INFO(PhaseName(phase) << " x " << ActionName(action));
      const Expected& e = table.at({phase, action});
      Transition got = Lookup(phase, action);
      CHECK(got.kill == e.kill);
      CHECK(got.increment_retry == e.retry);
      CHECK(got.next == e.next);
      CHECK(got.sync_pods == e.sync_pods);
    }
  }
}

TEST_CASE("phase and action names round-trip, new jobs read as Pending") {
  for (int p = 0; p < kPhaseCount; ++p) {
    P phase = static_cast<P>(p);
    CHECK(ParsePhase(PhaseName(phase)) == phase);
  }
  for (int a = 0; a < kActionCount; ++a) {
    A action = static_cast<A>(a);
    CHECK(ParseAction(ActionName(action)) == action);
  }
  CHECK(ParsePhase("") == P::kPending);
  CHECK_FALSE(ParsePhase("Exploded").has_value());
  CHECK(ParseAction("EnqueueJob") == A::kSyncJob);
  CHECK_FALSE(ParseAction("Explode").has_value());
  CHECK(IsFinished(P::kCompleted));
  CHECK(IsFinished(P::kFailed));
  CHECK(IsFinished(P::kTerminated));
  CHECK_FALSE(IsFinished(P::kAborted));
  CHECK(IsTargetedRestart(A::kRestartPartition));
  CHECK_FALSE(IsTargetedRestart(A::kRestartJob));
}

TEST_CASE("the last retry keeps finished pods, an exhausted restart kills softly") {
  Transition restart = Lookup(P::kRunning, A::kRestartJob);
  CHECK(EffectiveKill(restart, 0, 3) == K::kHard);
  CHECK(EffectiveKill(restart, 1, 3) == K::kHard);
  CHECK(EffectiveKill(restart, 2, 3) == K::kSoft);  // retryCount >= maxRetry - 1
  Transition sync = Lookup(P::kRestarting, A::kSyncJob);
  CHECK(EffectiveKill(sync, 2, 3) == K::kNone);
  CHECK(EffectiveKill(sync, 3, 3) == K::kSoft);
  Transition target = Lookup(P::kRunning, A::kRestartPod);
  CHECK(EffectiveKill(target, 5, 3) == K::kTarget);
}

PhaseInputs Inputs() {
  PhaseInputs in;
  in.total_replicas = 4;
  in.min_available = 4;
  in.status_min_available = 4;
  in.max_retry = 3;
  return in;
}

TEST_CASE("Pending becomes Running once the gang has started, finished pods included") {
  PhaseInputs in = Inputs();
  in.running = 3;
  CHECK(Evaluate(P::kPending, N::kPendingSync, in) == P::kPending);
  in.failed = 1;
  CHECK(Evaluate(P::kPending, N::kPendingSync, in) == P::kRunning);
}

TEST_CASE("Running follows the completion verdict, through Completing while pods live") {
  PhaseInputs in = Inputs();
  CHECK(Evaluate(P::kRunning, N::kRunningSync, in) == P::kRunning);
  in.running_verdict = P::kCompleted;
  CHECK(Evaluate(P::kRunning, N::kRunningSync, in) == P::kCompleted);
  in.running = 1;
  CHECK(Evaluate(P::kRunning, N::kRunningSync, in) == P::kCompleting);
  in.running_verdict = P::kFailed;
  CHECK(Evaluate(P::kRunning, N::kRunningSync, in) == P::kFailed);
  in.running_verdict = P::kPending;
  CHECK(Evaluate(P::kRunning, N::kRunningSync, in) == P::kPending);
}

TEST_CASE("Restarting fails when retries run out, and only once no pod is left") {
  PhaseInputs in = Inputs();
  in.retry_count = 3;
  in.terminating = 2;
  CHECK(Evaluate(P::kRestarting, N::kRestartEval, in) == P::kRestarting);
  in.terminating = 0;
  in.failed = 1;  // a kept record of what failed does not hold the job back
  CHECK(Evaluate(P::kRestarting, N::kRestartEval, in) == P::kFailed);
}

TEST_CASE("Restarting returns to Pending once enough replicas can run") {
  PhaseInputs in = Inputs();
  in.retry_count = 1;
  in.terminating = 1;
  CHECK(Evaluate(P::kRestarting, N::kRestartEval, in) == P::kRestarting);
  in.terminating = 0;
  CHECK(Evaluate(P::kRestarting, N::kRestartEval, in) == P::kPending);
}

TEST_CASE("Aborting, Completing and Terminating finish only when no pod is active") {
  struct Case {
    N rule;
    P waiting;
    P done;
  };
  for (Case c : {Case{N::kAbortEval, P::kAborting, P::kAborted},
                 Case{N::kCompleteEval, P::kCompleting, P::kCompleted},
                 Case{N::kTerminateEval, P::kTerminating, P::kTerminated}}) {
    for (int which = 0; which < 3; ++which) {
      PhaseInputs in = Inputs();
      (which == 0 ? in.pending : which == 1 ? in.running : in.terminating) = 1;
      CHECK(Evaluate(c.waiting, c.rule, in) == c.waiting);
    }
    PhaseInputs idle = Inputs();
    idle.succeeded = 2;
    idle.failed = 2;
    CHECK(Evaluate(c.waiting, c.rule, idle) == c.done);
  }
  CHECK(Evaluate(P::kAborted, N::kKeep, Inputs()) == P::kAborted);
  CHECK(Evaluate(P::kRunning, N::kRestarting, Inputs()) == P::kRestarting);
  CHECK(Evaluate(P::kRunning, N::kAborting, Inputs()) == P::kAborting);
  CHECK(Evaluate(P::kRunning, N::kCompleting, Inputs()) == P::kCompleting);
  CHECK(Evaluate(P::kRunning, N::kTerminating, Inputs()) == P::kTerminating);
}

}  // namespace
}  // namespace tephra::controllers::job
