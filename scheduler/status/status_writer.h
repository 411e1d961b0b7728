// Status write-back (StatusWriter): what a session decided, written to the API server
// asynchronously by worker threads, so a session hands its outcome over and moves on.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/workqueue.h"
#include "kube/client.h"
#include "kube/events.h"
#include "metrics/metrics.h"
#include "scheduler/cache/cache.h"
#include "scheduler/framework/interfaces.h"
#include "scheduler/framework/outcome.h"
#include "sync/mutex.h"

namespace tephra::scheduler {

// Writes a session's outcome: PodGroup status (merge patch; Volcano's PodGroup has no status
// subresource), Queue status.allocated (status subresource), pod PodScheduled conditions with
// FailedScheduling events, and PodGroup events. Per object only the latest pending update is
// kept, so a slow API server gets fewer, newer writes rather than a growing backlog. Updates
// nobody waits on (Queue status.allocated, PodGroup counts) are held for `settle` first, so
// that a burst of sessions makes one write per object rather than one per session.
class StatusWriter {
 public:
  // PodGroup status writes are assumed in `cache` (when not null) as they are queued.
  StatusWriter(std::shared_ptr<kube::Client> client, SchedulerCache* cache,
               kube::EventRecorder* events, metrics::Registry* registry, int workers = 4,
               std::chrono::milliseconds settle = std::chrono::seconds(1));
  ~StatusWriter();

  void Apply(const SessionOutcome& outcome);
  // Waits until every update is written, except those parked for a PodGroup not yet created.
  bool Drain(std::chrono::milliseconds timeout);
  void Stop();
  // Job's PodGroup object exists now: its parked update (if any) goes out.
  void GroupArrived(const JobId& job);

  // How long an update waits for its PodGroup to be created before it is dropped.
  static constexpr std::chrono::minutes kParkLimit{10};
  // A held PodGroup update whose pods are starting waits this many settle periods at most.
  static constexpr int kStartingHold = 5;

 private:
  struct Item {
    enum class Kind { kPodGroup, kQueue, kPod } kind;
    std::string key;
    JobId job;  // kPodGroup
    std::string namespace_;
    std::string name;
    std::string body;                                  // the patch
    std::chrono::steady_clock::time_point not_before;  // held until then (settle)
    bool awaiting_object = false;                      // parked until GroupArrived
    std::chrono::steady_clock::time_point parked_until;
    bool sched_plugins = false;
    kube::ObjectReference event_object;
    std::string event_type, event_reason, event_message;
  };
  void Enqueue(Item item, bool urgent, int hold_periods = 1);
  // Queues `item` (already timed) under mu_, newer content replacing older.
  void QueueLocked(Item item) REQUIRES(mu_);
  void PruneParkedLocked() REQUIRES(mu_);
  // `newer` replaces `older` before it was written: an event only `older` carried (a gang's
  // Scheduled, say, before its running count) goes out with `newer`'s write instead of being lost.
  static void KeepEvent(const Item& older, Item& newer);
  // Writes the latest update of `key`, unless it is held for a later time.
  Status Process(const std::string& key);
  void Write(const Item& item);

  std::shared_ptr<kube::Client> client_;
  SchedulerCache* cache_;
  kube::EventRecorder* events_;
  metrics::Counter* writes_ = nullptr;
  metrics::Counter* write_errors_ = nullptr;

  std::chrono::milliseconds settle_;
  sync::Mutex mu_;
  sync::CondVar idle_cv_;  // pending_ became empty with nothing in flight
  std::map<std::string, Item> pending_ GUARDED_BY(mu_);  // latest per key
  // Updates of provisional groups, by key: written when the object arrives, dropped after
  // kParkLimit (a pod deleted first, or no PodGroup controller running).
  std::map<std::string, Item> parked_ GUARDED_BY(mu_);
  size_t parks_since_prune_ GUARDED_BY(mu_) = 0;
  int in_flight_ GUARDED_BY(mu_) = 0;
  bool stopped_ GUARDED_BY(mu_) = false;
  // Keys to write: urgent ones at once (Add), held ones when their settle time is due
  // (AddAfter keeps the earlier time of two). The queue hands a key to one worker at a time.
  // Last, so the workers stop first.
  base::WorkQueue queue_;
  base::QueueWorkers workers_;
};

}  // namespace tephra::scheduler
