#include "scheduler/daemon.h"

#include <algorithm>

#include "scheduler/admin/admin_server.h"
#include "scheduler/app/scheduler.h"
#include "scheduler/dashboard/dashboard_server.h"

namespace tephra::scheduler {

SchedulerDaemon::SchedulerDaemon(SchedulerDaemonOptions options) : options_(std::move(options)) {}

SchedulerDaemon::~SchedulerDaemon() = default;

kube::StartStatus SchedulerDaemon::Build(const kube::DaemonContext& context,
                                         base::HealthChecks& checks) {
  client_ = context.client;
  scheduler_ =
      std::make_unique<Scheduler>(client_, options_.scheduler, context.registry, context.events);
  (void)checks.AddReadinessCheck("informers-synced", [this] {
    return scheduler_->Synced() ? Status::Ok() : Unavailable("caches not synced yet");
  });
  const kube::DaemonRunner* runner = context.runner;
  (void)checks.AddHealthCheck("scheduling-loop", [this, runner] {
    if (!runner->leading() || !scheduler_->Synced()) return Status::Ok();
    auto idle = std::chrono::steady_clock::now() - scheduler_->last_cycle();
    if (idle > std::max<std::chrono::steady_clock::duration>(options_.scheduler.period * 30,
                                                             std::chrono::minutes(2))) {
      return Unavailable("no scheduling cycle for a long time");
    }
    return Status::Ok();
  });
  return {};
}

kube::StartStatus SchedulerDaemon::Start() {
  if (!options_.admin.address.empty()) {
    AdminSources sources;
    sources.recorder = &scheduler_->recorder();
    sources.cache = &scheduler_->cache();
    sources.scheduler_names = options_.scheduler.scheduler_names;
    sources.sampling = options_.scheduler.sampling;
    sources.version = TEPHRA_VERSION;
    StatusOr<std::unique_ptr<AdminServer>> started = AdminServer::Start(options_.admin, sources);
    if (!started.ok()) return {kube::kExitBadConfiguration, started.status()};
    admin_ = std::move(*started);
  }
  if (!options_.dashboard_address.empty()) {
    DashboardSources sources;
    sources.recorder = &scheduler_->recorder();
    sources.cache = &scheduler_->cache();
    sources.history = &scheduler_->history();
    sources.client = client_;
    sources.scheduler_names = options_.scheduler.scheduler_names;
    sources.version = TEPHRA_VERSION;
    StatusOr<std::unique_ptr<DashboardServer>> started =
        DashboardServer::Start(options_.dashboard_address, options_.admin, sources);
    if (!started.ok()) return {kube::kExitBadConfiguration, started.status()};
    dashboard_ = std::move(*started);
  }
  Status synced = scheduler_->Start(options_.sync_timeout);
  if (!synced.ok()) {
    // InvalidArgument: a bad flag (a selector the API server refuses), as for parsing.
    return {synced.code() == StatusCode::kInvalidArgument ? kube::kExitBadConfiguration
                                                          : kube::kExitFailure,
            Status(synced.code(), "scheduler: " + synced.ToString())};
  }
  if (admin_) admin_->SetServing(true);
  return {};
}

bool SchedulerDaemon::Lead(const std::function<bool()>& keep_leading) {
  loop_ = std::thread([this, keep_leading] { scheduler_->Run(keep_leading); });
  return true;
}

void SchedulerDaemon::StopLeading() {
  if (loop_.joinable()) loop_.join();
}

void SchedulerDaemon::Stop() {
  if (admin_) admin_->Stop(std::chrono::seconds(2));
  if (dashboard_) dashboard_->Stop(std::chrono::seconds(2));
  scheduler_->Stop();
}

}  // namespace tephra::scheduler
