// A kube::Client for integration tests, made from one of the control plane's kubeconfigs.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "kube/client.h"

namespace tephra::testing {

// A client of `kubeconfig` whose rate limit is `qps` with a burst of `burst` (default: qps).
StatusOr<std::shared_ptr<kube::Client>> KubeClientFor(const std::string& kubeconfig, double qps,
                                                      int burst = 0);

}  // namespace tephra::testing
