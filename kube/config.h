// How to reach and authenticate to the Kubernetes API server: kubeconfig files (merged like
// kubectl), in-cluster service-account configuration, and the common command-line overrides.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "base/status.h"

namespace tephra::kube {

struct RestConfig {
  std::string server;  // "https://127.0.0.1:6443" (http:// only for tests)
  std::string tls_server_name;
  std::string ca_pem;                     // trusted CA certificates (PEM); empty = system roots
  bool insecure_skip_tls_verify = false;  // only when the kubeconfig says so
  std::string client_cert_pem;
  std::string client_key_pem;
  std::string bearer_token;
  // Re-read when older than a minute, so rotated service-account tokens are picked up.
  std::string bearer_token_file;
  std::string impersonate_user;
  double qps = 50;
  int burst = 100;
  std::chrono::milliseconds timeout{30000};  // default per-request timeout
  std::string user_agent = "tephra";
  std::string context_name;  // which kubeconfig context this came from (for messages)
  std::string namespace_;    // the context's or service account's namespace, if any
};

struct KubeconfigOptions {
  // Explicit --kubeconfig; empty = $KUBECONFIG (':'-separated, merged) or ~/.kube/config.
  std::string path;
  std::string context;  // --context; empty = current-context
};

// Loads and merges kubeconfig files like kubectl: for every named cluster, user and context
// the first file that defines it wins; current-context comes from the first file setting it.
// Relative certificate and token paths are resolved against the file that names them.
StatusOr<RestConfig> LoadKubeconfig(const KubeconfigOptions& options);

// Parses one kubeconfig document (YAML or JSON). `base_dir` resolves relative file paths.
StatusOr<RestConfig> ParseKubeconfig(const std::string& text, const std::string& base_dir,
                                     const std::string& context = "");

struct InClusterOptions {
  std::string token_file = "/var/run/secrets/kubernetes.io/serviceaccount/token";
  std::string ca_file = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt";
  std::string namespace_file = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";
};

// In-cluster configuration from KUBERNETES_SERVICE_HOST/PORT and the service-account files.
StatusOr<RestConfig> InClusterConfig(const InClusterOptions& options = {});

// The common daemon flags: --kubeconfig, --context, --master, --kube-api-qps, --kube-api-burst.
struct ClientFlags {
  std::string kubeconfig;
  std::string context;
  std::string master;  // overrides the server URL
  double qps = 0;      // 0 = keep the config's default
  int burst = 0;
};

// Resolution order as in client-go: --kubeconfig, then $KUBECONFIG, then in-cluster, then
// ~/.kube/config. --master overrides the server address of whichever was chosen.
StatusOr<RestConfig> BuildConfig(const ClientFlags& flags);

}  // namespace tephra::kube
