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

// Node members select nodes by exactMatch name, regexMatch pattern (Go's MatchString: the
// pattern may match anywhere in the name; one that does not compile selects nothing) or
// labelMatch; HyperNode members are followed by exactMatch name only. Missing members count
// nothing and cycles are cut. Work: one pass of each regex or label member over the nodes, then
// one walk per HyperNode over what lies beneath it, with an explicit stack.
std::map<std::string, int64_t> CountNodes(
    const std::vector<std::shared_ptr<const api::HyperNode>>& hypernodes,
    const std::vector<NodeInfo>& nodes);

}  // namespace tephra::controllers::hypernode
