// What every Tephra daemon does the same way: API-server flags and client, a process identity,
// leader-election flags, the /healthz /readyz /metrics server, and running under a lease.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "base/flags.h"
#include "base/health.h"
#include "base/http_server.h"
#include "base/process.h"
#include "kube/client.h"
#include "kube/config.h"
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

}  // namespace tephra::kube
