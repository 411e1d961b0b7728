// tephra-admission's command line. Flag names follow vc-webhook-manager's where it has them
// (docs/compatibility.md §3), so an existing Deployment's arguments keep working.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "base/flags.h"
#include "base/status.h"
#include "kube/config.h"

namespace tephra::webhooks {

// Volcano's defaults: 50 requests per second, bursts of 100.
inline kube::ClientFlags DefaultClientFlags() {
  kube::ClientFlags flags;
  flags.qps = 50;
  flags.burst = 100;
  return flags;
}

struct AdmissionOptions {
  kube::ClientFlags client = DefaultClientFlags();

  // Serving.
  std::string address = "0.0.0.0";
  int port = 8443;
  int threads = 0;  // 0: one per core
  // Bounds sized for the chart's 512Mi limit (see AdmissionServerOptions).
  int max_queued_requests = 64;
  int max_connections = 1000;
  int max_buffered_request_mib = 64;
  std::chrono::milliseconds idle_timeout = std::chrono::seconds(90);
  std::chrono::milliseconds request_timeout = std::chrono::seconds(10);
  std::chrono::seconds graceful_shutdown_time = std::chrono::seconds(5);
  std::string healthz_address = "127.0.0.1:11251";  // "" or "0": no plain-HTTP health port

  // What is served.
  std::vector<std::string> enabled_admission;  // default: kDefaultEnabledPaths
  std::vector<std::string> scheduler_names = {"volcano"};
  int max_queue_depth = 5;
  bool enable_queue_allocated_pods_check = false;
  bool enable_root_queue_protection = true;
  std::string admission_conf;  // resource groups for /pods/mutate

  // Certificates: generated and shared through a Secret unless --tls-cert-file is given.
  std::string tls_cert_file;
  std::string tls_private_key_file;
  std::string ca_cert_file;
  std::string secret_name = "volcano-admission-secret";
  std::string namespace_;  // default: kube::DefaultDaemonNamespace()
  std::string service_name = "volcano-admission-service";
  std::vector<std::string> extra_sans;
  std::string cert_dir;  // default: a private temporary directory
  std::string webhook_config_name_prefix = "volcano-admission-service";
  std::string webhook_config_label_selector;

  AdmissionOptions();
  void Register(base::FlagSet& flags);
  // Checks the values together and fills in computed defaults; the error names the flag.
  Status Finish();

  bool generates_certificates() const { return tls_cert_file.empty(); }
};

}  // namespace tephra::webhooks
