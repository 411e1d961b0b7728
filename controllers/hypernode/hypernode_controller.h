// The HyperNode controller (docs/controllers.md#hypernode-discovery, docs/compatibility.md
// §2.10): builds HyperNodes from node labels as the discovery configuration asks, keeps them
// in step as nodes come, go and change labels, and keeps status.nodeCount of every HyperNode
// current. It creates, changes and deletes only HyperNodes labelled
// volcano.sh/network-topology-source=label; of the others it writes status.nodeCount only.
//
// One worker and one work key: every change (a node, a HyperNode, the ConfigMap) schedules a
// whole pass shortly after, so a burst of changes costs one pass, linear in nodes and HyperNodes.
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "base/workqueue.h"
#include "controllers/framework/controller.h"
#include "controllers/hypernode/discovery_config.h"
#include "kube/informer.h"

namespace tephra::controllers::hypernode {

// Event reasons on the ConfigMap.
inline constexpr std::string_view kReasonConfigInvalid = "DiscoveryConfigInvalid";
inline constexpr std::string_view kReasonSourceUnavailable = "DiscoverySourceUnavailable";

class HyperNodeController : public Controller {
 public:
  HyperNodeController();
  ~HyperNodeController() override;

  std::string_view Name() const override { return "hyperNode-controller"; }
  Status Initialize(ControllerContext& context) override;
  void Start() override;
  void Stop() override;

  // One whole pass (tests drive it without workers).
  Status Sync();

 private:
  void Trigger();
  // The configuration in force: the ConfigMap's, or none. Reports (log, Event) each new
  // problem once.
  std::optional<DiscoveryConfig> ReadConfig();
  Status Discover(const DiscoveryConfig& config);
  Status WriteNodeCounts();
  void Report(const std::string& reason, const std::string& message);

  ControllerContext ctx_;
  bool idle_ = false;
  std::string cm_namespace_, cm_name_;
  std::shared_ptr<kube::Informer> nodes_, hypernodes_, configmaps_;
  std::unique_ptr<base::WorkQueue> queue_;
  base::QueueWorkers workers_;
  // Touched by the one worker only: what was reported for the configuration text in force, so
  // each problem is logged and recorded once per change of the text.
  std::string config_text_;
  std::set<std::string> reported_;
};

}  // namespace tephra::controllers::hypernode
