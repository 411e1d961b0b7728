// The plugins' callbacks of one session and the answers they combine to.
//
// Each callback is kept once, in the tier of its plugin and in the configured order of the
// plugins within the tier, and only where the configuration enables the plugin for that
// extension point. The combined answers follow Volcano's tier rules (docs/scheduler.md).
#pragma once

#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "scheduler/framework/conf.h"
#include "scheduler/framework/interfaces.h"

namespace tephra::scheduler {

// Callbacks by tier, each tier in the configured order of the plugins that registered them.
// Tiers after the last one with a callback are left out (an empty tier decides nothing).
template <typename Fn>
class TieredHooks {
 public:
  // Adds `fn` to `tier` after every callback of plugins at or before `position`.
  void Insert(size_t tier, uint32_t position, Fn fn) {
    if (tier >= fns_.size()) {
      fns_.resize(tier + 1);
      positions_.resize(tier + 1);
    }
    std::vector<uint32_t>& positions = positions_[tier];
    size_t at = positions.size();
    while (at > 0 && positions[at - 1] > position) --at;
    positions.insert(positions.begin() + static_cast<std::ptrdiff_t>(at), position);
    fns_[tier].insert(fns_[tier].begin() + static_cast<std::ptrdiff_t>(at), std::move(fn));
  }
  const std::vector<std::vector<Fn>>& tiers() const { return fns_; }
  bool empty() const {
    for (const auto& tier : fns_) {
      if (!tier.empty()) return false;
    }
    return true;
  }

 private:
  std::vector<std::vector<Fn>> fns_;
  std::vector<std::vector<uint32_t>> positions_;  // plugin position in the configuration
};

class Hooks {
 public:
  explicit Hooks(const SchedulerConf& conf);
  Hooks(const Hooks&) = delete;
  Hooks& operator=(const Hooks&) = delete;

  // ---- registration (plugins, in OnSessionOpen; see Session) ----
  void AddJobOrderFn(std::string_view plugin, JobCompareFn fn);
  void AddQueueOrderFn(std::string_view plugin, QueueCompareFn fn);
  void AddTaskOrderFn(std::string_view plugin, TaskCompareFn fn);
  void AddPredicateFn(std::string_view plugin, PredicateFn fn);
  void AddStaticPredicateFn(std::string_view plugin, PredicateFn fn);
  void AddNodeOrderFn(std::string_view plugin, NodeOrderFn fn);
  void AddBatchNodeOrderFn(std::string_view plugin, BatchNodeOrderFn fn);
  void AddJobValidFn(std::string_view plugin, JobValidFn fn);
  void AddJobReadyFn(std::string_view plugin, JobPredicateFn fn);
  void AddJobPipelinedFn(std::string_view plugin, JobVoteFn fn);
  void AddJobEnqueueableFn(std::string_view plugin, JobEnqueueableFn fn);
  void AddJobEnqueuedFn(std::string_view plugin, JobNotifyFn fn);
  void AddJobStarvingFn(std::string_view plugin, JobPredicateFn fn);
  void AddOverusedFn(std::string_view plugin, QueuePredicateFn fn);
  void AddAllocatableFn(std::string_view plugin, QueueTaskPredicateFn fn);
  void AddPreemptiveFn(std::string_view plugin, QueueTaskPredicateFn fn);
  void AddPreemptableFn(std::string_view plugin, VictimsFn fn);
  void AddReclaimableFn(std::string_view plugin, VictimsFn fn);
  void AddPreemptableVetoFn(std::string_view plugin, VictimsFn fn);
  void AddReclaimableVetoFn(std::string_view plugin, VictimsFn fn);
  void AddEventHandler(std::string_view plugin, EventHandler handler);
  void AddHyperNodeOrderFn(std::string_view plugin, HyperNodeOrderFn fn);
  void AddPreBindFn(std::string_view plugin, PreBindFn fn);

  // ---- combined answers (see Session for each) ----
  bool JobOrder(const JobInfo& l, const JobInfo& r) const;
  bool QueueOrder(const QueueInfo& l, const QueueInfo& r) const;
  bool TaskOrder(const TaskInfo& l, const TaskInfo& r) const;
  int CompareTasksByPlugins(const TaskInfo& l, const TaskInfo& r) const;
  Fit Predicate(const TaskInfo& task, const NodeInfo& node) const;
  // The same answer for `node`, number `node_index` of `node_count`, with static predicates
  // served from a cache kept per (SchedulingSpec, node index).
  Fit PredicateAt(const TaskInfo& task, const NodeInfo& node, size_t node_index, size_t node_count);
  bool HasNodeOrder() const;
  void NodeScores(const TaskInfo& task, const std::vector<const NodeInfo*>& nodes,
                  std::vector<double>* scores) const;
  void NodeScoresSplit(const TaskInfo& task, const std::vector<const NodeInfo*>& nodes,
                       std::vector<double>* per_node, std::vector<double>* batch) const;
  double NodeOrderScore(const TaskInfo& task, const NodeInfo& node) const;
  ValidateResult JobValid(const JobInfo& job) const;
  bool JobReady(const JobInfo& job) const;
  bool JobPipelined(const JobInfo& job) const;
  bool JobEnqueueable(const JobInfo& job, const api::Resources& credit) const;
  void JobEnqueued(const JobInfo& job) const;
  bool JobStarving(const JobInfo& job) const;
  bool Overused(const QueueInfo& queue) const;
  bool Allocatable(const QueueInfo& queue, const TaskInfo& task) const;
  bool Preemptive(const QueueInfo& queue, const TaskInfo& task) const;
  bool HasHyperNodeOrder() const { return !hypernode_order_.empty(); }
  double HyperNodeScore(const JobInfo& job, const HyperNodeTrial& trial) const;
  std::vector<PreBindStep> PreBind(const TaskInfo& task, const std::string& node) const;
  std::vector<const TaskInfo*> Preemptable(const TaskInfo& preemptor,
                                           const std::vector<const TaskInfo*>& candidates) const;
  std::vector<const TaskInfo*> Reclaimable(const TaskInfo& preemptor,
                                           const std::vector<const TaskInfo*>& candidates) const;

  // ---- allocation events, to every plugin's handlers ----
  void FireAllocate(const TaskInfo& task, const std::string& node) const;
  void FireDeallocate(const TaskInfo& task, const std::string& node) const;

 private:
  // Where a configured plugin sits: its tier, its position over all tiers, its switches.
  struct Slot {
    size_t tier;
    uint32_t position;
    const PluginOption* option;
  };
  // Adds `fn` wherever `plugin` is configured and enabled for `point`.
  template <typename Fn>
  void Add(std::string_view plugin, ExtensionPoint point, Fn fn, TieredHooks<Fn>& into);
  // Adds `fn` wherever `plugin` is configured, all in one tier (not switchable, as in Volcano).
  template <typename Fn>
  void AddUnswitchable(std::string_view plugin, Fn fn, TieredHooks<Fn>& into);

  std::unordered_multimap<std::string_view, Slot> slots_;  // by plugin name

  TieredHooks<JobCompareFn> job_order_;
  TieredHooks<QueueCompareFn> queue_order_;
  TieredHooks<TaskCompareFn> task_order_;
  TieredHooks<PredicateFn> predicate_;
  TieredHooks<PredicateFn> static_predicate_;
  TieredHooks<NodeOrderFn> node_order_;
  TieredHooks<BatchNodeOrderFn> batch_node_order_;
  TieredHooks<JobValidFn> job_valid_;  // one tier
  TieredHooks<JobPredicateFn> job_ready_;
  TieredHooks<JobVoteFn> job_pipelined_;
  TieredHooks<JobEnqueueableFn> job_enqueueable_;
  TieredHooks<JobNotifyFn> job_enqueued_;
  TieredHooks<JobPredicateFn> job_starving_;
  TieredHooks<QueuePredicateFn> overused_;
  TieredHooks<QueueTaskPredicateFn> allocatable_;
  TieredHooks<QueueTaskPredicateFn> preemptive_;
  TieredHooks<VictimsFn> preemptable_;
  TieredHooks<VictimsFn> reclaimable_;
  TieredHooks<VictimsFn> preemptable_veto_;
  TieredHooks<VictimsFn> reclaimable_veto_;
  TieredHooks<EventHandler> handlers_;  // one tier
  TieredHooks<HyperNodeOrderFn> hypernode_order_;
  TieredHooks<PreBindFn> pre_bind_;  // one tier

  // Static predicate results: spec → per node 0 unknown, 1 fit, 2+k failed with reason k.
  std::unordered_map<const SchedulingSpec*, std::vector<uint8_t>> static_fit_;
  std::vector<Fit> static_failures_;  // reason k
};

}  // namespace tephra::scheduler
