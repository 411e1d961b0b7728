// tephra-scheduler: a Volcano-compatible, session-based gang scheduler.
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <random>
#include <thread>

#include <glog/logging.h>

#include "kube/client.h"
#include "kube/config.h"
#include "kube/events.h"
#include "kube/flags.h"
#include "kube/health.h"
#include "kube/http_server.h"
#include "kube/leader_election.h"
#include "kube/metrics.h"
#include "kube/process.h"
#include "scheduler/app/scheduler.h"

namespace {

using namespace tephra;

struct Flags {
  kube::ClientFlags client{"", "", "", 2000, 2000};
  scheduler::SchedulerOptions scheduler;
  std::string listen_address = "127.0.0.1:8080";
  bool leader_elect = true;
  std::string leader_namespace;
  std::chrono::milliseconds lease{15000}, renew{10000}, retry{2000};
  std::chrono::milliseconds sync_timeout{120000};
  std::vector<std::string> names;
};

StatusOr<std::pair<std::string, uint16_t>> SplitAddress(const std::string& address) {
  size_t colon = address.rfind(':');
  if (colon == std::string::npos) return InvalidArgument("--listen-address: want host:port, got " + address);
  std::string host = address.substr(0, colon);
  if (host.empty()) host = "0.0.0.0";
  if (host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  char* end = nullptr;
  long port = std::strtol(address.c_str() + colon + 1, &end, 10);
  if (end == nullptr || *end != '\0' || port < 0 || port > 65535) {
    return InvalidArgument("--listen-address: bad port in " + address);
  }
  return std::make_pair(host, static_cast<uint16_t>(port));
}

std::string DefaultNamespace() {
  if (const char* ns = std::getenv("TEPHRA_NAMESPACE"); ns != nullptr && *ns != '\0') return ns;
  if (const char* ns = std::getenv("POD_NAMESPACE"); ns != nullptr && *ns != '\0') return ns;
  return "tephra-system";
}

std::string Identity() {
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  std::mt19937 rng{std::random_device{}()};
  return std::string(host) + "_" + std::to_string(rng() % 1000000);
}

}  // namespace

int main(int argc, char** argv) {
  Flags f;
  kube::FlagSet flags("tephra-scheduler", "Schedules gangs of pods for Volcano-compatible batch jobs.");
  flags.SetGroup("Kubernetes");
  flags.AddString("kubeconfig", &f.client.kubeconfig, "Path to a kubeconfig; empty: in-cluster or $KUBECONFIG.");
  flags.AddString("master", &f.client.master, "API server address, overriding the kubeconfig.");
  flags.AddDouble("kube-api-qps", &f.client.qps, "Requests per second towards the API server.");
  flags.AddInt("kube-api-burst", &f.client.burst, "Burst of requests towards the API server.");
  flags.SetGroup("Scheduling");
  flags.AddStringList("scheduler-name", &f.names, "Pods with this schedulerName are ours (repeatable; default volcano).");
  flags.AddString("scheduler-conf", &f.scheduler.conf_file, "volcano-scheduler.conf file; reloaded when it changes.");
  flags.AddDuration("schedule-period", &f.scheduler.period, "Time between scheduling cycles.");
  flags.AddDuration("schedule-min-gap", &f.scheduler.min_gap, "Shortest time between two cycles when new work arrives early.");
  flags.AddString("default-queue", &f.scheduler.default_queue, "Queue for PodGroups that name none.");
  flags.AddInt("minimum-feasible-nodes", &f.scheduler.minimum_feasible_nodes, "Find at least this many feasible nodes per task.");
  flags.AddInt("minimum-percentage-nodes-to-find", &f.scheduler.minimum_percentage_nodes_to_find, "Lower bound of the adaptive node sample, in percent.");
  flags.AddInt("percentage-nodes-to-find", &f.scheduler.percentage_nodes_to_find, "Node sample in percent (0: adaptive).");
  flags.AddString("node-selector", &f.scheduler.node_selector, "Only schedule onto nodes matching this label selector.");
  flags.AddInt("bind-workers", &f.scheduler.binder.workers, "Concurrent pods/binding requests.");
  flags.AddBool("record-scheduled-events", &f.scheduler.binder.record_scheduled_events, "Record a Scheduled event for every bound pod.");
  flags.SetGroup("Process");
  flags.AddString("listen-address", &f.listen_address, "Address for /metrics, /healthz and /readyz (port 0: none).");
  flags.AddBool("leader-elect", &f.leader_elect, "Act only while holding the leader lease.");
  flags.AddString("leader-elect-namespace", &f.leader_namespace, "Namespace of the leader lease (default: $TEPHRA_NAMESPACE or tephra-system).");
  flags.AddDuration("leader-elect-lease-duration", &f.lease, "Leader lease duration.");
  flags.AddDuration("leader-elect-renew-deadline", &f.renew, "Leader renew deadline.");
  flags.AddDuration("leader-elect-retry-period", &f.retry, "Leader retry period.");
  flags.AddDuration("cache-sync-timeout", &f.sync_timeout, "How long to wait for the informers at start.");
  flags.AddGlogFlags();
  kube::ShutdownSignal& shutdown = kube::InitProcess(argc, argv, flags);
  if (!f.names.empty()) f.scheduler.scheduler_names = f.names;
  if (f.leader_namespace.empty()) f.leader_namespace = DefaultNamespace();

  StatusOr<kube::RestConfig> config = kube::BuildConfig(f.client);
  if (!config.ok()) {
    LOG(ERROR) << config.status().ToString();
    return 1;
  }
  config->user_agent = "tephra-scheduler";
  StatusOr<std::shared_ptr<kube::Client>> client = kube::Client::FromConfig(*config);
  if (!client.ok()) {
    LOG(ERROR) << client.status().ToString();
    return 1;
  }

  metrics::Registry& registry = metrics::DefaultRegistry();
  kube::EventRecorder events(*client, {"tephra-scheduler", Identity()});
  scheduler::Scheduler sched(*client, f.scheduler, &registry, &events);
  std::atomic<bool> leading{!f.leader_elect};

  kube::HealthChecks checks;
  (void)checks.AddReadinessCheck("informers-synced", [&] {
    return sched.Synced() ? Status::Ok() : Unavailable("caches not synced yet");
  });
  (void)checks.AddHealthCheck("scheduling-loop", [&] {
    if (!leading || !sched.Synced()) return Status::Ok();
    auto idle = std::chrono::steady_clock::now() - sched.last_cycle();
    if (idle > std::max<std::chrono::steady_clock::duration>(f.scheduler.period * 30, std::chrono::minutes(2))) {
      return Unavailable("no scheduling cycle for a long time");
    }
    return Status::Ok();
  });
  std::unique_ptr<kube::HttpServer> server;
  auto address = SplitAddress(f.listen_address);
  if (!address.ok()) {
    LOG(ERROR) << address.status().message();
    return 2;
  }
  if (address->second != 0) {
    kube::HttpServerOptions so;
    so.address = address->first;
    so.port = address->second;
    so.threads = 1;
    so.name = "metrics";
    server = std::make_unique<kube::HttpServer>(so);
    Status mounted = kube::MountHealthEndpoints(*server, checks, registry);
    Status started = mounted.ok() ? server->Start() : mounted;
    if (!started.ok()) {
      LOG(ERROR) << "serving " << f.listen_address << ": " << started.ToString();
      return 1;
    }
  }

  Status synced = sched.Start(f.sync_timeout);
  if (!synced.ok()) {
    LOG(ERROR) << "scheduler: " << synced.ToString();
    return 1;
  }

  int exit_code = 0;
  auto run = [&] {
    leading = true;
    sched.Run([&] { return !shutdown.Requested() && leading; });
  };
  if (!f.leader_elect) {
    std::thread loop(run);
    shutdown.Wait();
    loop.join();
  } else {
    kube::LeaderElectionConfig le;
    le.namespace_ = f.leader_namespace;
    le.name = f.scheduler.scheduler_names.size() == 1 ? f.scheduler.scheduler_names[0] : "volcano";
    le.identity = Identity();
    le.lease_duration = f.lease;
    le.renew_deadline = f.renew;
    le.retry_period = f.retry;
    std::thread loop;
    kube::LeaderCallbacks cb;
    cb.on_started_leading = [&] { loop = std::thread(run); };
    cb.on_stopped_leading = [&] {
      leading = false;
      if (loop.joinable()) loop.join();
    };
    kube::LeaderElector elector(*client, le, cb);
    shutdown.OnShutdown([&] { elector.Stop(); });
    Status lost = elector.Run();
    if (!lost.ok()) {
      // A process that lost its lease stops and starts over clean.
      LOG(ERROR) << lost.message();
      exit_code = 1;
    }
  }
  sched.Stop();
  events.Flush(std::chrono::seconds(2));
  if (server) server->Stop(std::chrono::seconds(2));
  return exit_code;
}
