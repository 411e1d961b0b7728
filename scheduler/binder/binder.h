// Binding and eviction (KubeBinder). Asynchronous: a session hands work over and moves on;
// worker threads talk to the API server. The cache is updated first (assume-then-bind), so the
// next session already sees a bound pod as using its node, and a failed bind is rolled back.
// The session's status write-back is scheduler/status/status_writer.h.
//
// A unit whose members have pre-bind steps (volume binding, docs/scheduler.md "Storage") is
// bound in phases: its steps are written, the unit waits — re-checked on the work queue, so it
// holds no worker — until every step is complete as the informers show it, and only then are
// its pods bound. A step that fails, or is not complete within its timeout, undoes what the
// unit wrote, gives every member back to the next session (Pending, with a FailedScheduling
// event saying why) and binds none of them.
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
  // How often a unit waiting for its pre-bind steps is checked again.
  std::chrono::milliseconds step_poll{250};
};

class KubeBinder : public Binder, public Evictor {
 public:
  KubeBinder(std::shared_ptr<kube::Client> client, SchedulerCache& cache,
             kube::EventRecorder* events, metrics::Registry* registry, BinderOptions options);
  ~KubeBinder() override;

  void Bind(const BindUnit& unit) override;
  void Evict(const TaskInfo& task, const std::string& reason) override;
  // Waits until every queued bind and eviction finished (tests, shutdown).
  bool Drain(std::chrono::milliseconds timeout);
  void Stop();

  int64_t bound() const;
  int64_t failed() const;

 private:
  enum class Kind { kBind, kEvict, kUnit };
  struct Work {
    Kind kind = Kind::kBind;
    uint64_t unit = 0;  // kUnit: the unit to advance
    JobId job;
    std::string namespace_;
    std::string name;
    std::string uid;
    std::string node;
    std::string reason;
    std::optional<base::Time> created;
    PodInfoPtr pod;
  };
  // A unit with pre-bind steps, from its steps' writes to its members' binds.
  struct Unit {
    std::vector<Work> members;  // the binds, sent once every step is complete
    std::vector<PreBindStep> steps;
    std::vector<bool> written;  // per step: written to the API server (undo it on failure)
    bool writes_done = false;
    std::chrono::steady_clock::time_point deadline;
  };
  // How a pre-bind step stands, as the informers show it.
  enum class StepState { kPending, kComplete, kFailed };
  Work MakeBindWork(const TaskInfo& task, const std::string& node) const;
  void Enqueue(Work w);
  // Enqueues `w` under key `key` (a unit's key is reused while it waits).
  void EnqueueAs(const std::string& key, Work w, std::chrono::milliseconds delay);
  // Writes the unit's steps (once), then checks them: binds its members when all are complete,
  // fails it when one failed or its time is up, else checks again after step_poll.
  void AdvanceUnit(const std::string& key, uint64_t id);
  Status WriteStep(const PreBindStep& step);
  StepState CheckStep(const PreBindStep& step, std::string* why) const;
  // Best effort: what a step wrote is taken back unless the PV controller already completed it.
  void UndoStep(const PreBindStep& step);
  void FailUnit(Unit unit, const std::string& why);
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
  uint64_t next_unit_ GUARDED_BY(mu_) = 0;
  std::unordered_map<std::string, Work> work_ GUARDED_BY(mu_);  // queued, by key
  std::unordered_map<uint64_t, Unit> units_ GUARDED_BY(mu_);    // units with pre-bind steps
  int in_flight_ GUARDED_BY(mu_) = 0;
  int64_t bound_ GUARDED_BY(mu_) = 0;
  int64_t failed_ GUARDED_BY(mu_) = 0;
  // Every bind and eviction gets a key of its own (a sequence number), so the queue hands
  // them out first-in first-out and never merges two. Last, so the workers stop first.
  base::WorkQueue queue_;
  base::QueueWorkers workers_;
};

}  // namespace tephra::scheduler
