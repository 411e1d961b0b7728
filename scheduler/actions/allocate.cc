// allocate: place whole gangs.
//
// Queues are visited by QueueOrder (an Overused queue sits out the rest of the action), jobs
// within a queue by JobOrder, tasks within a job by TaskOrder. A job's placements collect in
// one Statement: committed (bound) once the job is ready, kept in the session if it is only
// pipelined (its resources stay earmarked), discarded otherwise — a gang that does not fit
// gets nothing. A ready job with tasks left goes back in line, so big jobs do not starve
// small ones. Pending (not yet admitted) jobs are skipped when enqueue is configured. A job
// with a network topology is placed inside one HyperNode, and a job with sub-gangs one
// sub-gang at a time, each whole (docs/scheduler.md, "Network topology").
// Arguments: predicateErrorCacheEnable (true): once a task fails everywhere, identical tasks
// of the same job are not tried again this session.
#include <chrono>
#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "scheduler/actions/actions.h"
#include "scheduler/actions/sub_groups.h"
#include "scheduler/actions/topology_search.h"

namespace tephra::scheduler {
namespace {

// Which of a job's pending tasks PlaceTasks places.
struct TaskSet {
  const std::unordered_set<std::string>* only = nullptr;  // null: all of them
  // All or nothing (a sub-gang): stop at the first task that does not fit, and not once the job
  // is ready.
  bool whole = false;
};

class AllocateAction : public Action {
 public:
  explicit AllocateAction(const Arguments& args)
      : error_cache_(args.GetBool("predicateErrorCacheEnable", true)) {}
  std::string_view name() const override { return "allocate"; }

  void Execute(Session& ssn) override {
    NodePicker picker(ssn);
    const bool enqueue_configured = ssn.conf().HasAction("enqueue");
    std::vector<const QueueInfo*> queue_infos;  // by slot, looked up once
    std::unordered_map<std::string, size_t> queue_slot;
    std::vector<IndexHeap> job_heaps;
    auto job_first = [&ssn](size_t a, size_t b) { return ssn.JobOrder(ssn.job(a), ssn.job(b)); };

    // Whether an admitted job's pods are still being created: until it has them, jobs that
    // already hold their minimum do not grow (see AllocateJob).
    bool assembling = false;
    for (size_t j = 0; j < ssn.job_count(); ++j) {
      const JobInfo& job = ssn.job(j);
      if (job.IsPending()) {
        if (enqueue_configured) continue;
        ssn.SetJobPhase(j, api::PodGroupPhase::kInqueue);  // without enqueue, every job is admitted
      }
      const QueueInfo* queue = ssn.queue(job.queue);
      if (queue == nullptr) continue;
      assembling = assembling || (StillAssembling(ssn, job) &&
                                  (job.ValidCount() < job.min_available || PodsArriving(ssn, job)));
      RecordGated(ssn, j);
      if (!HasPendingWork(job)) continue;
      ValidateResult valid = ssn.JobValid(job);
      if (!valid.pass) {
        if (!StillAssembling(ssn, job) && !PodsArriving(ssn, job)) {
          RecordJobProblem(ssn, j, valid.message);
        }
        continue;
      }
      auto [it, inserted] = queue_slot.try_emplace(job.queue, job_heaps.size());
      if (inserted) {
        queue_infos.push_back(queue);
        job_heaps.emplace_back(job_first);
      }
      job_heaps[it->second].Push(j);
    }

    IndexHeap queues(
        [&](size_t a, size_t b) { return ssn.QueueOrder(*queue_infos[a], *queue_infos[b]); });
    for (size_t q = 0; q < queue_infos.size(); ++q) queues.Push(q);

    while (!queues.empty()) {
      size_t q = queues.Pop();
      const QueueInfo& queue = *queue_infos[q];
      IndexHeap& jobs = job_heaps[q];
      if (ssn.Overused(queue)) {
        // The queue sits out the rest of the session; say so on the jobs it leaves waiting.
        while (!jobs.empty()) {
          ssn.AddJobNote(jobs.Pop(),
                         {"allocate", "queue " + queue.name + " is at its deserved share", ""});
        }
        continue;
      }
      if (jobs.empty()) continue;
      size_t j = jobs.Pop();
      if (AllocateJob(ssn, picker, queue, j, !assembling)) jobs.Push(j);  // ready, with tasks left
      if (!jobs.empty()) queues.Push(q);
    }
  }

 private:
  static bool HasPendingWork(const JobInfo& job) {
    if (job.Count(TaskStatus::kPending) == 0) return false;
    for (const auto& [uid, t] : job.tasks) {
      if (Schedulable(t)) return true;
    }
    return false;
  }

  // A job too young to have all its pods (its controller is still creating them) is waiting,
  // not failing: saying why now would rewrite every pending pod's PodScheduled condition, and
  // the group's condition, each time one more pod arrives. Young counts from its admission
  // when that came later: a Volcano Job's pods are only created once it is admitted. A busy
  // controller may get to them later still, so a job whose pods are arriving (PodsArriving)
  // waits quietly too.
  static bool StillAssembling(const Session& ssn, const JobInfo& job) {
    constexpr auto kAssemblyGrace = std::chrono::seconds(10);
    std::optional<base::Time> since = job.creation;
    if (job.admitted_since && (!since || *job.admitted_since > *since)) since = job.admitted_since;
    return since && ssn.Now() - *since < kAssemblyGrace;
  }

  // Whether the job's controller created a pod of it in the last couple of seconds: its pods
  // are still arriving (creation times are whole seconds).
  static bool PodsArriving(const Session& ssn, const JobInfo& job) {
    const base::Time recent = ssn.Now() - std::chrono::seconds(2);
    for (const auto& [uid, t] : job.tasks) {
      const auto& created = t.pod->metadata.creation_timestamp;
      if (created && *created >= recent) return true;
    }
    return false;
  }

  // Tasks held by scheduling gates are never placed; a gang short of its minimum because of
  // them says so, as Volcano does (an Unschedulable condition and event on its PodGroup).
  static void RecordGated(Session& ssn, size_t j) {
    const JobInfo& job = ssn.job(j);
    if (job.Count(TaskStatus::kPending) == 0 || job.ReadyCount() >= job.min_available) return;
    for (const auto& [uid, t] : job.tasks) {
      if (t.status != TaskStatus::kPending || t.pod->spec->scheduling_gates.empty()) continue;
      FitErrors e;
      e.other = "scheduling is blocked due to non-empty scheduling gates";
      ssn.RecordFitErrors(j, t.uid(), std::move(e));
    }
  }

  static void RecordJobProblem(Session& ssn, size_t j, const std::string& message) {
    std::vector<std::string> pending;
    for (const auto& [uid, t] : ssn.job(j).tasks) {
      if (t.status == TaskStatus::kPending) pending.push_back(t.uid());
    }
    RecordTasksProblem(ssn, j, pending, message);
  }

  // Places as many of job j's pending tasks as belong together. Returns true when the job is
  // ready and still has tasks to place (it should queue again).
  //
  // A job that already holds its minimum grows one task per turn, in JobOrder with the others
  // (so elastic jobs share what is left: three jobs of minimum 2 on 16 slots run 6/5/5), but
  // not while `grow` is false: admitted jobs still getting their pods would find their room
  // taken by the first job whose pods happened to arrive (the one still arriving as much as the
  // others). Volcano, whose sessions are a second apart, sees all their pods at once.
  bool AllocateJob(Session& ssn, NodePicker& picker, const QueueInfo& queue, size_t j, bool grow) {
    if (!grow && ssn.JobReady(ssn.job(j))) {
      ssn.AddJobNote(
          j, {"allocate", "holds at its minimum while admitted jobs are still getting their pods",
              ""});
      return false;
    }
    if (std::vector<SubGroup> groups = SubGroupsOf(ssn, j); !groups.empty()) {
      return AllocateSubGroups(ssn, picker, queue, j, groups);
    }
    if (const auto& nt = ssn.job(j).network_topology;
        nt && ssn.TopologyAware() && !ssn.topology().empty()) {
      return AllocateInTopology(ssn, picker, queue, j, *nt);
    }
    picker.Restrict(nullptr);
    Statement stmt(ssn);
    bool more = PlaceTasks(ssn, picker, queue, j, stmt, /*record=*/true);
    return Settle(ssn, j, stmt, more);
  }

  // Commits what made the job ready, keeps what only pipelined it, discards the rest. Returns
  // `more` when committed: the job should queue again for its remaining tasks.
  static bool Settle(Session& ssn, size_t j, Statement& stmt, bool more) {
    const JobInfo& job = ssn.job(j);
    if (ssn.JobReady(job)) {
      stmt.Commit();
      return more;
    }
    if (ssn.JobPipelined(job)) {
      stmt.Keep();  // earmarked for this session; placed for real in a later one
    } else {
      stmt.Discard();
    }
    return false;
  }

  // Places job j's pending tasks (TaskOrder) into `stmt` on the nodes `picker` looks at, until
  // the job is ready or no task is left; fit errors are recorded when `record`. Returns whether
  // tasks remain once the job became ready: other jobs get a turn before it places more.
  bool PlaceTasks(Session& ssn, NodePicker& picker, const QueueInfo& queue, size_t j,
                  Statement& stmt, bool record, TaskSet set = {}) {
    std::vector<const TaskInfo*> pending;
    for (const auto& [uid, t] : ssn.job(j).tasks) {
      if (Schedulable(t) && (set.only == nullptr || set.only->count(t.uid()) != 0)) {
        pending.push_back(&t);
      }
    }
    std::sort(pending.begin(), pending.end(),
              [&ssn](const TaskInfo* a, const TaskInfo* b) { return ssn.TaskOrder(*a, *b); });
    // Copy what is needed: placing tasks copies the job (copy-on-write) and moves its tasks.
    std::vector<std::pair<std::string, const SchedulingSpec*>> order;
    order.reserve(pending.size());
    for (const TaskInfo* t : pending) order.emplace_back(t->uid(), t->pod->spec.get());

    auto fail = [&](const std::string& uid, FitErrors e) {
      if (record) ssn.RecordFitErrors(j, uid, std::move(e));
    };
    picker.BeginJob();
    std::unordered_map<const SchedulingSpec*, FitErrors> failed;
    for (size_t k = 0; k < order.size(); ++k) {
      const auto& [uid, spec] = order[k];
      const JobInfo& job = ssn.job(j);
      const TaskInfo& task = job.tasks.at(uid);
      if (error_cache_) {
        auto cached = failed.find(spec);
        if (cached != failed.end()) {
          fail(uid, cached->second);
          if (set.whole || !CanStillBeReady(ssn.job(j), order.size() - k - 1)) break;
          continue;
        }
      }
      if (!ssn.Allocatable(queue, task)) {
        // Say what actually stops the task: a full cluster is news to nobody's queue, a queue
        // at its share while nodes have room is.
        picker.BeginJob();
        Placement probe = picker.Pick(task, /*allow_pipeline=*/false);
        FitErrors e = probe.node ? FitErrors{} : std::move(probe.errors);
        if (probe.node) {
          e.other = queue.IsOpen() ? "queue " + queue.name + " is at its deserved share"
                                   : "queue " + queue.name + " is " + queue.state;
        }
        if (error_cache_) failed[spec] = e;
        fail(uid, std::move(e));
        if (set.whole || !CanStillBeReady(ssn.job(j), order.size() - k - 1)) break;
        continue;
      }
      Placement p = picker.Pick(task, /*allow_pipeline=*/true);
      if (!p.node) {
        if (error_cache_) failed[spec] = p.errors;
        fail(uid, std::move(p.errors));
        if (set.whole || !CanStillBeReady(ssn.job(j), order.size() - k - 1)) break;
        continue;
      }
      Status st = p.pipelined ? stmt.Pipeline(j, uid, *p.node) : stmt.Allocate(j, uid, *p.node);
      if (!st.ok()) {
        if (set.whole) break;
        continue;
      }
      if (!p.pipelined) picker.Placed(ssn.job(j).tasks.at(uid), *p.node);
      if (!set.whole && ssn.JobReady(ssn.job(j))) return k + 1 < order.size();
    }
    return false;
  }

  // How a placement went: a job ready (or a sub-gang whole) beats one only pipelined.
  enum class Placed { kNo, kPipelined, kReady };
  using PlaceFn = std::function<Placed(Statement& stmt, bool record)>;

  // A job with a network topology (docs/scheduler.md, "Network topology"): placed whole inside
  // one HyperNode of the lowest tier that can hold it, never above its tier limit (hard mode;
  // soft mode has none).
  bool AllocateInTopology(Session& ssn, NodePicker& picker, const QueueInfo& queue, size_t j,
                          const api::NetworkTopologySpec& nt) {
    TopologySearch search(ssn, ssn.topology(), j, nt);
    if (!search.problem().empty()) {
      RecordJobProblem(ssn, j, search.problem());
      return false;
    }
    bool more = false;
    Statement stmt(ssn);
    bool placed = PlaceInTopology(ssn, picker, search, stmt, [&](Statement& s, bool record) {
      more = PlaceTasks(ssn, picker, queue, j, s, record);
      const JobInfo& job = ssn.job(j);
      if (s.empty()) return Placed::kNo;
      if (ssn.JobReady(job)) return Placed::kReady;
      return ssn.JobPipelined(job) ? Placed::kPipelined : Placed::kNo;
    });
    if (!placed) {
      RecordJobProblem(ssn, j, search.Refusal());
      return false;
    }
    return Settle(ssn, j, stmt, more);
  }

  // A job with sub-gangs (subGroupPolicy; a Volcano Job task's partitionPolicy): each is placed
  // whole or not at all, inside its own network topology (its policy's, else the job's); tasks
  // of no sub-gang as usual. The job's gang (minAvailable: minSubGroups whole sub-gangs for a
  // partitioned task) decides, as for any job, whether the placements stand.
  bool AllocateSubGroups(Session& ssn, NodePicker& picker, const QueueInfo& queue, size_t j,
                         const std::vector<SubGroup>& groups) {
    const auto& job_topology = ssn.job(j).network_topology;
    const bool topology = ssn.TopologyAware() && !ssn.topology().empty();
    Statement stmt(ssn);
    std::unordered_set<std::string> grouped;
    for (const SubGroup& g : groups) {
      grouped.insert(g.pending.begin(), g.pending.end());
      if (g.pending.empty()) continue;
      std::unordered_set<std::string> only(g.pending.begin(), g.pending.end());
      PlaceFn place = [&](Statement& s, bool record) {
        PlaceTasks(ssn, picker, queue, j, s, record, {&only, /*whole=*/true});
        Placed how = Placed::kReady;
        for (const std::string& uid : g.pending) {
          TaskStatus status = ssn.job(j).tasks.at(uid).status;
          if (status == TaskStatus::kPending) return Placed::kNo;
          if (status == TaskStatus::kPipelined) how = Placed::kPipelined;
        }
        return how;
      };
      const api::NetworkTopologySpec* nt = g.policy->network_topology
                                               ? &*g.policy->network_topology
                                               : (job_topology ? &*job_topology : nullptr);
      Statement sub(ssn);
      if (nt != nullptr && topology) {
        SearchScope scope{g.name, g.pending, g.held};
        TopologySearch search(ssn, ssn.topology(), j, *nt, &scope);
        std::string problem = search.problem();
        if (problem.empty() && !PlaceInTopology(ssn, picker, search, sub, place)) {
          problem = search.Refusal();
        }
        if (!problem.empty()) {
          RecordTasksProblem(ssn, j, g.pending, problem);
          continue;
        }
      } else {
        picker.Restrict(nullptr);
        if (place(sub, /*record=*/true) == Placed::kNo) {
          sub.Undo();
          continue;
        }
      }
      stmt.Merge(sub);
    }
    picker.Restrict(nullptr);
    std::unordered_set<std::string> rest;
    for (const auto& [uid, t] : ssn.job(j).tasks) {
      if (Schedulable(t) && grouped.count(t.uid()) == 0) rest.insert(t.uid());
    }
    if (!rest.empty()) PlaceTasks(ssn, picker, queue, j, stmt, /*record=*/true, {&rest});
    return Settle(ssn, j, stmt, /*more=*/false);
  }

  // Tries `place` inside the candidate HyperNodes of `search`, tier by tier, each tier's best
  // ranked first (TopologySearch::Ranked): the first where the job becomes ready keeps the
  // placement (in `stmt`); failing that, the first where it is pipelined. The search stops at
  // the first tier where one works. Returns whether it placed anything.
  static bool PlaceInTopology(Session& ssn, NodePicker& picker, TopologySearch& search,
                              Statement& stmt, const PlaceFn& place) {
    std::vector<std::string> passed;  // for the explanation
    for (const auto& tier : search.Tiers()) {
      const HyperNodeDomain* pipelined = nullptr;
      std::vector<const HyperNodeDomain*> ranked = search.Ranked(tier, &passed);
      for (size_t k = 0; k < ranked.size(); ++k) {
        const HyperNodeDomain* d = ranked[k];
        Statement trial(ssn);
        picker.Restrict(&d->nodes);
        Placed how = place(trial, /*record=*/false);
        trial.Undo();
        if (how == Placed::kNo) {
          passed.push_back(d->info->name + " cannot hold the gang");
          continue;
        }
        if (how == Placed::kPipelined) {
          if (pipelined == nullptr) pipelined = d;
          continue;
        }
        for (size_t rest = k + 1; rest < ranked.size(); ++rest) {
          passed.push_back(ranked[rest]->info->name + " ranked lower");
        }
        return PlaceIn(*d, picker, search, stmt, place, passed);
      }
      if (pipelined != nullptr) return PlaceIn(*pipelined, picker, search, stmt, place, passed);
    }
    picker.Restrict(nullptr);
    return false;
  }

  // Places for real inside `d`, where a trial worked.
  static bool PlaceIn(const HyperNodeDomain& d, NodePicker& picker, TopologySearch& search,
                      Statement& stmt, const PlaceFn& place,
                      const std::vector<std::string>& passed) {
    picker.Restrict(&d.nodes);
    Placed how = place(stmt, /*record=*/true);
    picker.Restrict(nullptr);
    if (how == Placed::kNo) {  // the trial worked; node sampling may differ the second time
      stmt.Undo();
      return false;
    }
    search.Placed(d, passed);
    return true;
  }

  static void RecordTasksProblem(Session& ssn, size_t j, const std::vector<std::string>& uids,
                                 const std::string& message) {
    for (const std::string& uid : uids) {
      FitErrors e;
      e.other = message;
      ssn.RecordFitErrors(j, uid, std::move(e));
    }
  }

  // Whether the job could still reach its gang with `remaining` more tasks placed.
  static bool CanStillBeReady(const JobInfo& job, size_t remaining) {
    return job.ReadyCount() + job.WaitingCount() + static_cast<int32_t>(remaining) >=
           job.min_available;
  }

  const bool error_cache_;
};

}  // namespace

std::unique_ptr<Action> NewAllocateAction(const Arguments& arguments) {
  return std::make_unique<AllocateAction>(arguments);
}

}  // namespace tephra::scheduler
