// The chaos run's invariant checker. It judges plain snapshots of the cluster read straight from
// the API server (cluster_view.h), never the daemons' caches, and keeps just enough memory
// between samples to see what one snapshot cannot: a pod moving between nodes, an object that
// vanished, a contradiction that outlives its grace period.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tephra::chaos {

using Clock = std::chrono::steady_clock;

struct PodView {
  std::string uid, namespace_, name;
  std::string node;   // spec.nodeName, "" while unbound
  std::string phase;  // Pending, Running, Succeeded, Failed, Unknown
  bool deleting = false;
  std::string owner_uid;  // controller ownerReference (the Job), "" for none
  std::string group;      // scheduling.k8s.io/group-name annotation
  int64_t milli_cpu = 0, memory = 0;
};

struct NodeView {
  std::string name;
  int64_t milli_cpu = 0, memory = 0, pods = 0;  // allocatable
};

struct JobView {
  std::string uid, name;
  std::string phase;  // status.state.phase
  bool deleting = false;
  std::optional<int32_t> ttl_seconds;
  int32_t min_available = 0;
  int32_t pending = 0, running = 0, succeeded = 0, failed = 0;
};

struct PodGroupView {
  std::string uid, namespace_, name;
  std::string owner_uid;  // the Job
  std::string phase;
  int32_t min_member = 0;
  bool deleting = false;
};

struct QueueView {
  std::string uid, name;
  bool deleting = false;
};

// One reading of the cluster. `nodes` is every node (a pod bound elsewhere is bound to nothing);
// `pods` holds every pod on a watched node plus every pod of the workload's namespace.
struct Snapshot {
  Clock::time_point time;
  std::vector<NodeView> nodes;
  std::set<std::string> watched_nodes;  // the pool whose capacity is checked
  std::vector<PodView> pods;
  std::vector<JobView> jobs;
  std::vector<PodGroupView> podgroups;
  std::vector<QueueView> queues;
};

struct Violation {
  std::string rule;    // overcommit, double-bind, unknown-node, job-status, stranded-gang,
                       // podgroup-missing, job-lost, queue-lost
  std::string object;  // what it is about
  std::string detail;
};

bool IsFinished(const std::string& job_phase);  // Completed, Failed, Terminated, Aborted

class InvariantChecker {
 public:
  explicit InvariantChecker(std::chrono::seconds grace) : grace_(grace) {}

  // The user (the workload) deleted these; their disappearance is expected.
  void ExpectJobDeleted(const std::string& name) { deleted_jobs_.insert(name); }
  void ExpectQueueDeleted(const std::string& name) { deleted_queues_.insert(name); }
  // Writers could not act until `end` (API server down, leader gone): a contradiction seen
  // earlier gets its grace period counted from `end`.
  void NoteDisruption(Clock::time_point end);

  // Violations new in this snapshot; each (rule, object) is reported once.
  std::vector<Violation> Check(const Snapshot& snapshot);

  // What the checker last saw of each Job, by name (kept after the Job is gone).
  struct JobRecord {
    std::string uid, phase;
    std::optional<int32_t> ttl_seconds;
    Clock::time_point last_seen;
    bool gone = false;
  };
  const std::map<std::string, JobRecord>& jobs() const { return jobs_; }

 private:
  // Reports `rule` on `object` once it has held for the grace period.
  void Persisting(const std::string& rule, const std::string& object, const std::string& detail,
                  Clock::time_point now, std::set<std::string>* seen, std::vector<Violation>* out);
  void Report(Violation v, std::vector<Violation>* out);

  std::chrono::seconds grace_;
  Clock::time_point disruption_end_{};
  std::set<std::string> deleted_jobs_, deleted_queues_;
  std::map<std::string, std::string> bound_node_;        // pod uid -> first node seen
  std::map<std::string, Clock::time_point> first_seen_;  // "rule/object" -> since
  std::map<std::string, JobRecord> jobs_;                // by name
  std::map<std::string, std::string> queues_;            // uid -> name
  std::set<std::string> reported_;                       // "rule/object"
};

}  // namespace tephra::chaos
