// The actions link against the scheduler framework alone (tests/unit/scheduler/CMakeLists.txt
// gives this binary no plugin library, and neither links the Kubernetes client): an action that
// calls into a plugin or the client fails to link here, which keeps "actions never see plugins"
// and "a session does no I/O" (docs/architecture.md) rules of the build.
#include <catch2/catch.hpp>

#include "scheduler/actions/actions.h"

namespace tephra::scheduler {
namespace {

TEST_CASE("Every action builds from the framework alone, under Volcano's name") {
  const Arguments none;
  CHECK(NewEnqueueAction(none)->name() == "enqueue");
  CHECK(NewAllocateAction(none)->name() == "allocate");
  CHECK(NewBackfillAction(none)->name() == "backfill");
  CHECK(NewPreemptAction(none)->name() == "preempt");
  CHECK(NewReclaimAction(none)->name() == "reclaim");
}

}  // namespace
}  // namespace tephra::scheduler
