#include "scheduler/framework/topology_view.h"

#include "scheduler/framework/cluster_view.h"

namespace tephra::scheduler {

TopologyView::TopologyView(const HyperNodeTree* tree, const ClusterView& view) : tree_(tree) {
  if (tree == nullptr || tree->empty()) return;
  domains_.reserve(tree->hypernodes().size());
  for (const HyperNodeInfo& hn : tree->hypernodes()) {
    HyperNodeDomain d;
    d.info = &hn;
    d.member.assign(view.node_count(), false);
    for (const std::string& name : hn.nodes) {
      if (auto i = view.NodeIndex(name)) d.member[*i] = true;
    }
    for (size_t i = 0; i < d.member.size(); ++i) {
      if (d.member[i]) d.nodes.push_back(i);
    }
    by_name_.emplace(hn.name, domains_.size());
    domains_.push_back(std::move(d));
  }
}

const HyperNodeDomain* TopologyView::Find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &domains_[it->second];
}

const HyperNodeDomain* TopologyView::Lowest(const std::vector<size_t>& nodes) const {
  if (nodes.empty()) return nullptr;
  for (const HyperNodeDomain& d : domains_) {
    bool all = true;
    for (size_t n : nodes) all = all && d.member[n];
    if (all) return &d;
  }
  return nullptr;
}

}  // namespace tephra::scheduler
