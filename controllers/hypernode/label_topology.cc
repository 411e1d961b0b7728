#include "controllers/hypernode/label_topology.h"

#include <algorithm>
#include <set>

#include <openssl/sha.h>

#include "api/topology.h"
#include "api/validation.h"

namespace tephra::controllers::hypernode {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::string ShortHash(std::string_view topology, int64_t tier, std::string_view value) {
  // NUL separators: no two (topology, tier, value) triples hash the same text.
  std::string text(topology);
  text.push_back('\0');
  text += std::to_string(tier);
  text.push_back('\0');
  text.append(value);
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest);
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < 5; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 15]);
  }
  return out;
}

}  // namespace

std::string HyperNodeName(std::string_view topology, int64_t tier, std::string_view value) {
  // Topology names are lowercased as Volcano does; the configuration refuses two that differ
  // only in case (discovery_config.h).
  const std::string lower = Lower(topology);
  const std::string tier_part = "-tier" + std::to_string(tier) + "-";
  std::string plain = "hypernode-" + lower + tier_part + std::string(value);
  if (api::DnsLabelProblems(plain).empty()) return plain;
  std::string prefix = "hypernode-" + lower;
  if (!api::DnsLabelProblems(prefix).empty() || prefix.size() > 40) prefix = "hypernode-t";
  return prefix + tier_part + ShortHash(topology, tier, value);
}

std::vector<DesiredHyperNode> BuildLabelHyperNodes(const std::vector<LabelTopology>& topologies,
                                                   const std::vector<api::TopologyNode>& nodes) {
  std::map<std::string, DesiredHyperNode> out;
  for (const LabelTopology& topology : topologies) {
    const size_t levels = topology.node_labels.size();
    if (levels < 2) continue;
    const std::string& leaf = topology.node_labels[levels - 1];
    // Members per (tier, value); sets keep them distinct and sorted.
    std::vector<std::map<std::string, std::set<std::string>>> tiers(levels);
    for (const api::TopologyNode& node : nodes) {
      if (node.labels == nullptr || node.labels->count(leaf) == 0) continue;
      std::string child = node.name;
      for (size_t t = 1; t < levels; ++t) {
        auto it = node.labels->find(topology.node_labels[levels - 1 - t]);
        if (it == node.labels->end()) break;
        tiers[t][it->second].insert(child);
        child = HyperNodeName(topology.name, static_cast<int64_t>(t), it->second);
      }
    }
    for (size_t t = 1; t < levels; ++t) {
      const std::string& key = topology.node_labels[levels - 1 - t];
      for (auto& [value, members] : tiers[t]) {
        DesiredHyperNode hn;
        hn.name = HyperNodeName(topology.name, static_cast<int64_t>(t), value);
        hn.tier = static_cast<int64_t>(t);
        hn.tier_name = key;
        hn.member_type =
            std::string(t == 1 ? api::kHyperNodeMemberNode : api::kHyperNodeMemberHyperNode);
        hn.members.assign(members.begin(), members.end());
        hn.labels[std::string(kSourceLabelKey)] = std::string(kSourceLabel);
        hn.labels[key] = value;
        out.emplace(hn.name, std::move(hn));
      }
    }
  }
  std::vector<DesiredHyperNode> result;
  result.reserve(out.size());
  for (auto& [name, hn] : out) result.push_back(std::move(hn));
  return result;
}

}  // namespace tephra::controllers::hypernode
