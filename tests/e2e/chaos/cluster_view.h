// Reads the invariant checker's Snapshot straight from the API server (quorum LISTs), so what
// is judged is the cluster's truth, not any daemon's cache.
#pragma once

#include <string>

#include "base/status.h"
#include "kube/client.h"
#include "tests/e2e/chaos/invariants.h"

namespace tephra::chaos {

struct ViewScope {
  std::string namespace_;      // the workload's Jobs, PodGroups and pods
  std::string node_selector;   // the pool whose capacity is checked
  std::string queue_selector;  // the workload's Queues
};

StatusOr<Snapshot> ReadSnapshot(kube::Client& client, const ViewScope& scope);

}  // namespace tephra::chaos
