// Registers every builtin plugin and action. Called by the Scheduler, the offline modes
// (scheduler/offline.h) and tests; adding a plugin means adding one line here.
#pragma once

#include "base/status.h"
#include "scheduler/framework/registry.h"

namespace tephra::scheduler {

Status RegisterBuiltins(Registry& registry);

}  // namespace tephra::scheduler
