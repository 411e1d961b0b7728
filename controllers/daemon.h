// tephra-controller-manager as a kube::Daemon: the controllers --controllers selects, plugged
// into the lifecycle every daemon shares (kube/daemon.h). A standby holds no caches: the
// informers start and sync once the lease is won, then the controllers start.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "controllers/framework/controller.h"
#include "controllers/options.h"
#include "kube/daemon.h"
#include "kube/informer.h"

namespace tephra::controllers {

// The controller called `name` (one of kControllerNames), or null.
std::unique_ptr<Controller> NewController(std::string_view name);

class ControllerManager : public kube::Daemon {
 public:
  // `options` as Finish() left them.
  explicit ControllerManager(ControllerManagerOptions options);

  // Initializes the selected controllers; the readiness check "controllers".
  kube::StartStatus Build(const kube::DaemonContext& context, base::HealthChecks& checks) override;
  // Starts and syncs the informers, then starts the controllers.
  bool Lead(const std::function<bool()>& keep_leading) override;
  void StopLeading() override;
  void Stop() override;

 private:
  ControllerManagerOptions options_;
  std::unique_ptr<kube::InformerFactory> informers_;
  std::vector<std::unique_ptr<Controller>> controllers_;
};

}  // namespace tephra::controllers
