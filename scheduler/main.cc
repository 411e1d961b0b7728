// tephra-scheduler: a Volcano-compatible, session-based gang scheduler.
#include <atomic>
#include <thread>

#include <glog/logging.h>

#include "kube/daemon.h"
#include "kube/events.h"
#include "kube/metrics.h"
#include "scheduler/app/scheduler.h"

namespace {

using namespace tephra;

struct Flags {
  kube::ClientFlags client{"", "", "", 2000, 2000};
  scheduler::SchedulerOptions scheduler;
  std::string listen_address = "127.0.0.1:8080";
  kube::LeaderElectionFlags leader;
  std::chrono::milliseconds sync_timeout{120000};
  std::vector<std::string> names;
};

}  // namespace

int main(int argc, char** argv) {
  Flags f;
  kube::FlagSet flags("tephra-scheduler", "Schedules gangs of pods for Volcano-compatible batch jobs.");
  flags.SetGroup("Kubernetes");
  kube::AddClientFlags(flags, &f.client);
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
  flags.AddInt("status-workers", &f.scheduler.status_workers, "Concurrent PodGroup, Queue and pod status writes.");
  flags.AddBool("record-scheduled-events", &f.scheduler.binder.record_scheduled_events, "Record a Scheduled event for every bound pod.");
  flags.SetGroup("Leader election");
  f.leader.Register(flags);
  flags.SetGroup("Process");
  flags.AddString("listen-address", &f.listen_address, "Address for /metrics, /healthz and /readyz ('0' or port 0: none).");
  flags.AddDuration("cache-sync-timeout", &f.sync_timeout, "How long to wait for the informers at start.");
  flags.AddGlogFlags();
  kube::ShutdownSignal& shutdown = kube::InitProcess(argc, argv, flags);
  if (!f.names.empty()) f.scheduler.scheduler_names = f.names;
  if (f.leader.resource_name.empty()) {
    f.leader.resource_name = f.scheduler.scheduler_names.size() == 1 ? f.scheduler.scheduler_names[0] : "volcano";
  }

  StatusOr<std::shared_ptr<kube::Client>> client = kube::ConnectFromFlags(f.client, "tephra-scheduler");
  if (!client.ok()) {
    LOG(ERROR) << client.status().ToString();
    return 1;
  }
  const std::string identity = kube::ProcessIdentity();
  StatusOr<std::unique_ptr<kube::LeaseRunner>> lease = kube::LeaseRunner::Create(*client, f.leader, identity);
  if (!lease.ok()) {
    LOG(ERROR) << lease.status().message();
    return 2;
  }

  metrics::Registry& registry = metrics::DefaultRegistry();
  kube::EventRecorder events(*client, {"tephra-scheduler", identity});
  scheduler::Scheduler sched(*client, f.scheduler, &registry, &events);
  std::atomic<bool> leading{false};

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
  auto server = kube::ServeHealth({"listen-address", f.listen_address, false}, checks, registry);
  if (!server.ok()) {
    LOG(ERROR) << server.status().message();
    return 1;
  }

  Status synced = sched.Start(f.sync_timeout);
  if (!synced.ok()) {
    LOG(ERROR) << "scheduler: " << synced.ToString();
    return 1;
  }

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
  sched.Stop();
  events.Flush(std::chrono::seconds(2));
  if (*server) (*server)->Stop(std::chrono::seconds(2));
  return exit_code;
}
