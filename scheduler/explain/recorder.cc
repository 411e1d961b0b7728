#include "scheduler/explain/recorder.h"

#include <algorithm>
#include <map>
#include <optional>

namespace tephra::scheduler {

void ExplanationStore::PutAll(std::vector<std::shared_ptr<const JobExplanation>> explanations) {
  if (explanations.empty()) return;
  std::vector<Entry> dropped;  // destroyed outside the lock
  sync::MutexLock l(mu_);
  for (auto& e : explanations) {
    auto it = index_.find(e->id);
    if (it != index_.end()) {
      dropped.push_back(std::move(*it->second));
      *it->second = std::move(e);
      lru_.splice(lru_.begin(), lru_, it->second);
      continue;
    }
    lru_.push_front(std::move(e));
    index_.emplace(lru_.front()->id, lru_.begin());
    if (lru_.size() > capacity_) {
      index_.erase(lru_.back()->id);
      dropped.push_back(std::move(lru_.back()));
      lru_.pop_back();
    }
  }
}

std::shared_ptr<const JobExplanation> ExplanationStore::Get(const JobId& id) const {
  sync::MutexLock l(mu_);
  auto it = index_.find(id);
  return it == index_.end() ? nullptr : *it->second;
}

size_t ExplanationStore::size() const {
  sync::MutexLock l(mu_);
  return lru_.size();
}

namespace {

// Waiting for something: admission, a node, their pods.
bool Waiting(const JobInfo& job) {
  return job.IsPending() || job.Count(TaskStatus::kPending) > job.pending_best_effort ||
         (job.tasks.empty() && job.phase == api::PodGroupPhase::kInqueue);
}

// Each waiting job's place in its queue by the session's JobOrder (1 = next).
struct QueuePlace {
  int32_t position = 0;
  int32_t waiting = 0;
  std::vector<JobId> ahead;
};
std::vector<QueuePlace> QueuePlaces(const Session& ssn) {
  std::map<std::string, std::vector<size_t>> by_queue;
  for (size_t j = 0; j < ssn.job_count(); ++j) {
    if (Waiting(ssn.job(j))) by_queue[ssn.job(j).queue].push_back(j);
  }
  std::vector<QueuePlace> places(ssn.job_count());
  for (auto& [queue, jobs] : by_queue) {
    std::stable_sort(jobs.begin(), jobs.end(),
                     [&ssn](size_t a, size_t b) { return ssn.JobOrder(ssn.job(a), ssn.job(b)); });
    for (size_t i = 0; i < jobs.size(); ++i) {
      QueuePlace& p = places[jobs[i]];
      p.position = static_cast<int32_t>(i + 1);
      p.waiting = static_cast<int32_t>(jobs.size());
      for (size_t k = i > kMaxAhead ? i - kMaxAhead : 0; k < i; ++k)
        p.ahead.push_back(ssn.job(jobs[k]).id);
    }
  }
  return places;
}

}  // namespace

void SessionRecorder::Record(const Session& ssn, Decisions decisions, base::Time now) {
  std::vector<std::shared_ptr<const JobExplanation>> batch;
  std::optional<std::map<std::string, QueueView>> views;
  std::optional<std::map<std::string, int64_t>> free;
  const std::vector<QueuePlace> places = QueuePlaces(ssn);
  for (size_t j = 0; j < ssn.job_count(); ++j) {
    const JobInfo& job = ssn.job(j);
    // Jobs waiting for something (admission, a node, their pods), and jobs this session placed;
    // everything else keeps its last explanation (touched_jobs() is no filter: gang marks every
    // ready job each session).
    const bool waiting = Waiting(job);
    const bool placed = job.Count(TaskStatus::kAllocated) + job.Count(TaskStatus::kPipelined) > 0;
    if (!waiting && !placed) continue;
    const QueueView* queue = nullptr;
    const std::map<std::string, int64_t>* largest = nullptr;
    if (waiting) {
      if (!views) views = QueueViews(ssn);
      auto q = views->find(job.queue);
      if (q != views->end()) queue = &q->second;
      if (ssn.JobFitErrors(j) != nullptr) {
        if (!free) free = LargestFree(ssn);
        largest = &*free;
      }
    }
    JobExplanation e = ExplainSessionJob(ssn, j, queue, largest, now);
    if (waiting && !e.scheduled) {
      e.queue_position = places[j].position;
      e.queue_waiting = places[j].waiting;
      e.ahead = places[j].ahead;
    }
    batch.push_back(std::make_shared<const JobExplanation>(std::move(e)));
  }
  store_.PutAll(std::move(batch));

  std::shared_ptr<const RecordedSession> decided;
  if (options_.keep_decision_snapshot && !decisions.empty()) {
    auto r = std::make_shared<RecordedSession>();
    r->id = ssn.uid();
    r->time = now;
    r->snapshot = ssn.snapshot_ptr();
    r->decisions = std::move(decisions);
    r->decisions.Normalize();
    decided = std::move(r);
  }
  sync::MutexLock l(mu_);
  last_.id = ssn.uid();
  last_.time = now;
  ++last_.sessions;
  last_.shares = ssn.queue_shares();
  if (last_.actions != ssn.conf().actions) last_.actions = ssn.conf().actions;
  std::vector<std::string> tiers;
  for (const auto& tier : ssn.conf().tiers) {
    std::string names;
    for (const auto& p : tier.plugins) names += (names.empty() ? "" : ", ") + p.name;
    tiers.push_back(std::move(names));
  }
  last_.tiers = std::move(tiers);
  if (decided) last_decision_ = std::move(decided);
}

SessionSummary SessionRecorder::Last() const {
  sync::MutexLock l(mu_);
  return last_;
}

std::shared_ptr<const RecordedSession> SessionRecorder::LastDecision() const {
  sync::MutexLock l(mu_);
  return last_decision_;
}

}  // namespace tephra::scheduler
