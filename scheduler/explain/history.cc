#include "scheduler/explain/history.h"

#include <algorithm>

namespace tephra::scheduler {

namespace {
History::Options Normalized(History::Options o) {
  o.buckets = std::max<size_t>(o.buckets, 1);
  o.bucket = std::max(o.bucket, std::chrono::seconds(1));
  return o;
}
}  // namespace

namespace {
void SetDims(const api::Resources& r, std::array<double, kHistoryDims>* out) {
  (*out)[0] = static_cast<double>(r.milli_cpu()) / 1000.0;
  (*out)[1] = static_cast<double>(r.memory());
  (*out)[2] = static_cast<double>(r.Get(kHistoryDimNames[2])) / 1000.0;
}
}  // namespace

SessionSample SampleSession(const Session& ssn, const Decisions& decisions, base::Time now) {
  SessionSample s;
  s.time = now;
  s.binds = static_cast<int64_t>(decisions.binds.size());
  s.evictions = static_cast<int64_t>(decisions.evictions.size());
  std::map<std::string, api::Resources> allocated;
  for (size_t j = 0; j < ssn.job_count(); ++j) {
    const JobInfo& job = ssn.job(j);
    s.pending_pods += job.Count(TaskStatus::kPending);
    allocated[job.queue].Add(job.allocated);
  }
  for (const auto& [name, r] : allocated) SetDims(r, &s.queues[name].allocated);
  for (const auto& [name, report] : ssn.queue_shares()) {
    QueuePoint& q = s.queues[name];
    SetDims(report.deserved, &q.deserved);
    q.has_deserved = true;
  }
  return s;
}

History::History(Options options) : options_(Normalized(options)) {
  ring_.resize(options_.buckets);
  ring_index_.assign(options_.buckets, -1);
}

int64_t History::BucketIndex(base::Time t) const {
  auto secs = std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
  return secs / options_.bucket.count();
}

void History::Add(SessionSample sample) {
  if (sample.queues.size() > options_.max_queues) {
    auto cut = sample.queues.begin();
    std::advance(cut, options_.max_queues);
    sample.queues.erase(cut, sample.queues.end());
  }
  const double ms = std::chrono::duration<double, std::milli>(sample.duration).count();
  sync::MutexLock l(mu_);
  int64_t index = std::max(BucketIndex(sample.time), newest_);
  newest_ = index;
  size_t slot = static_cast<size_t>(index % static_cast<int64_t>(ring_.size()));
  HistoryBucket& b = ring_[slot];
  if (ring_index_[slot] != index) {
    b = HistoryBucket();
    b.start = base::Time(std::chrono::seconds(index * options_.bucket.count()));
    ring_index_[slot] = index;
  }
  ++b.sessions;
  b.binds += sample.binds;
  b.evictions += sample.evictions;
  b.pending_pods = sample.pending_pods;
  b.session_ms_sum += ms;
  b.session_ms_max = std::max(b.session_ms_max, ms);
  b.queues = std::move(sample.queues);
}

std::vector<HistoryBucket> History::Buckets(base::Time now) const {
  const int64_t oldest = BucketIndex(now) - static_cast<int64_t>(options_.buckets) + 1;
  std::vector<std::pair<int64_t, size_t>> order;
  sync::MutexLock l(mu_);
  for (size_t slot = 0; slot < ring_.size(); ++slot) {
    if (ring_index_[slot] >= oldest && ring_[slot].sessions > 0)
      order.emplace_back(ring_index_[slot], slot);
  }
  std::sort(order.begin(), order.end());
  std::vector<HistoryBucket> out;
  out.reserve(order.size());
  for (const auto& [index, slot] : order) out.push_back(ring_[slot]);
  return out;
}

}  // namespace tephra::scheduler
