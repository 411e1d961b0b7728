// Work queues for controllers, with client-go's semantics. Items are object keys
// ("namespace/name"), never events: a controller reconciles whatever the cache says when the key
// comes out, so adding a key that is already queued does nothing.
//
//   * dirty set: keys that need processing; a key is queued at most once.
//   * processing set: keys handed out by Get() and not yet Done(). A key is never handed to two
//     workers at once; a key added while it is processing is queued again on Done().
//   * delayed adds (AddAfter) wait in a min-heap on the injectable clock, earliest first.
//   * AddRateLimited asks a RateLimiter how long to wait (per-key exponential backoff, capped
//     by an overall token bucket by default); Forget clears a key's history after success.
//
// Worker loop:
//   while (auto key = queue.Get()) {
//     Status s = Reconcile(*key);
//     if (s.ok()) queue.Forget(*key); else queue.AddRateLimited(*key);
//     queue.Done(*key);
//   }
//
// Thread-safety: every method is thread-safe. The queue must outlive all calls into it: join the
// workers (after ShutDown) before destroying it.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <queue>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "base/token_bucket.h"
#include "sync/mutex.h"

namespace tephra::metrics {
class Registry;
class Gauge;
class Counter;
class Histogram;
}  // namespace tephra::metrics

namespace tephra::base {

// Decides how long a key waits before its next retry. Implementations are thread-safe.
class RateLimiter {
 public:
  virtual ~RateLimiter() = default;
  // Records one more retry of `key` and returns how long to wait before it.
  virtual std::chrono::nanoseconds When(const std::string& key) = 0;
  // Clears the history of `key` (it succeeded, or the caller gave up on it).
  virtual void Forget(const std::string& key) = 0;
  // Retries recorded for `key` since the last Forget.
  virtual int NumRequeues(const std::string& key) const = 0;
};

// base * 2^failures per key, capped at `max`: 5ms, 10ms, 20ms, ... 1000s by default.
class ExponentialFailureRateLimiter final : public RateLimiter {
 public:
  explicit ExponentialFailureRateLimiter(
      std::chrono::nanoseconds base = std::chrono::milliseconds(5),
      std::chrono::nanoseconds max = std::chrono::seconds(1000));

  std::chrono::nanoseconds When(const std::string& key) override;
  void Forget(const std::string& key) override;
  int NumRequeues(const std::string& key) const override;

 private:
  const std::chrono::nanoseconds base_;
  const std::chrono::nanoseconds max_;
  mutable sync::Mutex mu_;
  std::unordered_map<std::string, int> failures_ GUARDED_BY(mu_);
};

// An overall token bucket shared by all keys: `qps` tokens per second, at most `burst` saved.
// Each When() reserves a token and returns the wait until it is available. It keeps no per-key
// history, so Forget does nothing and NumRequeues is 0.
//
// With `max_delay`, a retry that would wait longer than that takes no token and waits
// `max_delay`: the bucket spreads a burst of retries over at most that long. Without it the
// reservations have no bound, and one key's first retry waits behind every retry other keys
// reserved before it (a thousand failures at 10 qps hold the next one back 90 s).
class TokenBucketRateLimiter final : public RateLimiter {
 public:
  explicit TokenBucketRateLimiter(double qps = 10, int burst = 100,
                                  ClockInterface& clock = RealClock(),
                                  std::optional<std::chrono::nanoseconds> max_delay = std::nullopt);

  std::chrono::nanoseconds When(const std::string& key) override;
  void Forget(const std::string&) override {}
  int NumRequeues(const std::string&) const override { return 0; }

 private:
  TokenBucket bucket_;
  const std::optional<std::chrono::nanoseconds> max_delay_;
};

// The longest wait of several limiters; NumRequeues is the largest of theirs.
class MaxOfRateLimiter final : public RateLimiter {
 public:
  explicit MaxOfRateLimiter(std::vector<std::unique_ptr<RateLimiter>> limiters);

  std::chrono::nanoseconds When(const std::string& key) override;
  void Forget(const std::string& key) override;
  int NumRequeues(const std::string& key) const override;

 private:
  const std::vector<std::unique_ptr<RateLimiter>> limiters_;
};

// The longest the controllers' shared bucket holds a retry back (kMaxSharedRetryDelay): a key's
// retry waits for its own failures, never for long behind other keys' (docs/compatibility.md
// §2.1, Failures).
inline constexpr std::chrono::seconds kMaxSharedRetryDelay{1};

// The controllers' limiter: max(per-key exponential 5ms..1000s, bucket 10 qps burst 100 that
// holds a retry back at most kMaxSharedRetryDelay). client-go's default has the same two parts,
// but its bucket has no bound.
std::unique_ptr<RateLimiter> NewDefaultControllerRateLimiter(ClockInterface& clock = RealClock());

struct WorkQueueOptions {
  // Names the queue in metrics (workqueue_*{name="..."}). Empty: no metrics.
  std::string name;
  // Time source for delays, rate limits and durations. Null: RealClock().
  ClockInterface* clock = nullptr;
  // Null: NewDefaultControllerRateLimiter(*clock). Shared so shards can share one limiter.
  std::shared_ptr<RateLimiter> rate_limiter;
  // Where metrics go when `name` is set. Null: metrics::DefaultRegistry().
  metrics::Registry* registry = nullptr;
};

class WorkQueue {
 public:
  explicit WorkQueue(WorkQueueOptions options = {});
  // Shuts the queue down. Workers must have returned from Get() before it is destroyed.
  ~WorkQueue();
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  // Marks `key` as needing processing. No-op if it is already queued or the queue is shut down.
  void Add(const std::string& key);
  // Adds `key` once `delay` has passed on the clock (immediately if delay <= 0). A key already
  // waiting keeps the earlier of its two times.
  void AddAfter(const std::string& key, std::chrono::nanoseconds delay);
  // AddAfter(key, rate_limiter.When(key)).
  void AddRateLimited(const std::string& key);
  // Clears the key's rate-limit history; call it when the key was processed successfully.
  void Forget(const std::string& key);
  int NumRequeues(const std::string& key) const;

  // Blocks until a key is available and marks it processing; the caller must call Done(key).
  // After ShutDown, keys still queued are handed out, then nullopt.
  std::optional<std::string> Get();
  // Ends the processing of `key`; if it was added meanwhile it is queued again.
  void Done(const std::string& key);

  // Keys ready to be handed out (delayed keys count once they are due and have been picked up).
  size_t Len() const;

  // Stops accepting keys and wakes every blocked Get(). Delayed keys are dropped.
  void ShutDown();
  // ShutDown, then wait until every key handed out has been Done().
  void ShutDownWithDrain();
  // As above but gives up after `timeout` on the clock; returns whether the queue drained.
  bool ShutDownWithDrain(std::chrono::nanoseconds timeout);
  bool ShuttingDown() const;

 private:
  using TimePoint = std::chrono::steady_clock::time_point;
  struct Metrics;
  struct Waiting {
    TimePoint ready;
    uint64_t seq;  // insertion order breaks ties, so equal times come out first-in first-out
    std::string key;
  };
  struct LaterFirst {
    bool operator()(const Waiting& a, const Waiting& b) const {
      return a.ready != b.ready ? a.ready > b.ready : a.seq > b.seq;
    }
  };

  void AddLocked(const std::string& key, TimePoint now) REQUIRES(mu_);
  void PromoteDueLocked(TimePoint now) REQUIRES(mu_);

  ClockInterface* const clock_;
  const std::shared_ptr<RateLimiter> rate_limiter_;
  const std::unique_ptr<Metrics> metrics_;  // null when the queue has no name

  mutable sync::Mutex mu_;
  sync::CondVar cv_;          // keys queued, shutdown, or an earlier delayed key
  sync::CondVar drained_cv_;  // processing_ became empty
  std::deque<std::string> queue_ GUARDED_BY(mu_);  // ready keys, each at most once
  std::unordered_map<std::string, TimePoint> dirty_ GUARDED_BY(mu_);       // key -> added at
  std::unordered_map<std::string, TimePoint> processing_ GUARDED_BY(mu_);  // key -> handed out
  std::priority_queue<Waiting, std::vector<Waiting>, LaterFirst> heap_ GUARDED_BY(mu_);
  // The live entry of each delayed key; heap entries with another seq are stale.
  std::unordered_map<std::string, std::pair<TimePoint, uint64_t>> waiting_ GUARDED_BY(mu_);
  uint64_t next_seq_ GUARDED_BY(mu_) = 0;
  uint64_t heap_version_ GUARDED_BY(mu_) = 0;  // bumped when an earlier delayed key arrives
  bool shutting_down_ GUARDED_BY(mu_) = false;
};

// `threads` workers running the worker loop above over one queue: `sync` OK forgets the key's
// failures, an error logs it (naming `what`) and retries the key through the queue's rate
// limiter. A caller that must not retry handles its failures itself and returns OK.
class QueueWorkers {
 public:
  QueueWorkers() = default;
  QueueWorkers(const QueueWorkers&) = delete;
  QueueWorkers& operator=(const QueueWorkers&) = delete;
  ~QueueWorkers() { Stop(); }
  void Start(WorkQueue* queue, int threads, std::string what,
             std::function<Status(const std::string&)> sync);
  // Shuts the queue down; the workers finish the keys still queued, then are joined.
  // Idempotent.
  void Stop();

 private:
  WorkQueue* queue_ = nullptr;
  std::vector<std::thread> threads_;
};

// FNV-1 32-bit hash (Go's hash/fnv New32, as Volcano's job controller uses to pick a worker).
uint32_t Fnv32(std::string_view data);

// N independent queues; a key always goes to the same one (Fnv32(key) % N), so a controller
// that runs one worker per shard processes each object serially on one thread. The shards
// share one rate limiter and one set of metrics.
class ShardedWorkQueue {
 public:
  ShardedWorkQueue(size_t shards, WorkQueueOptions options = {});

  size_t size() const { return shards_.size(); }
  size_t ShardFor(std::string_view key) const;
  WorkQueue& Shard(size_t index) { return *shards_.at(index); }
  WorkQueue& ForKey(std::string_view key) { return *shards_[ShardFor(key)]; }

  void Add(const std::string& key) { ForKey(key).Add(key); }
  void AddAfter(const std::string& key, std::chrono::nanoseconds delay) {
    ForKey(key).AddAfter(key, delay);
  }
  void AddRateLimited(const std::string& key) { ForKey(key).AddRateLimited(key); }
  void Forget(const std::string& key) { ForKey(key).Forget(key); }
  int NumRequeues(const std::string& key) { return ForKey(key).NumRequeues(key); }
  void ShutDown();
  void ShutDownWithDrain();

 private:
  std::vector<std::unique_ptr<WorkQueue>> shards_;
};

}  // namespace tephra::base
