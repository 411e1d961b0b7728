// The session's HyperNodes with their nodes as this session's node indexes: what allocate
// searches when a job has a network topology (docs/scheduler.md, "Network topology").
#pragma once

#include <map>
#include <string>
#include <vector>

#include "api/resources.h"
#include "scheduler/model/hypernodes.h"

namespace tephra::scheduler {

class ClusterView;

struct HyperNodeDomain {
  const HyperNodeInfo* info = nullptr;
  const HyperNodeDomain* parent = nullptr;  // the lowest-tier HyperNode holding all its nodes
  std::vector<size_t> nodes;                // session node indexes, ascending
  std::vector<bool> member;                 // by session node index
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

  // What `d`'s nodes have free, counting what is being released (FutureIdle), and their
  // allocatable, without the pod count: summed once per session, then kept current from the
  // nodes the session changes (NodeChanged), so asking costs nothing per job.
  const api::Resources& Free(const HyperNodeDomain& d) const;
  const api::Resources& Allocatable(const HyperNodeDomain& d) const;
  // Node `node` changed (a task placed, evicted or undone): the sums over it follow.
  void NodeChanged(size_t node);

 private:
  void Sum() const;

  const HyperNodeTree* tree_;
  const ClusterView& view_;
  std::vector<HyperNodeDomain> domains_;
  std::map<std::string, size_t> by_name_;
  std::vector<std::vector<uint32_t>> domains_of_;  // by node index: the domains holding it
  mutable bool summed_ = false;
  mutable std::vector<api::Resources> free_, allocatable_;  // by domain
  mutable std::vector<api::Resources> node_free_;           // by node, as last summed
};

}  // namespace tephra::scheduler
