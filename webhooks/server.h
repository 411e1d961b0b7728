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

#include "kube/metrics.h"
#include "kube/status.h"
#include "webhooks/handler.h"

namespace tephra::webhooks {

struct AdmissionServerOptions {
  std::string address = "0.0.0.0";
  uint16_t port = 8443;
  int threads = 0;  // 0: one per core
  std::chrono::milliseconds request_timeout = std::chrono::seconds(10);
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
  // Stops accepting and lets requests in flight finish within `grace`.
  void Stop(std::chrono::milliseconds grace);

  uint16_t webhook_port() const;
  uint16_t health_port() const;
  std::vector<std::string> paths() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tephra::webhooks
