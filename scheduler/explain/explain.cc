#include "scheduler/explain/explain.h"

#include <algorithm>
#include <cstring>
#include <string_view>
#include <unordered_set>

#include "base/strings.h"
#include "scheduler/framework/outcome.h"

namespace tephra::scheduler {
namespace {

bool SameReason(const char* a, const char* b) {
  return a == b || std::strcmp(a, b) == 0;
}

// Same reasons with the same node counts, in any order (the node scan starts at a rotating
// offset, so identical failures list their reasons in different orders).
bool SameErrors(const FitErrors& a, const FitErrors& b) {
  if (a.nodes != b.nodes || a.other != b.other || a.by_reason.size() != b.by_reason.size()) {
    return false;
  }
  for (const auto& [reason, n] : a.by_reason) {
    bool found = false;
    for (const auto& [r, m] : b.by_reason) {
      if (m == n && SameReason(reason, r)) {
        found = true;
        break;
      }
    }
    if (!found) return false;
  }
  return true;
}

// Keeps the kExamplePods smallest names, sorted.
void AddExample(std::vector<std::string>* examples, const std::string& name) {
  auto at = std::lower_bound(examples->begin(), examples->end(), name);
  if (at != examples->end() && *at == name) return;
  if (examples->size() >= kExamplePods && at == examples->end()) return;
  examples->insert(at, name);
  if (examples->size() > kExamplePods) examples->pop_back();
}

UnplacedGroup NewGroup(const TaskInfo& task, const FitErrors* errors) {
  UnplacedGroup g;
  g.role = task.pod->task_role;
  g.request = DropPods(task.request());
  if (errors == nullptr) return g;
  g.nodes_examined = errors->nodes;
  g.other = errors->other;
  std::vector<ReasonNodes> reasons;
  reasons.reserve(errors->by_reason.size());
  for (const auto& [reason, n] : errors->by_reason) reasons.push_back({reason, n});
  std::sort(reasons.begin(), reasons.end(), [](const ReasonNodes& a, const ReasonNodes& b) {
    return a.nodes != b.nodes ? a.nodes > b.nodes : a.reason < b.reason;
  });
  if (reasons.size() > kMaxReasons) {
    int32_t rest = 0;
    for (size_t i = kMaxReasons - 1; i < reasons.size(); ++i) rest += reasons[i].nodes;
    reasons.resize(kMaxReasons - 1);
    reasons.push_back({"other reasons", rest});
  }
  g.reasons = std::move(reasons);
  return g;
}

bool StartsWith(const std::string& s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

std::string Plural(int64_t n, std::string_view one, std::string_view many) {
  return FormatCount(n) + " " + std::string(n == 1 ? one : many);
}

// Accumulates usage per queue over any sequence of jobs.
template <typename Queues, typename Jobs>
std::map<std::string, QueueView> BuildQueueViews(const Queues& queues, const Jobs& jobs) {
  std::map<std::string, QueueView> views;
  for (const auto& [name, q] : queues) {
    QueueView& v = views[name];
    v.name = name;
    v.state = q->state;
    v.weight = q->weight;
    v.priority = q->priority;
    v.parent = q->parent;
    v.reclaimable = q->reclaimable;
    v.capability = q->capability;
    v.guarantee = q->guarantee;
  }
  for (const JobInfo* job : jobs) {
    auto it = views.find(job->queue);
    if (it == views.end()) continue;
    QueueView& v = it->second;
    ++v.jobs;
    v.allocated.Add(DropPods(job->allocated));
    v.pending.Add(DropPods(job->pending));
    if (job->IsPending()) {
      ++v.pending_jobs;
      // A Volcano Job's pods appear only once it is admitted: its demand is its minimum.
      if (job->tasks.empty() && job->min_resources) v.pending.Add(DropPods(*job->min_resources));
    }
  }
  return views;
}

std::string QueueShareHint(const JobExplanation& e) {
  std::string h = "queue " + e.queue + " is at its deserved share";
  if (e.queue_view && !e.queue_view->share_plugin.empty()) {
    h += " (allocated " + e.queue_view->allocated.ToString() + ", deserved " +
         DropPods(e.queue_view->deserved).ToString() + ")";
  }
  return h +
         ": wait for its jobs to finish, raise its weight or capability, or let reclaim take back "
         "resources "
         "from queues above their share";
}

}  // namespace

api::Resources DropPods(const api::Resources& r) {
  if (!r.Has(api::kResourcePods)) return r;
  api::Resources out;
  for (const auto& name : r.Names()) {
    if (name != api::kResourcePods) out.Set(name, r.Get(name));
  }
  return out;
}

std::map<std::string, int64_t> LargestFree(const Session& ssn) {
  std::map<std::string, int64_t> best;
  for (size_t i = 0; i < ssn.node_count(); ++i) {
    const NodeInfo& n = ssn.node(i);
    if (n.unschedulable) continue;
    api::Resources idle = n.Idle();
    for (const auto& name : idle.Names()) {
      int64_t v = idle.Get(name);
      auto [it, inserted] = best.try_emplace(name, v);
      if (!inserted && v > it->second) it->second = v;
    }
  }
  return best;
}

std::string FormatCount(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

std::string Ordinal(int64_t n) {
  const char* suffix = "th";
  if (n % 100 < 11 || n % 100 > 13) {
    if (n % 10 == 1) suffix = "st";
    if (n % 10 == 2) suffix = "nd";
    if (n % 10 == 3) suffix = "rd";
  }
  return FormatCount(n) + suffix;
}

std::string FormatDimension(const std::string& name, int64_t value) {
  api::Resources r;
  r.Set(name, value);
  for (const auto& [n, q] : r.ToList()) return q.String();
  return std::to_string(value);
}

std::string DescribeRequest(const api::Resources& r) {
  std::vector<std::string> parts;
  for (const auto& name : r.Names()) {
    if (name == api::kResourcePods) continue;
    int64_t v = r.Get(name);
    if (v <= 0) continue;
    std::string q = FormatDimension(name, v);
    parts.push_back(name == api::kResourceCpu ? q + " CPU" : q + " " + name);
  }
  return parts.empty() ? "no resources" : base::Join(parts, ", ");
}

std::string ShortReason(const std::string& reason) {
  static constexpr std::string_view kNodes = "node(s) ";
  return StartsWith(reason, kNodes) ? reason.substr(kNodes.size()) : reason;
}

std::vector<UnplacedGroup> GroupUnplaced(const JobInfo& job,
                                         const std::unordered_map<std::string, FitErrors>* errors,
                                         const std::vector<std::string>* withdrawn,
                                         int32_t* not_tried) {
  std::unordered_set<std::string_view> fit;
  if (withdrawn != nullptr) fit.insert(withdrawn->begin(), withdrawn->end());
  auto was_withdrawn = [&fit](const std::string& uid) { return fit.count(uid) != 0; };
  struct Entry {
    const SchedulingSpec* spec;
    const FitErrors* errors;  // null: tasks held back without errors (scheduling gates)
    UnplacedGroup group;
  };
  std::vector<Entry> entries;
  if (errors != nullptr) {
    for (const auto& [uid, fe] : *errors) {
      auto t = job.tasks.find(uid);
      if (t == job.tasks.end() || t->second.status != TaskStatus::kPending) continue;
      const SchedulingSpec* spec = t->second.pod->spec.get();
      Entry* e = nullptr;
      for (auto& candidate : entries) {
        if (candidate.spec == spec && candidate.errors != nullptr &&
            SameErrors(*candidate.errors, fe)) {
          e = &candidate;
          break;
        }
      }
      if (e == nullptr) {
        entries.push_back({spec, &fe, NewGroup(t->second, &fe)});
        e = &entries.back();
      }
      ++e->group.tasks;
      AddExample(&e->group.example_pods, t->second.name());
    }
  }
  int32_t untried = 0;
  for (const auto& [uid, t] : job.tasks) {
    if (t.status != TaskStatus::kPending || t.best_effort()) continue;
    if ((errors != nullptr && errors->count(t.uid()) != 0) || was_withdrawn(t.uid())) continue;
    const SchedulingSpec* spec = t.pod->spec.get();
    Entry* e = nullptr;
    for (auto& candidate : entries) {
      if (candidate.spec == spec) {
        e = &candidate;
        break;
      }
    }
    if (e == nullptr && !spec->scheduling_gates.empty()) {
      UnplacedGroup g = NewGroup(t, nullptr);
      g.other = "waiting for scheduling gates: " + base::Join(spec->scheduling_gates, ", ");
      entries.push_back({spec, nullptr, std::move(g)});
      e = &entries.back();
    }
    if (e == nullptr) {
      ++untried;
      continue;
    }
    ++e->group.tasks;
    AddExample(&e->group.example_pods, t.name());
  }
  if (not_tried != nullptr) *not_tried = untried;
  std::vector<UnplacedGroup> groups;
  groups.reserve(entries.size());
  for (auto& e : entries) groups.push_back(std::move(e.group));
  std::sort(groups.begin(), groups.end(), [](const UnplacedGroup& a, const UnplacedGroup& b) {
    if (a.tasks != b.tasks) return a.tasks > b.tasks;
    return a.example_pods < b.example_pods;
  });
  return groups;
}

std::map<std::string, QueueView> QueueViews(const Session& ssn) {
  std::vector<const JobInfo*> jobs;
  jobs.reserve(ssn.job_count());
  for (size_t j = 0; j < ssn.job_count(); ++j) jobs.push_back(&ssn.job(j));
  std::map<std::string, QueueView> views = BuildQueueViews(ssn.queues(), jobs);
  ApplyShares(ssn.queue_shares(), &views);
  return views;
}

void ApplyShares(const std::map<std::string, QueueShareReport>& shares,
                 std::map<std::string, QueueView>* views) {
  for (const auto& [name, report] : shares) {
    auto it = views->find(name);
    if (it == views->end()) continue;
    it->second.share_plugin = report.plugin;
    it->second.deserved = report.deserved;
    it->second.real_capability = report.real_capability;
    it->second.inqueue = report.inqueue;
    it->second.share = report.share;
  }
}

std::map<std::string, QueueView> QueueViewsOf(const Snapshot& snapshot) {
  std::vector<const JobInfo*> jobs;
  jobs.reserve(snapshot.jobs.size());
  for (const auto& j : snapshot.jobs) jobs.push_back(j.get());
  return BuildQueueViews(snapshot.queues, jobs);
}

JobExplanation ExplainSessionJob(const Session& ssn, size_t j, const QueueView* queue,
                                 const std::map<std::string, int64_t>* largest_free,
                                 base::Time now) {
  const JobInfo& job = ssn.job(j);
  JobExplanation e;
  e.id = job.id;
  e.namespace_ = job.namespace_;
  e.pod_group = job.name;
  e.queue = job.queue;
  e.owner_job = OwningVolcanoJob(job);
  e.phase = job.pod_group ? PodGroupStatusAfter(ssn, j, now).phase
                          : std::string(api::ToString(job.phase));
  e.admitted = !job.IsPending();
  e.scheduled = e.admitted && !job.tasks.empty() && ssn.JobReady(job);
  e.session = ssn.uid();
  e.time = now;
  e.min_available = job.min_available;
  e.min_task_member = job.min_task_member;
  if (job.min_resources) e.min_resources = DropPods(*job.min_resources);
  e.tasks = static_cast<int32_t>(job.tasks.size());
  e.ready = job.ReadyCount();
  const std::vector<std::string>* withdrawn = ssn.JobWithdrawn(j);
  const int32_t withdrawn_count =
      withdrawn == nullptr ? 0 : static_cast<int32_t>(withdrawn->size());
  e.fit = std::min(e.tasks, e.ready + job.Count(TaskStatus::kPipelined) + withdrawn_count);
  e.groups = GroupUnplaced(job, ssn.JobFitErrors(j), withdrawn, &e.not_tried);
  static constexpr std::string_view kInsufficient = "Insufficient ";
  for (auto& g : e.groups) {
    e.unplaced += g.tasks;
    // "The most any node has free" is only a fair hint when resources were all that was missing:
    // a node failing a taint may well have room.
    bool only_resources = largest_free != nullptr && !g.reasons.empty();
    for (const auto& r : g.reasons)
      only_resources = only_resources && StartsWith(r.reason, kInsufficient);
    if (!only_resources) continue;
    for (const auto& r : g.reasons) {
      std::string dim = r.reason.substr(kInsufficient.size());
      auto it = largest_free->find(dim);
      if (it != largest_free->end()) g.largest_free[dim] = it->second;
    }
  }
  if (e.groups.size() > kMaxGroups) e.groups.resize(kMaxGroups);
  if (queue != nullptr) e.queue_view = *queue;
  if (const auto* notes = ssn.JobNotes(j)) e.notes = *notes;
  e.condition = ssn.JobCondition(j);
  if (!e.condition && job.pod_group) {
    // A settled gang's standing Scheduled condition is not said again each session.
    for (const auto& c : job.pod_group->status.conditions) {
      if (c.type == "Scheduled" && c.status == "True") {
        e.condition = JobConditionOut{c.type, c.status, c.reason, c.message};
      }
    }
  }
  return e;
}

std::string Summarize(const JobExplanation& e) {
  const bool closed = e.queue_view && !e.queue_view->state.empty() && e.queue_view->state != "Open";
  if (!e.admitted) {
    std::string why;
    if (e.condition && StartsWith(e.condition->message, "not admitted: ")) {
      why = e.condition->message.substr(14);  // the refusing plugin's reason
    } else if (!e.notes.empty()) {
      why = e.notes.front().message;
    } else if (closed) {
      why = "queue " + e.queue + " is " + e.queue_view->state;
    } else if (e.condition && !e.condition->message.empty()) {
      why = e.condition->message;
      if (StartsWith(why, "not admitted: ")) why = why.substr(14);
    } else {
      why = "waiting for the enqueue action to admit it";
    }
    return "not admitted: " + why;
  }
  if (e.tasks == 0) return "admitted; waiting for its pods to be created";
  std::vector<std::string> parts;
  parts.push_back(std::to_string(e.fit) + "/" + std::to_string(e.tasks) + " tasks fit");
  for (const auto& g : e.groups) {
    std::string part =
        FormatCount(g.tasks) + (g.tasks == 1 ? " needs " : " need ") + DescribeRequest(g.request);
    std::vector<std::string> why;
    for (const auto& r : g.reasons)
      why.push_back(Plural(r.nodes, "node", "nodes") + " " + ShortReason(r.reason));
    if (!g.other.empty()) why.push_back(g.other);
    if (why.empty()) why.push_back("no reason recorded");
    parts.push_back(part + ": " + base::Join(why, ", "));
  }
  if (e.not_tried > 0) {
    // A note (the queue sat out the session, ...) says why better than the gang rule does.
    parts.push_back(FormatCount(e.not_tried) + " not tried: " +
                    (e.notes.empty() ? std::string("the gang could no longer be complete")
                                     : e.notes.front().message));
  }
  if (e.scheduled && e.groups.empty()) {
    parts.push_back("gang of " + std::to_string(e.min_available) + " is placed");
  } else if (e.scheduled) {
    parts.push_back("the gang (" + std::to_string(e.min_available) + ") is placed; the rest waits");
  }
  return base::Join(parts, "; ");
}

std::string ExpectedStart(const JobExplanation& e) {
  if (e.queue_position <= 0) return "";
  if (e.queue_position == 1)
    return "next in queue " + e.queue + ": first to be admitted and placed once room allows";
  std::string after = base::Join(e.ahead, ", ");
  const int32_t more = e.queue_position - 1 - static_cast<int32_t>(e.ahead.size());
  if (more > 0) after = FormatCount(more) + " more, " + after;
  return Ordinal(e.queue_position) + " of " + FormatCount(e.queue_waiting) + " waiting in queue " +
         e.queue + ", after " + after +
         ": it starts after them, or before them where it fits and they do not";
}

std::vector<std::string> Hints(const JobExplanation& e) {
  std::vector<std::string> hints;
  auto add = [&hints](std::string h) {
    if (std::find(hints.begin(), hints.end(), h) == hints.end()) hints.push_back(std::move(h));
  };
  const QueueView* q = e.queue_view ? &*e.queue_view : nullptr;
  const bool closed = q != nullptr && !q->state.empty() && q->state != "Open";
  if (closed) {
    add("queue " + e.queue + " is " + q->state +
        ": it admits and places nothing new (running pods keep "
        "running); open it with `tephractl queue open " +
        e.queue + "` or submit to another queue");
  }
  for (const auto& n : e.notes) {
    if (!n.hint.empty()) add(n.hint);
  }
  if (!e.admitted) {
    if (hints.empty())
      add("the enqueue action admits the job once its queue and the cluster have room");
    return hints;
  }
  for (const auto& g : e.groups) {
    for (const auto& r : g.reasons) {
      const std::string n = Plural(r.nodes, "node", "nodes");
      if (StartsWith(r.reason, "Insufficient ")) {
        std::string dim = r.reason.substr(13);
        std::string need =
            g.request.Has(dim) ? FormatDimension(dim, g.request.Get(dim)) + " " + dim : dim;
        std::string h = "each task needs " + need + " free on one node";
        auto lf = g.largest_free.find(dim);
        if (lf != g.largest_free.end() && g.request.Has(dim) && lf->second >= g.request.Get(dim)) {
          // A node could hold one task: what is short is the number of such nodes, not their size.
          h += "; nodes have that much (up to " + FormatDimension(dim, lf->second) + " " + dim +
               " free) but too few of them for the whole gang";
        } else if (lf != g.largest_free.end()) {
          h += "; the most free on any node is " + FormatDimension(dim, lf->second) + " " + dim;
        }
        add(h + ": free capacity, add nodes, or request less");
      } else if (r.reason.find("untolerated taint") != std::string::npos) {
        std::string taint = r.reason.substr(r.reason.find("untolerated taint") + 17);
        while (!taint.empty() && taint.front() == ' ') taint.erase(taint.begin());
        add("add a toleration for " +
            (taint.empty() ? std::string("the taint") : "taint " + taint) + " (" + n +
            ") or remove it from the nodes");
      } else if (r.reason.find("node affinity/selector") != std::string::npos) {
        add(n + " do not match the pod's nodeSelector/affinity: label nodes or relax the selector");
      } else if (r.reason.find("unschedulable") != std::string::npos) {
        add(n + " are cordoned: uncordon them (kubectl uncordon NODE)");
      } else if (r.reason == "Too many pods") {
        add(n + " are at their pod limit");
      } else if (r.reason.find("ports") != std::string::npos) {
        add(n + " already use the requested host ports");
      } else if (r.reason.find("affinity") != std::string::npos ||
                 r.reason.find("spread") != std::string::npos) {
        add(n +
            " fail the pod (anti-)affinity or topology spread rules: relax them or add nodes in "
            "other topology domains");
      }
    }
    if (g.other.empty()) continue;
    if (g.other.find("deserved share") != std::string::npos) {
      add(QueueShareHint(e));
    } else if (g.other.find("Not enough valid") != std::string::npos) {
      add("the gang needs " + std::to_string(e.min_available) +
          " pods that can run: check that the job's pods exist and are not failed");
    } else if (g.other.find("scheduling gates") != std::string::npos) {
      add("remove the pods' scheduling gates once whatever they wait for is ready");
    } else if (g.other.find("no nodes") != std::string::npos) {
      add("no node is ready for this scheduler: check the nodes and --node-selector");
    }
  }
  for (const auto& n : e.notes) {
    if (n.message.find("deserved share") != std::string::npos) add(QueueShareHint(e));
  }
  if (e.not_tried > 0 && e.groups.empty() && e.notes.empty()) {
    add("the gang was lost before these tasks were tried: the other hints apply to the whole gang");
  }
  return hints;
}

NotConsidered ExplainNotConsidered(const JobInfo& job, bool queue_exists) {
  if (!job.pod_group) {
    return {"not considered: its pods name PodGroup " + job.name + ", which does not exist",
            "create the PodGroup, or fix the pods' scheduling.k8s.io/group-name annotation"};
  }
  if (!queue_exists) {
    return {"not considered: queue " + job.queue + " does not exist",
            "create queue " + job.queue + " or move the job to an existing queue"};
  }
  return {"not considered by a session yet (it arrived after the last one)", ""};
}

}  // namespace tephra::scheduler
