// tephra-scheduler: a Volcano-compatible, session-based gang scheduler.
#include <memory>

#include <glog/logging.h>

#include "kube/daemon.h"
#include "scheduler/daemon.h"
#include "scheduler/offline.h"
#include "scheduler/options.h"

int main(int argc, char** argv) {
  using namespace tephra;
  scheduler::SchedulerDaemonOptions options;
  base::FlagSet flags("tephra-scheduler",
                      "Schedules gangs of pods for Volcano-compatible batch jobs.");
  options.Register(flags);
  flags.AddGlogFlags();
  base::ShutdownSignal& shutdown = base::InitProcess(argc, argv, flags);
  // The modes that need no API server (scheduler/offline.h).
  if (!options.check_conf.empty()) return scheduler::CheckConf(options.check_conf);
  if (!options.replay.empty()) return scheduler::ReplaySnapshot(options, flags);
  if (Status s = options.Finish(); !s.ok()) {
    LOG(ERROR) << s.message();
    return kube::kExitBadConfiguration;
  }
  kube::DaemonRunner runner(options.daemon, shutdown);
  return runner.Run(std::make_unique<scheduler::SchedulerDaemon>(std::move(options)));
}
