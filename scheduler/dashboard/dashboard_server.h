// The scheduler's read-only web dashboard (docs/dashboard.md): pages for queues, jobs, the
// cluster and the last hour, and the JSON endpoints they read, on --dashboard-address over
// HTTP or HTTPS with the admin API's TLS and client-certificate options.
//
// Safe by default: GET only; nothing secret is read (no Secrets, no pod environments); every
// list is bounded; the pages put text in the DOM as text, never as markup, and the headers
// forbid inline scripts, framing and sniffing. Nothing is fetched from elsewhere at run time:
// the pages, script and style are compiled into the binary.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "kube/client.h"
#include "scheduler/cache/cache.h"
#include "scheduler/explain/history.h"
#include "scheduler/explain/recorder.h"
#include "scheduler/listener/listener_options.h"

namespace tephra::scheduler {

// What the dashboard reads. Everything must outlive the server.
struct DashboardSources {
  const SessionRecorder* recorder = nullptr;
  SchedulerCache* cache = nullptr;
  const History* history = nullptr;
  // For a job's recent Events (read on request); null: the job page shows none.
  std::shared_ptr<kube::Client> client;
  std::vector<std::string> scheduler_names;
  std::string version;
};

class DashboardServer {
 public:
  // Checks `address` and the TLS options as the admin API does (errors name the flags), binds
  // and starts serving.
  static StatusOr<std::unique_ptr<DashboardServer>> Start(const std::string& address,
                                                          const AdminServerOptions& tls,
                                                          DashboardSources sources);
  ~DashboardServer();
  DashboardServer(const DashboardServer&) = delete;
  DashboardServer& operator=(const DashboardServer&) = delete;

  int port() const;
  void Stop(std::chrono::milliseconds grace);

  class Impl;

 private:
  explicit DashboardServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The embedded files served under / (generated from scheduler/dashboard/assets at build time).
struct DashboardAsset {
  const char* path;          // "/", "/app.js"
  const char* content_type;  // "text/html; charset=utf-8"
  const char* body;
};
const std::vector<DashboardAsset>& DashboardAssets();

}  // namespace tephra::scheduler
