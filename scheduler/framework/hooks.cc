#include "scheduler/framework/hooks.h"

#include <algorithm>
#include <unordered_set>

namespace tephra::scheduler {

Hooks::Hooks(const SchedulerConf& conf) {
  uint32_t position = 0;
  for (size_t t = 0; t < conf.tiers.size(); ++t) {
    for (const PluginOption& option : conf.tiers[t].plugins) {
      slots_.emplace(option.name, Slot{t, position++, &option});
    }
  }
}

// ---- registration ----

template <typename Fn>
void Hooks::Add(std::string_view plugin, ExtensionPoint point, Fn fn, TieredHooks<Fn>& into) {
  auto [begin, end] = slots_.equal_range(plugin);
  for (auto it = begin; it != end; ++it) {
    if (it->second.option->Enabled(point)) into.Insert(it->second.tier, it->second.position, fn);
  }
}

template <typename Fn>
void Hooks::AddUnswitchable(std::string_view plugin, Fn fn, TieredHooks<Fn>& into) {
  auto [begin, end] = slots_.equal_range(plugin);
  for (auto it = begin; it != end; ++it) into.Insert(0, it->second.position, fn);
}

#define TEPHRA_ADD_FN(Method, Into, Type, Point)             \
  void Hooks::Method(std::string_view plugin, Type fn) {     \
    Add(plugin, ExtensionPoint::Point, std::move(fn), Into); \
  }

TEPHRA_ADD_FN(AddJobOrderFn, job_order_, JobCompareFn, kJobOrder)
TEPHRA_ADD_FN(AddQueueOrderFn, queue_order_, QueueCompareFn, kQueueOrder)
TEPHRA_ADD_FN(AddTaskOrderFn, task_order_, TaskCompareFn, kTaskOrder)
TEPHRA_ADD_FN(AddPredicateFn, predicate_, PredicateFn, kPredicate)
TEPHRA_ADD_FN(AddStaticPredicateFn, static_predicate_, PredicateFn, kPredicate)
TEPHRA_ADD_FN(AddNodeOrderFn, node_order_, NodeOrderFn, kNodeOrder)
TEPHRA_ADD_FN(AddBatchNodeOrderFn, batch_node_order_, BatchNodeOrderFn, kNodeOrder)
TEPHRA_ADD_FN(AddJobReadyFn, job_ready_, JobPredicateFn, kJobReady)
TEPHRA_ADD_FN(AddJobPipelinedFn, job_pipelined_, JobVoteFn, kJobPipelined)
TEPHRA_ADD_FN(AddJobEnqueueableFn, job_enqueueable_, JobEnqueueableFn, kJobEnqueued)
TEPHRA_ADD_FN(AddJobEnqueuedFn, job_enqueued_, JobNotifyFn, kJobEnqueued)
TEPHRA_ADD_FN(AddJobStarvingFn, job_starving_, JobPredicateFn, kJobStarving)
TEPHRA_ADD_FN(AddOverusedFn, overused_, QueuePredicateFn, kOverused)
TEPHRA_ADD_FN(AddAllocatableFn, allocatable_, QueueTaskPredicateFn, kAllocatable)
TEPHRA_ADD_FN(AddPreemptiveFn, preemptive_, QueueTaskPredicateFn, kPreemptive)
TEPHRA_ADD_FN(AddPreemptableFn, preemptable_, VictimsFn, kPreemptable)
TEPHRA_ADD_FN(AddReclaimableFn, reclaimable_, VictimsFn, kReclaimable)
TEPHRA_ADD_FN(AddPreemptableVetoFn, preemptable_veto_, VictimsFn, kPreemptable)
TEPHRA_ADD_FN(AddReclaimableVetoFn, reclaimable_veto_, VictimsFn, kReclaimable)
TEPHRA_ADD_FN(AddHyperNodeOrderFn, hypernode_order_, HyperNodeOrderFn, kHyperNodeOrder)
#undef TEPHRA_ADD_FN

// JobValid and event handlers are not switchable (as in Volcano).
void Hooks::AddJobValidFn(std::string_view plugin, JobValidFn fn) {
  AddUnswitchable(plugin, std::move(fn), job_valid_);
}

void Hooks::AddEventHandler(std::string_view plugin, EventHandler handler) {
  AddUnswitchable(plugin, std::move(handler), handlers_);
}

// Pre-bind steps are what a placement the plugin allowed needs; switching them off alone would
// bind pods whose volumes nobody binds.
void Hooks::AddPreBindFn(std::string_view plugin, PreBindFn fn) {
  AddUnswitchable(plugin, std::move(fn), pre_bind_);
}

// ---- combined answers ----

namespace {

template <typename T, typename Fn>
int FirstNonZero(const std::vector<std::vector<Fn>>& tiers, const T& l, const T& r) {
  for (const auto& tier : tiers) {
    for (const auto& fn : tier) {
      int c = fn(l, r);
      if (c != 0) return c;
    }
  }
  return 0;
}

int CompareTime(const std::optional<base::Time>& l, const std::optional<base::Time>& r) {
  if (l == r) return 0;
  if (!l) return 1;
  if (!r) return -1;
  return *l < *r ? -1 : 1;
}

}  // namespace

bool Hooks::JobOrder(const JobInfo& l, const JobInfo& r) const {
  int c = FirstNonZero(job_order_.tiers(), l, r);
  if (c != 0) return c < 0;
  c = CompareTime(l.creation, r.creation);
  if (c != 0) return c < 0;
  return l.uid < r.uid;
}

bool Hooks::QueueOrder(const QueueInfo& l, const QueueInfo& r) const {
  int c = FirstNonZero(queue_order_.tiers(), l, r);
  if (c != 0) return c < 0;
  std::optional<base::Time> lt, rt;
  if (l.queue) lt = l.queue->metadata.creation_timestamp;
  if (r.queue) rt = r.queue->metadata.creation_timestamp;
  c = CompareTime(lt, rt);
  if (c != 0) return c < 0;
  return l.name < r.name;
}

int Hooks::CompareTasksByPlugins(const TaskInfo& l, const TaskInfo& r) const {
  return FirstNonZero(task_order_.tiers(), l, r);
}

bool Hooks::TaskOrder(const TaskInfo& l, const TaskInfo& r) const {
  int c = CompareTasksByPlugins(l, r);
  if (c != 0) return c < 0;
  int li = l.index(), ri = r.index();
  if (li != ri) return li < ri;
  c = CompareTime(l.pod->metadata.creation_timestamp, r.pod->metadata.creation_timestamp);
  if (c != 0) return c < 0;
  return l.uid() < r.uid();
}

Fit Hooks::Predicate(const TaskInfo& task, const NodeInfo& node) const {
  for (const auto& tier : static_predicate_.tiers()) {
    for (const auto& fn : tier) {
      Fit f = fn(task, node);
      if (!f.ok()) return f;
    }
  }
  for (const auto& tier : predicate_.tiers()) {
    for (const auto& fn : tier) {
      Fit f = fn(task, node);
      if (!f.ok()) return f;
    }
  }
  return Fit::Ok();
}

Fit Hooks::PredicateAt(const TaskInfo& task, const NodeInfo& node, size_t node_index,
                       size_t node_count) {
  std::vector<uint8_t>& cached = static_fit_[task.pod->spec.get()];
  if (cached.empty()) cached.assign(node_count, 0);
  uint8_t& slot = cached[node_index];
  if (slot == 0) {
    Fit f = Fit::Ok();
    for (const auto& tier : static_predicate_.tiers()) {
      for (const auto& fn : tier) {
        f = fn(task, node);
        if (!f.ok()) break;
      }
      if (!f.ok()) break;
    }
    if (f.ok()) {
      slot = 1;
    } else {
      size_t k = 0;
      while (k < static_failures_.size() &&
             (static_failures_[k].reason != f.reason || static_failures_[k].code != f.code)) {
        ++k;
      }
      if (k == static_failures_.size() && k < 250) static_failures_.push_back(f);
      slot = static_cast<uint8_t>(2 + std::min<size_t>(k, 249));
    }
  }
  if (slot != 1) return static_failures_[slot - 2];
  for (const auto& tier : predicate_.tiers()) {
    for (const auto& fn : tier) {
      Fit f = fn(task, node);
      if (!f.ok()) return f;
    }
  }
  return Fit::Ok();
}

bool Hooks::HasNodeOrder() const {
  return !node_order_.empty() || !batch_node_order_.empty();
}

void Hooks::NodeScoresSplit(const TaskInfo& task, const std::vector<const NodeInfo*>& nodes,
                            std::vector<double>* per_node, std::vector<double>* batch) const {
  per_node->assign(nodes.size(), 0.0);
  for (size_t i = 0; i < nodes.size(); ++i) (*per_node)[i] = NodeOrderScore(task, *nodes[i]);
  batch->assign(nodes.size(), 0.0);
  for (const auto& tier : batch_node_order_.tiers()) {
    for (const auto& fn : tier) fn(task, nodes, batch);
  }
}

std::vector<PreBindStep> Hooks::PreBind(const TaskInfo& task, const std::string& node) const {
  std::vector<PreBindStep> steps;
  for (const auto& tier : pre_bind_.tiers()) {
    for (const auto& fn : tier) {
      std::vector<PreBindStep> more = fn(task, node);
      steps.insert(steps.end(), std::make_move_iterator(more.begin()),
                   std::make_move_iterator(more.end()));
    }
  }
  return steps;
}

double Hooks::HyperNodeScore(const JobInfo& job, const HyperNodeTrial& trial) const {
  double score = 0;
  for (const auto& tier : hypernode_order_.tiers()) {
    for (const auto& fn : tier) score += fn(job, trial);
  }
  return score;
}

double Hooks::NodeOrderScore(const TaskInfo& task, const NodeInfo& node) const {
  double score = 0;
  for (const auto& tier : node_order_.tiers()) {
    for (const auto& fn : tier) score += fn(task, node);
  }
  return score;
}

void Hooks::NodeScores(const TaskInfo& task, const std::vector<const NodeInfo*>& nodes,
                       std::vector<double>* scores) const {
  scores->assign(nodes.size(), 0.0);
  for (const auto& tier : node_order_.tiers()) {
    for (const auto& fn : tier) {
      for (size_t i = 0; i < nodes.size(); ++i) (*scores)[i] += fn(task, *nodes[i]);
    }
  }
  for (const auto& tier : batch_node_order_.tiers()) {
    for (const auto& fn : tier) fn(task, nodes, scores);
  }
}

ValidateResult Hooks::JobValid(const JobInfo& job) const {
  for (const auto& tier : job_valid_.tiers()) {
    for (const auto& fn : tier) {
      std::optional<ValidateResult> r = fn(job);
      if (r && !r->pass) return *r;
    }
  }
  return {};
}

bool Hooks::JobReady(const JobInfo& job) const {
  for (const auto& tier : job_ready_.tiers()) {
    for (const auto& fn : tier) {
      if (!fn(job)) return false;
    }
  }
  return true;
}

namespace {

// Reject anywhere wins; otherwise the first tier with a Permit decides; all abstain: true.
template <typename Fn, typename... Args>
bool Votes(const std::vector<std::vector<Fn>>& tiers, const Args&... args) {
  for (const auto& tier : tiers) {
    bool permitted = false;
    for (const auto& fn : tier) {
      Vote v = fn(args...);
      if (v == Vote::kReject) return false;
      if (v == Vote::kPermit) permitted = true;
    }
    if (permitted) return true;
  }
  return true;
}

}  // namespace

bool Hooks::JobPipelined(const JobInfo& job) const {
  return Votes(job_pipelined_.tiers(), job);
}

bool Hooks::JobEnqueueable(const JobInfo& job, const api::Resources& credit) const {
  return Votes(job_enqueueable_.tiers(), job, credit);
}

void Hooks::JobEnqueued(const JobInfo& job) const {
  for (const auto& tier : job_enqueued_.tiers()) {
    for (const auto& fn : tier) fn(job);
  }
}

bool Hooks::JobStarving(const JobInfo& job) const {
  for (const auto& tier : job_starving_.tiers()) {
    if (tier.empty()) continue;
    for (const auto& fn : tier) {
      if (!fn(job)) return false;
    }
    return true;
  }
  return false;
}

bool Hooks::Overused(const QueueInfo& queue) const {
  for (const auto& tier : overused_.tiers()) {
    for (const auto& fn : tier) {
      if (fn(queue)) return true;
    }
  }
  return false;
}

bool Hooks::Allocatable(const QueueInfo& queue, const TaskInfo& task) const {
  for (const auto& tier : allocatable_.tiers()) {
    for (const auto& fn : tier) {
      if (!fn(queue, task)) return false;
    }
  }
  return true;
}

bool Hooks::Preemptive(const QueueInfo& queue, const TaskInfo& task) const {
  for (const auto& tier : preemptive_.tiers()) {
    for (const auto& fn : tier) {
      if (!fn(queue, task)) return false;
    }
  }
  return true;
}

namespace {

// Per tier, the intersection of every non-abstaining plugin's list; the first tier where some
// plugin had an opinion decides.
std::vector<const TaskInfo*> Victims(const std::vector<std::vector<VictimsFn>>& tiers,
                                     const TaskInfo& preemptor,
                                     const std::vector<const TaskInfo*>& candidates) {
  for (const auto& tier : tiers) {
    std::optional<std::vector<const TaskInfo*>> result;
    for (const auto& fn : tier) {
      std::optional<std::vector<const TaskInfo*>> allowed = fn(preemptor, candidates);
      if (!allowed) continue;
      if (!result) {
        result = std::move(allowed);
        continue;
      }
      std::unordered_set<const TaskInfo*> keep(allowed->begin(), allowed->end());
      std::vector<const TaskInfo*> both;
      for (const TaskInfo* t : *result) {
        if (keep.count(t) != 0) both.push_back(t);
      }
      result = std::move(both);
    }
    if (result) return *result;
  }
  return {};
}

}  // namespace

namespace {

// Applies every veto rule to `victims`, keeping what all of them allow.
std::vector<const TaskInfo*> Vetoed(const std::vector<std::vector<VictimsFn>>& tiers,
                                    const TaskInfo& preemptor,
                                    std::vector<const TaskInfo*> victims) {
  for (const auto& tier : tiers) {
    for (const auto& fn : tier) {
      if (victims.empty()) return victims;
      std::optional<std::vector<const TaskInfo*>> allowed = fn(preemptor, victims);
      if (!allowed) continue;
      std::unordered_set<const TaskInfo*> keep(allowed->begin(), allowed->end());
      std::vector<const TaskInfo*> both;
      for (const TaskInfo* t : victims) {
        if (keep.count(t) != 0) both.push_back(t);
      }
      victims = std::move(both);
    }
  }
  return victims;
}

}  // namespace

std::vector<const TaskInfo*> Hooks::Preemptable(
    const TaskInfo& preemptor, const std::vector<const TaskInfo*>& candidates) const {
  return Vetoed(preemptable_veto_.tiers(), preemptor,
                Victims(preemptable_.tiers(), preemptor, candidates));
}

std::vector<const TaskInfo*> Hooks::Reclaimable(
    const TaskInfo& preemptor, const std::vector<const TaskInfo*>& candidates) const {
  return Vetoed(reclaimable_veto_.tiers(), preemptor,
                Victims(reclaimable_.tiers(), preemptor, candidates));
}

// ---- allocation events ----

void Hooks::FireAllocate(const TaskInfo& task, const std::string& node) const {
  for (const auto& tier : handlers_.tiers()) {
    for (const auto& h : tier) {
      if (h.allocate) h.allocate(TaskEvent{task, node});
    }
  }
}

void Hooks::FireDeallocate(const TaskInfo& task, const std::string& node) const {
  for (const auto& tier : handlers_.tiers()) {
    for (const auto& h : tier) {
      if (h.deallocate) h.deallocate(TaskEvent{task, node});
    }
  }
}

}  // namespace tephra::scheduler
