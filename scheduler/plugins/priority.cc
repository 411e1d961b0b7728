// priority: higher priority first.
//   TaskOrder    task priority (pod priority, or volcano.sh/task-priority)
//   JobOrder     job priority (the PodGroup's PriorityClass)
//   JobStarving  ready + pipelined tasks fewer than all of the job's tasks
//   Preemptable  victims of a lower-priority job (or, within one job, lower-priority tasks)
#include "scheduler/framework/session.h"
#include "scheduler/plugins/plugins.h"

namespace tephra::scheduler {
namespace {

class PriorityPlugin : public Plugin {
 public:
  std::string_view name() const override { return "priority"; }

  void OnSessionOpen(Session& ssn) override {
    ssn.AddTaskOrderFn(name(), [](const TaskInfo& l, const TaskInfo& r) {
      if (l.priority == r.priority) return 0;
      return l.priority > r.priority ? -1 : 1;
    });
    ssn.AddJobOrderFn(name(), [](const JobInfo& l, const JobInfo& r) {
      if (l.priority == r.priority) return 0;
      return l.priority > r.priority ? -1 : 1;
    });
    ssn.AddJobStarvingFn(name(), [](const JobInfo& job) {
      int32_t live = job.ValidCount() - job.Count(TaskStatus::kSucceeded);
      return job.ReadyCount() - job.Count(TaskStatus::kSucceeded) + job.WaitingCount() < live;
    });
    Session* s = &ssn;
    ssn.AddPreemptableFn(
        name(),
        [s](const TaskInfo& preemptor, const std::vector<const TaskInfo*>& candidates)
            -> std::optional<std::vector<const TaskInfo*>> {
          auto pj = s->JobIndex(preemptor.job);
          int32_t preemptor_job_priority = pj ? s->job(*pj).priority : 0;
          std::vector<const TaskInfo*> victims;
          for (const TaskInfo* c : candidates) {
            if (c->job == preemptor.job) {
              if (c->priority < preemptor.priority) victims.push_back(c);
              continue;
            }
            auto cj = s->JobIndex(c->job);
            int32_t victim_job_priority = cj ? s->job(*cj).priority : 0;
            if (victim_job_priority < preemptor_job_priority) victims.push_back(c);
          }
          return victims;
        });
  }
};

}  // namespace

std::unique_ptr<Plugin> NewPriorityPlugin(const PluginOption&) {
  return std::make_unique<PriorityPlugin>();
}

}  // namespace tephra::scheduler
