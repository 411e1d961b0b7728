#include "scheduler/options.h"

namespace tephra::scheduler {

kube::DaemonOptions SchedulerDaemonOptions::DefaultDaemonOptions() {
  kube::DaemonOptions daemon;
  daemon.component = "tephra-scheduler";
  daemon.client.qps = 2000;
  daemon.client.burst = 2000;
  daemon.health = {"listen-address", "127.0.0.1:8080", false};
  return daemon;
}

void SchedulerDaemonOptions::Register(base::FlagSet& flags) {
  flags.SetGroup("Kubernetes");
  kube::AddClientFlags(flags, &daemon.client);
  flags.SetGroup("Scheduling");
  flags.AddStringList("scheduler-name", &names,
                      "Pods with this schedulerName are ours (repeatable; default volcano).");
  flags.AddString("scheduler-conf", &scheduler.conf_file,
                  "volcano-scheduler.conf file; reloaded when it changes.");
  flags.AddString("scheduler-conf-configmap", &scheduler.conf_configmap,
                  "namespace/name of the ConfigMap --scheduler-conf is mounted from: warnings "
                  "about the configuration are also Events on it.");
  flags.AddString("check-conf", &check_conf,
                  "Check this volcano-scheduler.conf as the scheduler would load it and exit: 0 "
                  "with any warnings printed, 2 with the error naming the field. No API server.");
  flags.AddDuration("schedule-period", &scheduler.period, "Time between scheduling cycles.");
  flags.AddDuration("schedule-min-gap", &scheduler.min_gap,
                    "Shortest time between two cycles when new work arrives early.");
  flags.AddString("default-queue", &scheduler.default_queue, "Queue for PodGroups that name none.");
  flags.AddInt("minimum-feasible-nodes", &scheduler.sampling.minimum_feasible_nodes,
               "Find at least this many feasible nodes per task.");
  flags.AddInt("minimum-percentage-nodes-to-find",
               &scheduler.sampling.minimum_percentage_nodes_to_find,
               "Lower bound of the adaptive node sample, in percent.");
  flags.AddInt("percentage-nodes-to-find", &scheduler.sampling.percentage_nodes_to_find,
               "Node sample in percent (0: adaptive).");
  flags.AddString("node-selector", &scheduler.node_selector,
                  "Only schedule onto nodes matching this label selector.");
  flags.AddString(
      "queue-label-selector", &scheduler.queue_selector,
      "Only serve Queues matching this label selector (PodGroups in other queues are left alone); "
      "a default queue created under key=value terms carries those labels.");
  flags.AddInt("bind-workers", &scheduler.binder.workers, "Concurrent pods/binding requests.");
  flags.AddInt("status-workers", &scheduler.status_workers,
               "Concurrent PodGroup, Queue and pod status writes.");
  flags.AddBool("record-scheduled-events", &scheduler.binder.record_scheduled_events,
                "Record a Scheduled event for every bound pod.");
  flags.SetGroup("Leader election");
  daemon.leader.Register(flags);
  flags.SetGroup("Process");
  flags.AddString("listen-address", &daemon.health.address,
                  "Address for /metrics, /healthz and /readyz ('0' or port 0: none).");
  flags.AddDuration("cache-sync-timeout", &sync_timeout,
                    "How long to wait for the informers at start.");
  flags.SetGroup("Admin API");
  flags.AddString(
      "admin-address", &admin.address,
      "host:port for the gRPC admin API (job explanations, queue usage, snapshots; read-only) "
      "and its health service; empty: off. tephractl looks for it at 127.0.0.1:8091.");
  flags.AddString("admin-tls-cert", &admin.tls_cert_file,
                  "Serve the admin API over TLS with this certificate (PEM).");
  flags.AddString("admin-tls-key", &admin.tls_key_file,
                  "The private key of --admin-tls-cert (PEM).");
  flags.AddString("admin-tls-client-ca", &admin.tls_client_ca_file,
                  "Require admin clients to present a certificate signed by this CA (mutual TLS).");
  flags.AddBool(
      "admin-allow-anonymous", &admin.allow_anonymous,
      "Serve the admin API on an address beyond loopback without requiring client certificates.");
  flags.AddString(
      "dashboard-address", &dashboard_address,
      "host:port for the read-only web dashboard (queues, jobs and why they wait, the cluster, "
      "the last hour; docs/dashboard.md); empty: off. Uses the --admin-tls-* options: HTTPS "
      "with --admin-tls-cert, client certificates with --admin-tls-client-ca.");
  flags.AddInt("explain-cache-size", &explain_cache_size,
               "Jobs whose last explanation is kept (least recently updated dropped first).");
  flags.AddString(
      "replay", &replay,
      "Run one session on this dumped snapshot (tephractl snapshot dump) without an API server, "
      "print its decisions and exit. Uses --scheduler-conf (default: the built-in configuration).");
}

Status SchedulerDaemonOptions::Finish() {
  if (const std::string& cm = scheduler.conf_configmap;
      !cm.empty() && (cm.find('/') == std::string::npos || cm.front() == '/' || cm.back() == '/' ||
                      cm.find('/') != cm.rfind('/'))) {
    return InvalidArgument("--scheduler-conf-configmap: \"" + cm + "\" is not namespace/name");
  }
  if (explain_cache_size < 1) return InvalidArgument("--explain-cache-size: must be at least 1");
  scheduler.explain_capacity = static_cast<size_t>(explain_cache_size);
  scheduler.keep_decision_snapshot = !admin.address.empty();
  if (!names.empty()) scheduler.scheduler_names = names;
  if (daemon.leader.resource_name.empty()) {
    daemon.leader.resource_name =
        scheduler.scheduler_names.size() == 1 ? scheduler.scheduler_names[0] : "volcano";
  }
  // Tools that follow Volcano's scheduler filter events on its name.
  daemon.event_source =
      scheduler.scheduler_names.empty() ? "volcano" : scheduler.scheduler_names.front();
  return Status::Ok();
}

}  // namespace tephra::scheduler
