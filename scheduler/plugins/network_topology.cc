// network-topology-aware: jobs and PodGroups with a networkTopology are placed inside
// HyperNodes (Volcano's plugin of that name; docs/scheduler.md, "Network topology"). With it
// configured, allocate tries a job's candidate HyperNodes tier by tier, lowest first; this
// plugin scores those of one tier that can hold the job.
//   HyperNodeOrder  hypernode.choice tightest-fit (default): weight × 100 × (the share of the
//                   HyperNode's resources, among those the job requests, in use once the job is
//                   placed, plus a hundredth of its parent's) — the fullest fit, which keeps the
//                   emptiest HyperNodes (and parents) whole for the next large gang.
//                   first-feasible: every HyperNode scores 0, so the first by name is chosen (the
//                   baseline bench/topology.sh compares with).
// Arguments: weight (1), hypernode.choice.
#include "scheduler/framework/session.h"
#include "scheduler/plugins/plugins.h"

namespace tephra::scheduler {
namespace {

class NetworkTopologyPlugin : public Plugin {
 public:
  explicit NetworkTopologyPlugin(const PluginOption& option)
      : weight_(option.arguments.GetDouble("weight", 1)),
        tightest_(option.arguments.GetChoice(
                      "hypernode.choice", {"tightest-fit", "first-feasible"}) == "tightest-fit") {}
  std::string_view name() const override { return "network-topology-aware"; }
  // Volcano's bin packing inside HyperNodes (also for pods without a topology) and its limit
  // on eviction domains; Tephra scores fullness by hypernode.choice instead.
  std::vector<std::string_view> RecognisedArguments() const override {
    return {"hypernode.binpack.", "hypernode.gradient.evict.max-hypernodes"};
  }

  void OnSessionOpen(Session& ssn) override {
    ssn.AddHyperNodeOrderFn(name(), [this](const JobInfo& job, const HyperNodeTrial& trial) {
      if (!tightest_) return 0.0;
      const std::vector<std::string> asked = WithoutPods(job.total_request).Names();
      double score = Fullness(asked, trial.allocatable, trial.idle_after);
      // Between equally full candidates, the one under the fuller parent: emptier parents stay
      // whole for gangs that need a whole spine.
      if (trial.parent != nullptr) {
        score += Fullness(asked, trial.parent_allocatable, trial.parent_idle_after) / 100.0;
      }
      return weight_ * 100.0 * score;
    });
  }

 private:
  // The share of `allocatable` in use once `idle` is all that is left, averaged over `asked`.
  static double Fullness(const std::vector<std::string>& asked, const api::Resources& allocatable,
                         const api::Resources& idle) {
    double left = 0;
    int counted = 0;
    for (const std::string& resource : asked) {
      int64_t total = allocatable.Get(resource);
      if (total <= 0) continue;
      left += static_cast<double>(idle.Get(resource)) / static_cast<double>(total);
      ++counted;
    }
    return counted == 0 ? 0.0 : 1.0 - left / counted;
  }

  double weight_;
  bool tightest_;
};

}  // namespace

std::unique_ptr<Plugin> NewNetworkTopologyPlugin(const PluginOption& option) {
  return std::make_unique<NetworkTopologyPlugin>(option);
}

}  // namespace tephra::scheduler
