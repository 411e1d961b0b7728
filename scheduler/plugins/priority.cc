// priority: higher priority first.
//   TaskOrder    task priority (pod priority, or volcano.sh/task-priority)
//   JobOrder     job priority (the PodGroup's PriorityClass); within equal priority, jobs with
//                a tephra.dev/deadline annotation first, the earliest deadline first (Tephra's
//                own: Volcano has no deadlines)
//   JobStarving  ready + pipelined tasks fewer than all of the job's tasks
//   Preemptable  victims of a lower-priority job (or, within one job, lower-priority tasks)
#include "api/labels.h"
#include "base/time.h"
#include "scheduler/framework/session.h"
#include "scheduler/plugins/plugins.h"
#include "scheduler/plugins/support/deadlines.h"

namespace tephra::scheduler {
namespace {

class PriorityPlugin : public Plugin {
 public:
  std::string_view name() const override { return "priority"; }

  void OnSessionOpen(Session& ssn) override {
    ReadDeadlines(ssn);
    ssn.AddTaskOrderFn(name(), [](const TaskInfo& l, const TaskInfo& r) {
      if (l.priority == r.priority) return 0;
      return l.priority > r.priority ? -1 : 1;
    });
    ssn.AddJobOrderFn(name(), [this](const JobInfo& l, const JobInfo& r) {
      if (l.priority != r.priority) return l.priority > r.priority ? -1 : 1;
      return CompareDeadlines(deadlines_, l, r);
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
          auto pj = s->JobIndex(preemptor.job());
          int32_t preemptor_job_priority = pj ? s->job(*pj).priority : 0;
          std::vector<const TaskInfo*> victims;
          for (const TaskInfo* c : candidates) {
            if (c->job() == preemptor.job()) {
              if (c->priority < preemptor.priority) victims.push_back(c);
              continue;
            }
            auto cj = s->JobIndex(c->job());
            int32_t victim_job_priority = cj ? s->job(*cj).priority : 0;
            if (victim_job_priority < preemptor_job_priority) victims.push_back(c);
          }
          return victims;
        });
  }

 private:
  // Deadlines of the session's jobs that have one (read once: JobOrder runs n log n times).
  // A job still waiting is told where its deadline puts it.
  void ReadDeadlines(Session& ssn) {
    const base::Time now = ssn.Now();
    static const std::string kKey(api::kDeadlineKey);  // the annotations' map wants a string
    for (size_t i = 0; i < ssn.job_count(); ++i) {
      const JobInfo& job = ssn.job(i);
      if (job.pod_group == nullptr) continue;
      const auto& a = job.pod_group->metadata.annotations;
      auto it = a.find(kKey);
      if (it == a.end()) continue;
      std::optional<base::Time> deadline = base::ParseTime(it->second);
      if (!deadline) continue;  // admission refuses it on a Job; a PodGroup's is ignored
      deadlines_.emplace(&job, *deadline);
      if (!job.IsPending() && job.Count(TaskStatus::kPending) == 0) continue;
      auto gap = std::chrono::duration_cast<std::chrono::seconds>(*deadline - now);
      std::string when = gap.count() >= 0 ? "in " + base::FormatDuration(gap)
                                          : base::FormatDuration(-gap) + " ago";
      ssn.AddJobNote(i, {std::string(name()),
                         "deadline " + it->second + " (" + when +
                             "): placed before jobs of its priority with a later deadline or none",
                         ""});
    }
  }

  JobDeadlines deadlines_;
};

}  // namespace

std::unique_ptr<Plugin> NewPriorityPlugin(const PluginOption&) {
  return std::make_unique<PriorityPlugin>();
}

}  // namespace tephra::scheduler
