#include "scheduler/framework/session.h"

#include <algorithm>
#include <cstring>
#include <unordered_set>

#include <glog/logging.h>

#include "scheduler/framework/registry.h"

namespace tephra::scheduler {

// ---- FitErrors ----

void FitErrors::Add(const char* reason) {
  ++nodes;
  for (auto& [r, n] : by_reason) {
    if (r == reason || std::strcmp(r, reason) == 0) {
      ++n;
      return;
    }
  }
  by_reason.emplace_back(reason, 1);
}

std::string FitErrors::ToString() const {
  std::vector<std::pair<const char*, int>> sorted = by_reason;
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : std::string_view(a.first) < b.first;
  });
  std::string out;
  if (!sorted.empty()) out = "0/" + std::to_string(nodes) + " nodes are available: ";
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(sorted[i].second) + " " + sorted[i].first;
  }
  if (!other.empty()) out += (out.empty() ? "" : "; ") + other;
  return out;
}

// ---- Session ----

Session::Session(std::shared_ptr<const Snapshot> snapshot, const SchedulerConf& conf,
                 const Registry& registry, SessionOptions options)
    : snapshot_(std::move(snapshot)), conf_(conf), registry_(registry), options_(std::move(options)) {
  nodes_ = snapshot_->nodes;
  node_owned_.assign(nodes_.size(), false);
  node_version_.assign(nodes_.size(), 0);
  node_index_.reserve(nodes_.size());
  for (size_t i = 0; i < nodes_.size(); ++i) node_index_.emplace(nodes_[i]->name, i);
  jobs_ = snapshot_->jobs;
  job_owned_.assign(jobs_.size(), false);
  touched_.assign(jobs_.size(), false);
  fit_errors_.resize(jobs_.size());
  conditions_.resize(jobs_.size());
  job_index_.reserve(jobs_.size());
  for (size_t i = 0; i < jobs_.size(); ++i) job_index_.emplace(jobs_[i]->id, i);
}

Session::~Session() = default;

base::Time Session::Now() const {
  return options_.clock != nullptr ? options_.clock->Now() : base::Clock::now();
}

void Session::Open() {
  for (const auto& tier : conf_.tiers) {
    for (const auto& option : tier.plugins) {
      std::unique_ptr<Plugin> plugin = registry_.NewPlugin(option);
      if (!plugin) {
        LOG(ERROR) << "session: no plugin named " << option.name;
        continue;
      }
      plugin->OnSessionOpen(*this);
      plugins_.push_back(std::move(plugin));
    }
  }
  Compile();
}

void Session::Close() {
  for (auto& plugin : plugins_) plugin->OnSessionClose(*this);
}

std::optional<size_t> Session::NodeIndex(const std::string& name) const {
  auto it = node_index_.find(name);
  if (it == node_index_.end()) return std::nullopt;
  return it->second;
}

std::optional<size_t> Session::JobIndex(const JobId& id) const {
  auto it = job_index_.find(id);
  if (it == job_index_.end()) return std::nullopt;
  return it->second;
}

const QueueInfo* Session::queue(const std::string& name) const {
  auto it = snapshot_->queues.find(name);
  return it == snapshot_->queues.end() ? nullptr : it->second.get();
}

const std::map<std::string, std::string>* Session::NamespaceLabels(const std::string& ns) const {
  auto it = snapshot_->namespace_labels.find(ns);
  return it == snapshot_->namespace_labels.end() ? nullptr : &it->second;
}

size_t Session::NodesToFind(size_t n) const {
  size_t minimum = static_cast<size_t>(std::max(1, options_.minimum_feasible_nodes));
  if (n <= minimum) return n;
  int pct = options_.percentage_nodes_to_find;
  if (pct <= 0) {
    // Adaptive, as kube-scheduler and Volcano: 50% minus 1% per 125 nodes, at least the floor.
    pct = std::max(options_.minimum_percentage_nodes_to_find, 50 - static_cast<int>(n / 125));
  }
  if (pct >= 100) return n;
  size_t want = n * static_cast<size_t>(pct) / 100;
  return std::max(want, minimum);
}

NodeInfo& Session::MutableNode(size_t i) {
  ++node_version_[i];
  if (!node_owned_[i]) {
    nodes_[i] = std::make_shared<NodeInfo>(*nodes_[i]);
    node_owned_[i] = true;
  }
  return const_cast<NodeInfo&>(*nodes_[i]);
}

JobInfo& Session::MutableJob(size_t i) {
  if (!job_owned_[i]) {
    jobs_[i] = std::make_shared<JobInfo>(*jobs_[i]);
    job_owned_[i] = true;
  }
  touched_[i] = true;
  return const_cast<JobInfo&>(*jobs_[i]);
}

// ---- registration ----

#define TEPHRA_ADD_FN(Method, Vec, Type) \
  void Session::Method(std::string_view plugin, Type fn) { Vec.push_back({std::string(plugin), std::move(fn)}); }

TEPHRA_ADD_FN(AddJobOrderFn, job_order_, JobCompareFn)
TEPHRA_ADD_FN(AddQueueOrderFn, queue_order_, QueueCompareFn)
TEPHRA_ADD_FN(AddTaskOrderFn, task_order_, TaskCompareFn)
TEPHRA_ADD_FN(AddPredicateFn, predicate_, PredicateFn)
TEPHRA_ADD_FN(AddStaticPredicateFn, static_predicate_, PredicateFn)
TEPHRA_ADD_FN(AddNodeOrderFn, node_order_, NodeOrderFn)
TEPHRA_ADD_FN(AddBatchNodeOrderFn, batch_node_order_, BatchNodeOrderFn)
TEPHRA_ADD_FN(AddJobValidFn, job_valid_, JobValidFn)
TEPHRA_ADD_FN(AddJobReadyFn, job_ready_, JobPredicateFn)
TEPHRA_ADD_FN(AddJobPipelinedFn, job_pipelined_, JobVoteFn)
TEPHRA_ADD_FN(AddJobEnqueueableFn, job_enqueueable_, JobVoteFn)
TEPHRA_ADD_FN(AddJobEnqueuedFn, job_enqueued_, JobNotifyFn)
TEPHRA_ADD_FN(AddJobStarvingFn, job_starving_, JobPredicateFn)
TEPHRA_ADD_FN(AddOverusedFn, overused_, QueuePredicateFn)
TEPHRA_ADD_FN(AddAllocatableFn, allocatable_, QueueTaskPredicateFn)
TEPHRA_ADD_FN(AddPreemptiveFn, preemptive_, QueueTaskPredicateFn)
TEPHRA_ADD_FN(AddPreemptableFn, preemptable_, VictimsFn)
TEPHRA_ADD_FN(AddReclaimableFn, reclaimable_, VictimsFn)
TEPHRA_ADD_FN(AddPreemptableVetoFn, preemptable_veto_, VictimsFn)
TEPHRA_ADD_FN(AddReclaimableVetoFn, reclaimable_veto_, VictimsFn)
TEPHRA_ADD_FN(AddEventHandler, handlers_, EventHandler)
#undef TEPHRA_ADD_FN

template <typename Fn>
Session::Tiered<Fn> Session::ByTier(const std::vector<Registered<Fn>>& registered,
                                    ExtensionPoint point) const {
  Tiered<Fn> out;
  for (const auto& tier : conf_.tiers) {
    std::vector<Fn> fns;
    for (const auto& option : tier.plugins) {
      if (!option.Enabled(point)) continue;
      for (const auto& r : registered) {
        if (r.plugin == option.name) fns.push_back(r.fn);
      }
    }
    out.push_back(std::move(fns));
  }
  return out;
}

void Session::Compile() {
  c_job_order_ = ByTier(job_order_, ExtensionPoint::kJobOrder);
  c_queue_order_ = ByTier(queue_order_, ExtensionPoint::kQueueOrder);
  c_task_order_ = ByTier(task_order_, ExtensionPoint::kTaskOrder);
  c_predicate_ = ByTier(predicate_, ExtensionPoint::kPredicate);
  c_static_predicate_ = ByTier(static_predicate_, ExtensionPoint::kPredicate);
  c_node_order_ = ByTier(node_order_, ExtensionPoint::kNodeOrder);
  c_batch_node_order_ = ByTier(batch_node_order_, ExtensionPoint::kNodeOrder);
  c_job_ready_ = ByTier(job_ready_, ExtensionPoint::kJobReady);
  c_job_pipelined_ = ByTier(job_pipelined_, ExtensionPoint::kJobPipelined);
  c_job_enqueueable_ = ByTier(job_enqueueable_, ExtensionPoint::kJobEnqueued);
  c_job_enqueued_ = ByTier(job_enqueued_, ExtensionPoint::kJobEnqueued);
  c_job_starving_ = ByTier(job_starving_, ExtensionPoint::kJobStarving);
  c_overused_ = ByTier(overused_, ExtensionPoint::kOverused);
  c_allocatable_ = ByTier(allocatable_, ExtensionPoint::kAllocatable);
  c_preemptive_ = ByTier(preemptive_, ExtensionPoint::kPreemptive);
  c_preemptable_ = ByTier(preemptable_, ExtensionPoint::kPreemptable);
  c_reclaimable_ = ByTier(reclaimable_, ExtensionPoint::kReclaimable);
  c_preemptable_veto_ = ByTier(preemptable_veto_, ExtensionPoint::kPreemptable);
  c_reclaimable_veto_ = ByTier(reclaimable_veto_, ExtensionPoint::kReclaimable);
  // JobValid and event handlers are not switchable (as in Volcano).
  c_job_valid_.clear();
  c_job_valid_.emplace_back();
  for (const auto& tier : conf_.tiers) {
    for (const auto& option : tier.plugins) {
      for (const auto& r : job_valid_) {
        if (r.plugin == option.name) c_job_valid_.back().push_back(r.fn);
      }
      for (const auto& r : handlers_) {
        if (r.plugin == option.name) c_handlers_.push_back(r.fn);
      }
    }
  }
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

bool Session::JobOrder(const JobInfo& l, const JobInfo& r) const {
  int c = FirstNonZero(c_job_order_, l, r);
  if (c != 0) return c < 0;
  c = CompareTime(l.creation, r.creation);
  if (c != 0) return c < 0;
  return l.uid < r.uid;
}

bool Session::QueueOrder(const QueueInfo& l, const QueueInfo& r) const {
  int c = FirstNonZero(c_queue_order_, l, r);
  if (c != 0) return c < 0;
  std::optional<base::Time> lt, rt;
  if (l.queue) lt = l.queue->metadata.creation_timestamp;
  if (r.queue) rt = r.queue->metadata.creation_timestamp;
  c = CompareTime(lt, rt);
  if (c != 0) return c < 0;
  return l.name < r.name;
}

int Session::CompareTasksByPlugins(const TaskInfo& l, const TaskInfo& r) const {
  return FirstNonZero(c_task_order_, l, r);
}

bool Session::TaskOrder(const TaskInfo& l, const TaskInfo& r) const {
  int c = CompareTasksByPlugins(l, r);
  if (c != 0) return c < 0;
  int li = l.index(), ri = r.index();
  if (li != ri) return li < ri;
  c = CompareTime(l.pod->metadata.creation_timestamp, r.pod->metadata.creation_timestamp);
  if (c != 0) return c < 0;
  return l.uid() < r.uid();
}

Fit Session::Predicate(const TaskInfo& task, const NodeInfo& node) const {
  for (const auto& tier : c_static_predicate_) {
    for (const auto& fn : tier) {
      Fit f = fn(task, node);
      if (!f.ok()) return f;
    }
  }
  for (const auto& tier : c_predicate_) {
    for (const auto& fn : tier) {
      Fit f = fn(task, node);
      if (!f.ok()) return f;
    }
  }
  return Fit::Ok();
}

Fit Session::PredicateAt(const TaskInfo& task, size_t node_index) {
  const NodeInfo& node = *nodes_[node_index];
  std::vector<uint8_t>& cached = static_fit_[task.pod->spec.get()];
  if (cached.empty()) cached.assign(nodes_.size(), 0);
  uint8_t& slot = cached[node_index];
  if (slot == 0) {
    Fit f = Fit::Ok();
    for (const auto& tier : c_static_predicate_) {
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
      while (k < static_failures_.size() && (static_failures_[k].reason != f.reason ||
                                             static_failures_[k].code != f.code)) {
        ++k;
      }
      if (k == static_failures_.size() && k < 250) static_failures_.push_back(f);
      slot = static_cast<uint8_t>(2 + std::min<size_t>(k, 249));
    }
  }
  if (slot != 1) return static_failures_[slot - 2];
  for (const auto& tier : c_predicate_) {
    for (const auto& fn : tier) {
      Fit f = fn(task, node);
      if (!f.ok()) return f;
    }
  }
  return Fit::Ok();
}

bool Session::HasNodeOrder() const {
  for (const auto& t : c_node_order_) {
    if (!t.empty()) return true;
  }
  for (const auto& t : c_batch_node_order_) {
    if (!t.empty()) return true;
  }
  return false;
}

void Session::NodeScoresSplit(const TaskInfo& task, const std::vector<const NodeInfo*>& nodes,
                              std::vector<double>* per_node, std::vector<double>* batch) const {
  per_node->assign(nodes.size(), 0.0);
  for (size_t i = 0; i < nodes.size(); ++i) (*per_node)[i] = NodeOrderScore(task, *nodes[i]);
  batch->assign(nodes.size(), 0.0);
  for (const auto& tier : c_batch_node_order_) {
    for (const auto& fn : tier) fn(task, nodes, batch);
  }
}

double Session::NodeOrderScore(const TaskInfo& task, const NodeInfo& node) const {
  double score = 0;
  for (const auto& tier : c_node_order_) {
    for (const auto& fn : tier) score += fn(task, node);
  }
  return score;
}

void Session::NodeScores(const TaskInfo& task, const std::vector<const NodeInfo*>& nodes,
                         std::vector<double>* scores) const {
  scores->assign(nodes.size(), 0.0);
  for (const auto& tier : c_node_order_) {
    for (const auto& fn : tier) {
      for (size_t i = 0; i < nodes.size(); ++i) (*scores)[i] += fn(task, *nodes[i]);
    }
  }
  for (const auto& tier : c_batch_node_order_) {
    for (const auto& fn : tier) fn(task, nodes, scores);
  }
}

ValidateResult Session::JobValid(const JobInfo& job) const {
  for (const auto& tier : c_job_valid_) {
    for (const auto& fn : tier) {
      std::optional<ValidateResult> r = fn(job);
      if (r && !r->pass) return *r;
    }
  }
  return {};
}

bool Session::JobReady(const JobInfo& job) const {
  for (const auto& tier : c_job_ready_) {
    for (const auto& fn : tier) {
      if (!fn(job)) return false;
    }
  }
  return true;
}

namespace {

// Reject anywhere wins; otherwise the first tier with a Permit decides; all abstain: true.
bool Votes(const std::vector<std::vector<JobVoteFn>>& tiers, const JobInfo& job) {
  for (const auto& tier : tiers) {
    bool permitted = false;
    for (const auto& fn : tier) {
      Vote v = fn(job);
      if (v == Vote::kReject) return false;
      if (v == Vote::kPermit) permitted = true;
    }
    if (permitted) return true;
  }
  return true;
}

}  // namespace

bool Session::JobPipelined(const JobInfo& job) const { return Votes(c_job_pipelined_, job); }

bool Session::JobEnqueueable(const JobInfo& job) const { return Votes(c_job_enqueueable_, job); }

bool Session::JobEnqueueable(const JobInfo& job, const api::Resources& credit) {
  admission_credit_ = credit;
  bool permitted = Votes(c_job_enqueueable_, job);
  admission_credit_ = api::Resources();
  return permitted;
}

void Session::JobEnqueued(const JobInfo& job) const {
  for (const auto& tier : c_job_enqueued_) {
    for (const auto& fn : tier) fn(job);
  }
}

bool Session::JobStarving(const JobInfo& job) const {
  for (const auto& tier : c_job_starving_) {
    if (tier.empty()) continue;
    for (const auto& fn : tier) {
      if (!fn(job)) return false;
    }
    return true;
  }
  return false;
}

bool Session::Overused(const QueueInfo& queue) const {
  for (const auto& tier : c_overused_) {
    for (const auto& fn : tier) {
      if (fn(queue)) return true;
    }
  }
  return false;
}

bool Session::Allocatable(const QueueInfo& queue, const TaskInfo& task) const {
  for (const auto& tier : c_allocatable_) {
    for (const auto& fn : tier) {
      if (!fn(queue, task)) return false;
    }
  }
  return true;
}

bool Session::Preemptive(const QueueInfo& queue, const TaskInfo& task) const {
  for (const auto& tier : c_preemptive_) {
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
                                    const TaskInfo& preemptor, std::vector<const TaskInfo*> victims) {
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

std::vector<const TaskInfo*> Session::Preemptable(
    const TaskInfo& preemptor, const std::vector<const TaskInfo*>& candidates) const {
  return Vetoed(c_preemptable_veto_, preemptor, Victims(c_preemptable_, preemptor, candidates));
}

std::vector<const TaskInfo*> Session::Reclaimable(
    const TaskInfo& preemptor, const std::vector<const TaskInfo*>& candidates) const {
  return Vetoed(c_reclaimable_veto_, preemptor, Victims(c_reclaimable_, preemptor, candidates));
}

// ---- state changes ----

void Session::FireAllocate(const TaskInfo& task, const std::string& node) {
  for (const auto& h : c_handlers_) {
    if (h.allocate) h.allocate(TaskEvent{task, node});
  }
}

void Session::FireDeallocate(const TaskInfo& task, const std::string& node) {
  for (const auto& h : c_handlers_) {
    if (h.deallocate) h.deallocate(TaskEvent{task, node});
  }
}

namespace {

Status Place(JobInfo& job, NodeInfo& node, const std::string& uid, TaskStatus status) {
  auto it = job.tasks.find(uid);
  if (it == job.tasks.end()) return NotFound("task " + uid + " is not in job " + job.id);
  if (it->second.status != TaskStatus::kPending) {
    return FailedPrecondition("task " + it->second.name() + " is " +
                              std::string(TaskStatusName(it->second.status)));
  }
  job.SetStatus(uid, status, node.name);
  node.AddTask(it->second);
  return Status::Ok();
}

}  // namespace

Status Session::Allocate(size_t job, const std::string& uid, size_t node) {
  JobInfo& j = MutableJob(job);
  NodeInfo& n = MutableNode(node);
  TEPHRA_RETURN_IF_ERROR(Place(j, n, uid, TaskStatus::kAllocated));
  FireAllocate(j.tasks.at(uid), n.name);
  return Status::Ok();
}

Status Session::Pipeline(size_t job, const std::string& uid, size_t node) {
  JobInfo& j = MutableJob(job);
  NodeInfo& n = MutableNode(node);
  TEPHRA_RETURN_IF_ERROR(Place(j, n, uid, TaskStatus::kPipelined));
  FireAllocate(j.tasks.at(uid), n.name);
  return Status::Ok();
}

Status Session::Evict(size_t job, const std::string& uid) {
  JobInfo& j = MutableJob(job);
  auto it = j.tasks.find(uid);
  if (it == j.tasks.end()) return NotFound("task " + uid + " is not in job " + j.id);
  if (!OccupiesNode(it->second.status) || it->second.status == TaskStatus::kReleasing) {
    return FailedPrecondition("task " + it->second.name() + " is " +
                              std::string(TaskStatusName(it->second.status)) +
                              ", not running on a node");
  }
  auto n = NodeIndex(it->second.node);
  if (!n) return NotFound("node " + it->second.node + " of task " + it->second.name());
  std::string node_name = it->second.node;
  j.SetStatus(uid, TaskStatus::kReleasing, node_name);
  MutableNode(*n).AddTask(j.tasks.at(uid));
  FireDeallocate(j.tasks.at(uid), node_name);
  return Status::Ok();
}

void Session::Unallocate(size_t job, const std::string& uid, size_t node) {
  JobInfo& j = MutableJob(job);
  NodeInfo& n = MutableNode(node);
  auto it = j.tasks.find(uid);
  if (it == j.tasks.end()) return;
  TaskInfo before = it->second;
  n.RemoveTask(uid);
  j.SetStatus(uid, TaskStatus::kPending, "");
  FireDeallocate(before, n.name);
}

void Session::Unevict(size_t job, const std::string& uid, TaskStatus previous) {
  JobInfo& j = MutableJob(job);
  auto it = j.tasks.find(uid);
  if (it == j.tasks.end()) return;
  std::string node_name = it->second.node;
  j.SetStatus(uid, previous, node_name);
  if (auto n = NodeIndex(node_name)) MutableNode(*n).AddTask(j.tasks.at(uid));
  FireAllocate(j.tasks.at(uid), node_name);
}

void Session::SetJobPhase(size_t job, api::PodGroupPhase phase) { MutableJob(job).phase = phase; }

void Session::RecordFitErrors(size_t job, const std::string& uid, FitErrors errors) {
  touched_[job] = true;
  fit_errors_[job][uid] = std::move(errors);
}

const std::unordered_map<std::string, FitErrors>* Session::JobFitErrors(size_t job) const {
  return fit_errors_[job].empty() ? nullptr : &fit_errors_[job];
}

void Session::SetJobCondition(size_t job, JobConditionOut condition) {
  touched_[job] = true;
  conditions_[job] = std::move(condition);
}

const std::optional<JobConditionOut>& Session::JobCondition(size_t job) const {
  return conditions_[job];
}

void Session::AddJobNote(size_t job, JobNote note) {
  std::vector<JobNote>& notes = notes_[job];
  if (notes.size() < kMaxJobNotes) notes.push_back(std::move(note));
}

const std::vector<JobNote>* Session::JobNotes(size_t job) const {
  auto it = notes_.find(job);
  return it == notes_.end() ? nullptr : &it->second;
}

const std::vector<std::string>* Session::JobWithdrawn(size_t job) const {
  auto it = withdrawn_.find(job);
  return it == withdrawn_.end() ? nullptr : &it->second;
}

void Session::NoteWithdrawn(size_t job, std::vector<std::string> uids) {
  std::vector<std::string>& kept = withdrawn_[job];
  if (uids.size() > kept.size()) kept = std::move(uids);
}

void Session::ReportQueueShare(const std::string& queue, QueueShareReport report) {
  queue_shares_[queue] = std::move(report);
}

// ---- Statement ----

Statement::~Statement() {
  if (!done_) Discard();
}

Status Statement::Allocate(size_t job, const std::string& uid, size_t node) {
  TEPHRA_RETURN_IF_ERROR(session_.Allocate(job, uid, node));
  ops_.push_back({Kind::kAllocate, job, uid, node, TaskStatus::kPending, ""});
  return Status::Ok();
}

Status Statement::Pipeline(size_t job, const std::string& uid, size_t node) {
  TEPHRA_RETURN_IF_ERROR(session_.Pipeline(job, uid, node));
  ops_.push_back({Kind::kPipeline, job, uid, node, TaskStatus::kPending, ""});
  return Status::Ok();
}

Status Statement::Evict(size_t job, const std::string& uid, const std::string& reason) {
  auto it = session_.job(job).tasks.find(uid);
  if (it == session_.job(job).tasks.end()) return NotFound("task " + uid);
  TaskStatus previous = it->second.status;
  TEPHRA_RETURN_IF_ERROR(session_.Evict(job, uid));
  ops_.push_back({Kind::kEvict, job, uid, 0, previous, reason});
  return Status::Ok();
}

void Statement::Merge(Statement& other) {
  for (auto& op : other.ops_) ops_.push_back(std::move(op));
  other.ops_.clear();
  other.done_ = true;
}

std::vector<std::pair<size_t, std::string>> Statement::Evictions() const {
  std::vector<std::pair<size_t, std::string>> out;
  for (const Op& op : ops_) {
    if (op.kind == Kind::kEvict) out.emplace_back(op.job, op.uid);
  }
  return out;
}

void Statement::Discard() {
  // Placements withdrawn per job, for explanations ("6/10 tasks fit"). A statement is nearly
  // always about one job, so a short list beats a map.
  std::vector<std::pair<size_t, std::vector<std::string>>> placed;
  for (const Op& op : ops_) {
    if (op.kind == Kind::kEvict) continue;
    auto it = std::find_if(placed.begin(), placed.end(), [&](const auto& p) { return p.first == op.job; });
    if (it == placed.end()) it = placed.insert(placed.end(), {op.job, {}});
    it->second.push_back(op.uid);
  }
  for (auto& [job, uids] : placed) session_.NoteWithdrawn(job, std::move(uids));
  for (auto it = ops_.rbegin(); it != ops_.rend(); ++it) {
    if (it->kind == Kind::kEvict) {
      session_.Unevict(it->job, it->uid, it->previous);
    } else {
      session_.Unallocate(it->job, it->uid, it->node);
    }
  }
  ops_.clear();
  done_ = true;
}

void Statement::Commit() {
  for (const Op& op : ops_) {
    const JobInfo& job = session_.job(op.job);
    auto it = job.tasks.find(op.uid);
    if (it == job.tasks.end()) continue;
    switch (op.kind) {
      case Kind::kEvict:
        if (session_.evictor() != nullptr) session_.evictor()->Evict(it->second, op.reason);
        break;
      case Kind::kAllocate:
        if (session_.binder() != nullptr) session_.binder()->Bind(it->second, it->second.node);
        break;
      case Kind::kPipeline:
        // Pipelined tasks wait in this session for resources being released; the next session
        // places them again from scratch.
        break;
    }
  }
  ops_.clear();
  done_ = true;
}

}  // namespace tephra::scheduler
