// The scheduler process's engine: informers feed the cache, and a loop runs a cycle every
// schedule period — sooner when new pending work arrives — and hands its outcome to the
// binder and the status writer.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kube/client.h"
#include "kube/events.h"
#include "kube/informer.h"
#include "metrics/metrics.h"
#include "scheduler/binder/binder.h"
#include "scheduler/cache/cache.h"
#include "scheduler/explain/history.h"
#include "scheduler/explain/recorder.h"
#include "scheduler/framework/conf.h"
#include "scheduler/framework/cycle.h"
#include "scheduler/framework/registry.h"
#include "scheduler/status/status_writer.h"
#include "sync/mutex.h"

namespace tephra::scheduler {

struct SchedulerOptions {
  std::vector<std::string> scheduler_names{"volcano"};
  std::string conf_file;  // empty: the built-in default configuration
  // "namespace/name" of the ConfigMap conf_file comes from, if any: warnings about the
  // configuration are also Events on it.
  std::string conf_configmap;
  std::chrono::milliseconds period{1000};
  // Work arriving between periods starts a cycle early, but never closer than this to the
  // previous one, so bursts of pod creations are scheduled in batches.
  std::chrono::milliseconds min_gap{100};
  std::string default_queue = "default";
  NodeSampling sampling;
  std::string node_selector;  // label selector restricting the nodes this scheduler uses
  // Label selector restricting the Queues this scheduler serves: PodGroups in other queues are
  // neither admitted nor written, so schedulers sharing a cluster can split it by queue.
  std::string queue_selector;
  BinderOptions binder;
  int status_workers = 4;
  // Explanations kept (one per job, least recently updated dropped first).
  size_t explain_capacity = 10000;
  // Keep the input of the last session that decided something, for the admin API's DumpSnapshot.
  bool keep_decision_snapshot = false;
};

class Scheduler {
 public:
  Scheduler(std::shared_ptr<kube::Client> client, SchedulerOptions options,
            metrics::Registry* registry, kube::EventRecorder* events);
  ~Scheduler();

  // Loads the configuration, starts the informers, waits for them to sync (up to `timeout`)
  // and makes sure the `root` and default queues exist.
  Status Start(std::chrono::milliseconds timeout);
  // Runs cycles until `keep_running` returns false (checked between cycles).
  void Run(const std::function<bool()>& keep_running);
  void Stop();

  bool Synced() const { return synced_.load(); }
  // When the last cycle finished (for liveness).
  std::chrono::steady_clock::time_point last_cycle() const;
  SchedulerCache& cache() { return cache_; }
  // What each session concluded (for the admin API).
  const SessionRecorder& recorder() const { return recorder_; }
  // The last hour of sessions, binds and queue allocations (for the dashboard).
  const History& history() const { return history_; }
  // Runs one cycle now (tests).
  CycleResult RunOnce();

 private:
  // Loads --scheduler-conf when the file changed and says what it leaves out: a warning per
  // name in the log, the gauge, and an Event on the ConfigMap. Returns whether it loaded one.
  bool ReloadConfIfChanged();
  // Whether a new configuration is now in conf_ (a bad file keeps the current one).
  bool LoadConfIfChanged() REQUIRES(conf_mu_);
  // The gauge: 1 for each name `conf` leaves out, 0 for those an earlier one left out.
  void ShowUnsupported(const SchedulerConf& conf) REQUIRES(conf_mu_);
  void WarnOnConfigMap(const std::vector<std::string>& warnings);
  // Creates queue `name` (weight 1, with `labels`) unless it exists; docs/scheduler.md says
  // how this default queue relates to the one the chart creates.
  Status EnsureQueue(const std::string& name, bool reclaimable,
                     const std::map<std::string, std::string>& labels);
  // A bad --node-selector or --queue-label-selector fails at start, in the API server's words.
  Status CheckSelectors();
  void RegisterInformers();
  // Watches scheduling.x-k8s.io PodGroups if their CRD is installed; false if not (yet).
  bool WatchSchedPluginsPodGroups();
  // An Event on each Queue whose warning is new or changed since the last cycle.
  void WarnAboutQueues(const std::vector<QueueWarning>& warnings);

  std::shared_ptr<kube::Client> client_;
  SchedulerOptions options_;
  metrics::Registry* registry_;
  kube::EventRecorder* events_;
  SchedulerCache cache_;
  std::shared_ptr<SpecInterner> interner_;
  Registry plugins_;
  kube::InformerFactory informers_;
  std::unique_ptr<KubeBinder> binder_;
  std::unique_ptr<StatusWriter> writer_;
  SessionRecorder recorder_;
  History history_;

  sync::Mutex conf_mu_;
  SchedulerConf conf_ GUARDED_BY(conf_mu_);
  int64_t conf_mtime_ GUARDED_BY(conf_mu_) = -1;
  std::atomic<bool> synced_{false};
  // scheduling.x-k8s.io PodGroups are watched (their CRD may be installed after the start).
  std::atomic<bool> sched_plugins_served_{false};
  std::atomic<bool> stopped_{false};
  std::atomic<int64_t> last_cycle_ns_{0};
  uint64_t cycles_ = 0;
  // The cache generation a session ended at that changed nothing and left nothing waiting (no
  // job unadmitted, no task pending): until the cache changes, another session could only
  // repeat it, so none runs — but one every kQuietRecheck all the same, for what only time
  // changes (docs/scheduler.md, "When a cycle runs").
  std::optional<uint64_t> quiet_generation_;
  std::chrono::steady_clock::time_point quiet_checked_;
  static constexpr std::chrono::seconds kQuietRecheck{30};
  std::map<std::string, std::string> queue_warnings_;  // queue → last warning (cycle thread only)

  metrics::Histogram* e2e_ = nullptr;
  metrics::Histogram* open_ = nullptr;
  metrics::HistogramVec* action_latency_ = nullptr;
  metrics::CounterVec* attempts_ = nullptr;
  metrics::Counter* skipped_ = nullptr;
  metrics::Gauge* unschedulable_tasks_ = nullptr;
  metrics::Gauge* unschedulable_jobs_ = nullptr;
  metrics::GaugeVec* unsupported_ = nullptr;
  // (kind, name) the gauge shows at 1.
  std::set<std::pair<std::string, std::string>> unsupported_shown_ GUARDED_BY(conf_mu_);
};

}  // namespace tephra::scheduler
