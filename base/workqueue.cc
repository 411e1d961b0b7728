#include "base/workqueue.h"

#include <algorithm>
#include <climits>
#include <cmath>

#include <glog/logging.h>

#include "metrics/metrics.h"

namespace tephra::base {

using std::chrono::nanoseconds;

// ---- Rate limiters --------------------------------------------------------------------------

ExponentialFailureRateLimiter::ExponentialFailureRateLimiter(nanoseconds base, nanoseconds max)
    : base_(base), max_(max) {}

nanoseconds ExponentialFailureRateLimiter::When(const std::string& key) {
  int exponent = 0;
  {
    sync::MutexLock lock(mu_);
    int& failures = failures_[key];
    exponent = failures;
    if (failures < INT_MAX) ++failures;
  }
  // In floating point so a long failure streak saturates at max_ instead of overflowing.
  const double backoff = static_cast<double>(base_.count()) * std::exp2(exponent);
  if (backoff >= static_cast<double>(max_.count())) return max_;
  return nanoseconds(static_cast<nanoseconds::rep>(backoff));
}

void ExponentialFailureRateLimiter::Forget(const std::string& key) {
  sync::MutexLock lock(mu_);
  failures_.erase(key);
}

int ExponentialFailureRateLimiter::NumRequeues(const std::string& key) const {
  sync::MutexLock lock(mu_);
  auto it = failures_.find(key);
  return it == failures_.end() ? 0 : it->second;
}

TokenBucketRateLimiter::TokenBucketRateLimiter(double qps, int burst, ClockInterface& clock,
                                               std::optional<nanoseconds> max_delay)
    : bucket_(qps, burst, clock), max_delay_(max_delay) {}

nanoseconds TokenBucketRateLimiter::When(const std::string&) {
  if (!max_delay_) return std::chrono::duration_cast<nanoseconds>(bucket_.Reserve());
  auto wait =
      bucket_.ReserveWithin(std::chrono::ceil<std::chrono::steady_clock::duration>(*max_delay_));
  return wait ? std::chrono::duration_cast<nanoseconds>(*wait) : *max_delay_;
}

MaxOfRateLimiter::MaxOfRateLimiter(std::vector<std::unique_ptr<RateLimiter>> limiters)
    : limiters_(std::move(limiters)) {}

nanoseconds MaxOfRateLimiter::When(const std::string& key) {
  nanoseconds longest(0);
  // Every limiter records the retry, not only the one that wins.
  for (const auto& limiter : limiters_) longest = std::max(longest, limiter->When(key));
  return longest;
}

void MaxOfRateLimiter::Forget(const std::string& key) {
  for (const auto& limiter : limiters_) limiter->Forget(key);
}

int MaxOfRateLimiter::NumRequeues(const std::string& key) const {
  int most = 0;
  for (const auto& limiter : limiters_) most = std::max(most, limiter->NumRequeues(key));
  return most;
}

std::unique_ptr<RateLimiter> NewDefaultControllerRateLimiter(ClockInterface& clock) {
  std::vector<std::unique_ptr<RateLimiter>> limiters;
  limiters.push_back(std::make_unique<ExponentialFailureRateLimiter>());
  limiters.push_back(
      std::make_unique<TokenBucketRateLimiter>(10, 100, clock, kMaxSharedRetryDelay));
  return std::make_unique<MaxOfRateLimiter>(std::move(limiters));
}

// ---- WorkQueue ------------------------------------------------------------------------------

// Handles into the registry, shared by every queue with the same name.
struct WorkQueue::Metrics {
  metrics::Gauge& depth;
  metrics::Counter& adds;
  metrics::Counter& retries;
  metrics::Histogram& queue_duration;
  metrics::Histogram& work_duration;

  static std::unique_ptr<Metrics> Create(const WorkQueueOptions& options) {
    if (options.name.empty()) return nullptr;
    metrics::Registry& r =
        options.registry != nullptr ? *options.registry : metrics::DefaultRegistry();
    // Durations span nanoseconds (a cache hit) to many seconds (a slow reconcile).
    const std::vector<double> buckets = metrics::ExponentialBuckets(10e-9, 10, 10);
    const std::vector<std::string> values = {options.name};
    return std::unique_ptr<Metrics>(new Metrics{
        r.AddGaugeVec("workqueue_depth", "Current depth of the work queue.", {"name"})
            .WithLabels(values),
        r.AddCounterVec("workqueue_adds_total", "Total number of adds handled by the queue.",
                        {"name"})
            .WithLabels(values),
        r.AddCounterVec("workqueue_retries_total", "Total number of retries (delayed adds).",
                        {"name"})
            .WithLabels(values),
        r.AddHistogramVec("workqueue_queue_duration_seconds",
                          "How long a key waits in the queue before it is handed out.", {"name"},
                          buckets)
            .WithLabels(values),
        r.AddHistogramVec("workqueue_work_duration_seconds",
                          "How long processing a key takes, from Get to Done.", {"name"}, buckets)
            .WithLabels(values),
    });
  }
};

namespace {

double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

}  // namespace

WorkQueue::WorkQueue(WorkQueueOptions options)
    : clock_(options.clock != nullptr ? options.clock : &RealClock()),
      rate_limiter_(options.rate_limiter != nullptr ? std::move(options.rate_limiter)
                                                    : NewDefaultControllerRateLimiter(*clock_)),
      metrics_(Metrics::Create(options)) {}

WorkQueue::~WorkQueue() {
  ShutDown();
}

void WorkQueue::AddLocked(const std::string& key, TimePoint now) {
  if (shutting_down_) return;
  if (dirty_.count(key) > 0) return;  // already waiting to be processed
  dirty_.emplace(key, now);
  if (metrics_) {
    metrics_->adds.Inc();
    metrics_->depth.Inc();
  }
  // A key being processed is queued again by Done(), never handed to a second worker.
  if (processing_.count(key) > 0) return;
  queue_.push_back(key);
  cv_.NotifyOne();
}

void WorkQueue::PromoteDueLocked(TimePoint now) {
  while (!heap_.empty() && heap_.top().ready <= now) {
    Waiting top = heap_.top();
    heap_.pop();
    auto it = waiting_.find(top.key);
    if (it == waiting_.end() || it->second.second != top.seq) continue;  // superseded entry
    waiting_.erase(it);
    AddLocked(top.key, now);
  }
}

void WorkQueue::Add(const std::string& key) {
  sync::MutexLock lock(mu_);
  AddLocked(key, clock_->Monotonic());
}

void WorkQueue::AddAfter(const std::string& key, nanoseconds delay) {
  sync::MutexLock lock(mu_);
  if (shutting_down_) return;
  if (metrics_) metrics_->retries.Inc();
  const TimePoint now = clock_->Monotonic();
  if (delay <= nanoseconds(0)) {
    AddLocked(key, now);
    return;
  }
  const TimePoint ready = now + std::chrono::ceil<std::chrono::steady_clock::duration>(delay);
  auto it = waiting_.find(key);
  if (it != waiting_.end() && it->second.first <= ready) return;  // already due sooner
  const bool earliest = heap_.empty() || ready < heap_.top().ready;
  const uint64_t seq = next_seq_++;
  waiting_[key] = {ready, seq};
  heap_.push(Waiting{ready, seq, key});
  if (earliest) {
    // Blocked Get() calls sleep until the previous earliest time; make them look again.
    ++heap_version_;
    cv_.NotifyAll();
  }
}

void WorkQueue::AddRateLimited(const std::string& key) {
  AddAfter(key, rate_limiter_->When(key));
}

void WorkQueue::Forget(const std::string& key) {
  rate_limiter_->Forget(key);
}

int WorkQueue::NumRequeues(const std::string& key) const {
  return rate_limiter_->NumRequeues(key);
}

std::optional<std::string> WorkQueue::Get() {
  sync::MutexLock lock(mu_);
  TimePoint now = clock_->Monotonic();
  while (true) {
    if (!shutting_down_) PromoteDueLocked(now);
    if (!queue_.empty()) break;
    if (shutting_down_) return std::nullopt;
    // Sleep until the earliest delayed key is due (re-checked at least hourly), a key is
    // queued, the queue shuts down or an earlier delayed key arrives.
    TimePoint deadline = now + std::chrono::hours(1);
    if (!heap_.empty()) deadline = std::min(deadline, heap_.top().ready);
    const uint64_t version = heap_version_;
    clock_->WaitUntil(mu_, cv_, deadline, [&]() REQUIRES(mu_) {
      return !queue_.empty() || shutting_down_ || heap_version_ != version;
    });
    now = clock_->Monotonic();
  }
  std::string key = std::move(queue_.front());
  queue_.pop_front();
  auto dirty = dirty_.find(key);
  if (metrics_) {
    metrics_->depth.Dec();
    if (dirty != dirty_.end()) metrics_->queue_duration.Observe(Seconds(now - dirty->second));
  }
  if (dirty != dirty_.end()) dirty_.erase(dirty);
  processing_[key] = now;
  return key;
}

void WorkQueue::Done(const std::string& key) {
  sync::MutexLock lock(mu_);
  auto it = processing_.find(key);
  if (it == processing_.end()) return;
  if (metrics_) metrics_->work_duration.Observe(Seconds(clock_->Monotonic() - it->second));
  processing_.erase(it);
  if (dirty_.count(key) > 0) {
    queue_.push_back(key);
    cv_.NotifyOne();
  }
  if (processing_.empty()) drained_cv_.NotifyAll();
}

size_t WorkQueue::Len() const {
  sync::MutexLock lock(mu_);
  return queue_.size();
}

void WorkQueue::ShutDown() {
  sync::MutexLock lock(mu_);
  shutting_down_ = true;
  cv_.NotifyAll();
}

void WorkQueue::ShutDownWithDrain() {
  ShutDown();
  sync::MutexLock lock(mu_);
  drained_cv_.Wait(mu_, [&]() REQUIRES(mu_) { return processing_.empty(); });
}

bool WorkQueue::ShutDownWithDrain(nanoseconds timeout) {
  ShutDown();
  sync::MutexLock lock(mu_);
  const TimePoint deadline =
      clock_->Monotonic() + std::chrono::ceil<std::chrono::steady_clock::duration>(timeout);
  return clock_->WaitUntil(mu_, drained_cv_, deadline,
                           [&]() REQUIRES(mu_) { return processing_.empty(); });
}

bool WorkQueue::ShuttingDown() const {
  sync::MutexLock lock(mu_);
  return shutting_down_;
}

// ---- Sharding -------------------------------------------------------------------------------

uint32_t Fnv32(std::string_view data) {
  uint32_t hash = 2166136261u;
  for (char c : data) {
    hash *= 16777619u;
    hash ^= static_cast<unsigned char>(c);
  }
  return hash;
}

ShardedWorkQueue::ShardedWorkQueue(size_t shards, WorkQueueOptions options) {
  if (options.clock == nullptr) options.clock = &RealClock();
  if (options.rate_limiter == nullptr) {
    options.rate_limiter = NewDefaultControllerRateLimiter(*options.clock);
  }
  shards = std::max<size_t>(shards, 1);
  for (size_t i = 0; i < shards; ++i) shards_.push_back(std::make_unique<WorkQueue>(options));
}

size_t ShardedWorkQueue::ShardFor(std::string_view key) const {
  return Fnv32(key) % shards_.size();
}

void ShardedWorkQueue::ShutDown() {
  for (auto& shard : shards_) shard->ShutDown();
}

void ShardedWorkQueue::ShutDownWithDrain() {
  for (auto& shard : shards_) shard->ShutDown();  // stop every shard before waiting on any
  for (auto& shard : shards_) shard->ShutDownWithDrain();
}

void QueueWorkers::Start(WorkQueue* queue, int threads, std::string what,
                         std::function<Status(const std::string&)> sync) {
  queue_ = queue;
  for (int i = 0; i < std::max(1, threads); ++i) {
    threads_.emplace_back([queue, what, sync] {
      while (auto key = queue->Get()) {
        Status s = sync(*key);
        if (s.ok()) {
          queue->Forget(*key);
        } else {
          LOG(WARNING) << what << " " << *key << ": " << s.ToString();
          queue->AddRateLimited(*key);
        }
        queue->Done(*key);
      }
    });
  }
}

void QueueWorkers::Stop() {
  if (queue_ != nullptr) queue_->ShutDown();
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

}  // namespace tephra::base
