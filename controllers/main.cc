// tephra-controller-manager: the job, queue, podgroup and garbage-collection controllers.
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <random>

#include <glog/logging.h>

#include "controllers/framework/controller.h"
#include "controllers/gc/gc_controller.h"
#include "controllers/job/job_controller.h"
#include "controllers/podgroup/pg_controller.h"
#include "controllers/queue/queue_controller.h"
#include "controllers/serving.h"
#include "kube/config.h"
#include "kube/flags.h"
#include "kube/leader_election.h"
#include "kube/metrics.h"
#include "kube/process.h"

namespace tephra::controllers {
namespace {

struct Options {
  kube::ClientFlags client;
  ControllerOptions controllers;
  std::vector<std::string> enabled = {"*"};
  bool leader_elect = true;
  std::string leader_elect_namespace;
  std::string leader_elect_name = "vc-controller-manager";
  std::chrono::milliseconds lease_duration{15000};
  std::chrono::milliseconds renew_deadline{10000};
  std::chrono::milliseconds retry_period{2000};
  std::string healthz_address = "127.0.0.1:11252";

  void Register(kube::FlagSet& f) {
    f.SetGroup("API server");
    f.AddString("kubeconfig", &client.kubeconfig, "Path to a kubeconfig (default: in-cluster).");
    f.AddString("master", &client.master, "API server address; overrides the kubeconfig's.");
    client.qps = 50;
    client.burst = 100;
    f.AddDouble("kube-api-qps", &client.qps, "Requests per second towards the API server.");
    f.AddInt("kube-api-burst", &client.burst, "Burst of requests towards the API server.");
    f.SetGroup("Controllers");
    f.AddCommaList("controllers", &enabled,
                   "Controllers to run: '*' for all, 'name' or '+name' to add, '-name' to "
                   "remove (job-controller, queue-controller, pg-controller, gc-controller).");
    f.AddInt("worker-threads", &controllers.worker_threads, "Job controller workers.");
    f.AddInt("worker-threads-for-podgroup", &controllers.worker_threads_for_podgroup,
             "PodGroup controller workers.");
    f.AddInt("worker-threads-for-queue", &controllers.worker_threads_for_queue,
             "Queue controller workers.");
    f.AddInt("worker-threads-for-gc", &controllers.worker_threads_for_gc,
             "Garbage collector workers.");
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
    f.AddDuration("resync-period", &controllers.resync_period,
                  "Re-check every object this often (0: only on changes).");
    f.SetGroup("Leader election");
    f.AddBool("leader-elect", &leader_elect, "Run only while holding the lease.");
    f.AddString("leader-elect-namespace", &leader_elect_namespace,
                "Namespace of the lease (default: $TEPHRA_NAMESPACE, the pod's, or tephra-system).");
    f.AddString("leader-elect-resource-name", &leader_elect_name, "Name of the lease.");
    f.AddDuration("lease-duration", &lease_duration, "How long a lease lasts unrenewed.");
    f.AddDuration("renew-deadline", &renew_deadline, "How long the leader tries to renew.");
    f.AddDuration("retry-period", &retry_period, "Time between lease attempts.");
    f.SetGroup("Serving");
    f.AddString("healthz-address", &healthz_address,
                "host:port of /healthz, /readyz and /metrics ('0' disables).");
  }
};

std::string DefaultLeaseNamespace() {
  if (const char* env = std::getenv("TEPHRA_NAMESPACE"); env != nullptr && *env != '\0') return env;
  std::ifstream in("/var/run/secrets/kubernetes.io/serviceaccount/namespace");
  std::string ns;
  if (in && std::getline(in, ns) && !ns.empty()) return ns;
  return "tephra-system";
}

std::string Identity() {
  char host[256] = {0};
  if (gethostname(host, sizeof(host) - 1) != 0) std::snprintf(host, sizeof(host), "unknown");
  std::random_device rd;
  return std::string(host) + "_" + std::to_string(rd() % 1000000);
}

std::unique_ptr<Controller> NewController(std::string_view name) {
  if (name == "job-controller") return std::make_unique<job::JobController>();
  if (name == "queue-controller") return std::make_unique<queue::QueueController>();
  if (name == "pg-controller") return std::make_unique<podgroup::PodGroupController>();
  if (name == "gc-controller") return std::make_unique<gc::GarbageCollector>();
  return nullptr;
}

int Run(int argc, char** argv) {
  Options options;
  kube::FlagSet flags("tephra-controller-manager",
                      "Reconciles Volcano Jobs, Queues and PodGroups: the controller half of Tephra.");
  options.Register(flags);
  kube::ShutdownSignal& shutdown = kube::InitProcess(argc, argv, flags);

  StatusOr<std::vector<std::string>> selected = SelectControllers(options.enabled);
  if (!selected.ok()) {
    std::cerr << selected.status().message() << "\n";
    return 2;
  }
  if (options.controllers.scheduler_names.empty()) options.controllers.scheduler_names = {"volcano"};
  StatusOr<kube::RestConfig> config = kube::BuildConfig(options.client);
  if (!config.ok()) {
    LOG(ERROR) << "API server configuration: " << config.status().ToString();
    return 1;
  }
  config->user_agent = "tephra-controller-manager";
  StatusOr<std::shared_ptr<kube::Client>> client = kube::Client::FromConfig(*config);
  if (!client.ok()) {
    LOG(ERROR) << "API client: " << client.status().ToString();
    return 1;
  }

  metrics::Registry& registry = metrics::DefaultRegistry();
  kube::InformerFactory informers(*client);
  kube::EventRecorderOptions eo;
  eo.component = "tephra-controller-manager";
  eo.instance = Identity();
  kube::EventRecorder recorder(*client, eo);

  ControllerContext context;
  context.client = *client;
  context.informers = &informers;
  context.recorder = &recorder;
  context.clock = &kube::RealClock();
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
  std::unique_ptr<kube::LeaderElector> elector;
  std::unique_ptr<HealthServer> health;
  if (options.healthz_address != "0") {
    auto ready = [&]() -> Status {
      if (!running.load()) {
        if (elector && !elector->IsLeader()) return Status::Ok();  // a standby is ready
        return Unavailable("caches not synced yet");
      }
      return Status::Ok();
    };
    auto server = StartHealthServer(options.healthz_address, registry, ready);
    if (!server.ok()) {
      LOG(ERROR) << "health server: " << server.status().ToString();
      return 1;
    }
    health = std::move(*server);
    LOG(INFO) << "serving /healthz, /readyz and /metrics on port " << health->port();
  }

  auto start = [&] {
    informers.Start();
    while (!informers.WaitForCacheSync(std::chrono::seconds(5))) {
      if (shutdown.Requested()) return;
      LOG(INFO) << "waiting for caches to sync";
    }
    for (auto& c : controllers) c->Start();
    running = true;
    LOG(INFO) << "controllers running";
  };
  auto stop = [&] {
    for (auto& c : controllers) c->Stop();
    informers.Stop();
    recorder.Flush(std::chrono::seconds(2));
    recorder.Stop();
  };

  int exit_code = 0;
  if (options.leader_elect) {
    kube::LeaderElectionConfig le;
    le.namespace_ = options.leader_elect_namespace.empty() ? DefaultLeaseNamespace()
                                                           : options.leader_elect_namespace;
    le.name = options.leader_elect_name;
    le.identity = eo.instance;
    le.lease_duration = options.lease_duration;
    le.renew_deadline = options.renew_deadline;
    le.retry_period = options.retry_period;
    Status valid = kube::LeaderElector::Validate(le);
    if (!valid.ok()) {
      LOG(ERROR) << valid.message();
      return 2;
    }
    kube::LeaderCallbacks callbacks;
    callbacks.on_started_leading = [&] {
      LOG(INFO) << "leading " << le.namespace_ << "/" << le.name << " as " << le.identity;
      start();
    };
    callbacks.on_new_leader = [](const std::string& id) { LOG(INFO) << "leader is " << id; };
    elector = std::make_unique<kube::LeaderElector>(*client, le, callbacks);
    shutdown.OnShutdown([&] { elector->Stop(); });
    Status s = elector->Run();
    if (!s.ok() && !shutdown.Requested()) {
      // A process that lost the lease may hold stale state: exit and let a restart start clean.
      LOG(ERROR) << "leader election: " << s.ToString() << "; exiting";
      exit_code = 1;
    }
  } else {
    start();
    shutdown.Wait();
  }
  stop();
  if (health) health->Stop();
  LOG(INFO) << "stopped";
  return exit_code;
}

}  // namespace
}  // namespace tephra::controllers

int main(int argc, char** argv) { return tephra::controllers::Run(argc, argv); }
