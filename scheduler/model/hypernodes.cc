#include "scheduler/model/hypernodes.h"

#include <algorithm>
#include <set>

namespace tephra::scheduler {

std::shared_ptr<const HyperNodeTree> HyperNodeTree::Build(
    const std::vector<std::shared_ptr<const api::HyperNode>>& hypernodes,
    const std::vector<TopologyNode>& nodes, std::vector<std::string>* problems) {
  auto tree = std::make_shared<HyperNodeTree>();
  if (hypernodes.empty()) return tree;
  std::vector<const api::HyperNode*> order;
  for (const auto& hn : hypernodes) order.push_back(hn.get());
  std::sort(order.begin(), order.end(), [](const api::HyperNode* a, const api::HyperNode* b) {
    return std::tie(a->spec.tier, a->metadata.name) < std::tie(b->spec.tier, b->metadata.name);
  });
  std::map<std::string, int64_t> tier_of;
  for (const api::HyperNode* hn : order) tier_of.emplace(hn->metadata.name, hn->spec.tier);
  std::map<std::string, const TopologyNode*> node_by_name;
  for (const auto& n : nodes) node_by_name.emplace(n.name, &n);

  // Lower tiers first: a HyperNode's HyperNode members are resolved before it is.
  for (const api::HyperNode* hn : order) {
    HyperNodeInfo info;
    info.name = hn->metadata.name;
    info.tier = hn->spec.tier;
    info.tier_name = hn->spec.tier_name;
    std::set<std::string> under;
    for (size_t m = 0; m < hn->spec.members.size(); ++m) {
      const api::HyperNodeMember& member = hn->spec.members[m];
      if (member.type == api::kHyperNodeMemberHyperNode) {
        const std::string* child_name =
            member.selector.exact_name ? &*member.selector.exact_name : nullptr;
        const HyperNodeInfo* child = child_name ? tree->Find(*child_name) : nullptr;
        if (child == nullptr || child->tier >= info.tier) {
          std::string why = child_name == nullptr ? "only exactMatch names a HyperNode"
                            : tier_of.count(*child_name) == 0
                                ? "no HyperNode is named " + *child_name
                                : "HyperNode " + *child_name + " is not of a lower tier";
          problems->push_back("HyperNode " + info.name + " member " + std::to_string(m) + ": " +
                              why);
          continue;
        }
        under.insert(child->nodes.begin(), child->nodes.end());
        continue;
      }
      api::NodeMemberMatcher matcher(member.selector);
      if (const std::string* exact = matcher.exact_name()) {
        if (node_by_name.count(*exact) != 0) under.insert(*exact);
        continue;
      }
      for (const auto& n : nodes) {
        static const std::map<std::string, std::string> kNoLabels;
        if (matcher.Matches(n.name, n.labels ? *n.labels : kNoLabels)) under.insert(n.name);
      }
    }
    info.nodes.assign(under.begin(), under.end());
    tree->by_name_.emplace(info.name, tree->hypernodes_.size());
    tree->top_tier_ = std::max(tree->top_tier_, info.tier + 1);
    tree->hypernodes_.push_back(std::move(info));
  }
  HyperNodeInfo top;
  top.name = kClusterTopHyperNode;
  top.tier = tree->top_tier_;
  top.virtual_top = true;
  for (const auto& n : nodes) top.nodes.push_back(n.name);
  std::sort(top.nodes.begin(), top.nodes.end());
  tree->by_name_.emplace(top.name, tree->hypernodes_.size());
  tree->hypernodes_.push_back(std::move(top));
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
