// What the admin API serves, recorded at the close of every session by the scheduling loop and
// read by the admin server's threads:
//
//   * the last explanation of every job a session considered (jobs with pending work, jobs it
//     placed), in a store bounded by job count that forgets the least recently updated job;
//   * the last session's id, time and queue shares (deserved, real capability);
//   * the input snapshot and decisions of the last session that decided something, so that a
//     bug report can carry exactly what the scheduler saw (DumpSnapshot, --replay).
//
// Recording is cheap by construction: jobs with nothing pending that the session did not place
// are skipped in O(1) each, explanations are stored as data (text is made on request), and the
// store takes one lock per session.
#pragma once

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/time.h"
#include "scheduler/explain/explain.h"
#include "scheduler/framework/decisions.h"
#include "sync/mutex.h"

namespace tephra::scheduler {

// The last explanation per job, least recently updated dropped first. Thread-safe.
class ExplanationStore {
 public:
  explicit ExplanationStore(size_t capacity) : capacity_(capacity == 0 ? 1 : capacity) {}
  void PutAll(std::vector<std::shared_ptr<const JobExplanation>> explanations);
  std::shared_ptr<const JobExplanation> Get(const JobId& id) const;
  size_t size() const;
  size_t capacity() const { return capacity_; }

 private:
  using Entry = std::shared_ptr<const JobExplanation>;
  const size_t capacity_;
  mutable sync::Mutex mu_;
  std::list<Entry> lru_ GUARDED_BY(mu_);  // most recent first
  std::unordered_map<JobId, std::list<Entry>::iterator> index_ GUARDED_BY(mu_);
};

// The input and decisions of one session.
struct RecordedSession {
  std::string id;
  base::Time time;
  std::shared_ptr<const Snapshot> snapshot;
  Decisions decisions;
};

struct SessionSummary {
  std::string id;  // empty before the first session
  base::Time time;
  uint64_t sessions = 0;
  std::map<std::string, QueueShareReport> shares;
  std::vector<std::string> actions;
  std::vector<std::string> tiers;  // "priority, gang, conformance" per tier
};

class SessionRecorder {
 public:
  struct Options {
    size_t capacity = 10000;  // jobs with an explanation
    // Keep the input snapshot of the last session that decided something. It holds on to one
    // generation of cluster objects (copy-on-write), so it is off unless the admin API serves it.
    bool keep_decision_snapshot = false;
  };
  explicit SessionRecorder(Options options) : options_(options), store_(options.capacity) {}

  // Called by the loop with each closed session and what it decided.
  void Record(const Session& ssn, Decisions decisions, base::Time now);

  std::shared_ptr<const JobExplanation> Explanation(const JobId& id) const {
    return store_.Get(id);
  }
  const ExplanationStore& store() const { return store_; }
  SessionSummary Last() const;
  std::shared_ptr<const RecordedSession> LastDecision() const;

 private:
  Options options_;
  ExplanationStore store_;
  mutable sync::Mutex mu_;
  SessionSummary last_ GUARDED_BY(mu_);
  std::shared_ptr<const RecordedSession> last_decision_ GUARDED_BY(mu_);
};

}  // namespace tephra::scheduler
