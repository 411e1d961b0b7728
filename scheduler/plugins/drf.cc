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
    total_ = WithoutPods(ssn.total_resource());
    for (size_t i = 0; i < ssn.job_count(); ++i) {
      const JobInfo& job = ssn.job(i);
      allocated_[job.id] = WithoutPods(job.allocated);
      // Without the pod count: the total has none, and a job's share would read 1.
      shares_[job.id] = allocated_[job.id].DominantShare(total_);
    }
    ssn.AddJobOrderFn(name(), [this](const JobInfo& l, const JobInfo& r) {
      double ls = Share(l.id), rs = Share(r.id);
      if (ls == rs) return 0;
      return ls < rs ? -1 : 1;
    });
    ssn.AddPreemptableFn(
        name(),
        [this](const TaskInfo& preemptor, const std::vector<const TaskInfo*>& candidates)
            -> std::optional<std::vector<const TaskInfo*>> {
          api::Resources after = allocated_[preemptor.job];
          after.Add(WithoutPods(preemptor.request()));
          double preemptor_share = after.DominantShare(total_);
          std::vector<const TaskInfo*> victims;
          for (const TaskInfo* c : candidates) {
            if (c->job == preemptor.job) {
              victims.push_back(c);
              continue;
            }
            api::Resources left = allocated_[c->job];
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
  double Share(const JobId& id) const {
    auto it = shares_.find(id);
    return it == shares_.end() ? 0 : it->second;
  }
  void Change(const TaskInfo& task, int sign) {
    api::Resources& a = allocated_[task.job];
    if (sign > 0) {
      a.Add(WithoutPods(task.request()));
    } else {
      a.Sub(WithoutPods(task.request()));
    }
    shares_[task.job] = a.DominantShare(total_);
  }

  api::Resources total_;
  std::unordered_map<JobId, api::Resources> allocated_;
  std::unordered_map<JobId, double> shares_;
};

}  // namespace

std::unique_ptr<Plugin> NewDrfPlugin(const PluginOption&) {
  return std::make_unique<DrfPlugin>();
}

}  // namespace tephra::scheduler
