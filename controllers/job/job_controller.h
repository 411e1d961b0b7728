// The job controller: turns a Volcano Job into a PodGroup and pods, derives the Job's status
// from its pods and applies lifecycle policies through the state machine (state_machine.h).
//
// Reconciliation is level-based: informer handlers never write; they record what happened to
// a job (a Request: a pod failed, a Command arrived) in the job's inbox and queue the job's key.
// A worker takes the key, reads the caches, drains the inbox (policies react to events such as
// "pod failed with exit code 3", which a level cannot show), runs at most one action through
// the state machine and converges the job's pods, PodGroup and status. Keys are sharded over
// the workers by FNV-32, so one job is only ever handled by one thread.
//
// A pass decides with the pure parts of controllers_job_core: the state machine's cell, which
// pods to kill and create (pod_plan.h), what the caches do not show yet (expectations.h) and
// the status it leaves (status.h, AdvanceStatus). Here: job_controller.cc (handlers, workers,
// choosing the action, running it) and job_writes.cc (the pass's API writes).
#pragma once

#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "api/batch.h"
#include "api/core.h"
#include "api/scheduling.h"
#include "api/validation.h"
#include "base/workqueue.h"
#include "controllers/framework/controller.h"
#include "controllers/job/expectations.h"
#include "controllers/job/job_inbox.h"
#include "controllers/job/policy.h"
#include "controllers/job/state_machine.h"
#include "controllers/job/status.h"
#include "metrics/metrics.h"
#include "sync/fifo_semaphore.h"
#include "sync/mutex.h"

namespace tephra::controllers::job {

class JobController : public Controller {
 public:
  JobController();
  ~JobController() override;

  std::string_view Name() const override { return "job-controller"; }
  Status Initialize(ControllerContext& context) override;
  void Start() override;
  void Stop() override;

  // One pass over a job key, as a worker runs it. Exposed for tests, which drive the
  // controller without workers. Returns Conflict when the cache was stale.
  Status Sync(const std::string& key);

 private:
  using Pods = std::vector<std::shared_ptr<const api::Pod>>;

  // The action a pass runs.
  struct Choice {
    Action action = Action::kSyncJob;
    Request request;
    std::string reason;
    bool acted = false;  // not a plain sync: put back into the inbox if the pass fails
  };

  // Queues `item` for the job; the job is synced at once, or after `delay` (coalescing).
  void Enqueue(const std::string& key, InboxItem item,
               std::chrono::milliseconds delay = std::chrono::milliseconds(0));
  void OnPod(const api::Pod& pod, Request request);
  // Queues the jobs waiting for `queue` (state.reason QueueNotFound) for another look.
  void WakeJobsOfQueue(const std::string& queue);
  // A pass over a key whose job is not cached: Commands for it wait out their grace period,
  // then are deleted if the job does not exist (controllers/framework/commands.h).
  Status SettleCommandsWithoutJob(const std::string& key);
  void Worker(size_t shard);
  void HandleResult(const std::string& key, const Status& status);

  Pods OwnedPods(const api::Job& job) const;
  // Picks the pass's action from the inbox `items` (job_controller.cc).
  StatusOr<Choice> ChooseAction(const std::string& key, const api::Job& job, const Pods& pods,
                                std::deque<InboxItem> items);
  // Runs `action` and converges the job: kill, sync, status (job_controller.cc).
  Status Execute(const api::Job& job, const Pods& pods, Action action, const Request& request,
                 const std::string& reason);
  // The Events and metrics of a pass whose status is written.
  void ReportPass(const api::Job& job, const api::JobStatus& status, const JobPass& pass,
                  const PhaseChange& phase);

  // The API writes of a pass (job_writes.cc).
  // Kills pods per `kill`; returns the names deleted.
  StatusOr<std::set<std::string>> KillPods(const Pods& pods, Kill kill, Action action,
                                           const Request& request, Expectations& exp);
  Status DeletePod(const api::Pod& pod);
  Status DeletePodGroup(const api::Job& job, Expectations& exp);
  // The job plugins' objects, the volumes and the PodGroup, then, once the PodGroup is
  // admitted, the pods. A plugin that refuses the job stops it there: its message goes to
  // *plugin_error and the pass goes on to write the status.
  Status Converge(const api::Job& job, const Pods& pods, bool initiating, Expectations& exp,
                  api::JobStatus& status, PodWrites* writes, std::string* plugin_error);
  // Creates or updates the PodGroup; returns its phase ("" while it cannot be seen yet).
  StatusOr<std::string> EnsurePodGroup(const api::Job& job, Expectations& exp);
  Status EnsureVolumes(const api::Job& job, api::JobStatus& status);
  Status RunPluginsOnJob(const api::Job& job, api::JobStatus& status, Expectations& exp,
                         bool initiating);
  // Creates missing pods and deletes surplus ones (pod_plan.h); fills `writes`.
  Status SyncPods(const api::Job& job, const Pods& pods, Expectations& exp, PodWrites* writes);
  Status WriteStatus(const api::Job& job, const api::JobStatus& status);

  void RecordEvent(const api::Job& job, bool warning, const std::string& reason,
                   const std::string& message);
  void TrackPhase(const std::string& key, const std::string& queue, const std::string& phase);
  Expectations& ExpectationsFor(const std::string& key);
  // Drops what is kept for a job that is gone, except its inbox (SettleCommandsWithoutJob).
  void Forget(const std::string& key);

  ControllerContext ctx_;
  std::shared_ptr<kube::Informer> jobs_, pods_, podgroups_, commands_, priority_classes_;
  std::shared_ptr<kube::Informer> queues_;  // every queue in the cluster: a job's may be anyone's
  std::unique_ptr<api::QueueLookup> queue_lookup_;
  std::unique_ptr<base::ShardedWorkQueue> queue_;
  std::unique_ptr<DelayedActions> delayed_;
  std::vector<std::thread> workers_;
  // Pod creations and deletions in flight, over all workers (ControllerOptions).
  std::unique_ptr<sync::FifoSemaphore> pod_writes_;
  JobInbox inbox_;

  sync::Mutex mu_;
  std::unordered_map<std::string, Expectations> expectations_ GUARDED_BY(mu_);
  std::unordered_map<std::string, std::pair<std::string, std::string>>
      phases_;  // key → queue, phase

  metrics::Histogram* reconcile_seconds_ = nullptr;
  metrics::Histogram* pod_creation_seconds_ = nullptr;
  metrics::GaugeVec* phase_count_ = nullptr;
  metrics::CounterVec* finished_total_ = nullptr;
};

}  // namespace tephra::controllers::job
