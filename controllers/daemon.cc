#include "controllers/daemon.h"

#include <glog/logging.h>

#include "controllers/gc/gc_controller.h"
#include "controllers/hypernode/hypernode_controller.h"
#include "controllers/job/job_controller.h"
#include "controllers/podgroup/pg_controller.h"
#include "controllers/queue/queue_controller.h"

namespace tephra::controllers {

std::unique_ptr<Controller> NewController(std::string_view name) {
  if (name == "job-controller") return std::make_unique<job::JobController>();
  if (name == "queue-controller") return std::make_unique<queue::QueueController>();
  if (name == "pg-controller") return std::make_unique<podgroup::PodGroupController>();
  if (name == "gc-controller") return std::make_unique<gc::GarbageCollector>();
  if (name == "hyperNode-controller") return std::make_unique<hypernode::HyperNodeController>();
  return nullptr;
}

ControllerManager::ControllerManager(ControllerManagerOptions options)
    : options_(std::move(options)) {}

kube::StartStatus ControllerManager::Build(const kube::DaemonContext& context,
                                           base::HealthChecks& checks) {
  informers_ = std::make_unique<kube::InformerFactory>(context.client);
  ControllerContext controller_context;
  controller_context.client = context.client;
  controller_context.informers = informers_.get();
  controller_context.recorder = context.events;
  controller_context.clock = &base::RealClock();
  controller_context.metrics = context.registry;
  controller_context.options = options_.controllers;
  for (const std::string& name : options_.selected) {
    controllers_.push_back(NewController(name));
    Status s = controllers_.back()->Initialize(controller_context);
    if (!s.ok()) return {kube::kExitFailure, Status(s.code(), name + ": " + s.ToString())};
    LOG(INFO) << "enabled " << name;
  }
  const kube::DaemonRunner* runner = context.runner;
  (void)checks.AddReadinessCheck("controllers", [runner]() -> Status {
    if (runner->Ready()) return Status::Ok();  // a standby is ready
    return Unavailable("caches not synced yet");
  });
  return {};
}

bool ControllerManager::Lead(const std::function<bool()>& keep_leading) {
  if (!kube::StartAndSyncInformers(*informers_, keep_leading)) return false;
  for (auto& c : controllers_) c->Start();
  LOG(INFO) << "controllers running";
  return true;
}

void ControllerManager::StopLeading() {
  for (auto& c : controllers_) c->Stop();
}

void ControllerManager::Stop() {
  informers_->Stop();
}

}  // namespace tephra::controllers
