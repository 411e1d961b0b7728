// Binding and eviction (KubeBinder). Asynchronous: a session hands work over and moves on;
// worker threads talk to the API server. The cache is updated first (assume-then-bind), so the
// next session already sees a bound pod as using its node, and a failed bind is rolled back.
// The session's status write-back is scheduler/status/status_writer.h.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/workqueue.h"
#include "kube/client.h"
#include "kube/events.h"
#include "metrics/metrics.h"
#include "scheduler/cache/cache.h"
#include "scheduler/framework/interfaces.h"
#include "sync/mutex.h"

namespace tephra::scheduler {

struct BinderOptions {
  int workers = 16;
  bool record_scheduled_events = true;  // a Normal "Scheduled" event per bound pod
};

class KubeBinder : public Binder, public Evictor {
 public:
  KubeBinder(std::shared_ptr<kube::Client> client, SchedulerCache& cache,
             kube::EventRecorder* events, metrics::Registry* registry, BinderOptions options);
  ~KubeBinder() override;

  void Bind(const TaskInfo& task, const std::string& node) override;
  void Evict(const TaskInfo& task, const std::string& reason) override;
  // Waits until every queued bind and eviction finished (tests, shutdown).
  bool Drain(std::chrono::milliseconds timeout);
  void Stop();

  int64_t bound() const;
  int64_t failed() const;

 private:
  struct Work {
    bool evict = false;
    JobId job;
    std::string namespace_;
    std::string name;
    std::string uid;
    std::string node;
    std::string reason;
    std::optional<base::Time> created;
    PodInfoPtr pod;
  };
  void Enqueue(Work w);
  // One queued bind or eviction, by its key; never fails (a failed bind is rolled back, not
  // retried: the next session decides again).
  Status Process(const std::string& key);
  void DoBind(const Work& w);
  void DoEvict(const Work& w);

  std::shared_ptr<kube::Client> client_;
  SchedulerCache& cache_;
  kube::EventRecorder* events_;
  BinderOptions options_;
  metrics::Counter* bound_total_ = nullptr;
  metrics::Counter* bind_errors_ = nullptr;
  metrics::Counter* evictions_ = nullptr;
  metrics::Histogram* create_to_bind_ = nullptr;
  metrics::Histogram* bind_latency_ = nullptr;

  mutable sync::Mutex mu_;
  sync::CondVar idle_cv_;  // work_ became empty with nothing in flight
  uint64_t next_key_ GUARDED_BY(mu_) = 0;
  std::unordered_map<std::string, Work> work_ GUARDED_BY(mu_);  // queued, by key
  int in_flight_ GUARDED_BY(mu_) = 0;
  int64_t bound_ GUARDED_BY(mu_) = 0;
  int64_t failed_ GUARDED_BY(mu_) = 0;
  // Every bind and eviction gets a key of its own (a sequence number), so the queue hands
  // them out first-in first-out and never merges two. Last, so the workers stop first.
  base::WorkQueue queue_;
  base::QueueWorkers workers_;
};

}  // namespace tephra::scheduler
