// The scheduler's gRPC admin API (proto/tephra/admin/v1/admin.proto) and the standard
// grpc.health.v1 health service, on --admin-address. Read-only: it serves what the scheduling
// loop recorded (explanations, queue shares, the last deciding session's snapshot) and what the
// cache holds; nothing it does changes the scheduler or the cluster.
//
// TLS when a certificate and key are given; with a client CA as well, clients must present a
// certificate signed by it (mutual TLS). Beyond loopback, mutual TLS is required unless
// anonymous clients are allowed explicitly (the rules are scheduler/listener/listener_options.h,
// which the dashboard shares). gRPC stays out of this header.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "scheduler/cache/cache.h"
#include "scheduler/explain/recorder.h"
#include "scheduler/listener/listener_options.h"
#include "scheduler/replay/snapshot_io.h"

namespace tephra::scheduler {

// What the server reads. Everything must outlive the server.
struct AdminSources {
  const SessionRecorder* recorder = nullptr;
  SchedulerCache* cache = nullptr;
  std::vector<std::string> scheduler_names;
  NodeSampling sampling;
  std::string version;
};

class AdminServer {
 public:
  // Validates the options (errors name the flag), binds and starts serving.
  static StatusOr<std::unique_ptr<AdminServer>> Start(const AdminServerOptions& options,
                                                      AdminSources sources);
  ~AdminServer();
  AdminServer(const AdminServer&) = delete;
  AdminServer& operator=(const AdminServer&) = delete;

  // The bound port (useful with port 0).
  int port() const;
  // What the health service reports (overall and for kAdminServiceName). The server starts
  // NOT_SERVING: the scheduler flips it once its caches have synced.
  void SetServing(bool serving);
  // Stops accepting calls; calls in flight get until `grace` to finish.
  void Stop(std::chrono::milliseconds grace);

  struct Impl;

 private:
  explicit AdminServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The name the health service reports the admin service under.
inline constexpr char kAdminServiceName[] = "tephra.admin.v1.SchedulerAdmin";

}  // namespace tephra::scheduler
