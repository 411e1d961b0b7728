#include "base/health.h"

#include <algorithm>
#include <set>

#include <glog/logging.h>

#include "metrics/metrics.h"

namespace tephra::base {
namespace {

Status RunCheck(const HealthCheck& check) {
  try {
    return check();
  } catch (const std::exception& e) {
    return Internal(std::string("check threw: ") + e.what());
  } catch (...) {
    return Internal("check threw a non-standard exception");
  }
}

HttpResponse PlainText(int status, std::string body) {
  HttpResponse response = HttpResponse::Text(status, std::move(body));
  response.headers.emplace_back("X-Content-Type-Options", "nosniff");
  response.headers.emplace_back("Cache-Control", "no-store");
  return response;
}

}  // namespace

HealthChecks::HealthChecks() {
  health_.push_back({"ping", [] { return Status::Ok(); }});
}

Status HealthChecks::Add(std::vector<NamedCheck>* list, std::string name, HealthCheck check) {
  if (name.empty() || name.find_first_of(" \t\r\n") != std::string::npos) {
    return InvalidArgument("health check name \"" + name + "\" must be non-empty without spaces");
  }
  sync::MutexLock lock(mu_);
  for (const auto* existing : {&health_, &readiness_}) {
    for (const auto& c : *existing) {
      if (c.name == name) return AlreadyExists("health check \"" + name + "\" already exists");
    }
  }
  list->push_back({std::move(name), std::move(check)});
  return Status::Ok();
}

Status HealthChecks::AddHealthCheck(std::string name, HealthCheck check) {
  return Add(&health_, std::move(name), std::move(check));
}

Status HealthChecks::AddReadinessCheck(std::string name, HealthCheck check) {
  return Add(&readiness_, std::move(name), std::move(check));
}

HttpResponse HealthChecks::Healthz(const HttpRequest& request) const {
  std::vector<NamedCheck> checks;
  {
    sync::MutexLock lock(mu_);
    checks = health_;
  }
  return Evaluate("healthz", checks, request);
}

HttpResponse HealthChecks::Readyz(const HttpRequest& request) const {
  std::vector<NamedCheck> checks;
  {
    sync::MutexLock lock(mu_);
    checks = health_;
    checks.insert(checks.end(), readiness_.begin(), readiness_.end());
  }
  return Evaluate("readyz", checks, request);
}

HttpResponse HealthChecks::Evaluate(std::string_view what, const std::vector<NamedCheck>& checks,
                                    const HttpRequest& request) const {
  const std::vector<std::string> excluded_list = request.QueryParams("exclude");
  std::set<std::string> unmatched(excluded_list.begin(), excluded_list.end());
  std::string listing;
  bool failed = false;
  // Checks run outside mu_: they may be slow-ish and must not block registration.
  std::vector<std::pair<std::string, bool>> outcomes;
  for (const auto& [name, check] : checks) {
    unmatched.erase(name);
    if (std::find(excluded_list.begin(), excluded_list.end(), name) != excluded_list.end()) {
      listing += "[+]" + name + " excluded: ok\n";
      continue;
    }
    const Status status = RunCheck(check);
    outcomes.emplace_back(name, status.ok());
    if (status.ok()) {
      listing += "[+]" + name + " ok\n";
    } else {
      failed = true;
      listing += "[-]" + name + " failed: " + status.message() + "\n";
      VLOG(1) << what << " check " << name << " failed: " << status.ToString();
    }
  }
  {
    sync::MutexLock lock(mu_);
    for (const auto& [name, ok] : outcomes) {
      auto [it, inserted] = last_ok_.emplace(name, ok);
      if (!inserted && it->second == ok) continue;
      it->second = ok;
      if (!ok) {
        LOG(WARNING) << what << " check \"" << name << "\" is failing";
      } else if (!inserted) {
        LOG(INFO) << what << " check \"" << name << "\" is passing again";
      }
    }
  }
  for (const auto& name : unmatched) {
    listing += "warn: some health checks cannot be excluded: no matches for \"" + name + "\"\n";
  }
  if (failed) {
    return PlainText(500, listing + std::string(what) + " check failed\n");
  }
  if (request.QueryParam("verbose").has_value()) {
    return PlainText(200, listing + std::string(what) + " check passed\n");
  }
  return PlainText(200, "ok");
}

Status MountHealthEndpoints(HttpServer& server, const HealthChecks& checks,
                            const metrics::Registry& registry) {
  // Inline: probes and scrapes are answered on the I/O threads, also while every handler
  // worker is busy (a busy server is not a dead one; the watchdog check tells them apart).
  auto healthz = [&checks](const HttpRequest& r) { return checks.Healthz(r); };
  TEPHRA_RETURN_IF_ERROR(server.Handle("GET", "/healthz", healthz, Dispatch::kInline));
  TEPHRA_RETURN_IF_ERROR(server.Handle("GET", "/livez", healthz, Dispatch::kInline));
  auto readyz = [&checks](const HttpRequest& r) { return checks.Readyz(r); };
  TEPHRA_RETURN_IF_ERROR(server.Handle("GET", "/readyz", readyz, Dispatch::kInline));
  return server.Handle(
      "GET", "/metrics",
      [&registry](const HttpRequest&) {
        HttpResponse response;
        response.content_type = std::string(metrics::kTextFormatContentType);
        response.body = registry.Render();
        return response;
      },
      Dispatch::kInline);
}

}  // namespace tephra::base
