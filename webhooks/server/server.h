// The serving side of tephra-admission: the HTTPS webhook server with the admission router,
// /healthz, /readyz and /metrics on it and, optionally, on a plain-HTTP health port.
// Beast and the HTTP server's types stay behind this header.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "metrics/metrics.h"
#include "webhooks/admission/handler.h"

namespace tephra::webhooks {

// Defaults sized for the chart's 512Mi memory limit (webhooks/README.md, "Load, limits and
// overload").
struct AdmissionServerOptions {
  std::string address = "0.0.0.0";
  uint16_t port = 8443;
  int threads = 0;  // review workers; 0: one per core
  // Reviews waiting for a worker; more are answered 429 with Retry-After at once.
  int max_queued_requests = 64;
  // Open HTTPS connections (an idle TLS connection costs about 50-100 KiB).
  int max_connections = 1000;
  // Request bodies held at once, across all connections; a review that does not fit is
  // answered 503 with Retry-After before its body is read.
  int64_t max_buffered_bytes = 64 << 20;
  std::chrono::milliseconds idle_timeout = std::chrono::seconds(90);
  std::chrono::milliseconds request_timeout = std::chrono::seconds(10);
  // Liveness fails when every review worker was stuck this long (0: the server's default).
  std::chrono::milliseconds stall_timeout{0};
  std::string cert_file;  // PEM, re-read when it changes
  std::string key_file;
  // host:port of the plain-HTTP /healthz, /readyz, /metrics; "" or "0": none.
  std::string health_address;
};

class AdmissionServer {
 public:
  AdmissionServer(AdmissionServerOptions options, metrics::Registry& registry);
  ~AdmissionServer();
  AdmissionServer(const AdmissionServer&) = delete;
  AdmissionServer& operator=(const AdmissionServer&) = delete;

  // Before StartWebhooks(): an admission path and what must hold before its handler is asked.
  Status AddAdmission(std::string path, std::shared_ptr<const AdmissionHandler> handler,
                      std::function<Status()> ready = nullptr);
  // Any time: a readiness check shown on /readyz.
  Status AddReadinessCheck(std::string name, std::function<Status()> check);

  // The health port, which can run before certificates exist.
  Status StartHealth();
  // Where the serving certificate and key are (before StartWebhooks()).
  void SetCertificateFiles(std::string cert_file, std::string key_file);
  // The HTTPS server; the certificate files must exist.
  Status StartWebhooks();
  // Re-reads the certificate files now.
  Status ReloadTls();
  // Stops accepting and lets requests in flight finish within `grace`; returns within about
  // that time even when reviews are stuck (see abandoned_reviews()).
  void Stop(std::chrono::milliseconds grace);
  // Reviews still running after Stop(): their handlers use the caches, so the process should
  // exit without destroying them.
  size_t abandoned_reviews() const;

  uint16_t webhook_port() const;
  uint16_t health_port() const;
  std::vector<std::string> paths() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tephra::webhooks
