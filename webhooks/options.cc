#include "webhooks/options.h"

#include <cstdlib>
#include <fstream>
#include <set>

#include "webhooks/certificates.h"
#include "webhooks/handlers.h"

namespace tephra::webhooks {
namespace {

std::vector<std::string> SplitComma(std::string_view list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    std::string_view item =
        list.substr(start, comma == std::string_view::npos ? comma : comma - start);
    if (!item.empty()) out.emplace_back(item);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace

AdmissionOptions::AdmissionOptions() : enabled_admission(SplitComma(kDefaultEnabledPaths)) {}

void AdmissionOptions::Register(kube::FlagSet& flags) {
  flags.SetGroup("Kubernetes API");
  flags.AddString("kubeconfig", &client.kubeconfig,
                  "Path to a kubeconfig; empty: $KUBECONFIG, in-cluster, then ~/.kube/config.");
  flags.AddString("context", &client.context, "kubeconfig context to use.");
  flags.AddString("master", &client.master, "API server address, overriding the kubeconfig's.");
  flags.AddDouble("kube-api-qps", &client.qps, "Requests per second towards the API server.");
  flags.AddInt("kube-api-burst", &client.burst, "Burst of requests towards the API server.");

  flags.SetGroup("Serving");
  flags.AddString("address", &address, "Address the HTTPS webhook server listens on.");
  flags.AddInt("port", &port, "Port of the HTTPS webhook server.");
  flags.AddInt("threads", &threads, "Worker threads of the webhook server; 0: one per core.");
  flags.AddDuration("request-timeout", &request_timeout,
                    "Longest time one admission review may take before the answer is 503.");
  flags.AddDuration("graceful-shutdown-time", &graceful_shutdown_time,
                    "How long requests in flight may finish after SIGTERM.");
  flags.AddString("healthz-address", &healthz_address,
                  "host:port serving /healthz, /readyz and /metrics over plain HTTP; \"0\" or "
                  "empty disables it (the HTTPS port serves them too).");

  flags.SetGroup("Admission");
  flags.AddCommaList("enabled-admission", &enabled_admission,
                     "Admission paths to serve (comma list). Pod hooks (/pods/mutate, "
                     "/pods/validate) are opt-in.");
  flags.AddStringList("scheduler-name", &scheduler_names,
                      "Scheduler names this suite serves (repeatable); the first is the Job "
                      "default; pods of these schedulers are checked by /pods/validate.");
  flags.AddInt("max-queue-depth", &max_queue_depth, "Deepest allowed queue level below root.");
  flags.AddBool("enable-queue-allocated-pods-check", &enable_queue_allocated_pods_check,
                "Refuse deleting a queue with allocated pods.");
  flags.AddBool("enable-root-queue-protection", &enable_root_queue_protection,
                "Refuse changing the root queue's capability, deserved and guarantee.");
  flags.AddString("admission-conf", &admission_conf,
                  "YAML file with resource groups for /pods/mutate; re-read when it changes.");

  flags.SetGroup("Certificates");
  flags.AddString("tls-cert-file", &tls_cert_file,
                  "Serving certificate (PEM), reloaded when it changes. Empty: generate one and "
                  "share it through --secret-name.");
  flags.AddString("tls-private-key-file", &tls_private_key_file, "Key of --tls-cert-file (PEM).");
  flags.AddString("ca-cert-file", &ca_cert_file,
                  "With --tls-cert-file: the CA bundle to write into the webhook configurations' "
                  "caBundle (none written when empty).");
  flags.AddString("secret-name", &secret_name, "Secret holding the generated certificates.");
  flags.AddString("namespace", &namespace_,
                  "Namespace of the Secret; default $TEPHRA_NAMESPACE, the pod's namespace, or "
                  "tephra-system.");
  flags.AddString("service-name", &service_name,
                  "Service in front of the webhook; its DNS names go into the certificate.");
  flags.AddStringList("extra-san", &extra_sans,
                      "Extra subject alternative name for the generated certificate (repeatable): "
                      "IP:127.0.0.1, DNS:webhook.example.com.");
  flags.AddString("cert-dir", &cert_dir,
                  "Directory for the generated certificate files; default: a private temporary "
                  "directory removed at exit.");
  flags.AddString("webhook-config-name-prefix", &webhook_config_name_prefix,
                  "The webhook configurations to keep the caBundle of are named <prefix>-<path "
                  "with '/' as '-'>, e.g. volcano-admission-service-jobs-mutate.");
  flags.AddString("webhook-config-label-selector", &webhook_config_label_selector,
                  "Instead of names: the webhook configurations carrying these labels.");
}

Status AdmissionOptions::Finish() {
  if (port < 1 || port > 65535) return InvalidArgument("--port: must be between 1 and 65535");
  if (threads < 0) return InvalidArgument("--threads: must not be negative");
  if (request_timeout.count() <= 0) return InvalidArgument("--request-timeout: must be positive");
  if (max_queue_depth < 1) return InvalidArgument("--max-queue-depth: must be at least 1");
  if (enabled_admission.empty()) return InvalidArgument("--enabled-admission: no path given");
  std::set<std::string> seen;
  for (const std::string& path : enabled_admission) {
    Status known = NeedsOf(path).status();
    if (!known.ok()) return known.WithContext("--enabled-admission");
    if (!seen.insert(path).second) {
      return InvalidArgument("--enabled-admission: " + path + " is listed twice");
    }
  }
  if (scheduler_names.empty() || scheduler_names.front().empty()) {
    return InvalidArgument("--scheduler-name: at least one non-empty name is required");
  }
  if (tls_cert_file.empty() != tls_private_key_file.empty()) {
    return InvalidArgument("--tls-cert-file and --tls-private-key-file go together");
  }
  if (!ca_cert_file.empty() && tls_cert_file.empty()) {
    return InvalidArgument("--ca-cert-file: only with --tls-cert-file (generated certificates "
                           "come with their own CA)");
  }
  SubjectAltNames sans;
  for (const std::string& san : extra_sans) {
    TEPHRA_RETURN_IF_ERROR(AddSubjectAltName(san, &sans).WithContext("--extra-san"));
  }
  if (!healthz_address.empty() && healthz_address != "0") {
    std::string host;
    uint16_t p = 0;
    TEPHRA_RETURN_IF_ERROR(
        SplitHostPort(healthz_address, &host, &p).WithContext("--healthz-address"));
  }
  if (namespace_.empty()) namespace_ = DefaultNamespace();
  if (generates_certificates() && (secret_name.empty() || service_name.empty())) {
    return InvalidArgument("--secret-name and --service-name must not be empty");
  }
  return Status::Ok();
}

std::string DefaultNamespace() {
  if (const char* env = std::getenv("TEPHRA_NAMESPACE"); env != nullptr && *env != '\0') {
    return env;
  }
  std::ifstream in("/var/run/secrets/kubernetes.io/serviceaccount/namespace");
  std::string ns;
  if (in && std::getline(in, ns) && !ns.empty()) return ns;
  return "tephra-system";
}

Status SplitHostPort(const std::string& address, std::string* host, uint16_t* port) {
  size_t colon = address.rfind(':');
  if (colon == std::string::npos) return InvalidArgument("\"" + address + "\" is not host:port");
  std::string h = address.substr(0, colon);
  std::string p = address.substr(colon + 1);
  if (h.size() >= 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  char* end = nullptr;
  long value = std::strtol(p.c_str(), &end, 10);
  if (p.empty() || end != p.c_str() + p.size() || value < 0 || value > 65535) {
    return InvalidArgument("\"" + address + "\": the port must be a number from 0 to 65535");
  }
  *host = h.empty() ? "0.0.0.0" : h;
  *port = static_cast<uint16_t>(value);
  return Status::Ok();
}

}  // namespace tephra::webhooks
