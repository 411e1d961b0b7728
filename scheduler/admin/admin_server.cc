#include "scheduler/admin/admin_server.h"

#include <fstream>
#include <sstream>

#include <glog/logging.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>

#include "tephra/admin/v1/admin.grpc.pb.h"

namespace tephra::scheduler {
namespace {

namespace pb = tephra::admin::v1;

constexpr size_t kChunkBytes = 1 << 20;

void SetResources(const api::Resources& r, pb::Resources* out) {
  for (const auto& [name, q] : DropPods(r).ToList())
    (*out->mutable_quantities())[name] = q.String();
}

void SetQueue(const QueueView& v, pb::QueueState* out) {
  out->set_name(v.name);
  out->set_state(v.state.empty() ? "Open" : v.state);
  out->set_weight(v.weight);
  out->set_priority(v.priority);
  out->set_parent(v.parent);
  out->set_reclaimable(v.reclaimable);
  SetResources(v.allocated, out->mutable_allocated());
  SetResources(v.deserved, out->mutable_deserved());
  SetResources(v.capability, out->mutable_capability());
  SetResources(v.guarantee, out->mutable_guarantee());
  SetResources(v.real_capability, out->mutable_real_capability());
  SetResources(v.inqueue, out->mutable_inqueue());
  SetResources(v.pending, out->mutable_pending());
  out->set_share(v.share);
  out->set_share_plugin(v.share_plugin);
  out->set_jobs(v.jobs);
  out->set_pending_jobs(v.pending_jobs);
}

void SetExplanation(const JobExplanation& e, pb::JobExplanation* out) {
  out->set_namespace_(e.namespace_);
  out->set_pod_group(e.pod_group);
  out->set_job(e.owner_job);
  out->set_queue(e.queue);
  out->set_phase(e.phase);
  out->mutable_session()->set_id(e.session);
  out->mutable_session()->set_time(base::FormatTime(e.time));
  pb::Gang* g = out->mutable_gang();
  g->set_min_available(e.min_available);
  for (const auto& [role, n] : e.min_task_member) (*g->mutable_min_task_member())[role] = n;
  g->set_tasks(e.tasks);
  g->set_ready(e.ready);
  g->set_fit(e.fit);
  g->set_unplaced(e.unplaced);
  g->set_not_tried(e.not_tried);
  if (e.min_resources) SetResources(*e.min_resources, g->mutable_min_resources());
  for (const auto& group : e.groups) {
    pb::TaskGroup* tg = out->add_unplaced();
    tg->set_tasks(group.tasks);
    tg->set_role(group.role);
    SetResources(group.request, tg->mutable_request());
    tg->set_nodes_examined(group.nodes_examined);
    for (const auto& r : group.reasons) {
      pb::ReasonCount* rc = tg->add_reasons();
      rc->set_reason(r.reason);
      rc->set_nodes(r.nodes);
    }
    tg->set_other(group.other);
    for (const auto& p : group.example_pods) tg->add_example_pods(p);
  }
  if (e.queue_view) SetQueue(*e.queue_view, out->mutable_queue_state());
  for (const auto& n : e.notes) out->add_notes(n.plugin + ": " + n.message);
  if (std::string start = ExpectedStart(e); !start.empty())
    out->add_notes("expected start: " + start);
  if (e.condition) {
    out->mutable_condition()->set_type(e.condition->type);
    out->mutable_condition()->set_status(e.condition->status);
    out->mutable_condition()->set_reason(e.condition->reason);
    out->mutable_condition()->set_message(e.condition->message);
  }
  for (const auto& h : Hints(e)) out->add_hints(h);
  out->set_summary(Summarize(e));
  out->set_scheduled(e.scheduled);
}

StatusOr<std::string> ReadFile(const std::string& flag, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return InvalidArgument("--" + flag + ": cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  if (ss.str().empty()) return InvalidArgument("--" + flag + ": " + path + " is empty");
  return ss.str();
}

class AdminService final : public pb::SchedulerAdmin::Service {
 public:
  AdminService(AdminSources sources, bool tls) : s_(std::move(sources)), tls_(tls) {}

  grpc::Status ExplainJob(grpc::ServerContext*, const pb::ExplainJobRequest* req,
                          pb::JobExplanation* out) override {
    if (req->namespace_().empty()) {
      return {grpc::StatusCode::INVALID_ARGUMENT, "namespace: required"};
    }
    if (req->job().empty() == req->pod_group().empty()) {
      return {grpc::StatusCode::INVALID_ARGUMENT, "exactly one of job and pod_group must be set"};
    }
    std::shared_ptr<const JobInfo> job;
    if (!req->pod_group().empty()) {
      job = s_.cache->Job(req->namespace_() + "/" + req->pod_group());
      if (!job) {
        return {grpc::StatusCode::NOT_FOUND,
                "no PodGroup " + req->namespace_() + "/" + req->pod_group() +
                    " in the scheduler's cache (scheduler names: " + Names() + ")"};
      }
    } else {
      job = s_.cache->JobOfVolcanoJob(req->namespace_(), req->job());
      if (!job) {
        return {grpc::StatusCode::NOT_FOUND,
                "no PodGroup of Job " + req->namespace_() + "/" + req->job() +
                    " in the scheduler's cache: the controller-manager creates it (is it "
                    "running?), and the "
                    "scheduler sees only jobs whose schedulerName is one of: " +
                    Names()};
      }
    }
    std::shared_ptr<const JobExplanation> e = s_.recorder->Explanation(job->id);
    if (e) {
      SetExplanation(*e, out);
    } else {
      Unconsidered(*job, out);
    }
    out->set_current_phase(std::string(ShownPhase(*job)));
    return grpc::Status::OK;
  }

  grpc::Status QueueUsage(grpc::ServerContext*, const pb::QueueUsageRequest* req,
                          pb::QueueUsageResponse* out) override {
    std::shared_ptr<const Snapshot> snap = s_.cache->TakeSnapshot();
    std::map<std::string, QueueView> views = QueueViewsOf(*snap);
    SessionSummary last = s_.recorder->Last();
    ApplyShares(last.shares, &views);
    if (!last.id.empty()) {
      out->mutable_session()->set_id(last.id);
      out->mutable_session()->set_time(base::FormatTime(last.time));
    }
    if (!req->queue().empty() && views.count(req->queue()) == 0) {
      return {grpc::StatusCode::NOT_FOUND,
              "no queue " + req->queue() + " in the scheduler's cache"};
    }
    for (const auto& [name, view] : views) {
      if (!req->queue().empty() && name != req->queue()) continue;
      SetQueue(view, out->add_queues());
    }
    return grpc::Status::OK;
  }

  grpc::Status DumpSnapshot(grpc::ServerContext* ctx, const pb::DumpSnapshotRequest* req,
                            grpc::ServerWriter<pb::SnapshotChunk>* writer) override {
    SnapshotDocument doc;
    doc.sampling = s_.sampling;
    if (req->source() == pb::DumpSnapshotRequest::CURRENT) {
      doc.snapshot = s_.cache->TakeSnapshot();
      doc.time = base::Clock::now();
    } else {
      std::shared_ptr<const RecordedSession> last = s_.recorder->LastDecision();
      if (!last) {
        return {grpc::StatusCode::FAILED_PRECONDITION,
                "no session has bound, evicted or admitted anything since the scheduler started; "
                "ask for the current cache instead (source CURRENT)"};
      }
      doc.snapshot = last->snapshot;
      doc.session = last->id;
      doc.time = last->time;
      doc.decisions = last->decisions;
    }
    std::string text = EncodeSnapshot(doc);
    for (size_t at = 0; at < text.size(); at += kChunkBytes) {
      if (ctx->IsCancelled()) return {grpc::StatusCode::CANCELLED, "client went away"};
      pb::SnapshotChunk chunk;
      chunk.set_data(text.substr(at, kChunkBytes));
      if (!writer->Write(chunk)) return {grpc::StatusCode::CANCELLED, "client went away"};
    }
    return grpc::Status::OK;
  }

  grpc::Status GetInfo(grpc::ServerContext*, const pb::GetInfoRequest*,
                       pb::SchedulerInfo* out) override {
    out->set_version(s_.version);
    for (const auto& n : s_.scheduler_names) out->add_scheduler_names(n);
    SessionSummary last = s_.recorder->Last();
    for (const auto& a : last.actions) out->add_actions(a);
    for (const auto& t : last.tiers) out->add_plugins(t);
    if (!last.id.empty()) {
      out->mutable_last_session()->set_id(last.id);
      out->mutable_last_session()->set_time(base::FormatTime(last.time));
    }
    out->set_sessions(last.sessions);
    out->set_nodes(static_cast<int32_t>(s_.cache->NodeCount()));
    out->set_jobs(static_cast<int32_t>(s_.cache->JobCount()));
    out->set_explanations(static_cast<int32_t>(s_.recorder->store().size()));
    out->set_explanation_capacity(static_cast<int32_t>(s_.recorder->store().capacity()));
    out->set_tls(tls_);
    return grpc::Status::OK;
  }

 private:
  std::string Names() const {
    std::string out;
    for (const auto& n : s_.scheduler_names) out += (out.empty() ? "" : ", ") + n;
    return out;
  }

  // A job no session has looked at yet: say why from the cache.
  void Unconsidered(const JobInfo& job, pb::JobExplanation* out) {
    out->set_namespace_(job.namespace_);
    out->set_pod_group(job.name);
    out->set_queue(job.queue);
    out->set_phase(std::string(ShownPhase(job)));
    out->set_job(OwningVolcanoJob(job));
    out->mutable_gang()->set_min_available(job.min_available);
    out->mutable_gang()->set_tasks(static_cast<int32_t>(job.tasks.size()));
    NotConsidered why = ExplainNotConsidered(job, s_.cache->Queue(job.queue) != nullptr);
    out->set_summary(why.summary);
    if (!why.hint.empty()) out->add_hints(why.hint);
  }

  AdminSources s_;
  bool tls_;
};

}  // namespace

struct AdminServer::Impl {
  std::unique_ptr<AdminService> service;
  std::unique_ptr<grpc::Server> server;
  int port = 0;
};

AdminServer::AdminServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

AdminServer::~AdminServer() {
  Stop(std::chrono::milliseconds(0));
}

int AdminServer::port() const {
  return impl_->port;
}

void AdminServer::Stop(std::chrono::milliseconds grace) {
  if (!impl_->server) return;
  impl_->server->Shutdown(std::chrono::system_clock::now() + grace);
  impl_->server->Wait();
  impl_->server.reset();
}

StatusOr<std::unique_ptr<AdminServer>> AdminServer::Start(const AdminServerOptions& options,
                                                          AdminSources sources) {
  if (sources.recorder == nullptr || sources.cache == nullptr)
    return Internal("admin server: missing sources");
  TEPHRA_RETURN_IF_ERROR(CheckListenerOptions("admin-address", options.address, options));
  const bool tls = !options.tls_cert_file.empty() || !options.tls_key_file.empty();
  std::shared_ptr<grpc::ServerCredentials> creds;
  if (tls) {
    grpc::SslServerCredentialsOptions ssl;
    grpc::SslServerCredentialsOptions::PemKeyCertPair pair;
    TEPHRA_ASSIGN_OR_RETURN(pair.cert_chain, ReadFile("admin-tls-cert", options.tls_cert_file));
    TEPHRA_ASSIGN_OR_RETURN(pair.private_key, ReadFile("admin-tls-key", options.tls_key_file));
    ssl.pem_key_cert_pairs.push_back(std::move(pair));
    if (!options.tls_client_ca_file.empty()) {
      TEPHRA_ASSIGN_OR_RETURN(ssl.pem_root_certs,
                              ReadFile("admin-tls-client-ca", options.tls_client_ca_file));
      ssl.client_certificate_request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
    }
    creds = grpc::SslServerCredentials(ssl);
  } else {
    creds = grpc::InsecureServerCredentials();
  }
  auto impl = std::make_unique<Impl>();
  impl->service = std::make_unique<AdminService>(std::move(sources), tls);
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  // gRPC sets SO_REUSEPORT by default: a second scheduler on the same address would then share
  // the port and answer half the calls. Refuse instead.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.AddListeningPort(options.address, creds, &impl->port);
  builder.RegisterService(impl->service.get());
  impl->server = builder.BuildAndStart();
  if (!impl->server || impl->port == 0) {
    return Unavailable("--admin-address " + options.address +
                       ": cannot listen (address in use or not local?)");
  }
  LOG(INFO) << "admin API on " << options.address << " (port " << impl->port
            << (tls ? ", TLS" : ", plaintext")
            << (options.tls_client_ca_file.empty() ? "" : ", client certificates required") << ")";
  auto server = std::unique_ptr<AdminServer>(new AdminServer(std::move(impl)));
  server->SetServing(false);
  return server;
}

void AdminServer::SetServing(bool serving) {
  if (!impl_->server) return;
  if (auto* health = impl_->server->GetHealthCheckService()) {
    health->SetServingStatus(serving);
    health->SetServingStatus(kAdminServiceName, serving);
  }
}

}  // namespace tephra::scheduler
