// A small HTTP/1.1 server, optionally HTTPS, used by every daemon for /healthz, /readyz and
// /metrics and by the admission webhook for its endpoints. Built on Boost.Beast, whose headers
// stay in the .cc files so including this one is cheap: the server (http_server.cc), one
// connection (http_connection.*) and the TLS material (http_tls.*).
//
//   * Routing by exact path and method; unknown paths get 404, other methods 405 with Allow.
//   * I/O threads run the event loop (connections, TLS, parsing, timeouts); handlers run on a
//     separate, fixed pool of worker threads with a bounded queue, so slow handlers never stop
//     the server from reading, answering timeouts or serving probes. A request that finds every
//     worker busy and the queue full gets 429 with Retry-After at once. Quick handlers (health
//     probes) may run inline on the I/O threads and answer whatever the workers do. Large
//     requests may get workers of their own, so they cannot crowd out small ones.
//   * Limits, all bounded per server: concurrent connections (at the limit the connection idle
//     the longest makes room for a new one; when none is idle the new one is closed at once,
//     so idle connections cannot lock clients out), request bytes buffered across all
//     connections (a request whose body does not fit gets 503 with Retry-After before the body
//     is read), request header and body size (413 for a body over
//     the limit, also when Content-Length announces it), read timeout (408 to a client that
//     stalls mid-request, where the connection can still carry it; it bounds the whole request,
//     so a slow-drip client cannot keep a connection by sending a byte now and then), idle
//     keep-alive timeout, handler timeout (503, sent at the deadline even while the handler is
//     still running; its late result is discarded) and write timeout (the connection is closed).
//   * Memory goes back to the system after a burst of large requests (malloc_trim).
//   * A watchdog, Health(): fails when every worker has been stuck without progress for
//     stall_timeout, or the event loop has not run, so a liveness probe can restart a wedged
//     process.
//   * TLS 1.2+ from PEM files, re-read when the files change so rotated certificates are served
//     without a restart; optional verification of client certificates against a CA bundle.
//   * Handlers must never crash the server: an exception becomes a 500 and a log line.
//   * Stop() stops accepting, lets requests in flight finish within a grace period, then closes;
//     it returns within about that time even when handlers are stuck (they are left running).
//
// Thread-safety: Handle() before Start(); Start/Stop from one controlling thread; port(),
// ReloadTls(), ActiveConnections(), Health() and stats() from any thread. Handlers run on the
// worker threads (or the I/O threads when inline), concurrently with each other, and must be
// thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace tephra::base {

struct HttpRequest {
  std::string method;                                        // "GET"
  std::string target;                                        // "/readyz?verbose"
  std::string path;                                          // "/readyz"
  std::string query;                                         // "verbose" (raw, without '?')
  std::vector<std::pair<std::string, std::string>> headers;  // in arrival order
  std::string body;
  std::string remote_address;  // "127.0.0.1:53412"
  bool tls = false;
  // When the client gets 503 if the handler has not answered (max() without a limit). A
  // handler doing long work may check it and give up early; its answer is discarded anyway.
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();

  // The first header with this name (case-insensitive), or nullptr.
  const std::string* Header(std::string_view name) const;
  // The first value of a query parameter, percent-decoded: "" for a bare "?verbose", nullopt
  // when absent.
  std::optional<std::string> QueryParam(std::string_view name) const;
  // Every value of a repeated parameter ("?exclude=a&exclude=b").
  std::vector<std::string> QueryParams(std::string_view name) const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  // Extra headers. Content-Length, Connection and Transfer-Encoding are the server's, and a
  // header with a malformed name or a value containing CR, LF or NUL is dropped.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;

  static HttpResponse Text(int status, std::string body);
  static HttpResponse Json(int status, std::string body);
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

struct TlsOptions {
  std::string cert_file;  // PEM certificate chain, leaf first
  std::string key_file;   // PEM private key
  // PEM CA bundle. When set, clients are asked for a certificate and it is verified.
  std::string client_ca_file;
  // With client_ca_file: refuse clients that present no certificate.
  bool require_client_cert = false;
  // How often the files are checked for changes (inode, size, modification time).
  std::chrono::milliseconds reload_interval = std::chrono::seconds(10);
};

struct HttpServerOptions {
  // Numeric IPv4 or IPv6 address ("0.0.0.0" to serve kubelet probes on the pod IP).
  std::string address = "127.0.0.1";
  uint16_t port = 0;   // 0: the kernel picks one; see port()
  int threads = 0;     // handler worker threads; 0: one per core
  int io_threads = 1;  // event-loop threads (TLS, parsing); inline handlers run here
  // Requests that may wait for a busy worker; more get 429 with Retry-After.
  size_t max_queued_requests = 64;
  // Requests with a body larger than this run on workers of their own (large_request_threads,
  // with a queue of max_queued_requests), so large and possibly slow requests can never take
  // every worker from small ones. 0: one pool for all.
  size_t large_request_bytes = 0;
  int large_request_threads = 1;
  // Open connections. At the limit a new one replaces the connection idle the longest (no
  // request begun), or is closed at once when none is idle. 0: no limit.
  size_t max_connections = 256;
  // Request bytes (bodies, as announced before they are read) held at once across all
  // connections, from the header until the answer is sent or the handler abandoned; a request
  // that does not fit gets 503 with Retry-After. 0: no limit.
  size_t max_buffered_bytes = 64 * 1024 * 1024;
  size_t max_header_bytes = 64 * 1024;
  size_t max_body_bytes = 1024 * 1024;  // the admission webhook uses 3 MiB
  // Reading one request (headers and body) once its first byte arrived, and the first request
  // (and the TLS handshake) of a connection.
  std::chrono::milliseconds read_timeout = std::chrono::seconds(30);
  // How long a kept-alive connection may wait for its next request.
  std::chrono::milliseconds idle_timeout = std::chrono::seconds(90);
  // Longest a handler may take before the client gets 503 (0: no limit). The handler still
  // runs to completion on its worker; its late answer is dropped.
  std::chrono::milliseconds handler_timeout = std::chrono::seconds(60);
  std::chrono::milliseconds write_timeout = std::chrono::seconds(30);
  // Health() fails when all workers were busy this long without progress (0: three handler
  // timeouts, at least 30 s) or the event loop has not run for this long.
  std::chrono::milliseconds stall_timeout{0};
  // The answer to a request refused because the server is busy, given the status: 429 (workers
  // and queue full) or 503 (request bytes over budget; the body is not read, only the header).
  // Default: plain text. The server adds Retry-After when it is missing. Runs on an I/O
  // thread: must be quick.
  std::function<HttpResponse(const HttpRequest&, int status)> busy_response;
  std::optional<TlsOptions> tls;
  std::string name = "http";  // in log lines: "metrics server", "webhook server"
};

// Where a route's handler runs.
enum class Dispatch {
  kWorkers,  // on the worker pool, under the handler timeout and the queue limit
  kInline,   // on the I/O thread, at once: for quick handlers that must answer under load
};

// A server's counters, for tests, metrics and logs.
struct HttpServerStats {
  size_t connections = 0;
  size_t busy_workers = 0;
  size_t queued_requests = 0;
  size_t buffered_bytes = 0;
  uint64_t refused_connections = 0;   // over max_connections, none idle to evict
  uint64_t evicted_connections = 0;   // idle ones closed to make room
  uint64_t overloaded_requests = 0;   // workers and queue full
  uint64_t over_budget_requests = 0;  // over max_buffered_bytes
  uint64_t timed_out_handlers = 0;
};

class HttpServer {
 public:
  explicit HttpServer(HttpServerOptions options);
  // Stops the server if it is still running (with a short grace period).
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Routes `method` ("GET", "POST", ...) on exactly `path` to `handler`. FailedPrecondition
  // after Start(), AlreadyExists for a duplicate route, InvalidArgument for a path that does
  // not start with '/'.
  // kInline handlers must be quick and must not block.
  Status Handle(std::string_view method, std::string_view path, HttpHandler handler,
                Dispatch dispatch = Dispatch::kWorkers);

  // Loads the TLS material, binds, listens and starts the worker threads.
  Status Start();
  // The bound port once started (the kernel's choice when options.port was 0).
  uint16_t port() const;
  // Stops accepting, closes idle connections, lets requests in flight finish within `grace`,
  // then closes whatever is left. Returns within about `grace` (plus a moment): handlers still
  // running then are left to finish on their own threads with their results discarded, so what
  // they use must stay alive, or the process exit without running destructors; see
  // abandoned_handlers(). Idempotent.
  void Stop(std::chrono::milliseconds grace = std::chrono::seconds(5));
  // Handlers Stop() left running.
  size_t abandoned_handlers() const;

  // Re-reads the certificate files now (the periodic check does the same when they change).
  // On error the certificates being served stay in place.
  Status ReloadTls();
  // Open client connections.
  size_t ActiveConnections() const;
  // The watchdog: Unavailable, saying why, when the workers are wedged or the event loop does
  // not run (see stall_timeout). OK before Start() and after Stop().
  Status Health() const;
  HttpServerStats stats() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tephra::base
