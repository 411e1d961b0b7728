// drf: Dominant Resource Fairness between jobs.
//   JobOrder     lower dominant share (allocated / cluster total, max over resources) first
//   Preemptable  victims whose job keeps a share >= the preemptor's after the move
//   events       shares follow allocations within the session
#include <unordered_map>

#include "scheduler/framework/session.h"
#include "scheduler/plugins/plugins.h"

namespace tephra::scheduler {
namespace {

class DrfPlugin : public Plugin {
 public:
  std::string_view name() const override { return "drf"; }

  void OnSessionOpen(Session& ssn) override {
    session_ = &ssn;
    total_ = WithoutPods(ssn.total_resource());
    changed_.clear();
    share_at_.clear();
    ssn.AddJobOrderFn(name(), [this](const JobInfo& l, const JobInfo& r) {
      double ls = Share(l), rs = Share(r);
      if (ls == rs) return 0;
      return ls < rs ? -1 : 1;
    });
    ssn.AddPreemptableFn(
        name(),
        [this](const TaskInfo& preemptor, const std::vector<const TaskInfo*>& candidates)
            -> std::optional<std::vector<const TaskInfo*>> {
          api::Resources after = Allocated(preemptor.job());
          after.Add(WithoutPods(preemptor.request()));
          double preemptor_share = after.DominantShare(total_);
          std::vector<const TaskInfo*> victims;
          for (const TaskInfo* c : candidates) {
            if (c->job() == preemptor.job()) {
              victims.push_back(c);
              continue;
            }
            api::Resources left = Allocated(c->job());
            left.Sub(WithoutPods(c->request()));
            if (left.DominantShare(total_) >= preemptor_share) victims.push_back(c);
          }
          return victims;
        });
    EventHandler h;
    h.allocate = [this](const TaskEvent& e) { Change(e.task, +1); };
    h.deallocate = [this](const TaskEvent& e) { Change(e.task, -1); };
    ssn.AddEventHandler(name(), h);
  }

 private:
  // A job's allocation and share, kept only for jobs this session's events changed; any other
  // job's are read from the job itself, so opening a session costs nothing per job.
  struct Changed {
    api::Resources allocated;
    double share = 0;
  };

  // What a job held when the session opened. The events count pipelined tasks, which a job's
  // own `allocated` leaves out, so once the session changed a job its figure is in changed_.
  api::Resources AtOpen(const JobId& id) const {
    std::optional<size_t> j = session_->JobIndex(id);
    return j ? WithoutPods(session_->snapshot().jobs[*j]->allocated) : api::Resources{};
  }
  api::Resources Allocated(const JobId& id) const {
    auto it = changed_.find(id);
    return it != changed_.end() ? it->second.allocated : AtOpen(id);
  }
  double Share(const JobInfo& job) const {
    auto known = share_at_.find(&job);
    if (known != share_at_.end()) return known->second;
    auto it = changed_.find(job.id);
    // Unchanged in this session: the job's allocation is still the one it opened with.
    double share =
        it != changed_.end() ? it->second.share : WithoutPods(job.allocated).DominantShare(total_);
    share_at_.emplace(&job, share);
    return share;
  }
  void Change(const TaskInfo& task, int sign) {
    auto [it, fresh] = changed_.try_emplace(task.job());
    if (fresh) it->second.allocated = AtOpen(task.job());
    api::Resources& a = it->second.allocated;
    if (sign > 0) {
      a.Add(WithoutPods(task.request()));
    } else {
      a.Sub(WithoutPods(task.request()));
    }
    it->second.share = a.DominantShare(total_);
    // The session shows a changed job at its own copy, from now on for the rest of the session.
    if (std::optional<size_t> j = session_->JobIndex(task.job())) {
      share_at_[&session_->job(*j)] = it->second.share;
    }
  }

  const Session* session_ = nullptr;
  api::Resources total_;
  std::unordered_map<JobId, Changed> changed_;
  // Shares by the address the session shows each job at. JobOrder compares jobs by reference at
  // every step of allocate's job heaps, where finding a job by name cost more than the rest of
  // the comparison. A job copied after its last change (a phase set) has a new address, which
  // is looked up by name once; an address is never reused within a session (the view keeps
  // the snapshot's jobs and its own copies until it closes).
  mutable std::unordered_map<const JobInfo*, double> share_at_;
};

}  // namespace

std::unique_ptr<Plugin> NewDrfPlugin(const PluginOption&) {
  return std::make_unique<DrfPlugin>();
}

}  // namespace tephra::scheduler
