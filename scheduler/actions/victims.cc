#include "scheduler/actions/victims.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>

#include "scheduler/actions/topology_search.h"

namespace tephra::scheduler {

TaskInfo AdmissionProxy(const JobInfo& job) {
  auto pod = std::make_shared<PodInfo>();
  pod->metadata.namespace_ = job.namespace_;
  pod->metadata.name = job.name + "-admission";
  pod->metadata.uid = "admission-" + job.id;
  SchedulingSpec spec;
  if (job.min_resources) spec.request = *job.min_resources;
  pod->spec = std::make_shared<const SchedulingSpec>(std::move(spec));
  TaskInfo proxy;
  proxy.pod = pod;
  proxy.job_id = std::make_shared<const JobId>(job.id);
  proxy.priority = job.priority;
  return proxy;
}
namespace {

// request <= available in every dimension the request uses.
bool Covers(const api::Resources& available, const api::Resources& request) {
  return request.LessEqual(available, api::Resources::Missing::kZero);
}

int64_t Size(const api::Resources& r) {
  return r.milli_cpu() + r.memory() / (1024 * 1024);
}

}  // namespace

std::vector<std::string> TasksNeedingRoom(const Session& ssn, size_t j) {
  std::vector<const TaskInfo*> pending;
  for (const auto& [uid, t] : ssn.job(j).tasks) {
    if (t.status == TaskStatus::kPending && t.pod->spec->scheduling_gates.empty())
      pending.push_back(&t);
  }
  std::sort(pending.begin(), pending.end(), [&](const TaskInfo* a, const TaskInfo* b) {
    int c = ssn.CompareTasksByPlugins(*a, *b);
    if (c != 0) return c < 0;
    if (Size(a->request()) != Size(b->request())) return Size(a->request()) > Size(b->request());
    return ssn.TaskOrder(*a, *b);
  });
  std::vector<std::string> uids;
  uids.reserve(pending.size());
  for (const TaskInfo* t : pending) uids.push_back(t->uid());
  return uids;
}

std::optional<size_t> VictimPlanner::JobOf(const NodeTask& nt) {
  auto [it, inserted] = job_of_.try_emplace(nt.pod.get());
  if (inserted && !nt.pod->group_name.empty()) {
    it->second = session_.JobIndex(nt.pod->metadata.namespace_ + "/" + nt.pod->group_name);
  }
  return it->second;
}

bool VictimPlanner::Eligible(const TaskInfo& preemptor, size_t preemptor_job,
                             const TaskInfo& victim, size_t victim_job) const {
  if (!victim.Evictable()) return false;
  if (!victim.pod->preemptable) return false;
  // Best-effort pods free nothing a requesting pod could use.
  if (preemptor.best_effort() != victim.best_effort() && victim.best_effort()) return false;
  const JobInfo& pj = session_.job(preemptor_job);
  const JobInfo& vj = session_.job(victim_job);
  switch (scope_.kind) {
    case VictimScope::Kind::kSameJob:
      return victim_job == preemptor_job;
    case VictimScope::Kind::kSameQueue:
      return victim_job != preemptor_job && vj.queue == pj.queue;
    case VictimScope::Kind::kOtherQueues: {
      if (victim_job == preemptor_job || vj.queue == pj.queue) return false;
      const QueueInfo* q = session_.queue(vj.queue);
      return q != nullptr && q->reclaimable;
    }
  }
  return false;
}

std::vector<VictimPlanner::Victim> VictimPlanner::Candidates(const TaskInfo& preemptor,
                                                             size_t preemptor_job, size_t node) {
  std::vector<const TaskInfo*> offered;
  std::vector<size_t> offered_jobs;
  for (const auto& [uid, nt] : session_.node(node).tasks) {
    auto j = JobOf(nt);  // none: not one of our jobs' pods, never ours to evict
    if (!j) continue;
    const auto& tasks = session_.job(*j).tasks;
    auto it = tasks.find(uid);
    if (it == tasks.end() || !Eligible(preemptor, preemptor_job, it->second, *j)) continue;
    offered.push_back(&it->second);
    offered_jobs.push_back(*j);
  }
  std::vector<Victim> out;
  if (offered.empty()) return out;
  std::vector<const TaskInfo*> allowed = scope_.reclaim ? session_.Reclaimable(preemptor, offered)
                                                        : session_.Preemptable(preemptor, offered);
  for (const TaskInfo* t : allowed) {
    size_t k = static_cast<size_t>(std::find(offered.begin(), offered.end(), t) - offered.begin());
    if (k >= offered.size()) continue;
    size_t j = offered_jobs[k];
    out.push_back({j, t->uid(), session_.job(j).priority, t->priority, Size(t->request())});
  }
  // Among equals, the job JobOrder puts last goes first, as Volcano orders victims of different
  // jobs: with drf, evictions then take turns between jobs that hold equal shares.
  std::sort(out.begin(), out.end(), [this](const Victim& a, const Victim& b) {
    if (a.job_priority != b.job_priority) return a.job_priority < b.job_priority;
    if (a.priority != b.priority) return a.priority < b.priority;
    if (a.size != b.size) return a.size > b.size;
    return a.job != b.job && session_.JobOrder(session_.job(b.job), session_.job(a.job));
  });
  return out;
}

const VictimPlanner::NodeScan& VictimPlanner::Scan(const TaskInfo& task, size_t job, size_t i) {
  const SchedulingSpec* spec = task.pod->spec.get();
  bool reusable = !spec->has_pod_affinity && spec->spread.empty();
  if (!reusable || job != scan_job_ || spec != scan_spec_ ||
      scans_.size() != session_.node_count()) {
    scans_.assign(session_.node_count(), NodeScan{});
    scan_job_ = job;
    scan_spec_ = reusable ? spec : nullptr;
  }
  NodeScan& scan = scans_[i];
  if (scan.valid && scan.version == session_.NodeVersion(i)) return scan;
  scan = NodeScan{};
  scan.valid = true;
  scan.version = session_.NodeVersion(i);
  scan.fit = session_.PredicateAt(task, i);
  if (scan.fit.code == Fit::Code::kUnschedulableUnresolvable) return scan;
  const NodeInfo& node = session_.node(i);
  const api::Resources& request = task.request();
  if (scan.fit.ok() && node.FitsFutureIdle(request, nullptr)) {
    scan.room = true;
    return scan;
  }
  // Eligible tasks by job: a running gang gives up only tasks above its minimum, or all of its
  // tasks at once when they all run here; anything else is WholeGang's business.
  std::vector<std::pair<size_t, std::vector<const TaskInfo*>>> by_job;
  for (const auto& [vuid, nt] : node.tasks) {
    auto vj = JobOf(nt);
    if (!vj) continue;
    auto it = session_.job(*vj).tasks.find(vuid);
    if (it == session_.job(*vj).tasks.end() || !Eligible(task, job, it->second, *vj)) continue;
    auto slot =
        std::find_if(by_job.begin(), by_job.end(), [&](const auto& e) { return e.first == *vj; });
    if (slot == by_job.end()) slot = by_job.insert(by_job.end(), {*vj, {}});
    slot->second.push_back(&it->second);
  }
  std::vector<const TaskInfo*> eligible;
  scan.min_priority = std::numeric_limits<int32_t>::max();
  for (const auto& [vj, tasks] : by_job) {
    const JobInfo& victim = session_.job(vj);
    api::Resources freed;
    for (const TaskInfo* t : tasks) freed.Add(t->request());
    if (vj != job) scan.whole_gangs.emplace_back(vj, std::move(freed));
    int32_t ready = victim.ReadyCount();
    size_t usable = static_cast<int32_t>(tasks.size()) >= ready
                        ? tasks.size()
                        : static_cast<size_t>(std::clamp(ready - victim.min_available, 0,
                                                         static_cast<int32_t>(tasks.size())));
    if (usable == 0) continue;
    std::vector<const TaskInfo*> sorted = tasks;
    std::sort(sorted.begin(), sorted.end(), [](const TaskInfo* a, const TaskInfo* b) {
      return Size(a->request()) > Size(b->request());
    });
    eligible.insert(eligible.end(), sorted.begin(),
                    sorted.begin() + static_cast<std::ptrdiff_t>(usable));
    scan.min_priority = std::min(scan.min_priority, victim.priority);
  }
  std::sort(eligible.begin(), eligible.end(), [](const TaskInfo* a, const TaskInfo* b) {
    return Size(a->request()) > Size(b->request());
  });
  api::Resources available = node.FutureIdle();
  size_t need = 0;
  while (need < eligible.size() && !Covers(available, request))
    available.Add(eligible[need++]->request());
  scan.enough = Covers(available, request);
  scan.lower_bound = need;
  return scan;
}

std::optional<VictimPlanner::Plan> VictimPlanner::PlanOn(const TaskInfo& task, size_t job,
                                                         size_t node) {
  const api::Resources& request = task.request();
  std::vector<Victim> victims = Candidates(task, job, node);
  api::Resources available = session_.node(node).FutureIdle();
  Plan plan;
  plan.node = node;
  plan.top_priority = std::numeric_limits<int32_t>::min();
  // Another job gives up only what keeps its gang running: the plugins may offer all of a
  // gang's tasks on one node, but evicting a whole gang is WholeGang's decision.
  std::map<size_t, GangSlack> slack;
  for (const Victim& victim : victims) {
    if (Covers(available, request)) break;
    const JobInfo& victim_job = session_.job(victim.job);
    const TaskInfo& v = victim_job.tasks.at(victim.uid);
    if (victim.job != job &&
        !slack.try_emplace(victim.job, victim_job).first->second.Take(v.pod->task_role)) {
      continue;
    }
    available.Add(v.request());
    plan.top_priority = std::max(plan.top_priority, victim.job_priority);
    plan.victims.push_back(victim);
  }
  if (!Covers(available, request)) return std::nullopt;
  return plan;
}

bool VictimPlanner::MakeRoom(Statement& stmt, size_t job, const std::string& uid,
                             const std::string& reason, FitErrors* why) {
  const TaskInfo task = session_.job(job).tasks.at(uid);  // a copy: evictions copy jobs
  const api::Resources& request = task.request();

  // Nodes worth a look, with a lower bound on the victims each needs (plugins only remove
  // candidates, so the count over eligible tasks can only grow once they have spoken).
  struct NodeBound {
    size_t node;
    size_t lower_bound;
    int32_t min_priority;  // no plan on this node can have a lower highest victim priority
  };
  std::vector<NodeBound> bounds;
  std::vector<size_t> resolvable;
  for (size_t i = 0; i < session_.node_count(); ++i) {
    if (member_ != nullptr && !(*member_)[i]) continue;
    const NodeScan& scan = Scan(task, job, i);
    if (scan.fit.code == Fit::Code::kUnschedulableUnresolvable) {
      if (why != nullptr) why->Add(scan.fit.reason);
      continue;
    }
    if (scan.room) return stmt.Pipeline(job, uid, i).ok();  // room already (being released)
    resolvable.push_back(i);
    if (!scan.enough) {
      if (why != nullptr) why->Add("node(s) could not free enough resources by preemption");
      continue;
    }
    bounds.push_back({i, scan.lower_bound, scan.min_priority});
  }
  std::sort(bounds.begin(), bounds.end(),
            [](const NodeBound& a, const NodeBound& b) { return a.lower_bound < b.lower_bound; });

  // Branch and bound: evaluate nodes in order of their bound, and try the best plan found so
  // far once no node left can beat it. A plan whose node still fails the predicates after its
  // evictions (the task's own pod anti-affinity with a sibling placed there, say) is dropped
  // and the next best one is tried.
  std::vector<Plan> plans;
  std::vector<NodeBound> passed_over;  // ties that could not win on priority, kept in reserve
  size_t next = 0;
  while (true) {
    Plan* best = nullptr;
    for (Plan& p : plans) {
      if (!p.tried && (best == nullptr || p.count() < best->count() ||
                       (p.count() == best->count() && p.top_priority < best->top_priority))) {
        best = &p;
      }
    }
    if (next < bounds.size() && (best == nullptr || bounds[next].lower_bound <= best->count())) {
      const NodeBound& b = bounds[next++];
      // A tie can only win on priority: put off nodes whose every victim ranks at least as high.
      if (best != nullptr && b.lower_bound == best->count() &&
          b.min_priority >= best->top_priority) {
        passed_over.push_back(b);
        continue;
      }
      if (std::optional<Plan> plan = PlanOn(task, job, b.node)) plans.push_back(std::move(*plan));
      continue;
    }
    if (best == nullptr) break;
    best->tried = true;
    Statement sub(session_);
    bool ok = true;
    for (const Victim& v : best->victims) ok = ok && sub.Evict(v.job, v.uid, reason).ok();
    if (ok && session_.PredicateAt(task, best->node).ok() &&
        session_.node(best->node).FitsFutureIdle(request, nullptr) &&
        sub.Pipeline(job, uid, best->node).ok()) {
      stmt.Merge(sub);
      return true;
    }
    sub.Discard();
    // The nodes put off for this plan are in the running again, ahead of those with more victims.
    bounds.insert(bounds.begin() + static_cast<std::ptrdiff_t>(next), passed_over.begin(),
                  passed_over.end());
    passed_over.clear();
  }
  if (WholeGang(stmt, job, uid, reason, resolvable)) return true;
  if (why != nullptr && why->other.empty()) {
    why->other = "no lower-priority work to preempt could make room";
  }
  return false;
}

bool VictimPlanner::WholeGang(Statement& stmt, size_t job, const std::string& uid,
                              const std::string& reason, const std::vector<size_t>& nodes) {
  const TaskInfo task = session_.job(job).tasks.at(uid);
  const api::Resources& request = task.request();
  // Per victim job: does evicting all of it free enough on one of `nodes`?
  struct Option {
    size_t job;
    size_t node;
    int32_t size;
    int32_t priority;
  };
  std::optional<Option> best;
  for (size_t i : nodes) {
    const NodeScan& scan = Scan(task, job, i);
    for (const auto& [vj, freed] : scan.whole_gangs) {
      api::Resources available = session_.node(i).FutureIdle();
      available.Add(freed);
      if (!Covers(available, request)) continue;
      const JobInfo& victim = session_.job(vj);
      Option o{vj, i, victim.ReadyCount(), victim.priority};
      if (!best || o.size < best->size || (o.size == best->size && o.priority < best->priority))
        best = o;
    }
  }
  if (!best) return false;
  // Every running task of the gang must be allowed to go, or none does.
  std::vector<const TaskInfo*> all;
  for (const auto& [vuid, t] : session_.job(best->job).tasks) {
    if (t.Evictable()) all.push_back(&t);
  }
  std::vector<const TaskInfo*> allowed =
      scope_.reclaim ? session_.Reclaimable(task, all) : session_.Preemptable(task, all);
  if (allowed.size() != all.size()) return false;
  std::vector<std::string> uids;
  for (const TaskInfo* t : all) uids.push_back(t->uid());
  Statement sub(session_);
  for (const auto& vuid : uids) {
    if (!sub.Evict(best->job, vuid, reason).ok()) return false;  // sub discards itself
  }
  if (!session_.PredicateAt(task, best->node).ok() || !sub.Pipeline(job, uid, best->node).ok())
    return false;
  stmt.Merge(sub);
  return true;
}

bool WithinTopology(Session& ssn, VictimPlanner& planner, size_t job,
                    const std::function<bool()>& attempt) {
  const auto& nt = ssn.job(job).network_topology;
  if (!nt || !ssn.TopologyAware() || ssn.topology().empty()) return attempt();
  TopologySearch search(ssn, ssn.topology(), job, *nt);
  if (!search.problem().empty()) return false;
  for (const auto& tier : search.Tiers()) {
    for (const HyperNodeDomain* d : tier) {
      planner.Restrict(&d->member);
      bool done = attempt();
      planner.Restrict(nullptr);
      if (done) return true;
    }
  }
  return false;
}

size_t EvictForJob(Session& ssn, VictimPlanner& planner, size_t job, const std::string& reason,
                   const std::function<bool(const TaskInfo&)>& may_ask) {
  size_t evicted = 0;
  WithinTopology(ssn, planner, job, [&] {
    Statement stmt(ssn);
    for (const auto& uid : TasksNeedingRoom(ssn, job)) {
      if (!ssn.JobStarving(ssn.job(job))) break;
      const TaskInfo& t = ssn.job(job).tasks.at(uid);
      if (t.pod->spec->preempt_never || !may_ask(t)) continue;
      FitErrors why;
      if (!planner.MakeRoom(stmt, job, uid, reason, &why)) {
        ssn.RecordFitErrors(job, uid, std::move(why));
      }
    }
    if (!ssn.JobPipelined(ssn.job(job)) || stmt.empty()) {
      stmt.Discard();
      return false;
    }
    evicted = stmt.Evictions().size();
    stmt.Commit();
    return true;
  });
  return evicted;
}

}  // namespace tephra::scheduler
