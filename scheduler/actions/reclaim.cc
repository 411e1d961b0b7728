// reclaim: a queue below its deserved share takes back what other queues borrowed. For each
// queue that is not overused, its starving jobs' pending tasks evict running tasks of other,
// reclaimable queues, as the Reclaimable tier rules allow (proportion: only from queues above
// their deserved share; capacity: never below a queue's guarantee). A task reclaims only if
// its queue may grow by it (Preemptive). Committed per job once the job is pipelined. A job
// with a network topology reclaims inside one HyperNode it may use (WithinTopology).
//
// Jobs not admitted yet count too: a Pending PodGroup whose queue is under its share but whose
// minResources do not fit the cluster reclaims on its own behalf (it has no pods yet), so it
// can be admitted next cycle — the deadlock where admission waits for room and reclaim waits
// for admission cannot happen.
#include <algorithm>
#include <map>
#include <set>

#include "scheduler/actions/actions.h"
#include "scheduler/actions/victims.h"

namespace tephra::scheduler {
namespace {

class ReclaimAction : public Action {
 public:
  std::string_view name() const override { return "reclaim"; }
  std::vector<std::string_view> RecognisedArguments() const override {
    return {"predicateErrorCacheEnable"};  // only allocate keeps the cache of failed tasks
  }

  void Execute(Session& ssn) override {
    VictimPlanner planner(ssn, {VictimScope::Kind::kOtherQueues, true});
    std::vector<size_t> jobs;
    for (size_t j = 0; j < ssn.job_count(); ++j) {
      const JobInfo& job = ssn.job(j);
      const QueueInfo* q = ssn.queue(job.queue);
      if (q == nullptr || ssn.Overused(*q)) continue;
      if (job.IsPending()) continue;
      if (job.Count(TaskStatus::kPending) == 0 || !ssn.JobValid(job).pass || !ssn.JobStarving(job))
        continue;
      jobs.push_back(j);
    }
    std::sort(jobs.begin(), jobs.end(), [&ssn](size_t a, size_t b) {
      const QueueInfo& qa = *ssn.queue(ssn.job(a).queue);
      const QueueInfo& qb = *ssn.queue(ssn.job(b).queue);
      if (qa.name != qb.name) return ssn.QueueOrder(qa, qb);
      return ssn.JobOrder(ssn.job(a), ssn.job(b));
    });
    for (size_t j : jobs) ReclaimFor(ssn, planner, j);
    for (size_t j = 0; j < ssn.job_count(); ++j) {
      if (ssn.job(j).IsPending() && ssn.job(j).min_resources) ReclaimForAdmission(ssn, j);
    }
  }

 private:
  void ReclaimFor(Session& ssn, VictimPlanner& planner, size_t j) {
    const QueueInfo& queue = *ssn.queue(ssn.job(j).queue);
    const std::string reason =
        "reclaimed for queue " + queue.name + " (below its deserved share) by job " + ssn.job(j).id;
    EvictForJob(ssn, planner, j, reason,
                [&](const TaskInfo& t) { return ssn.Preemptive(queue, t); });
  }

  // A Pending PodGroup has no pods: it reclaims for its minResources as a whole, across nodes,
  // as long as its queue may grow by that much and the cluster lacks the room.
  void ReclaimForAdmission(Session& ssn, size_t j) {
    const JobInfo& job = ssn.job(j);
    const QueueInfo* queue = ssn.queue(job.queue);
    if (queue == nullptr || !queue->IsOpen() || ssn.Overused(*queue)) return;
    api::Resources need = *job.min_resources;
    TaskInfo pseudo = AdmissionProxy(job);
    if (!ssn.Preemptive(*queue, pseudo)) return;
    api::Resources room;
    for (size_t n = 0; n < ssn.node_count(); ++n) room.Add(ssn.node(n).FutureIdle());
    if (need.LessEqual(room, api::Resources::Missing::kZero)) return;  // enqueue can admit it

    std::vector<const TaskInfo*> candidates;
    for (size_t v = 0; v < ssn.job_count(); ++v) {
      const JobInfo& victim = ssn.job(v);
      if (v == j || victim.queue == job.queue) continue;
      const QueueInfo* vq = ssn.queue(victim.queue);
      if (vq == nullptr || !vq->reclaimable) continue;
      for (const auto& [uid, t] : victim.tasks) {
        if (t.Evictable() && t.pod->preemptable) {
          candidates.push_back(&t);
        }
      }
    }
    std::vector<const TaskInfo*> allowed = ssn.Reclaimable(pseudo, candidates);
    std::sort(allowed.begin(), allowed.end(), [&ssn](const TaskInfo* a, const TaskInfo* b) {
      int32_t pa = ssn.job(*ssn.JobIndex(a->job())).priority,
              pb = ssn.job(*ssn.JobIndex(b->job())).priority;
      if (pa != pb) return pa < pb;
      return a->request().milli_cpu() > b->request().milli_cpu();
    });
    std::vector<std::pair<size_t, std::string>> plan;
    for (const TaskInfo* t : allowed) {
      if (need.LessEqual(room, api::Resources::Missing::kZero)) break;
      room.Add(t->request());
      plan.emplace_back(*ssn.JobIndex(t->job()), t->uid());
    }
    if (!need.LessEqual(room, api::Resources::Missing::kZero) || plan.empty()) return;
    // A gang that would drop below its minimum goes whole, never half.
    std::map<size_t, GangSlack> slack;
    std::set<size_t> broken;
    for (const auto& [v, uid] : plan) {
      const JobInfo& victim = ssn.job(v);
      if (!slack.try_emplace(v, victim).first->second.Take(victim.tasks.at(uid).pod->task_role))
        broken.insert(v);
    }
    for (size_t v : broken) {
      const JobInfo& victim = ssn.job(v);
      for (const auto& [uid, t] : victim.tasks) {
        // Captured by init-capture: clang 14 (the fuzz preset) cannot capture structured bindings.
        bool planned = std::any_of(plan.begin(), plan.end(), [v = v, &uid = uid](const auto& p) {
          return p.first == v && p.second == uid;
        });
        if (t.Evictable() && !planned) plan.emplace_back(v, uid);
      }
    }
    const std::string reason = "reclaimed for queue " + queue->name +
                               " (below its deserved share) so job " + job.id + " can be admitted";
    Statement stmt(ssn);
    for (const auto& [v, uid] : plan) {
      if (!stmt.Evict(v, uid, reason).ok()) return;  // discards itself
    }
    stmt.Commit();
    ssn.SetJobCondition(j, {"Unschedulable", "True", "NotEnoughResources",
                            "waiting for " + std::to_string(plan.size()) +
                                " reclaimed pod(s) to terminate before admission"});
  }
};

}  // namespace

std::unique_ptr<Action> NewReclaimAction(const Arguments&) {
  return std::make_unique<ReclaimAction>();
}

}  // namespace tephra::scheduler
