// Registers every builtin plugin and action. Called by the Scheduler, the offline modes
// (scheduler/offline.h) and tests; adding a plugin means adding its factory to the list in
// builtins.cc (it is registered under its own name()).
#pragma once

#include "base/status.h"
#include "scheduler/framework/registry.h"

namespace tephra::scheduler {

Status RegisterBuiltins(Registry& registry);

}  // namespace tephra::scheduler
