#include "controllers/hypernode/node_count.h"

#include <re2/re2.h>
#include <unordered_map>

namespace tephra::controllers::hypernode {

std::map<std::string, int64_t> CountNodes(
    const std::vector<std::shared_ptr<const api::HyperNode>>& hypernodes,
    const std::vector<NodeInfo>& nodes) {
  std::unordered_map<std::string, uint32_t> node_index;
  for (uint32_t i = 0; i < nodes.size(); ++i) node_index.emplace(nodes[i].name, i);
  std::unordered_map<std::string, uint32_t> hn_index;
  for (uint32_t i = 0; i < hypernodes.size(); ++i) {
    hn_index.emplace(hypernodes[i]->metadata.name, i);
  }

  // The direct edges of each HyperNode: node indices and HyperNode indices.
  std::vector<std::vector<uint32_t>> direct_nodes(hypernodes.size());
  std::vector<std::vector<uint32_t>> children(hypernodes.size());
  RE2::Options options;
  options.set_log_errors(false);
  for (uint32_t h = 0; h < hypernodes.size(); ++h) {
    for (const api::HyperNodeMember& m : hypernodes[h]->spec.members) {
      const api::MemberSelector& s = m.selector;
      if (m.type == api::kHyperNodeMemberHyperNode) {
        if (!s.exact_name) continue;
        if (auto it = hn_index.find(*s.exact_name); it != hn_index.end()) {
          children[h].push_back(it->second);
        }
      } else if (m.type == api::kHyperNodeMemberNode) {
        if (s.exact_name) {
          if (auto it = node_index.find(*s.exact_name); it != node_index.end()) {
            direct_nodes[h].push_back(it->second);
          }
        } else if (s.regex_pattern) {
          RE2 re(*s.regex_pattern, options);
          if (!re.ok()) continue;
          for (uint32_t i = 0; i < nodes.size(); ++i) {
            if (RE2::PartialMatch(nodes[i].name, re)) direct_nodes[h].push_back(i);
          }
        } else if (s.label_match) {
          static const std::map<std::string, std::string> kNoLabels;
          for (uint32_t i = 0; i < nodes.size(); ++i) {
            const auto& labels = nodes[i].labels ? *nodes[i].labels : kNoLabels;
            if (api::MatchesLabelSelector(*s.label_match, labels)) direct_nodes[h].push_back(i);
          }
        }
      }
    }
  }

  // Stamps instead of clearing sets: walk w marks what it has seen with w + 1.
  std::vector<uint32_t> node_seen(nodes.size(), 0), hn_seen(hypernodes.size(), 0);
  std::map<std::string, int64_t> counts;
  std::vector<uint32_t> stack;
  for (uint32_t h = 0; h < hypernodes.size(); ++h) {
    const uint32_t stamp = h + 1;
    int64_t count = 0;
    stack.assign(1, h);
    hn_seen[h] = stamp;
    while (!stack.empty()) {
      const uint32_t cur = stack.back();
      stack.pop_back();
      for (uint32_t n : direct_nodes[cur]) {
        if (node_seen[n] != stamp) {
          node_seen[n] = stamp;
          ++count;
        }
      }
      for (uint32_t c : children[cur]) {
        if (hn_seen[c] != stamp) {
          hn_seen[c] = stamp;
          stack.push_back(c);
        }
      }
    }
    counts[hypernodes[h]->metadata.name] = count;
  }
  return counts;
}

}  // namespace tephra::controllers::hypernode
