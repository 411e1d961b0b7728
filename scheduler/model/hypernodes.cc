#include "scheduler/model/hypernodes.h"

#include <algorithm>
#include <set>
#include <tuple>

namespace tephra::scheduler {

std::shared_ptr<const HyperNodeTree> HyperNodeTree::Build(
    const std::vector<std::shared_ptr<const api::HyperNode>>& hypernodes,
    const std::vector<api::TopologyNode>& nodes, std::vector<std::string>* problems) {
  auto tree = std::make_shared<HyperNodeTree>();
  if (hypernodes.empty()) return tree;
  std::vector<std::vector<uint32_t>> under = api::NodesUnder(hypernodes, nodes);
  std::set<std::string> names;
  for (const auto& hn : hypernodes) names.insert(hn->metadata.name);
  for (size_t h = 0; h < hypernodes.size(); ++h) {
    const api::HyperNode& hn = *hypernodes[h];
    for (size_t m = 0; m < hn.spec.members.size(); ++m) {
      const api::HyperNodeMember& member = hn.spec.members[m];
      if (member.type != api::kHyperNodeMemberHyperNode) continue;
      const auto& name = member.selector.exact_name;
      if (name && names.count(*name) != 0) continue;
      problems->push_back(
          "HyperNode " + hn.metadata.name + " member " + std::to_string(m) +
          (name ? ": no HyperNode is named " + *name : ": only exactMatch names a HyperNode"));
    }
    HyperNodeInfo info;
    info.name = hn.metadata.name;
    info.tier = hn.spec.tier;
    info.tier_name = hn.spec.tier_name;
    for (uint32_t n : under[h]) info.nodes.push_back(nodes[n].name);
    std::sort(info.nodes.begin(), info.nodes.end());
    tree->top_tier_ = std::max(tree->top_tier_, info.tier + 1);
    tree->hypernodes_.push_back(std::move(info));
  }
  std::sort(tree->hypernodes_.begin(), tree->hypernodes_.end(),
            [](const HyperNodeInfo& a, const HyperNodeInfo& b) {
              return std::tie(a.tier, a.name) < std::tie(b.tier, b.name);
            });
  HyperNodeInfo top;
  top.name = kClusterTopHyperNode;
  top.tier = tree->top_tier_;
  top.virtual_top = true;
  for (const auto& n : nodes) top.nodes.push_back(n.name);
  std::sort(top.nodes.begin(), top.nodes.end());
  tree->hypernodes_.push_back(std::move(top));
  for (size_t i = 0; i < tree->hypernodes_.size(); ++i) {
    tree->by_name_.emplace(tree->hypernodes_[i].name, i);
  }
  return tree;
}

const HyperNodeInfo* HyperNodeTree::Find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &hypernodes_[it->second];
}

std::optional<int64_t> HyperNodeTree::TierNamed(const std::string& tier_name) const {
  for (const auto& hn : hypernodes_) {
    if (!hn.virtual_top && hn.tier_name == tier_name) return hn.tier;
  }
  return std::nullopt;
}

}  // namespace tephra::scheduler
