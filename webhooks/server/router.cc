#include "webhooks/server/router.h"

#include <chrono>

#include <glog/logging.h>

namespace tephra::webhooks {

AdmissionRouter::AdmissionRouter(metrics::Registry& registry)
    : requests_(registry.AddCounterVec("tephra_admission_requests_total",
                                       "Admission reviews answered, by path and verdict.",
                                       {"path", "verdict"})),
      // 100µs to ~1.6s: admission answers are expected well below a millisecond.
      durations_(registry.AddHistogramVec("tephra_admission_request_duration_seconds",
                                          "Time to decode, evaluate and encode one review.",
                                          {"path"}, metrics::ExponentialBuckets(0.0001, 2, 15))) {}

Status AdmissionRouter::Add(std::string path, std::shared_ptr<const AdmissionHandler> handler,
                            ReadinessCheck ready) {
  if (path.empty() || path.front() != '/') {
    return InvalidArgument("admission path \"" + path + "\" must start with '/'");
  }
  if (routes_.count(path) > 0) return AlreadyExists("admission path " + path + " added twice");
  Route route{std::move(handler),
              std::move(ready),
              &requests_.WithLabels({path, "allowed"}),
              &requests_.WithLabels({path, "denied"}),
              &requests_.WithLabels({path, "error"}),
              &durations_.WithLabels({path})};
  routes_.emplace(std::move(path), std::move(route));
  return Status::Ok();
}

Status AdmissionRouter::Mount(base::HttpServer& server) const {
  for (const auto& [path, route] : routes_) {
    const Route* r = &route;
    std::string p = path;
    TEPHRA_RETURN_IF_ERROR(server.Handle("POST", path, [this, r, p](const base::HttpRequest& req) {
      return ServeRoute(p, *r, req);
    }));
  }
  return Status::Ok();
}

base::HttpResponse AdmissionRouter::Serve(std::string_view path,
                                          const base::HttpRequest& request) const {
  auto it = routes_.find(path);
  if (it == routes_.end()) return base::HttpResponse::Text(404, "404 page not found\n");
  return ServeRoute(path, it->second, request);
}

std::vector<std::string> AdmissionRouter::paths() const {
  std::vector<std::string> out;
  for (const auto& [path, route] : routes_) out.push_back(path);
  return out;
}

base::HttpResponse AdmissionRouter::ServeRoute(std::string_view path, const Route& route,
                                               const base::HttpRequest& http) const {
  const auto start = std::chrono::steady_clock::now();
  auto observe = [&] {
    route.duration->Observe(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  };
  StatusOr<AdmissionRequest> request = DecodeAdmissionRequest(http.body);
  if (!request.ok()) {
    route.error->Inc();
    observe();
    // Anyone who can reach the port can send these; one line per hundred keeps the log usable.
    LOG_EVERY_N(WARNING, 100) << "admission " << path << ": malformed review from "
                              << http.remote_address << ": " << request.status().message() << " ("
                              << google::COUNTER << " so far)";
    return base::HttpResponse::Text(
        400, "malformed AdmissionReview: " + request.status().message() + "\n");
  }
  Status ready = route.ready ? route.ready() : Status::Ok();
  AdmissionResponse response;
  if (!request->too_deep.empty()) {
    // Parts of the object were not read: no handler can judge it (docs/admission.md).
    response = AdmissionResponse::Deny(*request, 400, "BadRequest", request->too_deep);
  } else if (ready.ok()) {
    response = route.handler->Admit(*request);
  } else {
    response = AdmissionResponse::Deny(
        *request, 503, "ServiceUnavailable",
        "tephra-admission is not ready: " + ready.message() + "; retry shortly");
  }
  metrics::Counter* verdict = !ready.ok() && request->too_deep.empty()
                                  ? route.error
                                  : (response.allowed ? route.allowed : route.denied);
  verdict->Inc();
  VLOG(2) << "admission " << path << " " << OperationName(request->operation) << " "
          << request->kind.kind << " " << request->namespace_ << "/" << request->name
          << (request->dry_run ? " (dry run)" : "") << ": "
          << (response.allowed ? "allowed" : "denied: " + response.message);
  std::string body = EncodeAdmissionResponse(response);
  observe();
  return base::HttpResponse::Json(200, std::move(body));
}

}  // namespace tephra::webhooks
