#include "cli/admin_client.h"

#include <fstream>
#include <sstream>

#include <grpcpp/grpcpp.h>

#include "grpc/health/v1/health.grpc.pb.h"
#include "tephra/admin/v1/admin.grpc.pb.h"

namespace tephra::cli {
namespace {

namespace pb = tephra::admin::v1;

StatusOr<std::string> ReadFile(const std::string& flag, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return InvalidArgument("--" + flag + ": cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Status FromGrpc(const grpc::Status& s, const std::string& address) {
  switch (s.error_code()) {
    case grpc::StatusCode::OK:
      return Status::Ok();
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return Unavailable("scheduler admin API at " + address +
                         " unreachable: " + s.error_message());
    case grpc::StatusCode::NOT_FOUND:
      return NotFound(s.error_message());
    case grpc::StatusCode::INVALID_ARGUMENT:
      return InvalidArgument(s.error_message());
    case grpc::StatusCode::FAILED_PRECONDITION:
      return FailedPrecondition(s.error_message());
    case grpc::StatusCode::UNAUTHENTICATED:
    case grpc::StatusCode::PERMISSION_DENIED:
      return Status(StatusCode::kForbidden,
                    "scheduler admin API at " + address + ": " + s.error_message());
    case grpc::StatusCode::UNIMPLEMENTED:
      return Internal("scheduler admin API at " + address +
                      " does not implement this call (older scheduler?)");
    default:
      return Internal("scheduler admin API at " + address + ": " + s.error_message());
  }
}

}  // namespace

struct AdminClient::Impl {
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<pb::SchedulerAdmin::Stub> stub;
  std::unique_ptr<grpc::health::v1::Health::Stub> health;
};

AdminClient::AdminClient(AdminConnection connection, std::unique_ptr<Impl> impl)
    : connection_(std::move(connection)), impl_(std::move(impl)) {}

AdminClient::~AdminClient() = default;

StatusOr<std::unique_ptr<AdminClient>> AdminClient::Create(const AdminConnection& c) {
  if (c.address.empty()) return InvalidArgument("--admin-address: empty");
  std::shared_ptr<grpc::ChannelCredentials> creds;
  grpc::ChannelArguments args;
  if (!c.ca_file.empty() || !c.cert_file.empty()) {
    grpc::SslCredentialsOptions ssl;
    if (!c.ca_file.empty()) {
      TEPHRA_ASSIGN_OR_RETURN(ssl.pem_root_certs, ReadFile("admin-ca", c.ca_file));
    }
    if (c.cert_file.empty() != c.key_file.empty()) {
      return InvalidArgument("--admin-cert and --admin-key must be given together");
    }
    if (!c.cert_file.empty()) {
      TEPHRA_ASSIGN_OR_RETURN(ssl.pem_cert_chain, ReadFile("admin-cert", c.cert_file));
      TEPHRA_ASSIGN_OR_RETURN(ssl.pem_private_key, ReadFile("admin-key", c.key_file));
    }
    creds = grpc::SslCredentials(ssl);
    if (!c.server_name.empty()) args.SetSslTargetNameOverride(c.server_name);
  } else {
    if (!c.key_file.empty()) return InvalidArgument("--admin-key needs --admin-cert");
    creds = grpc::InsecureChannelCredentials();
  }
  auto impl = std::make_unique<Impl>();
  impl->channel = grpc::CreateCustomChannel(c.address, creds, args);
  impl->stub = pb::SchedulerAdmin::NewStub(impl->channel);
  impl->health = grpc::health::v1::Health::NewStub(impl->channel);
  return std::unique_ptr<AdminClient>(new AdminClient(c, std::move(impl)));
}

namespace {

void SetDeadline(grpc::ClientContext* ctx, std::chrono::milliseconds timeout) {
  ctx->set_deadline(std::chrono::system_clock::now() + timeout);
}

}  // namespace

StatusOr<pb::JobExplanation> AdminClient::ExplainJob(const std::string& ns, const std::string& job,
                                                     const std::string& pod_group) {
  grpc::ClientContext ctx;
  SetDeadline(&ctx, connection_.timeout);
  pb::ExplainJobRequest req;
  req.set_namespace_(ns);
  req.set_job(job);
  req.set_pod_group(pod_group);
  pb::JobExplanation out;
  TEPHRA_RETURN_IF_ERROR(FromGrpc(impl_->stub->ExplainJob(&ctx, req, &out), connection_.address));
  return out;
}

StatusOr<pb::QueueUsageResponse> AdminClient::QueueUsage(const std::string& queue) {
  grpc::ClientContext ctx;
  SetDeadline(&ctx, connection_.timeout);
  pb::QueueUsageRequest req;
  req.set_queue(queue);
  pb::QueueUsageResponse out;
  TEPHRA_RETURN_IF_ERROR(FromGrpc(impl_->stub->QueueUsage(&ctx, req, &out), connection_.address));
  return out;
}

StatusOr<pb::SchedulerInfo> AdminClient::GetInfo() {
  grpc::ClientContext ctx;
  SetDeadline(&ctx, connection_.timeout);
  pb::SchedulerInfo out;
  TEPHRA_RETURN_IF_ERROR(
      FromGrpc(impl_->stub->GetInfo(&ctx, pb::GetInfoRequest{}, &out), connection_.address));
  return out;
}

Status AdminClient::DumpSnapshot(bool current, const std::function<void(std::string_view)>& sink) {
  grpc::ClientContext ctx;
  // A large cluster's snapshot takes a while to encode and send.
  SetDeadline(&ctx, std::max(connection_.timeout, std::chrono::milliseconds(120000)));
  pb::DumpSnapshotRequest req;
  req.set_source(current ? pb::DumpSnapshotRequest::CURRENT
                         : pb::DumpSnapshotRequest::LAST_DECISION);
  std::unique_ptr<grpc::ClientReader<pb::SnapshotChunk>> reader =
      impl_->stub->DumpSnapshot(&ctx, req);
  pb::SnapshotChunk chunk;
  while (reader->Read(&chunk)) sink(chunk.data());
  return FromGrpc(reader->Finish(), connection_.address);
}

Status AdminClient::Health() {
  grpc::ClientContext ctx;
  SetDeadline(&ctx, connection_.timeout);
  grpc::health::v1::HealthCheckRequest req;
  req.set_service("tephra.admin.v1.SchedulerAdmin");
  grpc::health::v1::HealthCheckResponse out;
  TEPHRA_RETURN_IF_ERROR(FromGrpc(impl_->health->Check(&ctx, req, &out), connection_.address));
  if (out.status() != grpc::health::v1::HealthCheckResponse::SERVING) {
    return Unavailable("scheduler admin API at " + connection_.address + " is not serving");
  }
  return Status::Ok();
}

}  // namespace tephra::cli
