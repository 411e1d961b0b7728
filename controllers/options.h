// tephra-controller-manager's command line: vc-controller-manager's flag names and defaults
// (docs/compatibility.md §2), and what is computed from them.
#pragma once

#include <string>
#include <vector>

#include "base/flags.h"
#include "base/status.h"
#include "controllers/framework/controller.h"
#include "kube/daemon.h"

namespace tephra::controllers {

struct ControllerManagerOptions {
  // The API server, leader election and /healthz /readyz /metrics (--healthz-address).
  kube::DaemonOptions daemon = DefaultDaemonOptions();
  ControllerOptions controllers;
  std::vector<std::string> enabled = {"*"};  // --controllers
  // Computed by Finish(): the controllers to run, in start order.
  std::vector<std::string> selected;

  static kube::DaemonOptions DefaultDaemonOptions();
  void Register(base::FlagSet& flags);
  // Checks the values together and fills in computed defaults (the controllers selected, the
  // scheduler names); the error names the flag.
  Status Finish();
};

}  // namespace tephra::controllers
