// overcommit: admit jobs only while the cluster, inflated by overcommit-factor (default 1.2),
// has room for the minResources of every admitted job that has not started yet.
#include "scheduler/framework/session.h"
#include "scheduler/plugins/plugins.h"
#include "scheduler/plugins/support/notes.h"

namespace tephra::scheduler {
namespace {

class OvercommitPlugin : public Plugin {
 public:
  explicit OvercommitPlugin(double factor) : factor_(factor < 1.0 ? 1.2 : factor) {}
  std::string_view name() const override { return "overcommit"; }

  void OnSessionOpen(Session& ssn) override {
    idle_ = ssn.total_resource();
    idle_.Scale(factor_);
    api::Resources used;
    for (size_t i = 0; i < ssn.node_count(); ++i) used.Add(ssn.node(i).used);
    idle_.Sub(used);
    for (size_t i = 0; i < ssn.job_count(); ++i) {
      const JobInfo& job = ssn.job(i);
      // Admitted jobs still waiting to start hold their minimum in reserve (gated tasks aside).
      if (job.phase == api::PodGroupPhase::kInqueue && job.min_resources) {
        api::Resources waiting = job.UngatedMinResources();
        waiting.Sub(job.allocated);
        inqueue_.Add(waiting);
      }
    }
    Session* s = &ssn;
    ssn.AddJobEnqueueableFn(name(), [this, s](const JobInfo& job, const api::Resources& credit) {
      if (!job.min_resources) return Vote::kPermit;
      api::Resources want = inqueue_;
      want.Add(*job.min_resources);
      api::Resources room = idle_;
      room.Add(credit);  // tasks the job may preempt free their share
      if (want.LessEqual(room, api::Resources::Missing::kZero)) return Vote::kPermit;
      NoteJob(
          *s, job,
          {std::string(name()),
           "the cluster has no room to admit it: minResources " +
               WithoutPods(*job.min_resources).ToString() + " + admitted, not started " +
               WithoutPods(inqueue_).ToString() + " > " + WithoutPods(idle_).ToString() +
               " (idle x overcommit-factor)",
           "wait for running or admitted jobs to finish, add nodes, or raise overcommit-factor"});
      return Vote::kReject;
    });
    ssn.AddJobEnqueuedFn(name(), [this](const JobInfo& job) {
      if (job.min_resources) inqueue_.Add(*job.min_resources);
    });
  }

 private:
  double factor_;
  api::Resources idle_;
  api::Resources inqueue_;
};

}  // namespace

std::unique_ptr<Plugin> NewOvercommitPlugin(const PluginOption& option) {
  return std::make_unique<OvercommitPlugin>(option.arguments.GetDouble("overcommit-factor", 1.2));
}

}  // namespace tephra::scheduler
