// A scheduling session: one pass of the configured actions over one snapshot.
//
// Opening a session copies the snapshot's pointers; nodes and jobs are copied only when an
// action first changes them (copy-on-write), so an unchanged cluster costs almost nothing.
// Plugins register callbacks per extension point; the Session combines them by tier with
// Volcano's rules (docs/compatibility.md §4.5) and exposes the combined answers to actions.
#pragma once

#include <array>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/clock.h"
#include "scheduler/framework/conf.h"
#include "scheduler/framework/interfaces.h"
#include "scheduler/model/model.h"

namespace tephra::scheduler {

class Registry;

// Why one pending task could not be placed this session: reason → number of nodes.
struct FitErrors {
  std::vector<std::pair<const char*, int>> by_reason;
  int nodes = 0;  // nodes examined
  std::string other;  // a reason not tied to nodes (queue overused, gang rule, ...)

  void Add(const char* reason);
  // "0/4 nodes are available: 3 Insufficient cpu, 1 node(s) had untolerated taint"
  std::string ToString() const;
};

// What the session concluded about a job, written back at close.
struct JobConditionOut {
  std::string type;  // Unschedulable or Scheduled
  std::string status;
  std::string reason;
  std::string message;
};

// What a plugin or action noted about a job that its PodGroup condition does not carry: why it
// was not admitted, why its queue sat out the session. Read by explanations (scheduler/explain).
struct JobNote {
  std::string plugin;
  std::string message;
  std::string hint;  // what would have to change, when the plugin knows
};
inline constexpr size_t kMaxJobNotes = 4;

// A share plugin's (proportion, capacity) figures for one queue at session close.
struct QueueShareReport {
  std::string plugin;
  api::Resources deserved;
  api::Resources allocated;
  api::Resources real_capability;
  api::Resources inqueue;  // minResources of admitted jobs not started yet
  double share = 0;
};

struct SessionOptions {
  std::string uid;  // session id (condition transitionID)
  Binder* binder = nullptr;
  Evictor* evictor = nullptr;
  base::ClockInterface* clock = nullptr;
  // Volcano's node sampling: find at least this many feasible nodes (or this percentage of
  // nodes; 0 = adaptive 50 - N/125, floored at minimum_percentage).
  int minimum_feasible_nodes = 100;
  int minimum_percentage_nodes_to_find = 5;
  int percentage_nodes_to_find = 0;
};

class Session {
 public:
  Session(std::shared_ptr<const Snapshot> snapshot, const SchedulerConf& conf,
          const Registry& registry, SessionOptions options);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Instantiates the configured plugins and lets them register (OnSessionOpen).
  void Open();
  // Plugins' OnSessionClose; then the results below are final.
  void Close();

  const SchedulerConf& conf() const { return conf_; }
  const SessionOptions& options() const { return options_; }
  const std::string& uid() const { return options_.uid; }
  base::Time Now() const;

  // ---- the cluster as this session sees it ----
  size_t node_count() const { return nodes_.size(); }
  const NodeInfo& node(size_t i) const { return *nodes_[i]; }
  std::optional<size_t> NodeIndex(const std::string& name) const;
  size_t job_count() const { return jobs_.size(); }
  const JobInfo& job(size_t i) const { return *jobs_[i]; }
  std::optional<size_t> JobIndex(const JobId& id) const;
  const std::map<std::string, std::shared_ptr<const QueueInfo>>& queues() const {
    return snapshot_->queues;
  }
  const QueueInfo* queue(const std::string& name) const;
  const api::Resources& total_resource() const { return snapshot_->total; }
  const Snapshot& snapshot() const { return *snapshot_; }
  const std::map<std::string, std::string>* NamespaceLabels(const std::string& ns) const;
  // How many feasible nodes allocate should look for among `n` nodes.
  size_t NodesToFind(size_t n) const;

  // ---- registration (plugins, in OnSessionOpen) ----
  void AddJobOrderFn(std::string_view plugin, JobCompareFn fn);
  void AddQueueOrderFn(std::string_view plugin, QueueCompareFn fn);
  void AddTaskOrderFn(std::string_view plugin, TaskCompareFn fn);
  void AddPredicateFn(std::string_view plugin, PredicateFn fn);
  // A predicate whose answer depends only on the task's SchedulingSpec and the node's labels,
  // taints and schedulability: the session computes it once per (spec, node) and caches it.
  void AddStaticPredicateFn(std::string_view plugin, PredicateFn fn);
  void AddNodeOrderFn(std::string_view plugin, NodeOrderFn fn);
  void AddBatchNodeOrderFn(std::string_view plugin, BatchNodeOrderFn fn);
  void AddJobValidFn(std::string_view plugin, JobValidFn fn);
  void AddJobReadyFn(std::string_view plugin, JobPredicateFn fn);
  void AddJobPipelinedFn(std::string_view plugin, JobVoteFn fn);
  void AddJobEnqueueableFn(std::string_view plugin, JobVoteFn fn);
  void AddJobEnqueuedFn(std::string_view plugin, JobNotifyFn fn);
  void AddJobStarvingFn(std::string_view plugin, JobPredicateFn fn);
  void AddOverusedFn(std::string_view plugin, QueuePredicateFn fn);
  void AddAllocatableFn(std::string_view plugin, QueueTaskPredicateFn fn);
  void AddPreemptiveFn(std::string_view plugin, QueueTaskPredicateFn fn);
  void AddPreemptableFn(std::string_view plugin, VictimsFn fn);
  void AddReclaimableFn(std::string_view plugin, VictimsFn fn);
  // Safety rules (gang, conformance, pdb) that can only veto victims. They apply to whatever
  // the deciding tier chose and never decide alone, so where they sit in the tiers cannot hide
  // another plugin's rule (in Volcano, gang in tier 1 silenced proportion's reclaim rule
  // unless gang's enablePreemptable/enableReclaimable were turned off).
  void AddPreemptableVetoFn(std::string_view plugin, VictimsFn fn);
  void AddReclaimableVetoFn(std::string_view plugin, VictimsFn fn);
  void AddEventHandler(std::string_view plugin, EventHandler handler);

  // ---- combined answers (actions) ----
  // Orders: true when l goes before r.
  bool JobOrder(const JobInfo& l, const JobInfo& r) const;
  bool QueueOrder(const QueueInfo& l, const QueueInfo& r) const;
  bool TaskOrder(const TaskInfo& l, const TaskInfo& r) const;
  // What the TaskOrder plugins alone say: < 0 when l goes first, 0 when they have no opinion.
  int CompareTasksByPlugins(const TaskInfo& l, const TaskInfo& r) const;
  Fit Predicate(const TaskInfo& task, const NodeInfo& node) const;
  // The same answer for node `node_index`, with static predicates served from the cache.
  Fit PredicateAt(const TaskInfo& task, size_t node_index);
  bool HasNodeOrder() const;
  // Total score of each node for the task (NodeOrder + BatchNodeOrder over all tiers).
  void NodeScores(const TaskInfo& task, const std::vector<const NodeInfo*>& nodes,
                  std::vector<double>* scores) const;
  // The same, split: per-node scores (which change when the node changes) and batch scores
  // (normalised over the candidate set).
  void NodeScoresSplit(const TaskInfo& task, const std::vector<const NodeInfo*>& nodes,
                       std::vector<double>* per_node, std::vector<double>* batch) const;
  // The per-node part for one node.
  double NodeOrderScore(const TaskInfo& task, const NodeInfo& node) const;
  ValidateResult JobValid(const JobInfo& job) const;
  bool JobReady(const JobInfo& job) const;
  bool JobPipelined(const JobInfo& job) const;
  bool JobEnqueueable(const JobInfo& job) const;
  // The same vote, with `credit`: resources the job could take by preempting lower-priority
  // tasks of its own queue. Plugins that count the cluster's or the queue's usage read it
  // through AdmissionCredit() and treat it as free.
  bool JobEnqueueable(const JobInfo& job, const api::Resources& credit);
  // During a JobEnqueueable vote: the credit it was given (empty otherwise).
  const api::Resources& AdmissionCredit() const { return admission_credit_; }
  void JobEnqueued(const JobInfo& job) const;
  bool JobStarving(const JobInfo& job) const;
  bool Overused(const QueueInfo& queue) const;
  bool Allocatable(const QueueInfo& queue, const TaskInfo& task) const;
  bool Preemptive(const QueueInfo& queue, const TaskInfo& task) const;
  std::vector<const TaskInfo*> Preemptable(const TaskInfo& preemptor,
                                           const std::vector<const TaskInfo*>& candidates) const;
  std::vector<const TaskInfo*> Reclaimable(const TaskInfo& preemptor,
                                           const std::vector<const TaskInfo*>& candidates) const;

  // ---- state changes (through a Statement) ----
  // Each takes effect at once in this session (task status, node accounting, plugin event
  // handlers) and is undone by the matching Undo call.
  Status Allocate(size_t job, const std::string& uid, size_t node);
  Status Pipeline(size_t job, const std::string& uid, size_t node);
  Status Evict(size_t job, const std::string& uid);
  void Unallocate(size_t job, const std::string& uid, size_t node);  // undo Allocate/Pipeline
  void Unevict(size_t job, const std::string& uid, TaskStatus previous);

  // The PodGroup phase the session decided (enqueue: Inqueue).
  void SetJobPhase(size_t job, api::PodGroupPhase phase);
  void RecordFitErrors(size_t job, const std::string& uid, FitErrors errors);
  const std::unordered_map<std::string, FitErrors>* JobFitErrors(size_t job) const;
  void SetJobCondition(size_t job, JobConditionOut condition);
  const std::optional<JobConditionOut>& JobCondition(size_t job) const;
  // Jobs an action touched (allocation, phase change, fit errors, condition).
  const std::vector<bool>& touched_jobs() const { return touched_; }
  // Changes so far to node i in this session (including rolled-back ones): lets an action
  // keep per-node conclusions across calls and redo only the nodes that changed.
  uint64_t NodeVersion(size_t i) const { return node_version_[i]; }

  // ---- for explanations (cheap: written only on the paths that refuse something) ----
  // Keeps the first kMaxJobNotes notes per job.
  void AddJobNote(size_t job, JobNote note);
  const std::vector<JobNote>* JobNotes(size_t job) const;
  void ClearJobNotes(size_t job) { notes_.erase(job); }
  // The tasks of `job` a statement placed and then withdrew because the gang did not fit (the
  // largest such set this session; null when none).
  const std::vector<std::string>* JobWithdrawn(size_t job) const;
  void ReportQueueShare(const std::string& queue, QueueShareReport report);
  const std::map<std::string, QueueShareReport>& queue_shares() const { return queue_shares_; }
  const std::shared_ptr<const Snapshot>& snapshot_ptr() const { return snapshot_; }

  Binder* binder() const { return options_.binder; }
  Evictor* evictor() const { return options_.evictor; }

 private:
  template <typename Fn>
  struct Registered {
    std::string plugin;
    Fn fn;
  };
  template <typename Fn>
  using Tiered = std::vector<std::vector<Fn>>;  // enabled fns per tier, in plugin order

  NodeInfo& MutableNode(size_t i);
  JobInfo& MutableJob(size_t i);
  // Builds per-tier lists of the enabled callbacks, once all plugins have registered.
  void Compile();
  template <typename Fn>
  Tiered<Fn> ByTier(const std::vector<Registered<Fn>>& registered, ExtensionPoint point) const;
  void FireAllocate(const TaskInfo& task, const std::string& node);
  void FireDeallocate(const TaskInfo& task, const std::string& node);
  friend class Statement;
  void NoteWithdrawn(size_t job, std::vector<std::string> uids);

  std::shared_ptr<const Snapshot> snapshot_;
  const SchedulerConf& conf_;
  const Registry& registry_;
  SessionOptions options_;
  std::vector<std::unique_ptr<Plugin>> plugins_;

  std::vector<std::shared_ptr<const NodeInfo>> nodes_;
  std::vector<bool> node_owned_;  // nodes_[i] is this session's own copy
  std::vector<uint64_t> node_version_;
  std::unordered_map<std::string, size_t> node_index_;
  std::vector<std::shared_ptr<const JobInfo>> jobs_;
  std::vector<bool> job_owned_;
  std::unordered_map<JobId, size_t> job_index_;
  std::vector<bool> touched_;
  std::vector<std::unordered_map<std::string, FitErrors>> fit_errors_;  // per job
  std::vector<std::optional<JobConditionOut>> conditions_;               // per job
  std::unordered_map<size_t, std::vector<JobNote>> notes_;               // by job index
  std::unordered_map<size_t, std::vector<std::string>> withdrawn_;       // by job index
  std::map<std::string, QueueShareReport> queue_shares_;
  api::Resources admission_credit_;  // set only during JobEnqueueable(job, credit)

  // Registrations (by plugin) and their compiled, tiered forms.
  std::vector<Registered<JobCompareFn>> job_order_;
  std::vector<Registered<QueueCompareFn>> queue_order_;
  std::vector<Registered<TaskCompareFn>> task_order_;
  std::vector<Registered<PredicateFn>> predicate_;
  std::vector<Registered<PredicateFn>> static_predicate_;
  std::vector<Registered<NodeOrderFn>> node_order_;
  std::vector<Registered<BatchNodeOrderFn>> batch_node_order_;
  std::vector<Registered<JobValidFn>> job_valid_;
  std::vector<Registered<JobPredicateFn>> job_ready_;
  std::vector<Registered<JobVoteFn>> job_pipelined_;
  std::vector<Registered<JobVoteFn>> job_enqueueable_;
  std::vector<Registered<JobNotifyFn>> job_enqueued_;
  std::vector<Registered<JobPredicateFn>> job_starving_;
  std::vector<Registered<QueuePredicateFn>> overused_;
  std::vector<Registered<QueueTaskPredicateFn>> allocatable_;
  std::vector<Registered<QueueTaskPredicateFn>> preemptive_;
  std::vector<Registered<VictimsFn>> preemptable_;
  std::vector<Registered<VictimsFn>> reclaimable_;
  std::vector<Registered<VictimsFn>> preemptable_veto_;
  std::vector<Registered<VictimsFn>> reclaimable_veto_;
  std::vector<Registered<EventHandler>> handlers_;

  Tiered<JobCompareFn> c_job_order_;
  Tiered<QueueCompareFn> c_queue_order_;
  Tiered<TaskCompareFn> c_task_order_;
  Tiered<PredicateFn> c_predicate_;
  Tiered<PredicateFn> c_static_predicate_;
  // Static predicate results: spec → per node 0 unknown, 1 fit, 2+k failed with reason k.
  std::unordered_map<const SchedulingSpec*, std::vector<uint8_t>> static_fit_;
  std::vector<Fit> static_failures_;  // reason k
  Tiered<NodeOrderFn> c_node_order_;
  Tiered<BatchNodeOrderFn> c_batch_node_order_;
  Tiered<JobValidFn> c_job_valid_;
  Tiered<JobPredicateFn> c_job_ready_;
  Tiered<JobVoteFn> c_job_pipelined_;
  Tiered<JobVoteFn> c_job_enqueueable_;
  Tiered<JobNotifyFn> c_job_enqueued_;
  Tiered<JobPredicateFn> c_job_starving_;
  Tiered<QueuePredicateFn> c_overused_;
  Tiered<QueueTaskPredicateFn> c_allocatable_;
  Tiered<QueueTaskPredicateFn> c_preemptive_;
  Tiered<VictimsFn> c_preemptable_;
  Tiered<VictimsFn> c_reclaimable_;
  Tiered<VictimsFn> c_preemptable_veto_;
  Tiered<VictimsFn> c_reclaimable_veto_;
  std::vector<EventHandler> c_handlers_;
};

// An ordered list of session changes, applied at once and then either committed (binds and
// evictions leave the scheduler) or discarded (every change undone in reverse order). A
// Statement that goes out of scope uncommitted discards itself.
class Statement {
 public:
  explicit Statement(Session& session) : session_(session) {}
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Status Allocate(size_t job, const std::string& uid, size_t node);
  Status Pipeline(size_t job, const std::string& uid, size_t node);
  Status Evict(size_t job, const std::string& uid, const std::string& reason);
  void Commit();
  void Discard();
  // Neither: the changes stay in this session (a pipelined gang keeps its earmarked
  // resources) and nothing leaves the scheduler.
  void Keep() { done_ = true; }
  // Moves `other`'s operations to the end of this statement (a sub-plan that worked).
  void Merge(Statement& other);
  // Evictions in this statement, as (job, uid).
  std::vector<std::pair<size_t, std::string>> Evictions() const;
  bool empty() const { return ops_.empty(); }
  size_t size() const { return ops_.size(); }

 private:
  enum class Kind { kAllocate, kPipeline, kEvict };
  struct Op {
    Kind kind;
    size_t job;
    std::string uid;
    size_t node;
    TaskStatus previous;
    std::string reason;
  };
  Session& session_;
  std::vector<Op> ops_;
  bool done_ = false;
};

}  // namespace tephra::scheduler
