#include "scheduler/framework/topology_view.h"

#include "scheduler/framework/cluster_view.h"

namespace tephra::scheduler {

TopologyView::TopologyView(const HyperNodeTree* tree, const ClusterView& view)
    : tree_(tree), view_(view) {
  if (tree == nullptr || tree->empty()) return;
  domains_.reserve(tree->hypernodes().size());
  domains_of_.resize(view.node_count());
  for (const HyperNodeInfo& hn : tree->hypernodes()) {
    HyperNodeDomain d;
    d.info = &hn;
    d.member.assign(view.node_count(), false);
    for (const std::string& name : hn.nodes) {
      if (auto i = view.NodeIndex(name)) d.member[*i] = true;
    }
    for (size_t i = 0; i < d.member.size(); ++i) {
      if (!d.member[i]) continue;
      d.nodes.push_back(i);
      domains_of_[i].push_back(static_cast<uint32_t>(domains_.size()));
    }
    by_name_.emplace(hn.name, domains_.size());
    domains_.push_back(std::move(d));
  }
  // Parents: among the HyperNodes of higher tiers holding a domain's first node (a handful),
  // the lowest that holds all of its nodes.
  for (HyperNodeDomain& d : domains_) {
    if (d.nodes.empty()) continue;
    for (uint32_t p : domains_of_[d.nodes.front()]) {
      HyperNodeDomain& candidate = domains_[p];
      if (candidate.info->tier <= d.info->tier) continue;
      if (d.parent != nullptr && d.parent->info->tier <= candidate.info->tier) continue;
      bool holds = true;
      for (size_t n : d.nodes) holds = holds && candidate.member[n];
      if (holds) d.parent = &candidate;
    }
  }
}

const HyperNodeDomain* TopologyView::Find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &domains_[it->second];
}

void TopologyView::Sum() const {
  if (summed_) return;
  summed_ = true;
  free_.assign(domains_.size(), api::Resources());
  allocatable_.assign(domains_.size(), api::Resources());
  node_free_.assign(domains_of_.size(), api::Resources());
  for (size_t n = 0; n < domains_of_.size(); ++n) {
    if (domains_of_[n].empty()) continue;
    const NodeInfo& node = view_.node(n);
    node_free_[n] = WithoutPods(node.FutureIdle());
    api::Resources allocatable = WithoutPods(node.allocatable);
    for (uint32_t d : domains_of_[n]) {
      free_[d].Add(node_free_[n]);
      allocatable_[d].Add(allocatable);
    }
  }
}

const api::Resources& TopologyView::Free(const HyperNodeDomain& d) const {
  Sum();
  return free_[static_cast<size_t>(&d - domains_.data())];
}

const api::Resources& TopologyView::Allocatable(const HyperNodeDomain& d) const {
  Sum();
  return allocatable_[static_cast<size_t>(&d - domains_.data())];
}

void TopologyView::NodeChanged(size_t node) {
  if (!summed_ || node >= domains_of_.size() || domains_of_[node].empty()) return;
  api::Resources now = WithoutPods(view_.node(node).FutureIdle());
  for (uint32_t d : domains_of_[node]) free_[d].SubAllowNegative(node_free_[node]).Add(now);
  node_free_[node] = std::move(now);
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
