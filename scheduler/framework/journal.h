// What a session decided beyond the cluster state itself: why tasks did not fit, the PodGroup
// conditions to write, notes for explanations, placements withdrawn, the share plugins'
// figures per queue, and which jobs any of it (or a change in the cluster view) touched.
// Read at close by the outcome (outcome.h), explanations and recorded decisions.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "api/resources.h"

namespace tephra::scheduler {

// Why one pending task could not be placed this session: reason → number of nodes.
struct FitErrors {
  std::vector<std::pair<const char*, int>> by_reason;
  int nodes = 0;      // nodes examined
  std::string other;  // a reason not tied to nodes (queue overused, gang rule, ...)

  void Add(const char* reason);
  // "0/4 nodes are available: 3 Insufficient cpu, 1 node(s) had untolerated taint"
  std::string ToString() const;
};

// What the session concluded about a job, written back at close.
struct JobConditionOut {
  std::string type;  // Unschedulable or Scheduled
  std::string status;
  std::string reason;
  std::string message;
};

// What a plugin or action noted about a job that its PodGroup condition does not carry: why it
// was not admitted, why its queue sat out the session. Read by explanations (scheduler/explain).
struct JobNote {
  std::string plugin;
  std::string message;
  std::string hint;  // what would have to change, when the plugin knows
};
inline constexpr size_t kMaxJobNotes = 4;

// A share plugin's (proportion, capacity) figures for one queue at session close.
struct QueueShareReport {
  std::string plugin;
  api::Resources deserved;
  api::Resources allocated;
  api::Resources real_capability;
  api::Resources inqueue;  // minResources of admitted jobs not started yet
  double share = 0;
};

// Jobs are named by their index in the session's cluster view.
class Journal {
 public:
  explicit Journal(size_t jobs);
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  void Touch(size_t job) { touched_[job] = true; }
  const std::vector<bool>& touched_jobs() const { return touched_; }

  void RecordFitErrors(size_t job, const std::string& uid, FitErrors errors);
  const std::unordered_map<std::string, FitErrors>* JobFitErrors(size_t job) const;
  void SetJobCondition(size_t job, JobConditionOut condition);
  const std::optional<JobConditionOut>& JobCondition(size_t job) const { return conditions_[job]; }

  // Keeps the first kMaxJobNotes notes per job.
  void AddJobNote(size_t job, JobNote note);
  const std::vector<JobNote>* JobNotes(size_t job) const;
  // Keeps only the first `count` notes of `job` (none: as if it had never had any).
  void TruncateJobNotes(size_t job, size_t count);
  void ClearJobNotes(size_t job) { notes_.erase(job); }

  // Keeps the largest set of placements of `job` withdrawn so far.
  void NoteWithdrawn(size_t job, std::vector<std::string> uids);
  const std::vector<std::string>* JobWithdrawn(size_t job) const;

  void ReportQueueShare(const std::string& queue, QueueShareReport report);
  const std::map<std::string, QueueShareReport>& queue_shares() const { return queue_shares_; }

 private:
  std::vector<bool> touched_;
  std::vector<std::unordered_map<std::string, FitErrors>> fit_errors_;  // per job
  std::vector<std::optional<JobConditionOut>> conditions_;              // per job
  std::unordered_map<size_t, std::vector<JobNote>> notes_;              // by job index
  std::unordered_map<size_t, std::vector<std::string>> withdrawn_;      // by job index
  std::unordered_map<size_t, std::string> allocated_hypernodes_;        // by job index
  std::map<std::string, QueueShareReport> queue_shares_;
};

}  // namespace tephra::scheduler
