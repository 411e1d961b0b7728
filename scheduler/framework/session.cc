#include "scheduler/framework/session.h"

#include <algorithm>

#include <glog/logging.h>

#include "scheduler/framework/registry.h"

namespace tephra::scheduler {

Session::Session(std::shared_ptr<const Snapshot> snapshot, const SchedulerConf& conf,
                 const Registry& registry, SessionOptions options)
    : conf_(conf),
      registry_(registry),
      options_(std::move(options)),
      view_(std::move(snapshot)),
      journal_(view_.job_count()),
      hooks_(conf_) {}

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
}

void Session::Close() {
  for (auto& plugin : plugins_) plugin->OnSessionClose(*this);
}

const StorageState& Session::storage() const {
  const auto& storage = view_.snapshot().storage;
  return storage ? *storage : EmptyStorageState();
}

const TopologyView& Session::topology() const {
  if (!topology_) {
    topology_ = std::make_unique<TopologyView>(view_.snapshot().topology.get(), view_);
  }
  return *topology_;
}

std::vector<size_t> Session::NodesHeldBy(size_t job) const {
  std::vector<size_t> nodes;
  for (const auto& [uid, t] : view_.job(job).tasks) {
    if (!HoldsPlace(t.status)) continue;
    if (auto i = view_.NodeIndex(t.node)) nodes.push_back(*i);
  }
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  return nodes;
}

const HyperNodeInfo* Session::OccupiedHyperNode(size_t job) const {
  const HyperNodeDomain* lowest = topology().Lowest(NodesHeldBy(job));
  return lowest == nullptr || lowest->info->virtual_top ? nullptr : lowest->info;
}

size_t Session::NodesToFind(size_t n) const {
  const NodeSampling& sampling = options_.sampling;
  size_t minimum = static_cast<size_t>(std::max(1, sampling.minimum_feasible_nodes));
  if (n <= minimum) return n;
  int pct = sampling.percentage_nodes_to_find;
  if (pct <= 0) {
    // Adaptive, as kube-scheduler and Volcano: 50% minus 1% per 125 nodes, at least the floor.
    pct = std::max(sampling.minimum_percentage_nodes_to_find, 50 - static_cast<int>(n / 125));
  }
  if (pct >= 100) return n;
  size_t want = n * static_cast<size_t>(pct) / 100;
  return std::max(want, minimum);
}

bool Session::JobEnqueueable(const JobInfo& job, const api::Resources& credit) {
  std::optional<size_t> j = view_.JobIndex(job.id);
  const std::vector<JobNote>* notes = j ? journal_.JobNotes(*j) : nullptr;
  const size_t noted = notes != nullptr ? notes->size() : 0;
  bool permitted = hooks_.JobEnqueueable(job, credit);
  if (j && !credit.IsEmpty()) journal_.TruncateJobNotes(*j, noted);
  return permitted;
}

// ---- state changes ----

Status Session::Allocate(size_t job, const std::string& uid, size_t node) {
  journal_.Touch(job);
  TEPHRA_ASSIGN_OR_RETURN(const TaskInfo* task,
                          view_.Place(job, uid, node, TaskStatus::kAllocated));
  NodeChanged(node);
  hooks_.FireAllocate(*task, view_.node(node).name);
  return Status::Ok();
}

Status Session::Pipeline(size_t job, const std::string& uid, size_t node) {
  journal_.Touch(job);
  TEPHRA_ASSIGN_OR_RETURN(const TaskInfo* task,
                          view_.Place(job, uid, node, TaskStatus::kPipelined));
  NodeChanged(node);
  hooks_.FireAllocate(*task, view_.node(node).name);
  return Status::Ok();
}

Status Session::Evict(size_t job, const std::string& uid) {
  journal_.Touch(job);
  TEPHRA_ASSIGN_OR_RETURN(const TaskInfo* task, view_.Release(job, uid));
  if (auto node = view_.NodeIndex(task->node)) NodeChanged(*node);
  hooks_.FireDeallocate(*task, task->node);
  return Status::Ok();
}

void Session::Unallocate(size_t job, const std::string& uid, size_t node) {
  journal_.Touch(job);
  std::optional<TaskInfo> before = view_.Unplace(job, uid, node);
  NodeChanged(node);
  if (before) hooks_.FireDeallocate(*before, view_.node(node).name);
}

void Session::Unevict(size_t job, const std::string& uid, TaskStatus previous) {
  journal_.Touch(job);
  const TaskInfo* task = view_.Unrelease(job, uid, previous);
  if (task == nullptr) return;
  if (auto node = view_.NodeIndex(task->node)) NodeChanged(*node);
  hooks_.FireAllocate(*task, task->node);
}

void Session::NodeChanged(size_t node) {
  if (topology_) topology_->NodeChanged(node);
}

void Session::SetJobPhase(size_t job, api::PodGroupPhase phase) {
  journal_.Touch(job);
  view_.SetPhase(job, phase);
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
    auto it = std::find_if(placed.begin(), placed.end(),
                           [&](const auto& p) { return p.first == op.job; });
    if (it == placed.end()) it = placed.insert(placed.end(), {op.job, {}});
    it->second.push_back(op.uid);
  }
  for (auto& [job, uids] : placed) session_.NoteWithdrawn(job, std::move(uids));
  Undo();
}

void Statement::Undo() {
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
  // The statement's binds leave together, as one unit: the binder completes every member's
  // pre-bind steps before it binds any of them.
  BindUnit unit;
  for (const Op& op : ops_) {
    const JobInfo& job = session_.job(op.job);
    auto it = job.tasks.find(op.uid);
    if (it == job.tasks.end()) continue;
    switch (op.kind) {
      case Kind::kEvict:
        if (session_.evictor() != nullptr) session_.evictor()->Evict(it->second, op.reason);
        break;
      case Kind::kAllocate:
        if (session_.binder() != nullptr) {
          const TaskInfo& task = it->second;
          unit.binds.push_back({&task, task.node, session_.PreBindSteps(task, task.node)});
        }
        break;
      case Kind::kPipeline:
        // Pipelined tasks wait in this session for resources being released; the next session
        // places them again from scratch.
        break;
    }
  }
  if (!unit.binds.empty()) session_.binder()->Bind(unit);
  ops_.clear();
  done_ = true;
}

bool BindUnit::HasSteps() const {
  for (const BindRequest& b : binds) {
    if (!b.steps.empty()) return true;
  }
  return false;
}

}  // namespace tephra::scheduler
