// What a closed session wants written back to the API server — only what changed:
// PodGroup status (phase, counts, conditions), Queue status.allocated, and the PodScheduled
// condition (with a FailedScheduling event) of pods left pending for a new reason, and the
// nominated node of pods pipelined onto resources being released.
//
// ComputeOutcome puts together one piece per kind of object, each in a file of its own:
// PodGroups (outcome_pod_groups.cc), pods (outcome_pods.cc), queues (outcome_queues.cc).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/scheduling.h"
#include "scheduler/framework/session.h"

namespace tephra::scheduler {

struct PodGroupUpdate {
  JobId job;
  std::string namespace_;
  std::string name;
  bool sched_plugins = false;  // a scheduling.x-k8s.io PodGroup
  api::PodGroupStatus status;
  // Someone acts on this change (a phase others react to, a new Unschedulable condition):
  // write it at once. Otherwise the write may wait a moment to take later changes along.
  bool urgent = true;
  // The group is provisional (JobInfo::provisional_group): write once the object exists.
  bool awaiting_object = false;
  // Some of its pods are placed or bound but not yet running: a write that may wait waits for them
  // to start (a little longer), so that one write carries both.
  bool pods_starting = false;
  // The HyperNode the job now occupies, when it changed (network topology): written to the
  // PodGroup's volcano.sh/job-allocated-hypernode annotation.
  std::string allocated_hypernode;
  // Set when a condition changed: an Event on the PodGroup tells the same story.
  std::string event_type;  // Normal or Warning
  std::string event_reason;
  std::string event_message;
};

struct QueueUpdate {
  std::string name;
  api::ResourceList allocated;
};

struct PodConditionUpdate {
  std::string namespace_;
  std::string name;
  std::string uid;
  ScheduledCondition condition;
  // status.nominatedNodeName for a pipelined pod: where it will run once resources being
  // released are free (kubectl get pods -o wide shows it as NOMINATED NODE).
  std::string nominated_node;
};

// A queue the session could not serve as configured (a guarantee beyond the whole cluster):
// the scheduler says so in an Event on the Queue when the verdict changes.
struct QueueWarning {
  std::string name;
  std::string reason;
  std::string message;
};

struct SessionOutcome {
  std::vector<PodGroupUpdate> pod_groups;
  std::vector<QueueUpdate> queues;
  std::vector<PodConditionUpdate> pods;
  std::vector<QueueWarning> queue_warnings;  // every such queue, each session
};

// Computes the updates of a closed session (Volcano's PodGroup phase rules,
// docs/compatibility.md §4.3).
SessionOutcome ComputeOutcome(const Session& session);

// The PodGroup as the API server holds it once `update` is written: what an in-process driver
// (tests, benchmarks) standing in for the API server and informer feeds back to the cache.
api::PodGroup WrittenPodGroup(const api::PodGroup& pg, const PodGroupUpdate& update);

// The PodGroup status a job should have after the session.
api::PodGroupStatus PodGroupStatusAfter(const Session& session, size_t job, base::Time now);

// ---- The pieces of ComputeOutcome ----------------------------------------------------------

// The write a job's PodGroup needs after the session (its status, its allocated HyperNode, an
// Event when its condition changed), or nullopt when nothing changed or the job has no
// PodGroup. `now` is the session's time in whole seconds, as the API server keeps it.
std::optional<PodGroupUpdate> PodGroupUpdateAfter(const Session& session, size_t job,
                                                  base::Time now);

// Appends the PodScheduled=False condition of each of the job's pods left pending (or
// pipelined) for a reason that changed.
void AppendPodConditionUpdates(const Session& session, size_t job,
                               std::vector<PodConditionUpdate>* out);

// Each queue's allocation with its descendants' added: `own` (pods excluded) summed up the
// hierarchy of `queues`, at most 16 levels and never past root.
std::map<std::string, api::Resources> RollUpQueueAllocations(
    const std::map<std::string, api::Resources>& own,
    const std::map<std::string, std::shared_ptr<const QueueInfo>>& queues);

// The queues whose status.allocated differs from `rolled` (RollUpQueueAllocations), dimensions
// present with zero ignored.
std::vector<QueueUpdate> QueueUpdatesFor(
    const std::map<std::string, api::Resources>& rolled,
    const std::map<std::string, std::shared_ptr<const QueueInfo>>& queues);

// Every queue whose guarantee exceeds the whole cluster (`total`, its pod count aside); none
// while the cluster is empty.
std::vector<QueueWarning> QueueWarningsFor(
    const std::map<std::string, std::shared_ptr<const QueueInfo>>& queues,
    const api::Resources& total);

}  // namespace tephra::scheduler
