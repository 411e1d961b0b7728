#include "webhooks/options.h"

#include <set>

#include "base/strings.h"
#include "kube/daemon.h"
#include "webhooks/admission/handlers.h"
#include "webhooks/certs/certificates.h"

namespace tephra::webhooks {

AdmissionOptions::AdmissionOptions()
    : enabled_admission(base::SplitCommaList(kDefaultEnabledPaths)) {}

void AdmissionOptions::Register(base::FlagSet& flags) {
  flags.SetGroup("Kubernetes API");
  kube::AddClientFlags(flags, &client);

  flags.SetGroup("Serving");
  flags.AddString("address", &address, "Address the HTTPS webhook server listens on.");
  flags.AddInt("port", &port, "Port of the HTTPS webhook server.");
  flags.AddInt("threads", &threads,
               "Review worker threads of the webhook server; 0: one per core. Connections and "
               "TLS run on their own thread, so slow reviews never stop health probes.");
  flags.AddInt("max-queued-requests", &max_queued_requests,
               "Reviews that may wait for a busy worker; more are answered 429 with Retry-After "
               "(the API server retries within the webhook timeout).");
  flags.AddInt("max-connections", &max_connections,
               "Open HTTPS connections. At the limit a new one replaces the connection idle "
               "the longest, or is closed at once when none is idle.");
  flags.AddInt("max-buffered-request-mib", &max_buffered_request_mib,
               "MiB of request bodies held at once across all connections; a review that does "
               "not fit is answered 503 with Retry-After before its body is read.");
  flags.AddDuration("idle-timeout", &idle_timeout,
                    "How long a kept-alive connection may wait for its next request.");
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
                  "Namespace of the Secret; default $TEPHRA_NAMESPACE, $POD_NAMESPACE, the pod's "
                  "namespace, or tephra-system.");
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
  if (max_queued_requests < 0) {
    return InvalidArgument("--max-queued-requests: must not be negative");
  }
  if (max_connections < 1) return InvalidArgument("--max-connections: must be at least 1");
  // One review body (3 MiB) must fit.
  if (max_buffered_request_mib < 3) {
    return InvalidArgument("--max-buffered-request-mib: must be at least 3 (one 3 MiB review)");
  }
  if (idle_timeout.count() <= 0) return InvalidArgument("--idle-timeout: must be positive");
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
    return InvalidArgument(
        "--ca-cert-file: only with --tls-cert-file (generated certificates "
        "come with their own CA)");
  }
  SubjectAltNames sans;
  for (const std::string& san : extra_sans) {
    TEPHRA_RETURN_IF_ERROR(AddSubjectAltName(san, &sans).WithContext("--extra-san"));
  }
  if (!healthz_address.empty() && healthz_address != "0") {
    TEPHRA_RETURN_IF_ERROR(kube::SplitHostPort("healthz-address", healthz_address).status());
  }
  if (namespace_.empty()) namespace_ = kube::DefaultDaemonNamespace();
  if (generates_certificates() && (secret_name.empty() || service_name.empty())) {
    return InvalidArgument("--secret-name and --service-name must not be empty");
  }
  return Status::Ok();
}

}  // namespace tephra::webhooks
