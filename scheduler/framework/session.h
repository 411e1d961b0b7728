// A scheduling session: one pass of the configured actions over one snapshot.
//
// The Session is the face plugins and actions see; it composes three parts:
//  * Hooks (hooks.h): the callbacks plugins register per extension point, combined by tier
//    as docs/scheduler.md describes, into the answers actions ask for;
//  * ClusterView (cluster_view.h): the snapshot with this session's changes, copy-on-write;
//  * Journal (journal.h): what the session decided beyond the cluster state (conditions, fit
//    errors, notes), read at close.
// A change (Allocate, Evict, ...) updates the view, tells the plugins' event handlers and
// marks the job touched in the journal.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/clock.h"
#include "scheduler/framework/cluster_view.h"
#include "scheduler/framework/conf.h"
#include "scheduler/framework/hooks.h"
#include "scheduler/framework/interfaces.h"
#include "scheduler/framework/journal.h"
#include "scheduler/framework/topology_view.h"
#include "scheduler/model/model.h"

namespace tephra::scheduler {

class Registry;

// Volcano's node sampling: find at least minimum_feasible_nodes feasible nodes, or
// percentage_nodes_to_find percent of the nodes (0 = adaptive 50 - N/125, floored at
// minimum_percentage_nodes_to_find). The one home of these defaults: the scheduler's flags, the
// admin API and snapshot documents hold this struct, so a replay samples as the live session did.
struct NodeSampling {
  int minimum_feasible_nodes = 100;
  int minimum_percentage_nodes_to_find = 5;
  int percentage_nodes_to_find = 0;
};

struct SessionOptions {
  std::string uid;  // session id (condition transitionID)
  Binder* binder = nullptr;
  Evictor* evictor = nullptr;
  base::ClockInterface* clock = nullptr;
  NodeSampling sampling;
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

  // ---- the cluster as this session sees it (ClusterView) ----
  size_t node_count() const { return view_.node_count(); }
  const NodeInfo& node(size_t i) const { return view_.node(i); }
  std::optional<size_t> NodeIndex(const std::string& name) const { return view_.NodeIndex(name); }
  size_t job_count() const { return view_.job_count(); }
  const JobInfo& job(size_t i) const { return view_.job(i); }
  std::optional<size_t> JobIndex(const JobId& id) const { return view_.JobIndex(id); }
  const std::map<std::string, std::shared_ptr<const QueueInfo>>& queues() const {
    return view_.queues();
  }
  const QueueInfo* queue(const std::string& name) const { return view_.queue(name); }
  const api::Resources& total_resource() const { return view_.total_resource(); }
  const Snapshot& snapshot() const { return view_.snapshot(); }
  const std::map<std::string, std::string>* NamespaceLabels(const std::string& ns) const {
    return view_.NamespaceLabels(ns);
  }
  // How many feasible nodes allocate should look for among `n` nodes.
  size_t NodesToFind(size_t n) const;

  // ---- registration (plugins, in OnSessionOpen; Hooks) ----
  void AddJobOrderFn(std::string_view plugin, JobCompareFn fn) {
    hooks_.AddJobOrderFn(plugin, std::move(fn));
  }
  void AddQueueOrderFn(std::string_view plugin, QueueCompareFn fn) {
    hooks_.AddQueueOrderFn(plugin, std::move(fn));
  }
  void AddTaskOrderFn(std::string_view plugin, TaskCompareFn fn) {
    hooks_.AddTaskOrderFn(plugin, std::move(fn));
  }
  void AddPredicateFn(std::string_view plugin, PredicateFn fn) {
    hooks_.AddPredicateFn(plugin, std::move(fn));
  }
  // A predicate whose answer depends only on the task's SchedulingSpec and the node's labels,
  // taints and schedulability: the session computes it once per (spec, node) and caches it.
  void AddStaticPredicateFn(std::string_view plugin, PredicateFn fn) {
    hooks_.AddStaticPredicateFn(plugin, std::move(fn));
  }
  void AddNodeOrderFn(std::string_view plugin, NodeOrderFn fn) {
    hooks_.AddNodeOrderFn(plugin, std::move(fn));
  }
  void AddBatchNodeOrderFn(std::string_view plugin, BatchNodeOrderFn fn) {
    hooks_.AddBatchNodeOrderFn(plugin, std::move(fn));
  }
  void AddJobValidFn(std::string_view plugin, JobValidFn fn) {
    hooks_.AddJobValidFn(plugin, std::move(fn));
  }
  void AddJobReadyFn(std::string_view plugin, JobPredicateFn fn) {
    hooks_.AddJobReadyFn(plugin, std::move(fn));
  }
  void AddJobPipelinedFn(std::string_view plugin, JobVoteFn fn) {
    hooks_.AddJobPipelinedFn(plugin, std::move(fn));
  }
  void AddJobEnqueueableFn(std::string_view plugin, JobEnqueueableFn fn) {
    hooks_.AddJobEnqueueableFn(plugin, std::move(fn));
  }
  void AddJobEnqueuedFn(std::string_view plugin, JobNotifyFn fn) {
    hooks_.AddJobEnqueuedFn(plugin, std::move(fn));
  }
  void AddJobStarvingFn(std::string_view plugin, JobPredicateFn fn) {
    hooks_.AddJobStarvingFn(plugin, std::move(fn));
  }
  void AddOverusedFn(std::string_view plugin, QueuePredicateFn fn) {
    hooks_.AddOverusedFn(plugin, std::move(fn));
  }
  void AddAllocatableFn(std::string_view plugin, QueueTaskPredicateFn fn) {
    hooks_.AddAllocatableFn(plugin, std::move(fn));
  }
  void AddPreemptiveFn(std::string_view plugin, QueueTaskPredicateFn fn) {
    hooks_.AddPreemptiveFn(plugin, std::move(fn));
  }
  void AddPreemptableFn(std::string_view plugin, VictimsFn fn) {
    hooks_.AddPreemptableFn(plugin, std::move(fn));
  }
  void AddReclaimableFn(std::string_view plugin, VictimsFn fn) {
    hooks_.AddReclaimableFn(plugin, std::move(fn));
  }
  // Safety rules (gang, conformance, pdb) that can only veto victims. They apply to whatever
  // the deciding tier chose and never decide alone, so where they sit in the tiers cannot hide
  // another plugin's rule (in Volcano, gang in tier 1 silenced proportion's reclaim rule
  // unless gang's enablePreemptable/enableReclaimable were turned off).
  void AddPreemptableVetoFn(std::string_view plugin, VictimsFn fn) {
    hooks_.AddPreemptableVetoFn(plugin, std::move(fn));
  }
  void AddReclaimableVetoFn(std::string_view plugin, VictimsFn fn) {
    hooks_.AddReclaimableVetoFn(plugin, std::move(fn));
  }
  void AddEventHandler(std::string_view plugin, EventHandler handler) {
    hooks_.AddEventHandler(plugin, std::move(handler));
  }
  void AddHyperNodeOrderFn(std::string_view plugin, HyperNodeOrderFn fn) {
    hooks_.AddHyperNodeOrderFn(plugin, std::move(fn));
  }
  // Writes that must complete before a committed task is bound (a claim's volume binding),
  // asked once per task at commit; the binder carries them out (docs/scheduler.md, "Storage").
  void AddPreBindFn(std::string_view plugin, PreBindFn fn) {
    hooks_.AddPreBindFn(plugin, std::move(fn));
  }

  // ---- combined answers (actions; Hooks) ----
  // Orders: true when l goes before r.
  bool JobOrder(const JobInfo& l, const JobInfo& r) const { return hooks_.JobOrder(l, r); }
  bool QueueOrder(const QueueInfo& l, const QueueInfo& r) const { return hooks_.QueueOrder(l, r); }
  bool TaskOrder(const TaskInfo& l, const TaskInfo& r) const { return hooks_.TaskOrder(l, r); }
  // What the TaskOrder plugins alone say: < 0 when l goes first, 0 when they have no opinion.
  int CompareTasksByPlugins(const TaskInfo& l, const TaskInfo& r) const {
    return hooks_.CompareTasksByPlugins(l, r);
  }
  Fit Predicate(const TaskInfo& task, const NodeInfo& node) const {
    return hooks_.Predicate(task, node);
  }
  // The same answer for node `node_index`, with static predicates served from the cache.
  Fit PredicateAt(const TaskInfo& task, size_t node_index) {
    return hooks_.PredicateAt(task, view_.node(node_index), node_index, view_.node_count());
  }
  bool HasNodeOrder() const { return hooks_.HasNodeOrder(); }
  // Total score of each node for the task (NodeOrder + BatchNodeOrder over all tiers).
  void NodeScores(const TaskInfo& task, const std::vector<const NodeInfo*>& nodes,
                  std::vector<double>* scores) const {
    hooks_.NodeScores(task, nodes, scores);
  }
  // The same, split: per-node scores (which change when the node changes) and batch scores
  // (normalised over the candidate set).
  void NodeScoresSplit(const TaskInfo& task, const std::vector<const NodeInfo*>& nodes,
                       std::vector<double>* per_node, std::vector<double>* batch) const {
    hooks_.NodeScoresSplit(task, nodes, per_node, batch);
  }
  // The per-node part for one node.
  double NodeOrderScore(const TaskInfo& task, const NodeInfo& node) const {
    return hooks_.NodeOrderScore(task, node);
  }
  ValidateResult JobValid(const JobInfo& job) const { return hooks_.JobValid(job); }
  bool JobReady(const JobInfo& job) const { return hooks_.JobReady(job); }
  bool JobPipelined(const JobInfo& job) const { return hooks_.JobPipelined(job); }
  bool JobEnqueueable(const JobInfo& job) const {
    return hooks_.JobEnqueueable(job, api::Resources());
  }
  // The same vote, with `credit`: resources the job could take by preempting lower-priority
  // tasks of its own queue, which the plugins' votes (JobEnqueueableFn) treat as free. Notes
  // the plugins leave on the job during such a vote are dropped: measured against a limit the
  // credit inflated, they would restate the first vote's refusal less clearly.
  bool JobEnqueueable(const JobInfo& job, const api::Resources& credit);
  void JobEnqueued(const JobInfo& job) const { hooks_.JobEnqueued(job); }
  bool JobStarving(const JobInfo& job) const { return hooks_.JobStarving(job); }
  bool Overused(const QueueInfo& queue) const { return hooks_.Overused(queue); }
  bool Allocatable(const QueueInfo& queue, const TaskInfo& task) const {
    return hooks_.Allocatable(queue, task);
  }
  bool Preemptive(const QueueInfo& queue, const TaskInfo& task) const {
    return hooks_.Preemptive(queue, task);
  }
  std::vector<const TaskInfo*> Preemptable(const TaskInfo& preemptor,
                                           const std::vector<const TaskInfo*>& candidates) const {
    return hooks_.Preemptable(preemptor, candidates);
  }
  std::vector<const TaskInfo*> Reclaimable(const TaskInfo& preemptor,
                                           const std::vector<const TaskInfo*>& candidates) const {
    return hooks_.Reclaimable(preemptor, candidates);
  }
  // Whether jobs with a network topology are placed by it: a plugin (network-topology-aware)
  // scores HyperNodes. Without one, allocate places them as if they had none.
  bool TopologyAware() const { return hooks_.HasHyperNodeOrder(); }
  double HyperNodeScore(const JobInfo& job, const HyperNodeTrial& trial) const {
    return hooks_.HyperNodeScore(job, trial);
  }
  // Every plugin's pre-bind steps for `task` bound to `node`.
  std::vector<PreBindStep> PreBindSteps(const TaskInfo& task, const std::string& node) const {
    return hooks_.PreBind(task, node);
  }
  // The snapshot's storage (never null: empty when the snapshot has none).
  const StorageState& storage() const;
  // The snapshot's HyperNodes over this session's nodes (built on first use).
  const TopologyView& topology() const;
  // The nodes (ascending indexes) job j's tasks are placed on (HoldsPlace).
  std::vector<size_t> NodesHeldBy(size_t job) const;
  // The lowest real HyperNode holding every node job j holds, for its PodGroup's
  // volcano.sh/job-allocated-hypernode annotation; null when it holds none, or only the whole
  // cluster does.
  const HyperNodeInfo* OccupiedHyperNode(size_t job) const;

  // ---- state changes (through a Statement) ----
  // Each takes effect at once in this session (task status, node accounting, plugin event
  // handlers) and is undone by the matching Undo call.
  Status Allocate(size_t job, const std::string& uid, size_t node);
  Status Pipeline(size_t job, const std::string& uid, size_t node);
  Status Evict(size_t job, const std::string& uid);
  void Unallocate(size_t job, const std::string& uid, size_t node);  // undo Allocate/Pipeline
  void Unevict(size_t job, const std::string& uid, TaskStatus previous);

  // ---- what the session decided (Journal) ----
  // The PodGroup phase the session decided (enqueue: Inqueue).
  void SetJobPhase(size_t job, api::PodGroupPhase phase);
  void RecordFitErrors(size_t job, const std::string& uid, FitErrors errors) {
    journal_.RecordFitErrors(job, uid, std::move(errors));
  }
  const std::unordered_map<std::string, FitErrors>* JobFitErrors(size_t job) const {
    return journal_.JobFitErrors(job);
  }
  void SetJobCondition(size_t job, JobConditionOut condition) {
    journal_.SetJobCondition(job, std::move(condition));
  }
  const std::optional<JobConditionOut>& JobCondition(size_t job) const {
    return journal_.JobCondition(job);
  }
  // Jobs an action touched (allocation, phase change, fit errors, condition).
  const std::vector<bool>& touched_jobs() const { return journal_.touched_jobs(); }
  // Changes so far to node i in this session (including rolled-back ones): lets an action
  // keep per-node conclusions across calls and redo only the nodes that changed.
  uint64_t NodeVersion(size_t i) const { return view_.NodeVersion(i); }

  // ---- for explanations (cheap: written only on the paths that refuse something) ----
  // Keeps the first kMaxJobNotes notes per job.
  void AddJobNote(size_t job, JobNote note) { journal_.AddJobNote(job, std::move(note)); }
  const std::vector<JobNote>* JobNotes(size_t job) const { return journal_.JobNotes(job); }
  void ClearJobNotes(size_t job) { journal_.ClearJobNotes(job); }
  // The tasks of `job` a statement placed and then withdrew because the gang did not fit (the
  // largest such set this session; null when none).
  const std::vector<std::string>* JobWithdrawn(size_t job) const {
    return journal_.JobWithdrawn(job);
  }
  void ReportQueueShare(const std::string& queue, QueueShareReport report) {
    journal_.ReportQueueShare(queue, std::move(report));
  }
  const std::map<std::string, QueueShareReport>& queue_shares() const {
    return journal_.queue_shares();
  }
  const std::shared_ptr<const Snapshot>& snapshot_ptr() const { return view_.snapshot_ptr(); }

  Binder* binder() const { return options_.binder; }
  Evictor* evictor() const { return options_.evictor; }

 private:
  friend class Statement;
  // Keeps the topology's sums over node `node` current.
  void NodeChanged(size_t node);
  void NoteWithdrawn(size_t job, std::vector<std::string> uids) {
    journal_.NoteWithdrawn(job, std::move(uids));
  }

  const SchedulerConf& conf_;
  const Registry& registry_;
  SessionOptions options_;
  std::vector<std::unique_ptr<Plugin>> plugins_;
  ClusterView view_;
  Journal journal_;
  Hooks hooks_;
  mutable std::unique_ptr<TopologyView> topology_;
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
  // Discard for a trial: every change undone, nothing noted as withdrawn (explanations).
  void Undo();
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
