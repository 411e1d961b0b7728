// Label discovery (docs/compatibility.md §2.10): the HyperNodes that node labels describe.
// Pure and deterministic: the same nodes and topologies give the same HyperNodes, names and
// member order. Work is O(nodes × levels × log), no recursion.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "api/topology.h"
#include "controllers/hypernode/discovery_config.h"

namespace tephra::controllers::hypernode {

// Marks the HyperNodes a discovery source made (value: the source); the controller creates,
// changes and deletes only HyperNodes carrying it with the value "label".
inline constexpr std::string_view kSourceLabelKey = "volcano.sh/network-topology-source";

struct DesiredHyperNode {
  std::string name;
  int64_t tier = 0;
  std::string tier_name;                      // the node label key of the tier
  std::string member_type;                    // Node (tier 1) or HyperNode
  std::vector<std::string> members;           // exactMatch names, sorted, distinct
  std::map<std::string, std::string> labels;  // source label, and <tier label>: <value>
};

// The name of the HyperNode of `topology` at `tier` for label value `value`:
// "hypernode-<topology lowercased>-tier<N>-<value>" when that is a DNS-1123 label, else
// "hypernode-<topology lowercased>-tier<N>-<10 hex digits of SHA-256 over topology, tier and
// value>" (the topology part "t" when it is not DNS-safe or is long). Volcano names them
// "hypernode-<topology lowercased>-tier<N>-<random>"; Tephra's names do not change across passes
// or restarts.
std::string HyperNodeName(std::string_view topology, int64_t tier, std::string_view value);

// For each topology with labels L[0..n-1] (highest first, L[n-1] the node level): tier t
// (1..n-1) groups by L[n-1-t]. A node without L[n-1] is in no HyperNode; a node without the
// label of tier t is in no HyperNode of tier t or above (it stays in the lower ones). Tier 1
// HyperNodes have the nodes as Node members; tier t > 1 ones have as HyperNode members the tier
// t-1 HyperNodes of their nodes (a lower HyperNode whose nodes disagree on the upper value is a
// member of each). Sorted by name. Two topologies yield separate HyperNodes.
std::vector<DesiredHyperNode> BuildLabelHyperNodes(const std::vector<LabelTopology>& topologies,
                                                   const std::vector<api::TopologyNode>& nodes);

}  // namespace tephra::controllers::hypernode
