// Maps webhook paths to handlers and turns HTTP requests into AdmissionReview answers:
//
//   * a body that is not an AdmissionReview gets HTTP 400 (a 3 MiB body limit and handler
//     timeouts are the HTTP server's);
//   * while a handler's caches are not synced the answer is allowed=false with code 503 and a
//     message saying so, which fail-closed hooks turn into a retryable error;
//   * otherwise the handler's response, HTTP 200.
//
// Every request is counted in tephra_admission_requests_total{path,verdict} (verdict allowed,
// denied or error) and timed in tephra_admission_request_duration_seconds{path}.
//
// Thread-safety: Add() before Mount(); Serve() from any number of threads.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/http_server.h"
#include "metrics/metrics.h"
#include "webhooks/admission/handler.h"

namespace tephra::webhooks {

// OK when the caches a handler reads are synced; otherwise says what is missing.
using ReadinessCheck = std::function<Status()>;

class AdmissionRouter {
 public:
  explicit AdmissionRouter(metrics::Registry& registry);

  // AlreadyExists for a path added twice, InvalidArgument for one not starting with '/'.
  Status Add(std::string path, std::shared_ptr<const AdmissionHandler> handler,
             ReadinessCheck ready = nullptr);
  // Routes POST on every added path to Serve.
  Status Mount(base::HttpServer& server) const;

  // The answer to one HTTP request for `path` (404 for a path never added).
  base::HttpResponse Serve(std::string_view path, const base::HttpRequest& request) const;

  std::vector<std::string> paths() const;

 private:
  struct Route {
    std::shared_ptr<const AdmissionHandler> handler;
    ReadinessCheck ready;
    metrics::Counter* allowed;
    metrics::Counter* denied;
    metrics::Counter* error;
    metrics::Histogram* duration;
  };

  base::HttpResponse ServeRoute(std::string_view path, const Route& route,
                                const base::HttpRequest& request) const;

  metrics::CounterVec& requests_;
  metrics::HistogramVec& durations_;
  std::map<std::string, Route, std::less<>> routes_;
};

}  // namespace tephra::webhooks
