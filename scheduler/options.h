// tephra-scheduler's command line: Volcano's flag names and defaults where it has them
// (docs/compatibility.md §4.1), Tephra's own for the admin API, the dashboard and the modes that
// need no API server, and what is computed from them.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "base/flags.h"
#include "base/status.h"
#include "kube/daemon.h"
#include "scheduler/app/scheduler.h"
#include "scheduler/listener/listener_options.h"

namespace tephra::scheduler {

struct SchedulerDaemonOptions {
  // The API server, leader election and /healthz /readyz /metrics (--listen-address).
  kube::DaemonOptions daemon = DefaultDaemonOptions();
  SchedulerOptions scheduler;
  // --scheduler-name as given; Finish() makes it scheduler.scheduler_names when set.
  std::vector<std::string> names;
  std::chrono::milliseconds sync_timeout{120000};
  AdminServerOptions admin;
  std::string dashboard_address;
  int explain_cache_size = 10000;
  // The modes that need no API server (scheduler/offline.h).
  std::string replay;
  std::string check_conf;

  static kube::DaemonOptions DefaultDaemonOptions();
  void Register(base::FlagSet& flags);
  // Checks the values together and fills in computed defaults (the scheduler names, the lease
  // name, the events' source, the explanation capacity); the error names the flag.
  Status Finish();
};

}  // namespace tephra::scheduler
