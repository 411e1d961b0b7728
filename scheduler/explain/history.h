// The last hour of the scheduling loop, for the dashboard's plots: per time bucket, how many
// sessions ran and how long they took, how many pods they sent to bind, how many pods were
// pending, and each queue's allocation against what it deserved.
//
// Memory is bounded by construction: a fixed ring of buckets (default 360 of 10 s), each with at
// most max_queues queues. A session adds one sample; the bucket it falls into keeps sums and
// the figures of its last session. Old buckets are overwritten, never grown.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/time.h"
#include "scheduler/framework/decisions.h"
#include "scheduler/framework/session.h"
#include "sync/mutex.h"

namespace tephra::scheduler {

// The resource dimensions the history keeps per queue: cpu (cores), memory (bytes) and
// nvidia.com/gpu (devices).
inline constexpr size_t kHistoryDims = 3;
inline constexpr std::array<const char*, kHistoryDims> kHistoryDimNames = {"cpu", "memory",
                                                                           "nvidia.com/gpu"};

struct QueuePoint {
  std::array<double, kHistoryDims> allocated{};
  std::array<double, kHistoryDims> deserved{};
  bool has_deserved = false;  // a share plugin (proportion, capacity) reported one
};

// What one session contributes.
struct SessionSample {
  base::Time time;
  std::chrono::nanoseconds duration{0};
  int64_t binds = 0;
  int64_t evictions = 0;
  int64_t pending_pods = 0;
  std::map<std::string, QueuePoint> queues;
};

struct HistoryBucket {
  base::Time start;
  int64_t sessions = 0;
  int64_t binds = 0;
  int64_t evictions = 0;
  int64_t pending_pods = 0;  // at the bucket's last session
  double session_ms_sum = 0;
  double session_ms_max = 0;
  std::map<std::string, QueuePoint> queues;  // at the bucket's last session
};

// The sample of a closed session and what it decided; the caller adds the duration.
SessionSample SampleSession(const Session& ssn, const Decisions& decisions, base::Time now);

class History {
 public:
  struct Options {
    std::chrono::seconds bucket{10};
    size_t buckets = 360;    // one hour of 10 s buckets
    size_t max_queues = 64;  // queues kept per bucket (the first by name)
  };
  History() : History(Options()) {}
  explicit History(Options options);

  // Thread-safe. A sample older than the newest bucket joins the newest one.
  void Add(SessionSample sample);
  // The buckets with at least one session, oldest first, none older than the window.
  std::vector<HistoryBucket> Buckets(base::Time now) const;
  const Options& options() const { return options_; }

 private:
  int64_t BucketIndex(base::Time t) const;

  const Options options_;
  mutable sync::Mutex mu_;
  std::vector<HistoryBucket> ring_ GUARDED_BY(mu_);
  std::vector<int64_t> ring_index_ GUARDED_BY(mu_);  // which bucket number each slot holds
  int64_t newest_ GUARDED_BY(mu_) = -1;
};

}  // namespace tephra::scheduler
