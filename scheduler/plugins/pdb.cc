// pdb: victim selection respects PodDisruptionBudgets — a pod covered by a budget with no
// disruptions left is never evicted, and the session counts its own evictions against the
// budgets so several preemptions in one cycle cannot overdraw them.
#include <map>

#include "scheduler/framework/session.h"
#include "scheduler/plugins/plugins.h"
#include "scheduler/plugins/support/matching.h"

namespace tephra::scheduler {
namespace {

class PdbPlugin : public Plugin {
 public:
  std::string_view name() const override { return "pdb"; }

  void OnSessionOpen(Session& ssn) override {
    for (const auto& pdb : ssn.snapshot().pdbs) left_[pdb.get()] = pdb->disruptions_allowed;
    pdbs_ = &ssn.snapshot().pdbs;
    VictimsFn within_budget = [this](const TaskInfo&,
                                     const std::vector<const TaskInfo*>& candidates)
        -> std::optional<std::vector<const TaskInfo*>> {
      std::map<const PdbInfo*, int32_t> left = left_;
      std::vector<const TaskInfo*> victims;
      for (const TaskInfo* c : candidates) {
        std::vector<const PdbInfo*> covering = Covering(*c->pod);
        bool ok = true;
        for (const PdbInfo* p : covering) ok = ok && left[p] > 0;
        if (!ok) continue;
        for (const PdbInfo* p : covering) --left[p];
        victims.push_back(c);
      }
      return victims;
    };
    ssn.AddPreemptableVetoFn(name(), within_budget);
    ssn.AddReclaimableVetoFn(name(), within_budget);
    EventHandler h;
    // An eviction takes a disruption; undoing it gives the disruption back.
    h.deallocate = [this](const TaskEvent& e) {
      if (e.task.status != TaskStatus::kReleasing) return;
      for (const PdbInfo* p : Covering(*e.task.pod)) --left_[p];
    };
    h.allocate = [this](const TaskEvent& e) {
      if (e.task.status != TaskStatus::kRunning && e.task.status != TaskStatus::kBound) return;
      for (const PdbInfo* p : Covering(*e.task.pod)) ++left_[p];
    };
    ssn.AddEventHandler(name(), h);
  }

 private:
  std::vector<const PdbInfo*> Covering(const PodInfo& pod) const {
    std::vector<const PdbInfo*> out;
    for (const auto& pdb : *pdbs_) {
      if (pdb->metadata.namespace_ != pod.metadata.namespace_) continue;
      // An empty selector selects nothing in policy/v1.
      if (pdb->selector.match_labels.empty() && pdb->selector.match_expressions.empty()) continue;
      if (MatchesLabelSelector(pdb->selector, pod.metadata.labels)) out.push_back(pdb.get());
    }
    return out;
  }

  const std::vector<std::shared_ptr<const PdbInfo>>* pdbs_ = nullptr;
  std::map<const PdbInfo*, int32_t> left_;
};

}  // namespace

std::unique_ptr<Plugin> NewPdbPlugin(const PluginOption&) {
  return std::make_unique<PdbPlugin>();
}

}  // namespace tephra::scheduler
