#include "webhooks/server/server.h"

#include <glog/logging.h>

#include "base/health.h"
#include "base/http_server.h"
#include "json/json.h"
#include "kube/daemon.h"
#include "webhooks/server/router.h"

namespace tephra::webhooks {
namespace {

// The API server accepts objects up to 3 MiB; a review carries the object after earlier
// mutations (defaults on every task make a large Job bigger) and, for an update, the old object
// too. Room for both, so every object the API server accepts gets an answer naming its fields
// rather than a bare 413 (Volcano's webhook stops at 3 MiB).
constexpr size_t kMaxBodyBytes = 8 * 1024 * 1024;
// An API server's request has a few hundred bytes of headers.
constexpr size_t kMaxHeaderBytes = 16 * 1024;
// Reviews larger than this (a Job with thousands of tasks, labels or annotations) run on a
// worker of their own, so however slow they are, everyday reviews keep theirs.
constexpr size_t kLargeReviewBytes = 256 * 1024;

// A busy answer the API server understands: a Status with Retry-After, which its webhook client
// honours by retrying within the webhook's timeout; when the timeout runs out the hook's
// failurePolicy decides (webhooks/README.md, "Load, limits and overload").
base::HttpResponse BusyStatus(const base::HttpRequest&, int status) {
  const bool too_many = status == 429;
  const std::string message =
      too_many ? "tephra-admission is busy: every review worker is taken and the queue is full"
               : "tephra-admission is busy: too many review bytes in flight";
  return base::HttpResponse::Json(
      status, R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":)" +
                  json::Quote(message) + R"(,"reason":")" +
                  (too_many ? "TooManyRequests" : "ServiceUnavailable") + R"(","code":)" +
                  std::to_string(status) + R"(,"details":{"retryAfterSeconds":1}})");
}

}  // namespace

class AdmissionServer::Impl {
 public:
  Impl(AdmissionServerOptions options, metrics::Registry& registry)
      : options_(std::move(options)), registry_(registry), router_(registry) {}

  AdmissionServerOptions options_;
  metrics::Registry& registry_;
  AdmissionRouter router_;
  base::HealthChecks health_;
  std::unique_ptr<base::HttpServer> webhooks_;
  std::unique_ptr<base::HttpServer> health_server_;
};

AdmissionServer::AdmissionServer(AdmissionServerOptions options, metrics::Registry& registry)
    : impl_(std::make_unique<Impl>(std::move(options), registry)) {}

AdmissionServer::~AdmissionServer() {
  Stop(std::chrono::seconds(1));
}

Status AdmissionServer::AddAdmission(std::string path,
                                     std::shared_ptr<const AdmissionHandler> handler,
                                     std::function<Status()> ready) {
  if (impl_->webhooks_ != nullptr) return FailedPrecondition("the webhook server is running");
  return impl_->router_.Add(std::move(path), std::move(handler), std::move(ready));
}

Status AdmissionServer::AddReadinessCheck(std::string name, std::function<Status()> check) {
  return impl_->health_.AddReadinessCheck(std::move(name), std::move(check));
}

Status AdmissionServer::StartHealth() {
  const std::string& address = impl_->options_.health_address;
  if (address.empty() || impl_->health_server_ != nullptr) return Status::Ok();
  kube::HealthServing serving;
  serving.flag = "healthz-address";
  serving.address = address;
  TEPHRA_ASSIGN_OR_RETURN(impl_->health_server_,
                          kube::ServeHealth(serving, impl_->health_, impl_->registry_));
  return Status::Ok();
}

void AdmissionServer::SetCertificateFiles(std::string cert_file, std::string key_file) {
  impl_->options_.cert_file = std::move(cert_file);
  impl_->options_.key_file = std::move(key_file);
}

Status AdmissionServer::StartWebhooks() {
  if (impl_->webhooks_ != nullptr) return Status::Ok();
  const AdmissionServerOptions& o = impl_->options_;
  base::HttpServerOptions server;
  server.address = o.address;
  server.port = o.port;
  server.threads = o.threads;
  server.max_queued_requests = static_cast<size_t>(o.max_queued_requests);
  server.large_request_bytes = kLargeReviewBytes;
  server.large_request_threads = 1;
  server.max_connections = static_cast<size_t>(o.max_connections);
  server.max_buffered_bytes = static_cast<size_t>(o.max_buffered_bytes);
  server.max_header_bytes = kMaxHeaderBytes;
  server.max_body_bytes = kMaxBodyBytes;
  server.handler_timeout = o.request_timeout;
  // Also bounds the TLS handshake and a slow-drip client.
  server.read_timeout = o.request_timeout;
  server.idle_timeout = o.idle_timeout;
  server.stall_timeout = o.stall_timeout;
  server.busy_response = BusyStatus;
  server.name = "webhook";
  base::TlsOptions tls;
  tls.cert_file = o.cert_file;
  tls.key_file = o.key_file;
  server.tls = tls;
  auto webhooks = std::make_unique<base::HttpServer>(server);
  TEPHRA_RETURN_IF_ERROR(impl_->router_.Mount(*webhooks));
  TEPHRA_RETURN_IF_ERROR(base::MountHealthEndpoints(*webhooks, impl_->health_, impl_->registry_));
  TEPHRA_RETURN_IF_ERROR(webhooks->Start().WithContext("webhook server"));
  impl_->webhooks_ = std::move(webhooks);
  // Liveness fails, on both ports, when the review workers are wedged.
  base::HttpServer* started = impl_->webhooks_.get();
  TEPHRA_RETURN_IF_ERROR(
      impl_->health_.AddHealthCheck("webhook-server", [started] { return started->Health(); }));
  std::string paths;
  for (const std::string& p : impl_->router_.paths()) paths += " " + p;
  LOG(INFO) << "serving admission webhooks on https://" << o.address << ":"
            << impl_->webhooks_->port() << ":" << paths;
  return Status::Ok();
}

Status AdmissionServer::ReloadTls() {
  if (impl_->webhooks_ == nullptr) return Status::Ok();
  return impl_->webhooks_->ReloadTls();
}

void AdmissionServer::Stop(std::chrono::milliseconds grace) {
  if (impl_->webhooks_ != nullptr) impl_->webhooks_->Stop(grace);
  if (impl_->health_server_ != nullptr) impl_->health_server_->Stop(std::chrono::seconds(1));
}

size_t AdmissionServer::abandoned_reviews() const {
  return impl_->webhooks_ == nullptr ? 0 : impl_->webhooks_->abandoned_handlers();
}

uint16_t AdmissionServer::webhook_port() const {
  return impl_->webhooks_ == nullptr ? 0 : impl_->webhooks_->port();
}

uint16_t AdmissionServer::health_port() const {
  return impl_->health_server_ == nullptr ? 0 : impl_->health_server_->port();
}

std::vector<std::string> AdmissionServer::paths() const {
  return impl_->router_.paths();
}

}  // namespace tephra::webhooks
