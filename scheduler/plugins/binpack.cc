// binpack: prefer the fullest node that still fits, to keep whole nodes free for big gangs.
// score = (Σ_r w_r · (used_r + request_r) / allocatable_r) / Σ_r w_r · 100 · binpack.weight,
// over the requested resources that have a weight (binpack.cpu, binpack.memory, and every
// name in binpack.resources with binpack.resources.<name>); 0 if the pod would not fit.
#include <string>
#include <vector>

#include "base/strings.h"
#include "scheduler/framework/session.h"
#include "scheduler/plugins/plugins.h"

namespace tephra::scheduler {
namespace {

class BinpackPlugin : public Plugin {
 public:
  explicit BinpackPlugin(const Arguments& a)
      : weight_(static_cast<double>(a.GetInt("binpack.weight", 1))),
        cpu_(static_cast<double>(a.GetInt("binpack.cpu", 1))),
        memory_(static_cast<double>(a.GetInt("binpack.memory", 1))) {
    for (std::string& name : base::SplitCommaList(a.GetString("binpack.resources"))) {
      const double weight = static_cast<double>(a.GetInt("binpack.resources." + name, 1));
      extra_.push_back({std::move(name), weight});
    }
  }

  std::string_view name() const override { return "binpack"; }

  void OnSessionOpen(Session& ssn) override {
    if (weight_ == 0) return;
    ssn.AddNodeOrderFn(
        name(), [this](const TaskInfo& task, const NodeInfo& node) { return Score(task, node); });
  }

 private:
  double Score(const TaskInfo& task, const NodeInfo& node) const {
    const api::Resources& req = task.request();
    double weighted = 0, weights = 0;
    auto add = [&](int64_t request, int64_t used, int64_t allocatable, double w) -> bool {
      if (request <= 0 || w <= 0) return true;
      if (allocatable <= 0 || used + request > allocatable) return false;
      weighted += w * static_cast<double>(used + request) / static_cast<double>(allocatable);
      weights += w;
      return true;
    };
    if (!add(req.milli_cpu(), node.used.milli_cpu(), node.allocatable.milli_cpu(), cpu_)) return 0;
    if (!add(req.memory(), node.used.memory(), node.allocatable.memory(), memory_)) return 0;
    for (const auto& [name, w] : extra_) {
      if (!add(req.Get(name), node.used.Get(name), node.allocatable.Get(name), w)) return 0;
    }
    if (weights == 0) return 0;
    return weighted / weights * 100 * weight_;
  }

  const double weight_, cpu_, memory_;
  std::vector<std::pair<std::string, double>> extra_;
};

}  // namespace

std::unique_ptr<Plugin> NewBinpackPlugin(const PluginOption& option) {
  return std::make_unique<BinpackPlugin>(option.arguments);
}

}  // namespace tephra::scheduler
