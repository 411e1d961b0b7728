// tephra-controller-manager: the job, queue, podgroup, garbage-collection and HyperNode
// controllers.
#include <iostream>
#include <memory>

#include "controllers/daemon.h"
#include "controllers/options.h"
#include "kube/daemon.h"

int main(int argc, char** argv) {
  using namespace tephra;
  controllers::ControllerManagerOptions options;
  base::FlagSet flags(
      "tephra-controller-manager",
      "Reconciles Volcano Jobs, Queues and PodGroups: the controller half of Tephra.");
  options.Register(flags);
  base::ShutdownSignal& shutdown = base::InitProcess(argc, argv, flags);
  if (Status s = options.Finish(); !s.ok()) {
    std::cerr << s.message() << "\n";
    return kube::kExitBadConfiguration;
  }
  kube::DaemonRunner runner(options.daemon, shutdown);
  return runner.Run(std::make_unique<controllers::ControllerManager>(std::move(options)));
}
