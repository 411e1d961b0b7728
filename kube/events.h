// Records Kubernetes Events (core/v1) about any object so `kubectl describe` shows why Tephra
// did what it did. Recording never blocks the caller: events go through a bounded queue to a
// writer thread. Repeats of the same event are folded into one object whose count grows, and a
// per-object token bucket keeps a misbehaving loop from flooding the API server.
#pragma once

#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/time.h"
#include "base/token_bucket.h"
#include "kube/client.h"
#include "kube/meta/object.h"
#include "metrics/metrics.h"
#include "sync/mutex.h"

namespace tephra::kube {

enum class EventType { kNormal, kWarning };
// The Event's `type` field: "Normal" or "Warning".
inline const char* EventTypeName(EventType t) {
  return t == EventType::kWarning ? "Warning" : "Normal";
}

// One core/v1 Event as first written: `name` in `namespace_`, about `object`, count 1.
struct EventBody {
  ObjectReference object;
  std::string name, namespace_;
  EventType type = EventType::kNormal;
  std::string reason, message;
  std::string source;               // source.component
  std::string component, instance;  // reportingComponent, reportingInstance
  base::Time when;
};
std::string EncodeEvent(const EventBody& event);

struct EventRecorderOptions {
  std::string component;  // reportingComponent, e.g. "tephra-scheduler"
  std::string instance;   // reportingInstance, e.g. the pod or host name
  // source.component, the name `kubectl get events` shows in FROM and tools filter on; empty:
  // `component`. Drop-in daemons use Volcano's names here (docs/integrations.md).
  std::string source{};
  size_t queue_size = 4096;
  // Writer threads, each with its share of the involved objects (one object's events stay in
  // order and fold into one Event). One writer, a round trip per Event, trailed a stream of
  // thousands of pods by tens of seconds and dropped what overflowed the queue.
  int writers = 4;
  // Per involved object: burst of events, then one every refill period.
  int per_object_burst = 25;
  std::chrono::seconds per_object_refill{300};
  // Identical events within this window update the existing Event's count.
  std::chrono::seconds dedup_window{600};
  size_t dedup_cache_size = 4096;
  // An Event whose write fails in transit is sent again after base, 4×base, ... (its name is
  // fixed, so a repeat cannot make a second Event); after max_retries it counts as dropped.
  int max_retries = 3;
  std::chrono::milliseconds retry_base_delay{200};
  // When set: tephra_events_written_total and tephra_events_dropped_total (one recorder per
  // registry).
  metrics::Registry* registry = nullptr;
};

class EventRecorder {
 public:
  EventRecorder(std::shared_ptr<Client> client, EventRecorderOptions options,
                base::ClockInterface& clock = base::RealClock());
  ~EventRecorder();

  void Record(const ObjectReference& object, EventType type, const std::string& reason,
              const std::string& message);
  // Waits until every recorded event has been written (tests, shutdown); false on timeout.
  bool Flush(std::chrono::milliseconds timeout);
  void Stop();

  int64_t written() const;
  // Events not written: queue full, over an object's budget, or failed after retries.
  int64_t dropped() const;

 private:
  struct Pending {
    ObjectReference object;
    std::string object_key;  // its uid, or kind/namespace/name: shard, budget and folding key
    EventType type;
    std::string reason;
    std::string message;
    base::Time when;
  };
  struct Seen {
    std::string event_name;
    std::string event_namespace;
    int64_t count = 0;
    base::Time first;
    base::Time last;
  };

  // What one writer thread alone reads and writes: budgets and folds of its objects.
  struct WriterState {
    std::unordered_map<std::string, Seen> seen;
    std::deque<std::string> seen_order;
    std::unordered_map<std::string, std::unique_ptr<base::TokenBucket>> limits;
  };

  static std::string ObjectKey(const ObjectReference& object);
  void Loop(size_t shard);
  void Write(const Pending& p, WriterState& writer);
  void CountWrittenLocked() REQUIRES(mu_);
  void CountDroppedLocked() REQUIRES(mu_);
  Status CreateWithRetries(const std::string& ns, const std::string& body);

  std::shared_ptr<Client> client_;
  EventRecorderOptions options_;
  base::ClockInterface& clock_;

  mutable sync::Mutex mu_;
  sync::CondVar cv_;
  std::vector<std::deque<Pending>> queues_ GUARDED_BY(mu_);  // one per writer
  size_t queued_ GUARDED_BY(mu_) = 0;
  bool stopped_ GUARDED_BY(mu_) = false;
  int in_flight_ GUARDED_BY(mu_) = 0;
  int64_t written_ GUARDED_BY(mu_) = 0;
  int64_t dropped_ GUARDED_BY(mu_) = 0;
  metrics::Counter* written_metric_ = nullptr;
  metrics::Counter* dropped_metric_ = nullptr;
  std::vector<WriterState> writers_;  // writers_[i] belongs to threads_[i]
  std::vector<std::thread> threads_;
};

}  // namespace tephra::kube
