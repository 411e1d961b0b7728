#include "scheduler/framework/cycle.h"

#include <glog/logging.h>

namespace tephra::scheduler {

CycleResult RunCycle(std::shared_ptr<const Snapshot> snapshot, const SchedulerConf& conf,
                     const Registry& registry, SessionOptions options,
                     const std::function<void(const Session&)>& inspect) {
  using Clock = std::chrono::steady_clock;
  CycleResult result;
  auto t0 = Clock::now();
  Session ssn(std::move(snapshot), conf, registry, std::move(options));
  ssn.Open();
  result.open = Clock::now() - t0;
  result.jobs = ssn.job_count();
  result.nodes = ssn.node_count();
  for (const auto& name : conf.actions) {
    std::unique_ptr<Action> action = registry.NewAction(name, conf.ActionArguments(name));
    if (!action) {
      LOG(ERROR) << "cycle: no action named " << name;
      continue;
    }
    auto ta = Clock::now();
    action->Execute(ssn);
    result.actions.emplace_back(name, Clock::now() - ta);
  }
  auto tc = Clock::now();
  ssn.Close();
  result.outcome = ComputeOutcome(ssn);
  if (inspect) inspect(ssn);
  result.close = Clock::now() - tc;
  return result;
}

}  // namespace tephra::scheduler
