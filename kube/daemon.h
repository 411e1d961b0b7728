// What every Tephra daemon does the same way: API-server flags and client, a process identity,
// leader-election flags, the /healthz /readyz /metrics server, running under a lease, and the
// whole lifecycle around a daemon's own parts (DaemonRunner).
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "base/flags.h"
#include "base/health.h"
#include "base/http_server.h"
#include "base/process.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kube/events.h"
#include "kube/leader_election.h"

namespace tephra::metrics {
class Registry;
}

namespace tephra::kube {

// --kubeconfig, --master, --kube-api-qps, --kube-api-burst into `flags` (defaults kept).
void AddClientFlags(base::FlagSet& set, ClientFlags* flags);

// Builds the client from the flags; the error names what was wrong with the configuration.
StatusOr<std::shared_ptr<Client>> ConnectFromFlags(const ClientFlags& flags,
                                                   const std::string& user_agent);

// "host_123456": unique per replica, stable for the life of the process.
std::string ProcessIdentity();

// $TEPHRA_NAMESPACE, $POD_NAMESPACE, the service account's namespace, or "tephra-system".
std::string DefaultDaemonNamespace();

// Leader election with component-base's flag names (--leader-elect, --leader-elect-*).
struct LeaderElectionFlags {
  bool enabled = true;
  std::string resource_namespace;  // empty: DefaultDaemonNamespace()
  std::string resource_name;
  std::chrono::milliseconds lease_duration{15000};
  std::chrono::milliseconds renew_deadline{10000};
  std::chrono::milliseconds retry_period{2000};

  void Register(base::FlagSet& set);
  // The elector's configuration for `identity`, validated.
  StatusOr<LeaderElectionConfig> Config(const std::string& identity) const;
};

// Serves /healthz, /readyz and /metrics on "host:port". Returns nullptr (and OK) when the
// address is "0" or its port is 0 and `allow_ephemeral` is false; `flag` names the flag in errors.
struct HealthServing {
  std::string flag;
  std::string address;
  bool allow_ephemeral = true;
};
StatusOr<std::unique_ptr<base::HttpServer>> ServeHealth(const HealthServing& serving,
                                                        const base::HealthChecks& checks,
                                                        const metrics::Registry& registry);

// Splits "host:port" ("[::1]:80", ":8080" means all addresses); `flag` names the flag in errors.
StatusOr<std::pair<std::string, uint16_t>> SplitHostPort(const std::string& flag,
                                                         const std::string& address);

// Runs a daemon's work while it holds the lease, or at once without leader election.
struct LeaseCallbacks {
  std::function<void()> lead;          // starts the work and returns
  std::function<void()> stop_leading;  // stops it; called on the leading thread
};

class LeaseRunner {
 public:
  // Validates the flags (error names the rule) and prepares the elector.
  static StatusOr<std::unique_ptr<LeaseRunner>> Create(std::shared_ptr<Client> client,
                                                       const LeaderElectionFlags& flags,
                                                       const std::string& identity);
  // Blocks until shutdown. Returns the exit code: 0 after shutdown, 1 when leadership was
  // lost (a process that lost its lease may hold stale state; a restart starts clean).
  int Run(base::ShutdownSignal& shutdown, LeaseCallbacks callbacks);
  // True while leading; always true without leader election.
  bool IsLeader() const;
  bool Elects() const { return elector_ != nullptr; }

 private:
  LeaseRunner() = default;
  LeaseCallbacks callbacks_;
  bool leading_ = false;  // touched only on the elector's thread
  std::unique_ptr<LeaderElector> elector_;
};

class InformerFactory;

// Starts `informers` and waits for their caches, logging now and then; false when
// `keep_going` turned false first. For a Daemon's Lead, which runs off the elector's thread.
bool StartAndSyncInformers(InformerFactory& informers, const std::function<bool()>& keep_going);

// ---- The daemon lifecycle ----

// Exit codes every daemon shares (CONTRIBUTING.md, "Errors and crashes"): 2 for a bad flag or
// configuration, as InitProcess exits for a flag it cannot parse; 1 when the daemon cannot do
// its work (no API server, a lost lease), so that a restart starts clean.
inline constexpr int kExitFailure = 1;
inline constexpr int kExitBadConfiguration = 2;

// A step of a daemon's start: OK, or the error to log (its message) and the exit code.
class [[nodiscard]] StartStatus {
 public:
  StartStatus() = default;  // OK
  StartStatus(int exit_code, Status status) : exit_code_(exit_code), status_(std::move(status)) {}
  bool ok() const { return status_.ok(); }
  int exit_code() const { return exit_code_; }
  const Status& status() const { return status_; }

 private:
  int exit_code_ = 0;
  Status status_;
};

// What DaemonRunner takes from a daemon's options.
struct DaemonOptions {
  // The client's user agent and the events' reportingComponent ("tephra-scheduler").
  std::string component;
  // The events' source.component: the name tools that follow Volcano filter on
  // (EventRecorderOptions::source).
  std::string event_source;
  ClientFlags client;
  LeaderElectionFlags leader;
  HealthServing health;
};

class DaemonRunner;

// What the runner hands a daemon's parts; everything outlives them.
struct DaemonContext {
  std::shared_ptr<Client> client;
  EventRecorder* events = nullptr;
  metrics::Registry* registry = nullptr;
  std::string identity;  // ProcessIdentity(): the lease holder and the events' instance
  base::ShutdownSignal* shutdown = nullptr;
  const DaemonRunner* runner = nullptr;  // leading() and Ready(), for health checks
};

// A daemon's own parts, plugged into DaemonRunner, which calls each once, in this order:
//   Build        on the connected client: makes the work and adds the daemon's health and
//                readiness checks (served from then on); nothing runs yet.
//   Start        the health server is up; before campaigning for the lease: the daemon's own
//                servers, and what a standby needs too (the scheduler syncs its caches here).
//   Lead         on winning the lease (at once without leader election), on a thread of the
//                runner's, never the elector's, so a cache sync longer than the renew deadline
//                cannot cost the lease just won.
//   StopLeading  once leadership ends or shutdown comes, after Lead returned.
//   Stop         the lease given up: the daemon's own servers first, then the work. The runner
//                then flushes the events and stops the health server.
// A step that fails ends the run with its exit code, its message logged; no later step runs
// (Stop neither: the daemon's destructor cleans up). A daemon that lost its lease exits (1)
// rather than campaigning again: its state may be stale.
class Daemon {
 public:
  virtual ~Daemon() = default;
  virtual StartStatus Build(const DaemonContext& context, base::HealthChecks& checks) = 0;
  virtual StartStatus Start() { return {}; }
  // Starts the work and returns once it runs (true), or false when `keep_leading` turned false
  // first. `keep_leading` is false from shutdown or the end of leadership on; work that runs
  // on threads of its own may keep calling it to know when to stop.
  virtual bool Lead(const std::function<bool()>& keep_leading) = 0;
  // Stops what Lead started; on the elector's thread (the main thread without election).
  virtual void StopLeading() {}
  virtual void Stop() {}
};

// The lifecycle every daemon that elects shares: client, process identity, lease, event
// recorder, health server, the daemon's parts, and the stop order. Thread-safe: leading() and
// Ready() are read from health checks while Run runs.
class DaemonRunner {
 public:
  // `registry`: where the health server and the recorder report (default:
  // metrics::DefaultRegistry()).
  DaemonRunner(DaemonOptions options, base::ShutdownSignal& shutdown,
               metrics::Registry* registry = nullptr);
  ~DaemonRunner();
  DaemonRunner(const DaemonRunner&) = delete;
  DaemonRunner& operator=(const DaemonRunner&) = delete;

  // Connects from options.client and runs `daemon` until shutdown or a lost lease; once per
  // runner. Returns the exit code: 0 after shutdown; 1 without an API server, when the health
  // server cannot start, or after losing the lease; 2 for bad leader-election flags; a failed
  // step's own code.
  int Run(std::unique_ptr<Daemon> daemon);
  // As Run, on `client` (tests: a fake API server).
  int Run(std::unique_ptr<Daemon> daemon, std::shared_ptr<Client> client);

  // From winning the lease until leadership ends or shutdown comes.
  bool leading() const { return leading_.load(); }
  // A standby is ready (it syncs only once it leads); a leader once Lead returned true. From
  // Build on (the health checks).
  bool Ready() const;

 private:
  bool KeepLeading() const;

  DaemonOptions options_;
  base::ShutdownSignal& shutdown_;
  metrics::Registry* registry_;
  std::unique_ptr<LeaseRunner> lease_;  // set before anything reads it
  std::atomic<bool> leading_{false};
  std::atomic<bool> running_{false};  // Lead returned true and StopLeading has not run
  std::thread starter_;               // runs Lead; started and joined on the elector's thread
};

}  // namespace tephra::kube
