// tephra-scheduler: a Volcano-compatible, session-based gang scheduler.
#include <atomic>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include <glog/logging.h>

#include "kube/daemon.h"
#include "kube/events.h"
#include "metrics/metrics.h"
#include "scheduler/admin/admin_server.h"
#include "scheduler/app/scheduler.h"
#include "scheduler/builtins.h"
#include "scheduler/dashboard/dashboard_server.h"
#include "scheduler/replay/replay.h"

namespace {

using namespace tephra;

struct Flags {
  kube::ClientFlags client{"", "", "", 2000, 2000};
  scheduler::SchedulerOptions scheduler;
  std::string listen_address = "127.0.0.1:8080";
  kube::LeaderElectionFlags leader;
  std::chrono::milliseconds sync_timeout{120000};
  std::vector<std::string> names;
  scheduler::AdminServerOptions admin;
  std::string dashboard_address;
  int explain_cache_size = 10000;
  std::string replay;
  std::string check_conf;
};

std::optional<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The configuration in `path` (empty: the built-in one) as the scheduler would load it; the
// error names the file and the problem.
StatusOr<scheduler::SchedulerConf> LoadConf(const std::string& path,
                                            const scheduler::Registry& registry) {
  std::string text = scheduler::DefaultSchedulerConfYaml();
  if (!path.empty()) {
    std::optional<std::string> read = ReadFile(path);
    if (!read) return InvalidArgument(path + ": cannot read");
    text = std::move(*read);
  }
  auto conf = scheduler::ParseSchedulerConf(text, registry.Names());
  if (!conf.ok()) {
    return InvalidArgument((path.empty() ? "(built-in)" : path) + ": " + conf.status().message());
  }
  return conf;
}

scheduler::Registry Builtins() {
  scheduler::Registry registry;
  Status registered = scheduler::RegisterBuiltins(registry);
  CHECK(registered.ok()) << registered.ToString();
  return registry;
}

// --check-conf: checks a configuration as the scheduler would load it, with no API server
// (for CI and Helm pre-upgrade checks). 0: loads (warnings printed), 2: refused.
int CheckConf(const std::string& path) {
  scheduler::Registry registry = Builtins();
  StatusOr<scheduler::SchedulerConf> conf = LoadConf(path, registry);
  if (!conf.ok()) {
    std::cerr << conf.status().message() << "\n";
    return 2;
  }
  for (const auto& w : conf->Warnings()) std::cout << path << ": warning: " << w << "\n";
  for (const auto& w : registry.ArgumentProblems(*conf))
    std::cout << path << ": warning: " << w << "\n";
  std::string actions, plugins;
  for (const auto& a : conf->actions) actions += (actions.empty() ? "" : ", ") + a;
  for (const auto& tier : conf->tiers) {
    std::string names;
    for (const auto& p : tier.plugins) names += (names.empty() ? "" : ", ") + p.name;
    plugins += (plugins.empty() ? "" : " | ") + names;
  }
  std::cout << path << ": loads: actions " << actions << "; plugins " << plugins << "\n";
  return 0;
}

// --replay: one session on a dumped snapshot, no API server; decisions on stdout.
int Replay(const Flags& f, const base::FlagSet& flags) {
  std::optional<std::string> text = ReadFile(f.replay);
  if (!text) {
    std::cerr << "--replay: cannot read " << f.replay << "\n";
    return 2;
  }
  scheduler::Registry registry = Builtins();
  StatusOr<scheduler::SchedulerConf> conf = LoadConf(f.scheduler.conf_file, registry);
  if (!conf.ok()) {
    std::cerr << "--scheduler-conf " << conf.status().message() << "\n";
    return 2;
  }
  for (const auto& w : conf->Warnings()) std::cerr << "--scheduler-conf: warning: " << w << "\n";
  scheduler::SpecInterner interner;
  StatusOr<scheduler::SnapshotDocument> doc = scheduler::DecodeSnapshot(*text, interner);
  if (!doc.ok()) {
    std::cerr << "--replay " << f.replay << ": " << doc.status().message() << "\n";
    return 2;
  }
  // Node sampling as the live scheduler had it, unless asked otherwise ("what if").
  if (flags.IsSet("minimum-feasible-nodes"))
    doc->sampling.minimum_feasible_nodes = f.scheduler.sampling.minimum_feasible_nodes;
  if (flags.IsSet("minimum-percentage-nodes-to-find")) {
    doc->sampling.minimum_percentage_nodes_to_find =
        f.scheduler.sampling.minimum_percentage_nodes_to_find;
  }
  if (flags.IsSet("percentage-nodes-to-find"))
    doc->sampling.percentage_nodes_to_find = f.scheduler.sampling.percentage_nodes_to_find;
  scheduler::ReplayResult result = scheduler::Replay(*doc, *conf, registry);
  std::cout << scheduler::FormatReplay(result, *doc);
  return scheduler::SameAsRecorded(result, *doc) ? 0 : 1;  // as diff(1): 1 = differences
}

}  // namespace

int main(int argc, char** argv) {
  Flags f;
  base::FlagSet flags("tephra-scheduler",
                      "Schedules gangs of pods for Volcano-compatible batch jobs.");
  flags.SetGroup("Kubernetes");
  kube::AddClientFlags(flags, &f.client);
  flags.SetGroup("Scheduling");
  flags.AddStringList("scheduler-name", &f.names,
                      "Pods with this schedulerName are ours (repeatable; default volcano).");
  flags.AddString("scheduler-conf", &f.scheduler.conf_file,
                  "volcano-scheduler.conf file; reloaded when it changes.");
  flags.AddString("scheduler-conf-configmap", &f.scheduler.conf_configmap,
                  "namespace/name of the ConfigMap --scheduler-conf is mounted from: warnings "
                  "about the configuration are also Events on it.");
  flags.AddString("check-conf", &f.check_conf,
                  "Check this volcano-scheduler.conf as the scheduler would load it and exit: 0 "
                  "with any warnings printed, 2 with the error naming the field. No API server.");
  flags.AddDuration("schedule-period", &f.scheduler.period, "Time between scheduling cycles.");
  flags.AddDuration("schedule-min-gap", &f.scheduler.min_gap,
                    "Shortest time between two cycles when new work arrives early.");
  flags.AddString("default-queue", &f.scheduler.default_queue,
                  "Queue for PodGroups that name none.");
  flags.AddInt("minimum-feasible-nodes", &f.scheduler.sampling.minimum_feasible_nodes,
               "Find at least this many feasible nodes per task.");
  flags.AddInt("minimum-percentage-nodes-to-find",
               &f.scheduler.sampling.minimum_percentage_nodes_to_find,
               "Lower bound of the adaptive node sample, in percent.");
  flags.AddInt("percentage-nodes-to-find", &f.scheduler.sampling.percentage_nodes_to_find,
               "Node sample in percent (0: adaptive).");
  flags.AddString("node-selector", &f.scheduler.node_selector,
                  "Only schedule onto nodes matching this label selector.");
  flags.AddString(
      "queue-label-selector", &f.scheduler.queue_selector,
      "Only serve Queues matching this label selector (PodGroups in other queues are left alone); "
      "a default queue created under key=value terms carries those labels.");
  flags.AddInt("bind-workers", &f.scheduler.binder.workers, "Concurrent pods/binding requests.");
  flags.AddInt("status-workers", &f.scheduler.status_workers,
               "Concurrent PodGroup, Queue and pod status writes.");
  flags.AddBool("record-scheduled-events", &f.scheduler.binder.record_scheduled_events,
                "Record a Scheduled event for every bound pod.");
  flags.SetGroup("Leader election");
  f.leader.Register(flags);
  flags.SetGroup("Process");
  flags.AddString("listen-address", &f.listen_address,
                  "Address for /metrics, /healthz and /readyz ('0' or port 0: none).");
  flags.AddDuration("cache-sync-timeout", &f.sync_timeout,
                    "How long to wait for the informers at start.");
  flags.SetGroup("Admin API");
  flags.AddString(
      "admin-address", &f.admin.address,
      "host:port for the gRPC admin API (job explanations, queue usage, snapshots; read-only) "
      "and its health service; empty: off. tephractl looks for it at 127.0.0.1:8091.");
  flags.AddString("admin-tls-cert", &f.admin.tls_cert_file,
                  "Serve the admin API over TLS with this certificate (PEM).");
  flags.AddString("admin-tls-key", &f.admin.tls_key_file,
                  "The private key of --admin-tls-cert (PEM).");
  flags.AddString("admin-tls-client-ca", &f.admin.tls_client_ca_file,
                  "Require admin clients to present a certificate signed by this CA (mutual TLS).");
  flags.AddBool(
      "admin-allow-anonymous", &f.admin.allow_anonymous,
      "Serve the admin API on an address beyond loopback without requiring client certificates.");
  flags.AddString(
      "dashboard-address", &f.dashboard_address,
      "host:port for the read-only web dashboard (queues, jobs and why they wait, the cluster, "
      "the last hour; docs/dashboard.md); empty: off. Uses the --admin-tls-* options: HTTPS "
      "with --admin-tls-cert, client certificates with --admin-tls-client-ca.");
  flags.AddInt("explain-cache-size", &f.explain_cache_size,
               "Jobs whose last explanation is kept (least recently updated dropped first).");
  flags.AddString(
      "replay", &f.replay,
      "Run one session on this dumped snapshot (tephractl snapshot dump) without an API server, "
      "print its decisions and exit. Uses --scheduler-conf (default: the built-in configuration).");
  flags.AddGlogFlags();
  base::ShutdownSignal& shutdown = base::InitProcess(argc, argv, flags);
  if (!f.check_conf.empty()) return CheckConf(f.check_conf);
  if (!f.replay.empty()) return Replay(f, flags);
  if (const std::string& cm = f.scheduler.conf_configmap;
      !cm.empty() && (cm.find('/') == std::string::npos || cm.front() == '/' || cm.back() == '/' ||
                      cm.find('/') != cm.rfind('/'))) {
    LOG(ERROR) << "--scheduler-conf-configmap: \"" << cm << "\" is not namespace/name";
    return 2;
  }
  if (f.explain_cache_size < 1) {
    LOG(ERROR) << "--explain-cache-size: must be at least 1";
    return 2;
  }
  f.scheduler.explain_capacity = static_cast<size_t>(f.explain_cache_size);
  f.scheduler.keep_decision_snapshot = !f.admin.address.empty();
  if (!f.names.empty()) f.scheduler.scheduler_names = f.names;
  if (f.leader.resource_name.empty()) {
    f.leader.resource_name =
        f.scheduler.scheduler_names.size() == 1 ? f.scheduler.scheduler_names[0] : "volcano";
  }

  StatusOr<std::shared_ptr<kube::Client>> client =
      kube::ConnectFromFlags(f.client, "tephra-scheduler");
  if (!client.ok()) {
    LOG(ERROR) << client.status().ToString();
    return 1;
  }
  const std::string identity = kube::ProcessIdentity();
  StatusOr<std::unique_ptr<kube::LeaseRunner>> lease =
      kube::LeaseRunner::Create(*client, f.leader, identity);
  if (!lease.ok()) {
    LOG(ERROR) << lease.status().message();
    return 2;
  }

  metrics::Registry& registry = metrics::DefaultRegistry();
  kube::EventRecorderOptions event_options;
  event_options.component = "tephra-scheduler";
  event_options.instance = identity;
  event_options.registry = &registry;
  // Tools that follow Volcano's scheduler filter events on its name.
  event_options.source =
      f.scheduler.scheduler_names.empty() ? "volcano" : f.scheduler.scheduler_names.front();
  kube::EventRecorder events(*client, event_options);
  scheduler::Scheduler sched(*client, f.scheduler, &registry, &events);
  std::atomic<bool> leading{false};

  base::HealthChecks checks;
  (void)checks.AddReadinessCheck("informers-synced", [&] {
    return sched.Synced() ? Status::Ok() : Unavailable("caches not synced yet");
  });
  (void)checks.AddHealthCheck("scheduling-loop", [&] {
    if (!leading || !sched.Synced()) return Status::Ok();
    auto idle = std::chrono::steady_clock::now() - sched.last_cycle();
    if (idle > std::max<std::chrono::steady_clock::duration>(f.scheduler.period * 30,
                                                             std::chrono::minutes(2))) {
      return Unavailable("no scheduling cycle for a long time");
    }
    return Status::Ok();
  });
  auto server = kube::ServeHealth({"listen-address", f.listen_address, false}, checks, registry);
  if (!server.ok()) {
    LOG(ERROR) << server.status().message();
    return 1;
  }

  // Before the caches sync, so a bad address or certificate fails at once; until the first
  // session the API answers that nothing was considered yet.
  std::unique_ptr<scheduler::AdminServer> admin;
  if (!f.admin.address.empty()) {
    scheduler::AdminSources sources;
    sources.recorder = &sched.recorder();
    sources.cache = &sched.cache();
    sources.scheduler_names = f.scheduler.scheduler_names;
    sources.sampling = f.scheduler.sampling;
    sources.version = TEPHRA_VERSION;
    StatusOr<std::unique_ptr<scheduler::AdminServer>> started =
        scheduler::AdminServer::Start(f.admin, sources);
    if (!started.ok()) {
      LOG(ERROR) << started.status().message();
      return 2;
    }
    admin = std::move(*started);
  }

  std::unique_ptr<scheduler::DashboardServer> dashboard;
  if (!f.dashboard_address.empty()) {
    scheduler::DashboardSources sources;
    sources.recorder = &sched.recorder();
    sources.cache = &sched.cache();
    sources.history = &sched.history();
    sources.client = *client;
    sources.scheduler_names = f.scheduler.scheduler_names;
    sources.version = TEPHRA_VERSION;
    StatusOr<std::unique_ptr<scheduler::DashboardServer>> started =
        scheduler::DashboardServer::Start(f.dashboard_address, f.admin, sources);
    if (!started.ok()) {
      LOG(ERROR) << started.status().message();
      return 2;
    }
    dashboard = std::move(*started);
  }

  Status synced = sched.Start(f.sync_timeout);
  if (!synced.ok()) {
    LOG(ERROR) << "scheduler: " << synced.ToString();
    return synced.code() == StatusCode::kInvalidArgument ? 2 : 1;  // 2: a bad flag, as for parsing
  }
  if (admin) admin->SetServing(true);

  std::thread loop;
  kube::LeaseCallbacks callbacks;
  callbacks.lead = [&] {
    leading = true;
    loop = std::thread([&] { sched.Run([&] { return !shutdown.Requested() && leading; }); });
  };
  callbacks.stop_leading = [&] {
    leading = false;
    if (loop.joinable()) loop.join();
  };
  int exit_code = (*lease)->Run(shutdown, std::move(callbacks));
  if (admin) admin->Stop(std::chrono::seconds(2));
  if (dashboard) dashboard->Stop(std::chrono::seconds(2));
  sched.Stop();
  events.Flush(std::chrono::seconds(2));
  if (*server) (*server)->Stop(std::chrono::seconds(2));
  return exit_code;
}
