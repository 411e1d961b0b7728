#include "scheduler/framework/decisions.h"

#include <algorithm>

namespace tephra::scheduler {

void Decisions::Normalize() {
  auto by_pod = [](const auto& a, const auto& b) { return a.pod < b.pod; };
  std::sort(binds.begin(), binds.end(), by_pod);
  std::sort(evictions.begin(), evictions.end(), by_pod);
  std::sort(phases.begin(), phases.end(),
            [](const Phase& a, const Phase& b) { return a.job < b.job; });
}

std::string Decisions::ToText() const {
  std::string out;
  for (const auto& b : binds) {
    out += "bind " + b.pod + " " + b.node;
    for (const auto& step : b.steps) out += " (" + step + ")";
    out += "\n";
  }
  for (const auto& e : evictions) out += "evict " + e.pod + " (" + e.reason + ")\n";
  for (const auto& p : phases) out += "phase " + p.job + " " + p.phase + "\n";
  return out;
}

void DecisionLog::Bind(const BindUnit& unit) {
  for (const BindRequest& b : unit.binds) {
    std::vector<std::string> steps;
    for (const PreBindStep& step : b.steps) steps.push_back(step.Describe());
    decisions_.binds.push_back(
        {b.task->namespace_() + "/" + b.task->name(), b.node, std::move(steps)});
  }
  if (next_binder_ != nullptr) next_binder_->Bind(unit);
}

void DecisionLog::Evict(const TaskInfo& task, const std::string& reason) {
  decisions_.evictions.push_back({task.namespace_() + "/" + task.name(), reason});
  if (next_evictor_ != nullptr) next_evictor_->Evict(task, reason);
}

Decisions DecisionLog::Take(const Session& ssn) {
  const auto& touched = ssn.touched_jobs();
  const auto& before = ssn.snapshot().jobs;
  for (size_t j = 0; j < ssn.job_count() && j < before.size(); ++j) {
    if (!touched[j]) continue;
    const api::PodGroupPhase phase = ssn.job(j).phase;
    if (phase != before[j]->phase) {
      decisions_.phases.push_back({ssn.job(j).id, std::string(api::ToString(phase))});
    }
  }
  Decisions out = std::move(decisions_);
  decisions_ = Decisions{};
  return out;
}

}  // namespace tephra::scheduler
