// sla: a job may wait only so long (Volcano's sla plugin).
//   Its waiting time is the PodGroup's annotation sla-waiting-time or
//   volcano.sh/sla-waiting-time (a Go duration, e.g. 90m), else the plugin's argument
//   sla-waiting-time; its deadline is its PodGroup's creation plus that time.
//   JobOrder        jobs with a deadline before those without, the earliest deadline first
//   JobEnqueueable  past its deadline: Permit. A Permit decides its tier, so with sla in the
//   JobPipelined    first tier a late job is admitted, and keeps what it is given as pipelined,
//                   whatever overcommit or proportion in a later tier would say; otherwise
//                   Abstain. (docs/scheduler.md, Plugins)
#include <unordered_set>

#include "api/labels.h"
#include "base/time.h"
#include "scheduler/framework/session.h"
#include "scheduler/plugins/plugins.h"
#include "scheduler/plugins/support/deadlines.h"
#include "scheduler/plugins/support/notes.h"

namespace tephra::scheduler {
namespace {

using std::chrono::nanoseconds;

class SlaPlugin : public Plugin {
 public:
  explicit SlaPlugin(std::optional<nanoseconds> waiting) : default_waiting_(waiting) {}
  std::string_view name() const override { return "sla"; }

  void OnSessionOpen(Session& ssn) override {
    // Read once: JobOrder runs n log n times a session.
    for (size_t i = 0; i < ssn.job_count(); ++i) {
      if (std::optional<base::Time> d = Deadline(ssn.job(i))) deadlines_.emplace(&ssn.job(i), *d);
    }
    ssn.AddJobOrderFn(name(), [this](const JobInfo& l, const JobInfo& r) {
      return CompareDeadlines(deadlines_, l, r);
    });
    Session* s = &ssn;
    // Permit once the deadline has passed; the job's explanation says so once a session.
    auto late = [this, s](const JobInfo& job, std::string_view what) {
      auto d = deadlines_.find(&job);
      if (d == deadlines_.end() || s->Now() < d->second) return Vote::kAbstain;
      if (noted_.insert(&job).second) {
        auto late_by = std::chrono::duration_cast<std::chrono::seconds>(s->Now() - d->second);
        NoteJob(
            *s, job,
            {std::string(name()),
             "SLA deadline passed " + base::FormatDuration(late_by) + " ago: " + std::string(what),
             ""});
      }
      return Vote::kPermit;
    };
    ssn.AddJobEnqueueableFn(name(), [late](const JobInfo& job, const api::Resources&) {
      return job.IsPending() ? late(job, "admitted whatever later tiers say") : Vote::kAbstain;
    });
    ssn.AddJobPipelinedFn(name(), [late](const JobInfo& job) { return late(job, "reserving"); });
  }

 private:
  std::optional<base::Time> Deadline(const JobInfo& job) const {
    if (!job.creation) return std::nullopt;
    std::optional<nanoseconds> waiting = default_waiting_;
    if (job.pod_group != nullptr) {
      const auto& a = job.pod_group->metadata.annotations;
      for (std::string_view key : {api::kSlaWaitingTimeShortKey, api::kSlaWaitingTimeKey}) {
        auto it = a.find(std::string(key));
        if (it == a.end()) continue;
        if (std::optional<nanoseconds> own = base::ParsePositiveDuration(it->second)) {
          waiting = own;
          break;
        }
      }
    }
    if (!waiting) return std::nullopt;
    return *job.creation + std::chrono::duration_cast<base::Time::duration>(*waiting);
  }

  std::optional<nanoseconds> default_waiting_;
  JobDeadlines deadlines_;
  std::unordered_set<const JobInfo*> noted_;
};

}  // namespace

std::unique_ptr<Plugin> NewSlaPlugin(const PluginOption& option) {
  return std::make_unique<SlaPlugin>(option.arguments.GetDuration("sla-waiting-time"));
}

}  // namespace tephra::scheduler
