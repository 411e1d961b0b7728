#include "controllers/hypernode/node_count.h"

namespace tephra::controllers::hypernode {

std::map<std::string, int64_t> CountNodes(
    const std::vector<std::shared_ptr<const api::HyperNode>>& hypernodes,
    const std::vector<api::TopologyNode>& nodes) {
  std::vector<std::vector<uint32_t>> under = api::NodesUnder(hypernodes, nodes);
  std::map<std::string, int64_t> counts;
  for (size_t h = 0; h < hypernodes.size(); ++h) {
    counts[hypernodes[h]->metadata.name] = static_cast<int64_t>(under[h].size());
  }
  return counts;
}

}  // namespace tephra::controllers::hypernode
