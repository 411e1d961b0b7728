// backfill: place best-effort tasks (no resource requests) of admitted, valid jobs on any node
// that passes the predicates. Bound at once when the job is ready; otherwise they wait in the
// session for the rest of the gang.
#include "scheduler/actions/actions.h"

namespace tephra::scheduler {
namespace {

class BackfillAction : public Action {
 public:
  std::string_view name() const override { return "backfill"; }
  std::vector<std::string_view> RecognisedArguments() const override {
    return {"predicateErrorCacheEnable"};  // only allocate keeps the cache of failed tasks
  }

  void Execute(Session& ssn) override {
    NodePicker picker(ssn);
    for (size_t j = 0; j < ssn.job_count(); ++j) {
      const JobInfo& job = ssn.job(j);
      if (job.IsPending() || job.pending_best_effort == 0) continue;
      if (!ssn.JobValid(job).pass) continue;
      std::vector<std::string> uids;
      for (const auto& [uid, t] : job.tasks) {
        if (t.status == TaskStatus::kPending && t.best_effort() &&
            t.pod->spec->scheduling_gates.empty()) {
          uids.push_back(t.uid());
        }
      }
      for (const auto& uid : uids) {
        const TaskInfo& task = ssn.job(j).tasks.at(uid);
        picker.BeginJob();
        Placement p = picker.Pick(task, /*allow_pipeline=*/false);
        if (!p.node) {
          ssn.RecordFitErrors(j, uid, std::move(p.errors));
          continue;
        }
        Statement stmt(ssn);
        if (!stmt.Allocate(j, uid, *p.node).ok()) continue;
        if (ssn.JobReady(ssn.job(j))) {
          stmt.Commit();
        } else {
          stmt.Keep();
        }
      }
    }
  }
};

}  // namespace

std::unique_ptr<Action> NewBackfillAction(const Arguments&) {
  return std::make_unique<BackfillAction>();
}

}  // namespace tephra::scheduler
