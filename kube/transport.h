// The HTTP seam between Tephra and the API server. Client builds requests; a Transport moves
// them. The real transport is Boost.Beast over TLS with a keep-alive pool; tests substitute
// fakes that inject failures. Calls block the calling thread, which does the network I/O itself.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "kube/config.h"

namespace tephra::kube {

struct ApiRequest {
  std::string method = "GET";
  std::string target;  // path and query: "/api/v1/namespaces/x/pods?limit=500"
  std::string body;
  std::string content_type;  // for requests with a body
  std::vector<std::pair<std::string, std::string>> headers;
  // 0 = the transport's default. For streams: the longest silence tolerated between bytes.
  std::chrono::milliseconds timeout{0};
};

struct ApiResponse {
  int status = 0;
  std::string body;
  std::string content_type;
  std::optional<std::chrono::seconds> retry_after;
};

// A response whose body is read incrementally (WATCH).
class ResponseStream {
 public:
  virtual ~ResponseStream() = default;
  virtual int status() const = 0;
  // Appends the next body bytes to *out. Returns false at the end of the body. Blocks until
  // bytes arrive, the stream is closed, or the request's timeout passes without bytes.
  virtual StatusOr<bool> Read(std::string* out) = 0;
  // Thread-safe; makes a blocked Read return Cancelled.
  virtual void Close() = 0;
};

class Transport {
 public:
  virtual ~Transport() = default;
  // One request, whole response. Network failures are Unavailable; timeouts DeadlineExceeded.
  virtual StatusOr<ApiResponse> RoundTrip(const ApiRequest& request) = 0;
  // Sends the request and returns once the response headers have arrived.
  virtual StatusOr<std::unique_ptr<ResponseStream>> Stream(const ApiRequest& request) = 0;
};

struct TransportOptions {
  // At least as many as requests a daemon has in flight at once (the benchmarks run the
  // scheduler's binder with 256 workers): a connection returned to a full pool is closed, and
  // the next burst pays a TLS handshake per request on both ends.
  size_t max_idle_connections = 256;
  // A connection idle longer than this is not reused: kube-apiserver closes one idle for 90 s,
  // and a request sent as it does would fail.
  std::chrono::milliseconds max_idle_age{45000};
  std::chrono::milliseconds connect_timeout{10000};
};

// The Beast/OpenSSL transport for `config` (TLS verified against config.ca_pem, client
// certificate or bearer token attached to every request).
StatusOr<std::shared_ptr<Transport>> NewHttpTransport(const RestConfig& config,
                                                      const TransportOptions& options = {});

}  // namespace tephra::kube
