#include "tests/e2e/chaos/invariants.h"

#include <unordered_map>
#include <unordered_set>

namespace tephra::chaos {
namespace {

bool PodActive(const PodView& p) {
  return p.phase != "Succeeded" && p.phase != "Failed";
}

// Phases in which a Job claims its gang should be whole and its PodGroup present; the others
// (Restarting, Aborting, Terminating, Completing, finished) are a policy tearing pods down.
bool Steady(const std::string& job_phase) {
  return job_phase.empty() || job_phase == "Pending" || job_phase == "Running";
}

std::string Str(int64_t v) {
  return std::to_string(v);
}

}  // namespace

bool IsFinished(const std::string& p) {
  return p == "Completed" || p == "Failed" || p == "Terminated" || p == "Aborted";
}

void InvariantChecker::NoteDisruption(Clock::time_point end) {
  if (end > disruption_end_) disruption_end_ = end;
}

void InvariantChecker::Report(Violation v, std::vector<Violation>* out) {
  if (reported_.insert(v.rule + "/" + v.object).second) out->push_back(std::move(v));
}

void InvariantChecker::Persisting(const std::string& rule, const std::string& object,
                                  const std::string& detail, Clock::time_point now,
                                  std::set<std::string>* seen, std::vector<Violation>* out) {
  std::string key = rule + "/" + object;
  seen->insert(key);
  auto [it, inserted] = first_seen_.emplace(key, now);
  Clock::time_point since = std::max(it->second, disruption_end_);
  if (now - since >= grace_) {
    Report(
        {rule, object,
         detail + " for " +
             Str(std::chrono::duration_cast<std::chrono::seconds>(now - it->second).count()) + "s"},
        out);
  }
}

std::vector<Violation> InvariantChecker::Check(const Snapshot& s) {
  std::vector<Violation> out;
  std::set<std::string> seen;  // persisting conditions present in this snapshot
  const Clock::time_point now = s.time;

  std::unordered_map<std::string, const NodeView*> nodes;
  for (const NodeView& n : s.nodes) nodes[n.name] = &n;

  // Bindings: never to a missing node, never moved; capacity of the watched pool.
  std::unordered_set<std::string> pod_uids;
  std::unordered_map<std::string, NodeView> used;
  for (const PodView& p : s.pods) {
    pod_uids.insert(p.uid);
    if (p.node.empty()) continue;
    std::string who = p.namespace_ + "/" + p.name;
    if (nodes.count(p.node) == 0) Report({"unknown-node", who, "bound to node " + p.node}, &out);
    auto [b, fresh] = bound_node_.emplace(p.uid, p.node);
    if (!fresh && b->second != p.node) {
      Report({"double-bind", who, "bound to " + b->second + " and then " + p.node}, &out);
    }
    if (s.watched_nodes.count(p.node) == 0 || !PodActive(p)) continue;
    NodeView& u = used[p.node];
    u.milli_cpu += p.milli_cpu;
    u.memory += p.memory;
    u.pods += 1;
  }
  for (auto it = bound_node_.begin(); it != bound_node_.end();) {
    it = pod_uids.count(it->first) ? std::next(it) : bound_node_.erase(it);
  }
  for (const auto& [name, u] : used) {
    auto n = nodes.find(name);
    if (n == nodes.end()) continue;
    const NodeView& a = *n->second;
    if (u.milli_cpu > a.milli_cpu || u.memory > a.memory || u.pods > a.pods) {
      Report(
          {"overcommit", "node/" + name,
           "requests cpu " + Str(u.milli_cpu) + "m/" + Str(a.milli_cpu) + "m, memory " +
               Str(u.memory) + "/" + Str(a.memory) + ", pods " + Str(u.pods) + "/" + Str(a.pods)},
          &out);
    }
  }

  // Jobs against their pods and PodGroups.
  std::unordered_map<std::string, const JobView*> job_by_uid;
  for (const JobView& j : s.jobs) job_by_uid[j.uid] = &j;
  struct Counts {
    int32_t pending = 0, running = 0, succeeded = 0, failed = 0;
  };
  std::unordered_map<std::string, Counts> by_job;
  std::unordered_map<std::string, int32_t> bound_in_group;
  for (const PodView& p : s.pods) {
    if (p.deleting) continue;
    if (!p.node.empty() && !p.group.empty()) ++bound_in_group[p.namespace_ + "/" + p.group];
    if (p.owner_uid.empty() || job_by_uid.count(p.owner_uid) == 0) continue;
    Counts& c = by_job[p.owner_uid];
    if (p.phase == "Pending") ++c.pending;
    if (p.phase == "Running") ++c.running;
    if (p.phase == "Succeeded") ++c.succeeded;
    if (p.phase == "Failed") ++c.failed;
  }
  std::unordered_set<std::string> jobs_with_group;
  for (const PodGroupView& g : s.podgroups) {
    if (!g.deleting) jobs_with_group.insert(g.owner_uid);
    if (g.deleting || g.phase != "Running") continue;
    auto j = job_by_uid.find(g.owner_uid);
    if (j == job_by_uid.end() || !Steady(j->second->phase)) continue;
    int32_t bound = bound_in_group[g.namespace_ + "/" + g.name];
    if (bound < g.min_member) {
      Persisting("stranded-gang", "podgroup/" + g.name,
                 "Running with " + Str(bound) + " bound pods < minMember " + Str(g.min_member) +
                     " while its job is " + j->second->phase,
                 now, &seen, &out);
    }
  }
  for (const JobView& j : s.jobs) {
    if (j.deleting) continue;
    const Counts c = by_job[j.uid];
    std::string who = "job/" + j.name;
    // A finished job's counters read 0, as Volcano's do (docs/compatibility.md §2.3).
    const Counts want = IsFinished(j.phase) ? Counts{} : c;
    if (want.running != j.running || want.succeeded != j.succeeded || want.failed != j.failed) {
      Persisting("job-status", who + "/counts",
                 "status running/succeeded/failed " + Str(j.running) + "/" + Str(j.succeeded) +
                     "/" + Str(j.failed) + " but " +
                     (IsFinished(j.phase) ? "finished: " : "pods ") + Str(want.running) + "/" +
                     Str(want.succeeded) + "/" + Str(want.failed),
                 now, &seen, &out);
    }
    if (IsFinished(j.phase) && c.pending + c.running > 0) {
      Persisting("job-status", who + "/finished",
                 j.phase + " with " + Str(c.pending + c.running) + " pending or running pods", now,
                 &seen, &out);
    }
    if (j.phase == "Running" && c.running + c.succeeded + c.failed < j.min_available) {
      Persisting("job-status", who + "/running",
                 "Running with " + Str(c.running + c.succeeded + c.failed) +
                     " started pods < minAvailable " + Str(j.min_available),
                 now, &seen, &out);
    }
    if (Steady(j.phase) && jobs_with_group.count(j.uid) == 0) {
      Persisting("podgroup-missing", who, "phase '" + j.phase + "' and no PodGroup", now, &seen,
                 &out);
    }
  }

  // Disappearances: only the user or the TTL collector may remove a Job; only the user a Queue.
  std::unordered_set<std::string> present;
  for (const JobView& j : s.jobs) {
    present.insert(j.name);
    JobRecord& r = jobs_[j.name];
    r.uid = j.uid;
    r.phase = j.phase;
    r.ttl_seconds = j.ttl_seconds;
    r.last_seen = now;
    r.gone = false;
  }
  for (auto& [name, r] : jobs_) {
    if (present.count(name) || r.gone) continue;
    r.gone = true;
    if (deleted_jobs_.count(name)) continue;
    // Between two samples a Job may finish and outlive its TTL; a shorter gap cannot hide both.
    bool by_ttl = r.ttl_seconds && (IsFinished(r.phase) ||
                                    now - r.last_seen >= std::chrono::seconds(*r.ttl_seconds));
    if (!by_ttl) Report({"job-lost", "job/" + name, "vanished; last seen " + r.phase}, &out);
  }
  std::unordered_set<std::string> queue_uids;
  for (const QueueView& q : s.queues) {
    queue_uids.insert(q.uid);
    queues_[q.uid] = q.name;
  }
  for (auto it = queues_.begin(); it != queues_.end();) {
    if (queue_uids.count(it->first)) {
      ++it;
      continue;
    }
    if (!deleted_queues_.count(it->second))
      Report({"queue-lost", "queue/" + it->second, "vanished"}, &out);
    it = queues_.erase(it);
  }

  // Conditions that cleared start their grace period afresh next time.
  for (auto it = first_seen_.begin(); it != first_seen_.end();) {
    it = seen.count(it->first) ? std::next(it) : first_seen_.erase(it);
  }
  return out;
}

}  // namespace tephra::chaos
