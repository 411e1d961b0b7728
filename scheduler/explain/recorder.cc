#include "scheduler/explain/recorder.h"

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

void SessionRecorder::Record(const Session& ssn, Decisions decisions, base::Time now) {
  std::vector<std::shared_ptr<const JobExplanation>> batch;
  std::optional<std::map<std::string, QueueView>> views;
  std::optional<std::map<std::string, int64_t>> free;
  for (size_t j = 0; j < ssn.job_count(); ++j) {
    const JobInfo& job = ssn.job(j);
    // Jobs waiting for something (admission, a node, their pods), and jobs this session placed;
    // everything else keeps its last explanation (touched_jobs() is no filter: gang marks every
    // ready job each session).
    const bool waiting = job.IsPending() ||
                         job.Count(TaskStatus::kPending) > job.pending_best_effort ||
                         (job.tasks.empty() && job.phase == api::PodGroupPhase::kInqueue);
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
    batch.push_back(
        std::make_shared<const JobExplanation>(ExplainSessionJob(ssn, j, queue, largest, now)));
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
