// The actions link against the scheduler framework alone (tests/unit/scheduler/CMakeLists.txt
// gives this binary no plugin library, and neither links the Kubernetes client): an action that
// calls into a plugin or the client fails to link here, which keeps "actions never see plugins"
// and "a session does no I/O" (docs/architecture.md) rules of the build.
#include <memory>
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "scheduler/actions/actions.h"

namespace tephra::scheduler {
namespace {

TEST_CASE("Every action builds from the framework alone, under Volcano's name") {
  std::set<std::string> names;
  for (const ActionFactory& factory : BuiltinActionFactories()) {
    std::unique_ptr<Action> action = factory(Arguments{});
    REQUIRE(action != nullptr);
    CHECK(names.insert(std::string(action->name())).second);
  }
  CHECK(names == std::set<std::string>{"enqueue", "allocate", "backfill", "preempt", "reclaim"});
}

}  // namespace
}  // namespace tephra::scheduler
