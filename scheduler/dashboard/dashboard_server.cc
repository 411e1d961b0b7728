#include "scheduler/dashboard/dashboard_server.h"

#include <glog/logging.h>

#include "base/http_server.h"
#include "kube/daemon.h"
#include "kube/meta/resource.h"
#include "scheduler/dashboard/views.h"

namespace tephra::scheduler {
namespace {

// Longest namespace and object names Kubernetes accepts; longer parameters are refused before
// any lookup.
constexpr size_t kMaxNamespace = 63;
constexpr size_t kMaxName = 253;
// Events listed per object before the newest are kept.
constexpr int64_t kEventsListed = 200;

void Secure(base::HttpResponse& r, bool api) {
  r.headers.emplace_back("Content-Security-Policy",
                         "default-src 'none'; script-src 'self'; style-src 'self'; "
                         "img-src 'self' data:; connect-src 'self'; base-uri 'none'; "
                         "form-action 'self'; frame-ancestors 'none'");
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  r.headers.emplace_back("X-Frame-Options", "DENY");
  r.headers.emplace_back("Referrer-Policy", "no-referrer");
  r.headers.emplace_back("Cache-Control", api ? "no-store" : "no-cache");
}

base::HttpResponse Json(int status, std::string body) {
  base::HttpResponse r = base::HttpResponse::Json(status, std::move(body));
  Secure(r, true);
  return r;
}

base::HttpResponse Error(int status, const std::string& message) {
  json::Writer w;
  w.StartObject().Field("error", message).EndObject();
  return Json(status, w.Take());
}

// A required or optional name parameter within Kubernetes' length limit.
StatusOr<std::string> NameParam(const base::HttpRequest& req, std::string_view key, size_t max,
                                bool required) {
  std::optional<std::string> v = req.QueryParam(key);
  if (!v || v->empty()) {
    if (required) return InvalidArgument(std::string(key) + ": required");
    return std::string();
  }
  if (v->size() > max) {
    return InvalidArgument(std::string(key) + ": at most " + std::to_string(max) +
                           " characters, got " + std::to_string(v->size()));
  }
  return *v;
}

}  // namespace

class DashboardServer::Impl {
 public:
  Impl(DashboardSources sources, base::HttpServerOptions options)
      : s_(std::move(sources)), server_(std::move(options)) {}

  Status Route() {
    for (const DashboardAsset& a : DashboardAssets()) {
      std::string type = a.content_type, body = a.body;
      TEPHRA_RETURN_IF_ERROR(server_.Handle("GET", a.path, [type, body](const base::HttpRequest&) {
        base::HttpResponse r;
        r.content_type = type;
        r.body = body;
        Secure(r, false);
        return r;
      }));
    }
    auto api = [this](std::string_view path, auto fn) {
      return server_.Handle("GET", path,
                            [this, fn](const base::HttpRequest& req) { return (this->*fn)(req); });
    };
    TEPHRA_RETURN_IF_ERROR(api("/api/v1/overview", &Impl::Overview));
    TEPHRA_RETURN_IF_ERROR(api("/api/v1/queues", &Impl::Queues));
    TEPHRA_RETURN_IF_ERROR(api("/api/v1/jobs", &Impl::Jobs));
    TEPHRA_RETURN_IF_ERROR(api("/api/v1/job", &Impl::Job));
    TEPHRA_RETURN_IF_ERROR(api("/api/v1/cluster", &Impl::Cluster));
    TEPHRA_RETURN_IF_ERROR(api("/api/v1/history", &Impl::HistoryDoc));
    return Status::Ok();
  }

  base::HttpServer& server() { return server_; }

 private:
  base::HttpResponse Overview(const base::HttpRequest&) {
    return Json(200, OverviewJson(*s_.cache->TakeSnapshot(), s_.recorder->Last(),
                                  s_.scheduler_names, s_.version, base::Clock::now()));
  }

  base::HttpResponse Queues(const base::HttpRequest&) {
    return Json(200, QueuesJson(*s_.cache->TakeSnapshot(), s_.recorder->Last()));
  }

  base::HttpResponse Jobs(const base::HttpRequest& req) {
    JobFilter f;
    StatusOr<std::string> ns = NameParam(req, "namespace", kMaxNamespace, false);
    StatusOr<std::string> queue = NameParam(req, "queue", kMaxName, false);
    StatusOr<std::string> phase = NameParam(req, "phase", 32, false);
    StatusOr<std::string> name = NameParam(req, "name", kMaxName, false);
    StatusOr<size_t> limit = ParseLimit(req.QueryParam("limit"), kDefaultJobRows, kMaxJobRows);
    for (const Status& s :
         {ns.status(), queue.status(), phase.status(), name.status(), limit.status()}) {
      if (!s.ok()) return Error(400, s.message());
    }
    f.namespace_ = *ns;
    f.queue = *queue;
    f.phase = *phase;
    f.name = *name;
    f.limit = *limit;
    return Json(200, JobsJson(*s_.cache->TakeSnapshot(), *s_.recorder, f, base::Clock::now()));
  }

  base::HttpResponse Job(const base::HttpRequest& req) {
    StatusOr<std::string> ns = NameParam(req, "namespace", kMaxNamespace, true);
    if (!ns.ok()) return Error(400, ns.status().message());
    StatusOr<std::string> name = NameParam(req, "name", kMaxName, true);
    if (!name.ok()) return Error(400, name.status().message());
    // A PodGroup's name, else a Volcano Job's (its newest PodGroup).
    std::shared_ptr<const JobInfo> job = s_.cache->Job(*ns + "/" + *name);
    if (!job) job = s_.cache->JobOfVolcanoJob(*ns, *name);
    if (!job) {
      return Error(404,
                   "no PodGroup or Volcano Job " + *ns + "/" + *name + " in the scheduler's cache");
    }
    std::shared_ptr<const JobExplanation> e = s_.recorder->Explanation(job->id);
    std::vector<EventRow> events = Events(*job);
    return Json(200, JobJson(*job, e.get(), s_.cache->Queue(job->queue) != nullptr, events,
                             base::Clock::now()));
  }

  base::HttpResponse Cluster(const base::HttpRequest& req) {
    StatusOr<size_t> limit = ParseLimit(req.QueryParam("limit"), kDefaultNodeCells, kMaxNodeCells);
    if (!limit.ok()) return Error(400, limit.status().message());
    return Json(200, ClusterJson(*s_.cache->TakeSnapshot(), *s_.recorder, *limit));
  }

  base::HttpResponse HistoryDoc(const base::HttpRequest&) {
    return Json(200,
                HistoryJson(s_.history->Buckets(base::Clock::now()), s_.history->options().bucket));
  }

  // The Events about the job's PodGroup and its Volcano Job, newest first. Names come from the
  // cache, so they are valid object names and safe in a field selector.
  std::vector<EventRow> Events(const JobInfo& job) {
    std::vector<EventRow> rows;
    if (!s_.client) return rows;
    std::vector<std::string> names = {job.name};
    if (job.pod_group) {
      if (const kube::OwnerReference* o = job.pod_group->metadata.ControllerRef(); o != nullptr)
        names.push_back(o->name);
    }
    for (const auto& name : names) {
      kube::ListOptions options;
      options.field_selector = "involvedObject.name=" + name;
      options.limit = kEventsListed;
      StatusOr<kube::ListPage> page =
          s_.client->List(kube::resources::kEvents, job.namespace_, options);
      if (!page.ok()) {
        LOG_EVERY_N(WARNING, 20) << "dashboard: listing events of " << job.id << ": "
                                 << page.status().ToString();
        continue;
      }
      for (size_t i = 0; i < page->size(); ++i) rows.push_back(EventRowOf(page->item(i)));
    }
    KeepNewestEvents(&rows);
    return rows;
  }

  DashboardSources s_;
  base::HttpServer server_;
};

DashboardServer::DashboardServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

DashboardServer::~DashboardServer() {
  Stop(std::chrono::milliseconds(0));
}

int DashboardServer::port() const {
  return impl_->server().port();
}

void DashboardServer::Stop(std::chrono::milliseconds grace) {
  impl_->server().Stop(grace);
}

StatusOr<std::unique_ptr<DashboardServer>> DashboardServer::Start(const std::string& address,
                                                                  const AdminServerOptions& tls,
                                                                  DashboardSources sources) {
  if (sources.recorder == nullptr || sources.cache == nullptr || sources.history == nullptr)
    return Internal("dashboard: missing sources");
  TEPHRA_RETURN_IF_ERROR(CheckListenerOptions("dashboard-address", address, tls));
  TEPHRA_ASSIGN_OR_RETURN(auto host_port, kube::SplitHostPort("dashboard-address", address));
  base::HttpServerOptions options;
  options.address = host_port.first == "localhost" ? "127.0.0.1" : host_port.first;
  options.port = host_port.second;
  options.threads = 2;
  options.max_connections = 64;
  options.max_body_bytes = 4096;  // GET only
  options.handler_timeout = std::chrono::seconds(20);
  options.name = "dashboard";
  if (!tls.tls_cert_file.empty()) {
    base::TlsOptions t;
    t.cert_file = tls.tls_cert_file;
    t.key_file = tls.tls_key_file;
    t.client_ca_file = tls.tls_client_ca_file;
    t.require_client_cert = !tls.tls_client_ca_file.empty();
    options.tls = t;
  }
  const bool https = options.tls.has_value();
  auto impl = std::make_unique<Impl>(std::move(sources), std::move(options));
  TEPHRA_RETURN_IF_ERROR(impl->Route());
  if (Status s = impl->server().Start(); !s.ok()) {
    return Unavailable("--dashboard-address " + address + ": " + s.message());
  }
  LOG(INFO) << "dashboard on " << (https ? "https" : "http") << "://" << address << " (port "
            << impl->server().port() << ")"
            << (tls.tls_client_ca_file.empty() ? "" : ", client certificates required");
  return std::unique_ptr<DashboardServer>(new DashboardServer(std::move(impl)));
}

}  // namespace tephra::scheduler
