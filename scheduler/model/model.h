// The scheduler's cluster model: tasks (pods), jobs (PodGroups), nodes and queues, with the
// task statuses and node accounting of Volcano's scheduler (docs/compatibility.md §4.2).
//
// NodeInfo and JobInfo are copied on write: the cache and every open session share one
// instance until one of them changes it, so opening a session copies pointers, not clusters.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "api/core.h"
#include "api/resources.h"
#include "api/scheduling.h"
#include "scheduler/model/hypernodes.h"
#include "scheduler/model/pod_info.h"
#include "scheduler/model/volumes.h"

namespace tephra::scheduler {

// Shares and quotas are about cpu, memory and extended resources; the pod count (which every
// task request carries for the node's max-pods check) is left out of them.
api::Resources WithoutPods(const api::Resources& r);

enum class TaskStatus : uint8_t {
  kPending,
  kAllocated,  // placed in this session on a node with enough idle resources
  kPipelined,  // placed on a node whose resources are being released
  kBinding,    // bind request in flight
  kBound,      // bound, not yet running
  kRunning,
  kReleasing,  // being deleted (or evicted)
  kSucceeded,
  kFailed,
  kUnknown,
};
inline constexpr size_t kTaskStatusCount = 10;
std::string_view TaskStatusName(TaskStatus s);

// Holds node resources: Allocated, Binding, Bound, Running, Releasing.
bool OccupiesNode(TaskStatus s);
// Counts as "allocated" for jobs and queues: Allocated, Binding, Bound, Running.
bool IsAllocatedStatus(TaskStatus s);
// Placed and staying (where a job with a network topology is): Allocated, Pipelined, Binding,
// Bound, Running.
bool HoldsPlace(TaskStatus s);
// Status of a pod as the API reports it (before any session placed it).
TaskStatus StatusFromPod(const PodInfo& pod);

using JobId = std::string;  // "<namespace>/<podgroup name>"

struct TaskInfo {
  PodInfoPtr pod;
  // Its job's id, one string shared by all of the job's tasks (JobInfo::AddTask sets it):
  // copying a job copies a pointer per task, not an id. Null for a task of no job.
  std::shared_ptr<const JobId> job_id;
  TaskStatus status = TaskStatus::kPending;
  std::string node;  // where it is (or is being) placed
  int32_t priority = 0;

  const JobId& job() const;  // "" for a task of no job
  const std::string& uid() const { return pod->metadata.uid; }
  const std::string& name() const { return pod->metadata.name; }
  const std::string& namespace_() const { return pod->metadata.namespace_; }
  const api::Resources& request() const { return pod->spec->request; }
  bool best_effort() const { return pod->spec->best_effort; }
  // The replica index parsed from "<job>-<task>-<index>", for stable ordering.
  int index() const;
  // Bound or Running: on a node and not already leaving — what preemption and reclaim may take.
  bool Evictable() const { return status == TaskStatus::kRunning || status == TaskStatus::kBound; }
};

// A pod present on a node: what node-level predicates read.
struct NodeTask {
  PodInfoPtr pod;
  TaskStatus status;
};

struct NodeInfo {
  std::string name;
  std::shared_ptr<const api::Node> node;  // null for a node known only from bound pods
  api::Resources allocatable;
  api::Resources used;       // tasks occupying the node (incl. releasing)
  api::Resources releasing;  // of which being released
  api::Resources pipelined;  // promised to pipelined tasks (session only)
  // By a view of the task's own pod uid (no copy of the uid per entry, nor per copy of the
  // node): an entry changes only through AddTask and RemoveTask, never by assigning its pod.
  std::unordered_map<std::string_view, NodeTask> tasks;
  int32_t anti_affinity_pods = 0;  // tasks with required pod anti-affinity terms
  bool ready = false;
  bool unschedulable = false;

  api::Resources Idle() const;
  // What will be free once releasing tasks are gone and pipelined ones arrive.
  api::Resources FutureIdle() const;
  // request <= Idle() / FutureIdle(), without building the vectors (the allocate hot path).
  // On failure `reason` names the first resource that does not fit.
  bool FitsIdle(const api::Resources& request, const char** reason) const;
  bool FitsFutureIdle(const api::Resources& request, const char** reason) const;
  void AddTask(const TaskInfo& task);
  void RemoveTask(std::string_view uid);
  const std::vector<api::Taint>& taints() const;
  const std::map<std::string, std::string>& labels() const;
};

struct QueueInfo {
  std::string name;
  std::shared_ptr<const api::Queue> queue;
  int32_t weight = 1;
  api::Resources capability;  // empty = unlimited
  api::Resources deserved;
  api::Resources guarantee;
  std::string parent;
  std::string state;  // Open, Closed, Closing, Unknown
  bool reclaimable = true;
  int32_t priority = 0;

  bool IsOpen() const { return state.empty() || state == "Open"; }
  // The resources of the guarantee that exceed what the whole `cluster` has (none: it can be
  // honoured). A guarantee that cannot be is not honoured at all: reserving it would leave
  // every other queue nothing (docs/scheduler.md).
  std::vector<std::string> GuaranteeBeyond(const api::Resources& cluster) const;
  bool GuaranteeFits(const api::Resources& cluster) const {
    return GuaranteeBeyond(cluster).empty();
  }
};

// The Unschedulable condition's reason when a gang's schedule timeout gave its admission back.
inline constexpr char kScheduleTimeoutReason[] = "ScheduleTimeout";

struct JobInfo {
  JobId id;
  std::string namespace_;
  std::string name;
  std::string uid;
  std::shared_ptr<const api::PodGroup> pod_group;  // null: pods that name a group not seen yet
  // pod_group is the group the PodGroup controller will create for a bare pod (PodInfo::
  // implicit_pod_group), not an object the API server holds yet: its status is not written
  // until the object arrives (docs/scheduler.md, "Fewer writes per pod").
  bool provisional_group = false;
  std::string queue;
  int32_t priority = 0;
  int32_t min_available = 0;
  std::map<std::string, int32_t> min_task_member;
  std::optional<api::Resources> min_resources;
  // Where its gang must be placed (api::NetworkTopologyOf its PodGroup; docs/scheduler.md,
  // "Network topology").
  std::optional<api::NetworkTopologySpec> network_topology;
  api::PodGroupPhase phase =
      api::PodGroupPhase::kNone;  // status.phase (a session may move it to Inqueue)
  bool preemptable = false;
  std::optional<base::Time> creation;
  // Gang schedule timeout (docs/scheduler.md, "Schedule timeout"): how long an admitted gang
  // may go unplaced, how long it then waits, since when this cache has seen it admitted, and
  // when the timeout last gave its admission back (its ScheduleTimeout condition, remembered
  // for scheduler-plugins PodGroups, whose status has no conditions).
  std::optional<std::chrono::nanoseconds> schedule_timeout;
  std::optional<std::chrono::nanoseconds> schedule_backoff;
  std::optional<base::Time> admitted_since;
  std::optional<base::Time> timed_out_at;

  // By a view of the task's own pod uid, as NodeInfo::tasks: an entry changes only through
  // AddTask and RemoveTask (SetStatus keeps its pod), never by assigning its pod.
  std::unordered_map<std::string_view, TaskInfo> tasks;
  std::array<int32_t, kTaskStatusCount> counts{};
  int32_t pending_best_effort = 0;  // Pending tasks without requests: backfill places them
  api::Resources allocated;         // requests of tasks in IsAllocatedStatus
  api::Resources pending;           // requests of Pending tasks
  api::Resources total_request;

  int32_t Count(TaskStatus s) const { return counts[static_cast<size_t>(s)]; }
  // Tasks that count toward the gang (Volcano's ReadyTaskNum): allocated or succeeded, plus
  // pending best-effort tasks, which backfill can always place.
  int32_t ReadyCount() const;
  int32_t WaitingCount() const { return Count(TaskStatus::kPipelined); }
  // Pods that could run: Pending, Allocated, Pipelined, Binding, Bound, Running, Succeeded.
  int32_t ValidCount() const;
  bool IsPending() const {
    return phase == api::PodGroupPhase::kNone || phase == api::PodGroupPhase::kPending;
  }
  // Whether each task role's minimum (minTaskMember) is part of the gang. As in Volcano, only
  // when minAvailable is at least their sum: below it the job is elastic (a Volcano Job whose
  // tasks' minAvailable default to their replicas but whose own minAvailable is smaller) and
  // minAvailable alone decides validity, readiness, pipelining and what preemption may take.
  bool TaskMinimumsApply() const;
  // minResources less the requests of pending tasks held by scheduling gates: what an admitted
  // job not started yet holds in reserve against its queue and the cluster. A gated task cannot
  // be placed until its gate is lifted, so it reserves nothing (as in Volcano). Empty without
  // minResources.
  api::Resources UngatedMinResources() const;

  void AddTask(TaskInfo task);
  void RemoveTask(std::string_view task_uid);
  // Moves a task to a new status (and node), keeping counts and sums right.
  void SetStatus(std::string_view task_uid, TaskStatus status, const std::string& node);
};

// The Volcano Job owning the job's PodGroup (its controller reference), or "".
std::string OwningVolcanoJob(const JobInfo& job);
// The phase as Volcano's status would say it: a job without a phase yet is Pending.
std::string_view ShownPhase(const JobInfo& job);

// What a running gang can give up and still run: ready tasks above minAvailable and, where task
// minimums apply (JobInfo::TaskMinimumsApply), above each role's minimum. Shared by the gang
// plugin's victim rule and the eviction planners.
class GangSlack {
 public:
  explicit GangSlack(const JobInfo& job);
  // Whether the gang keeps its minimums without one more task of `role`; if so, counts it gone.
  bool Take(const std::string& role);

 private:
  const JobInfo* job_;
  int32_t ready_;
  std::map<std::string, int32_t> role_ready_;  // only when task minimums apply
};

// A PodDisruptionBudget, reduced to what victim selection needs.
struct PdbInfo : public kube::Object {
  api::LabelSelector selector;
  int32_t disruptions_allowed = 0;
};
StatusOr<std::shared_ptr<PdbInfo>> DecodePdb(const json::Value& value);

// A ResourceQuota as the quota controller last counted it (status.hard and status.used; its
// scopes are not read, as in Volcano).
struct QuotaInfo : public kube::Object {
  api::ResourceList hard;
  api::ResourceList used;
};
StatusOr<std::shared_ptr<QuotaInfo>> DecodeResourceQuota(const json::Value& value);

// The scheduler's immutable view for one session: shared pointers into the cache's state.
struct Snapshot {
  std::vector<std::shared_ptr<const NodeInfo>> nodes;  // Ready, schedulable or not, by name
  std::vector<std::shared_ptr<const JobInfo>> jobs;    // jobs with a PodGroup and a known queue
  std::map<std::string, std::shared_ptr<const QueueInfo>> queues;
  std::map<std::string, std::map<std::string, std::string>> namespace_labels;
  std::vector<std::shared_ptr<const PdbInfo>> pdbs;
  std::vector<std::shared_ptr<const QuotaInfo>> quotas;  // by namespace, then name
  std::shared_ptr<const HyperNodeTree> topology;         // never null from the cache
  std::shared_ptr<const StorageState> storage;           // never null from the cache
  api::Resources total;                                  // sum of allocatable over nodes
  uint64_t generation = 0;
};

}  // namespace tephra::scheduler
