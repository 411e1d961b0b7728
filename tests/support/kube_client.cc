#include "tests/support/kube_client.h"

#include "kube/config.h"

namespace tephra::testing {

StatusOr<std::shared_ptr<kube::Client>> KubeClientFor(const std::string& kubeconfig, double qps,
                                                      int burst) {
  StatusOr<kube::RestConfig> cfg = kube::LoadKubeconfig({kubeconfig, ""});
  if (!cfg.ok()) return cfg.status();
  cfg->qps = qps;
  cfg->burst = burst > 0 ? burst : static_cast<int>(qps);
  return kube::Client::FromConfig(*cfg);
}

}  // namespace tephra::testing
