// tephra-controller-manager: the job, queue, podgroup, garbage-collection and HyperNode
// controllers.
#include <atomic>
#include <iostream>
#include <thread>

#include <glog/logging.h>

#include "controllers/framework/controller.h"
#include "controllers/gc/gc_controller.h"
#include "controllers/hypernode/hypernode_controller.h"
#include "controllers/job/job_controller.h"
#include "controllers/podgroup/pg_controller.h"
#include "controllers/queue/queue_controller.h"
#include "kube/daemon.h"
#include "metrics/metrics.h"

namespace tephra::controllers {
namespace {

struct Options {
  kube::ClientFlags client;
  ControllerOptions controllers;
  std::vector<std::string> enabled = {"*"};
  kube::LeaderElectionFlags leader;
  std::string healthz_address = "127.0.0.1:11252";

  void Register(base::FlagSet& f) {
    f.SetGroup("API server");
    client.qps = 50;
    client.burst = 100;
    kube::AddClientFlags(f, &client);
    f.SetGroup("Controllers");
    f.AddCommaList("controllers", &enabled,
                   "Controllers to run: '*' for all, 'name' or '+name' to add, '-name' to "
                   "remove (job-controller, queue-controller, pg-controller, gc-controller, "
                   "hyperNode-controller).");
    f.AddInt("worker-threads", &controllers.worker_threads, "Job controller workers.");
    f.AddInt("worker-threads-for-podgroup", &controllers.worker_threads_for_podgroup,
             "PodGroup controller workers.");
    f.AddInt("worker-threads-for-queue", &controllers.worker_threads_for_queue,
             "Queue controller workers.");
    f.AddInt("worker-threads-for-gc", &controllers.worker_threads_for_gc,
             "Garbage collector workers.");
    f.AddInt("max-pod-writes-in-flight", &controllers.max_pod_writes_in_flight,
             "Pod creations and deletions the job controller has in flight at once, over all "
             "workers; queued in arrival order, so one Job's pods are created together.");
    f.AddInt("max-requeue-num", &controllers.max_requeue_num,
             "Failed passes of a job before it is terminated (-1: never).");
    f.AddStringList("scheduler-name", &controllers.scheduler_names,
                    "Scheduler names whose pods and jobs are ours (repeatable).");
    f.AddString("default-queue", &controllers.default_queue, "Queue of jobs that name none.");
    f.AddString("namespace", &controllers.namespace_,
                "Only Jobs, pods, PodGroups and Commands of this namespace (default: all). The "
                "queue controller then needs --queue-label-selector.");
    f.AddString("queue-label-selector", &controllers.queue_label_selector,
                "Only Queues matching this label selector (default: all).");
    f.AddString("controller-conf-configmap", &controllers.controller_conf_configmap,
                "namespace/name of the ConfigMap whose volcano-controller.conf key configures "
                "HyperNode discovery (networkTopologyDiscovery); empty: none.");
    f.AddDuration("resync-period", &controllers.resync_period,
                  "Re-check every object this often (0: only on changes).");
    f.SetGroup("Leader election");
    leader.resource_name = "vc-controller-manager";
    leader.Register(f);
    f.SetGroup("Serving");
    f.AddString("healthz-address", &healthz_address,
                "host:port of /healthz, /readyz and /metrics ('0' disables).");
  }
};

std::unique_ptr<Controller> NewController(std::string_view name) {
  if (name == "job-controller") return std::make_unique<job::JobController>();
  if (name == "queue-controller") return std::make_unique<queue::QueueController>();
  if (name == "pg-controller") return std::make_unique<podgroup::PodGroupController>();
  if (name == "gc-controller") return std::make_unique<gc::GarbageCollector>();
  if (name == "hyperNode-controller") return std::make_unique<hypernode::HyperNodeController>();
  return nullptr;
}

int Run(int argc, char** argv) {
  Options options;
  base::FlagSet flags(
      "tephra-controller-manager",
      "Reconciles Volcano Jobs, Queues and PodGroups: the controller half of Tephra.");
  options.Register(flags);
  base::ShutdownSignal& shutdown = base::InitProcess(argc, argv, flags);

  StatusOr<std::vector<std::string>> selected = SelectControllers(options.enabled);
  if (!selected.ok()) {
    std::cerr << selected.status().message() << "\n";
    return 2;
  }
  if (options.controllers.scheduler_names.empty())
    options.controllers.scheduler_names = {"volcano"};
  StatusOr<std::shared_ptr<kube::Client>> client =
      kube::ConnectFromFlags(options.client, "tephra-controller-manager");
  if (!client.ok()) {
    LOG(ERROR) << client.status().ToString();
    return 1;
  }
  StatusOr<std::unique_ptr<kube::LeaseRunner>> lease =
      kube::LeaseRunner::Create(*client, options.leader, kube::ProcessIdentity());
  if (!lease.ok()) {
    LOG(ERROR) << lease.status().message();
    return 2;
  }

  metrics::Registry& registry = metrics::DefaultRegistry();
  kube::InformerFactory informers(*client);
  kube::EventRecorderOptions eo;
  eo.component = "tephra-controller-manager";
  eo.instance = kube::ProcessIdentity();
  eo.registry = &registry;
  eo.source = "vc-controller-manager";  // what tools that follow Volcano's controllers filter on
  kube::EventRecorder recorder(*client, eo);

  ControllerContext context;
  context.client = *client;
  context.informers = &informers;
  context.recorder = &recorder;
  context.clock = &base::RealClock();
  context.metrics = &registry;
  context.options = options.controllers;

  std::vector<std::unique_ptr<Controller>> controllers;
  for (const std::string& name : *selected) {
    controllers.push_back(NewController(name));
    Status s = controllers.back()->Initialize(context);
    if (!s.ok()) {
      LOG(ERROR) << name << ": " << s.ToString();
      return 1;
    }
    LOG(INFO) << "enabled " << name;
  }

  std::atomic<bool> running{false};
  base::HealthChecks checks;
  (void)checks.AddReadinessCheck("controllers", [&]() -> Status {
    if (running.load() || !(*lease)->IsLeader()) return Status::Ok();  // a standby is ready
    return Unavailable("caches not synced yet");
  });
  auto health =
      kube::ServeHealth({"healthz-address", options.healthz_address, true}, checks, registry);
  if (!health.ok()) {
    LOG(ERROR) << health.status().message();
    return 1;
  }

  // The elector calls `start` on the thread that renews the lease, so the cache sync runs on a
  // thread of its own: a sync longer than the renew deadline (a big cluster, a slow API
  // server) would otherwise lose the lease just won, exit and start over, forever.
  std::thread starter;
  std::atomic<bool> stopping{false};
  auto start = [&] {
    starter = std::thread([&] {
      informers.Start();
      for (int waited = 1; !informers.WaitForCacheSync(std::chrono::seconds(1)); ++waited) {
        if (shutdown.Requested() || stopping) return;
        if (waited % 5 == 0) LOG(INFO) << "waiting for caches to sync";
      }
      if (stopping) return;
      for (auto& c : controllers) c->Start();
      running = true;
      LOG(INFO) << "controllers running";
    });
  };
  auto stop = [&] {
    informers.Stop();
    recorder.Flush(std::chrono::seconds(2));
    recorder.Stop();
  };

  int exit_code = (*lease)->Run(shutdown, {start, [&] {
                                             stopping = true;
                                             if (starter.joinable()) starter.join();
                                             for (auto& c : controllers) c->Stop();
                                             running = false;
                                           }});
  stop();
  if (*health) (*health)->Stop();
  LOG(INFO) << "stopped";
  return exit_code;
}

}  // namespace
}  // namespace tephra::controllers

int main(int argc, char** argv) {
  return tephra::controllers::Run(argc, argv);
}
