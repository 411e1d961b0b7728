// The /healthz, /readyz and /metrics endpoints of the controller manager. Kept behind a small
// interface of its own so that callers need not include the HTTP server's header (whose
// request and response types share names with the API client's).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "kube/status.h"

namespace tephra::metrics {
class Registry;
}

namespace tephra::controllers {

class HealthServer {
 public:
  virtual ~HealthServer() = default;
  virtual uint16_t port() const = 0;
  virtual void Stop() = 0;
};

// Serves on "host:port" ("127.0.0.1:11252"; port 0 lets the kernel choose). `ready` answers
// the readiness check "controllers" (caches synced and leading, or standing by).
StatusOr<std::unique_ptr<HealthServer>> StartHealthServer(const std::string& address,
                                                          const metrics::Registry& registry,
                                                          std::function<Status()> ready);

}  // namespace tephra::controllers
