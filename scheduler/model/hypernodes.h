// The network topology as the scheduler sees it: every HyperNode resolved to the nodes under
// it, plus a virtual HyperNode above the highest tier that covers every node
// (docs/scheduler.md, "Network topology").
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/topology.h"

namespace tephra::scheduler {

// The virtual HyperNode over the whole cluster: where a job with no tier limit may always go.
inline constexpr char kClusterTopHyperNode[] = "<cluster>";

struct HyperNodeInfo {
  std::string name;
  int64_t tier = 0;
  std::string tier_name;
  std::vector<std::string> nodes;  // every node under it, sorted
  bool virtual_top = false;
};

class HyperNodeTree {
 public:
  // Resolves `hypernodes` over `nodes` (api::NodesUnder). HyperNode members that name no
  // HyperNode are appended to `problems`.
  static std::shared_ptr<const HyperNodeTree> Build(
      const std::vector<std::shared_ptr<const api::HyperNode>>& hypernodes,
      const std::vector<api::TopologyNode>& nodes, std::vector<std::string>* problems);

  // By tier, then name; the virtual top HyperNode last. Empty when there are no HyperNodes.
  const std::vector<HyperNodeInfo>& hypernodes() const { return hypernodes_; }
  bool empty() const { return hypernodes_.empty(); }
  const HyperNodeInfo* Find(const std::string& name) const;
  // The tier whose HyperNodes carry `tier_name`.
  std::optional<int64_t> TierNamed(const std::string& tier_name) const;
  // The virtual top's tier: one above the highest real tier.
  int64_t top_tier() const { return top_tier_; }

 private:
  std::vector<HyperNodeInfo> hypernodes_;
  std::map<std::string, size_t> by_name_;
  int64_t top_tier_ = 0;
};

}  // namespace tephra::scheduler
