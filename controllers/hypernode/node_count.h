// status.nodeCount of HyperNodes (docs/compatibility.md §2.10): the number of distinct nodes
// under a HyperNode, through its HyperNode members down to the nodes, as the CRD defines it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "api/topology.h"
#include "controllers/hypernode/label_topology.h"

namespace tephra::controllers::hypernode {

// Each HyperNode's number of distinct nodes beneath it (api::NodesUnder says which).
std::map<std::string, int64_t> CountNodes(
    const std::vector<std::shared_ptr<const api::HyperNode>>& hypernodes,
    const std::vector<api::TopologyNode>& nodes);

}  // namespace tephra::controllers::hypernode
