#include "controllers/serving.h"

#include <charconv>

#include "kube/health.h"
#include "kube/http_server.h"
#include "kube/metrics.h"

namespace tephra::controllers {
namespace {

class HealthServerImpl : public HealthServer {
 public:
  HealthServerImpl(kube::HttpServerOptions options) : server_(std::move(options)) {}
  uint16_t port() const override { return server_.port(); }
  void Stop() override { server_.Stop(); }

  kube::HealthChecks checks;
  kube::HttpServer server_;
};

}  // namespace

StatusOr<std::unique_ptr<HealthServer>> StartHealthServer(const std::string& address,
                                                          const metrics::Registry& registry,
                                                          std::function<Status()> ready) {
  size_t colon = address.rfind(':');
  if (colon == std::string::npos) {
    return InvalidArgument("--healthz-address " + address + ": want host:port");
  }
  kube::HttpServerOptions options;
  options.address = address.substr(0, colon);
  if (options.address.empty()) options.address = "0.0.0.0";
  unsigned port = 0;
  const char* begin = address.data() + colon + 1;
  const char* end = address.data() + address.size();
  auto [last, ec] = std::from_chars(begin, end, port);
  if (ec != std::errc() || last != end || port > 65535) {
    return InvalidArgument("--healthz-address " + address + ": bad port");
  }
  options.port = static_cast<uint16_t>(port);
  options.threads = 1;
  options.name = "health server";
  auto impl = std::make_unique<HealthServerImpl>(options);
  TEPHRA_RETURN_IF_ERROR(impl->checks.AddReadinessCheck("controllers", std::move(ready)));
  TEPHRA_RETURN_IF_ERROR(kube::MountHealthEndpoints(impl->server_, impl->checks, registry));
  TEPHRA_RETURN_IF_ERROR(impl->server_.Start());
  return std::unique_ptr<HealthServer>(std::move(impl));
}

}  // namespace tephra::controllers
