// The session's HyperNodes with their nodes as this session's node indexes: what allocate
// searches when a job has a network topology (docs/scheduler.md, "Network topology").
#pragma once

#include <map>
#include <string>
#include <vector>

#include "scheduler/model/hypernodes.h"

namespace tephra::scheduler {

class ClusterView;

struct HyperNodeDomain {
  const HyperNodeInfo* info = nullptr;
  std::vector<size_t> nodes;  // session node indexes, ascending
  std::vector<bool> member;   // by session node index
};

class TopologyView {
 public:
  // Empty when `tree` is null or has no HyperNodes.
  TopologyView(const HyperNodeTree* tree, const ClusterView& view);

  // In the tree's order: by tier, then name; the virtual top HyperNode last.
  const std::vector<HyperNodeDomain>& domains() const { return domains_; }
  bool empty() const { return domains_.empty(); }
  const HyperNodeDomain* Find(const std::string& name) const;
  // The lowest-tier HyperNode holding every one of `nodes`; null when `nodes` is empty.
  const HyperNodeDomain* Lowest(const std::vector<size_t>& nodes) const;
  const HyperNodeTree* tree() const { return tree_; }

 private:
  const HyperNodeTree* tree_;
  std::vector<HyperNodeDomain> domains_;
  std::map<std::string, size_t> by_name_;
};

}  // namespace tephra::scheduler
