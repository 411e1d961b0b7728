// One scheduling cycle: open a session on a snapshot, run the configured actions in order,
// close it, and compute what should be written back. Used by the scheduler loop, the unit-test
// harness and the in-process benchmark alike.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "scheduler/framework/conf.h"
#include "scheduler/framework/outcome.h"
#include "scheduler/framework/registry.h"
#include "scheduler/framework/session.h"

namespace tephra::scheduler {

struct CycleResult {
  SessionOutcome outcome;
  std::chrono::nanoseconds open{0};
  std::vector<std::pair<std::string, std::chrono::nanoseconds>> actions;  // in order
  std::chrono::nanoseconds close{0};
  size_t jobs = 0;
  size_t nodes = 0;
};

// `inspect`, when given, sees the closed session before it is destroyed (explanations,
// tests).
CycleResult RunCycle(std::shared_ptr<const Snapshot> snapshot, const SchedulerConf& conf,
                     const Registry& registry, SessionOptions options,
                     const std::function<void(const Session&)>& inspect = nullptr);

}  // namespace tephra::scheduler
