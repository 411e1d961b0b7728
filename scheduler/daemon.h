// tephra-scheduler as a kube::Daemon: the Scheduler, its admin API and dashboard, plugged into
// the lifecycle every daemon shares (kube/daemon.h). The caches sync before the campaign for
// the lease, so a standby's are warm; the session loop runs only while leading.
#pragma once

#include <memory>
#include <thread>

#include "kube/daemon.h"
#include "scheduler/options.h"

namespace tephra::scheduler {

class AdminServer;
class DashboardServer;
class Scheduler;

class SchedulerDaemon : public kube::Daemon {
 public:
  // `options` as Finish() left them.
  explicit SchedulerDaemon(SchedulerDaemonOptions options);
  ~SchedulerDaemon() override;

  // The Scheduler; the readiness check "informers-synced" and the health check
  // "scheduling-loop".
  kube::StartStatus Build(const kube::DaemonContext& context, base::HealthChecks& checks) override;
  // The admin API and the dashboard (before the caches sync, so a bad address or certificate
  // fails at once; until the first session the API answers that nothing was considered yet),
  // then the caches.
  kube::StartStatus Start() override;
  // Starts the session loop on a thread of its own.
  bool Lead(const std::function<bool()>& keep_leading) override;
  void StopLeading() override;
  void Stop() override;

 private:
  SchedulerDaemonOptions options_;
  std::shared_ptr<kube::Client> client_;
  std::unique_ptr<Scheduler> scheduler_;
  // After the scheduler, so destroyed before it: they read it.
  std::unique_ptr<AdminServer> admin_;
  std::unique_ptr<DashboardServer> dashboard_;
  std::thread loop_;  // the session loop, while leading
};

}  // namespace tephra::scheduler
