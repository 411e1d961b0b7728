// A small HTTP/1.1 server, optionally HTTPS, used by every daemon for /healthz, /readyz and
// /metrics and by the admission webhook for its endpoints. Built on Boost.Beast, whose headers
// stay in http_server.cc so including this one is cheap.
//
//   * Routing by exact path and method; unknown paths get 404, other methods 405 with Allow.
//   * A fixed pool of worker threads runs the event loop and the handlers; keep-alive.
//   * Limits: request header and body size (413 for a body over the limit, also when
//     Content-Length announces it), read timeout (408 to a client that stalls mid-request, where
//     the connection can still carry it), idle keep-alive timeout, handler timeout (503) and
//     write timeout (the connection is closed).
//   * TLS 1.2+ from PEM files, re-read when the files change so rotated certificates are served
//     without a restart; optional verification of client certificates against a CA bundle.
//   * Handlers must never crash the server: an exception becomes a 500 and a log line.
//   * Stop() stops accepting, lets requests in flight finish within a grace period, then closes.
//
// Thread-safety: Handle() before Start(); Start/Stop from one controlling thread; port(),
// ReloadTls() and ActiveConnections() from any thread. Handlers run on the worker threads,
// concurrently with each other, and must be thread-safe.
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

#include "kube/status.h"

namespace tephra::kube {

struct HttpRequest {
  std::string method;  // "GET"
  std::string target;  // "/readyz?verbose"
  std::string path;    // "/readyz"
  std::string query;   // "verbose" (raw, without '?')
  std::vector<std::pair<std::string, std::string>> headers;  // in arrival order
  std::string body;
  std::string remote_address;  // "127.0.0.1:53412"
  bool tls = false;

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
  uint16_t port = 0;  // 0: the kernel picks one; see port()
  int threads = 0;    // worker threads; 0: one per core
  size_t max_header_bytes = 64 * 1024;
  size_t max_body_bytes = 1024 * 1024;  // the admission webhook uses 3 MiB
  // Reading one request (headers and body) once its first byte arrived, and the first request.
  std::chrono::milliseconds read_timeout = std::chrono::seconds(30);
  // How long a kept-alive connection may wait for its next request.
  std::chrono::milliseconds idle_timeout = std::chrono::seconds(90);
  // Longest a handler may take before the client gets 503 (0: no limit). The handler still
  // runs to completion on its worker; its late answer is dropped.
  std::chrono::milliseconds handler_timeout = std::chrono::seconds(60);
  std::chrono::milliseconds write_timeout = std::chrono::seconds(30);
  std::optional<TlsOptions> tls;
  std::string name = "http";  // in log lines: "metrics server", "webhook server"
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
  Status Handle(std::string_view method, std::string_view path, HttpHandler handler);

  // Loads the TLS material, binds, listens and starts the worker threads.
  Status Start();
  // The bound port once started (the kernel's choice when options.port was 0).
  uint16_t port() const;
  // Stops accepting, closes idle connections, lets requests in flight finish within `grace`,
  // then closes whatever is left and joins the workers. Handlers still running are waited for.
  // Idempotent.
  void Stop(std::chrono::milliseconds grace = std::chrono::seconds(5));

  // Re-reads the certificate files now (the periodic check does the same when they change).
  // On error the certificates being served stay in place.
  Status ReloadTls();
  // Open client connections.
  size_t ActiveConnections() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tephra::kube
