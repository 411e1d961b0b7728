// Liveness and readiness endpoints in kube-apiserver's style, and /metrics.
//
//   GET /healthz, /livez   liveness: the health checks. Failing means "restart me".
//   GET /readyz            readiness: the health checks, then the readiness checks ("informers
//                          synced", "leader or standby"). Failing means "send me no traffic".
//   GET /metrics           the registry in the Prometheus text format.
//
// Every check passing answers 200 "ok"; with ?verbose each check is listed:
//   [+]ping ok
//   [+]informers-synced ok
//   readyz check passed
// Any check failing answers 500 with the listing and each failure's message:
//   [+]ping ok
//   [-]informers-synced failed: waiting for pods, nodes
//   readyz check failed
// ?exclude=name (repeatable) skips a check.
//
// Thread-safety: checks may be added at any time from any thread; they run on the HTTP
// server's worker threads, concurrently with each other, and must be thread-safe and quick.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/http_server.h"
#include "base/status.h"
#include "sync/mutex.h"

namespace tephra::metrics {
class Registry;
}

namespace tephra::base {

// OK when healthy; otherwise the message says what is wrong.
using HealthCheck = std::function<Status()>;

class HealthChecks {
 public:
  // Starts with a "ping" health check that always passes, as kube-apiserver has.
  HealthChecks();

  // AlreadyExists for a name in use, InvalidArgument for an empty name or one with spaces.
  Status AddHealthCheck(std::string name, HealthCheck check);
  Status AddReadinessCheck(std::string name, HealthCheck check);

  // The answers for /healthz (and /livez) and /readyz.
  HttpResponse Healthz(const HttpRequest& request) const;
  HttpResponse Readyz(const HttpRequest& request) const;

 private:
  struct NamedCheck {
    std::string name;
    HealthCheck check;
  };

  Status Add(std::vector<NamedCheck>* list, std::string name, HealthCheck check) EXCLUDES(mu_);
  HttpResponse Evaluate(std::string_view what, const std::vector<NamedCheck>& checks,
                        const HttpRequest& request) const;

  mutable sync::Mutex mu_;
  std::vector<NamedCheck> health_ GUARDED_BY(mu_);
  std::vector<NamedCheck> readiness_ GUARDED_BY(mu_);
  // Last outcome of each check, so a change is logged once rather than on every probe.
  mutable std::map<std::string, bool> last_ok_ GUARDED_BY(mu_);
};

// Routes GET /healthz, /livez, /readyz and /metrics on `server` (before it starts), inline on
// its I/O threads so they answer while its handler workers are busy. `checks` and `registry`
// must outlive the server.
Status MountHealthEndpoints(HttpServer& server, const HealthChecks& checks,
                            const metrics::Registry& registry);

}  // namespace tephra::base
