// tephractl's side of the scheduler admin API (proto/tephra/admin/v1/admin.proto). gRPC stays
// in the .cc; errors come back as Status, with kUnavailable when the scheduler cannot be reached
// (the caller may fall back to what the API server knows).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"
#include "tephra/admin/v1/admin.pb.h"

namespace tephra::cli {

struct AdminConnection {
  std::string address;    // host:port
  std::string ca_file;    // verify the server with this CA (turns TLS on)
  std::string cert_file;  // client certificate, for servers that require one
  std::string key_file;
  std::string server_name;  // the name to verify the server certificate against
  std::chrono::milliseconds timeout{5000};
};

class AdminClient {
 public:
  // Reads the TLS files (errors name the flag); does not connect yet.
  static StatusOr<std::unique_ptr<AdminClient>> Create(const AdminConnection& connection);
  ~AdminClient();

  StatusOr<tephra::admin::v1::JobExplanation> ExplainJob(const std::string& ns,
                                                         const std::string& job,
                                                         const std::string& pod_group);
  StatusOr<tephra::admin::v1::QueueUsageResponse> QueueUsage(const std::string& queue);
  StatusOr<tephra::admin::v1::SchedulerInfo> GetInfo();
  // Streams the snapshot's bytes to `sink`.
  Status DumpSnapshot(bool current, const std::function<void(std::string_view)>& sink);
  // The standard health check of the admin service: OK when SERVING.
  Status Health();

  const AdminConnection& connection() const { return connection_; }

  struct Impl;

 private:
  AdminClient(AdminConnection connection, std::unique_ptr<Impl> impl);
  AdminConnection connection_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tephra::cli
