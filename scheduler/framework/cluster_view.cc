#include "scheduler/framework/cluster_view.h"

namespace tephra::scheduler {

ClusterView::ClusterView(std::shared_ptr<const Snapshot> snapshot)
    : snapshot_(std::move(snapshot)), nodes_(snapshot_->nodes), jobs_(snapshot_->jobs) {
  node_version_.assign(nodes_.size(), 0);
}

namespace {

// Index of `items` by the name `key` gives, built the first time a lookup needs it.
template <typename T, typename Key>
std::optional<size_t> Lookup(std::optional<std::unordered_map<std::string_view, size_t>>& index,
                             const std::vector<std::shared_ptr<const T>>& items, Key key,
                             std::string_view name) {
  if (!index) {
    index.emplace();
    index->reserve(items.size());
    for (size_t i = 0; i < items.size(); ++i) index->emplace(key(*items[i]), i);
  }
  auto it = index->find(name);
  if (it == index->end()) return std::nullopt;
  return it->second;
}

}  // namespace

std::optional<size_t> ClusterView::NodeIndex(const std::string& name) const {
  return Lookup(
      node_index_, snapshot_->nodes, [](const NodeInfo& n) -> std::string_view { return n.name; },
      name);
}

std::optional<size_t> ClusterView::JobIndex(const JobId& id) const {
  return Lookup(
      job_index_, snapshot_->jobs, [](const JobInfo& j) -> std::string_view { return j.id; }, id);
}

const QueueInfo* ClusterView::queue(const std::string& name) const {
  auto it = snapshot_->queues.find(name);
  return it == snapshot_->queues.end() ? nullptr : it->second.get();
}

const std::map<std::string, std::string>* ClusterView::NamespaceLabels(
    const std::string& ns) const {
  auto it = snapshot_->namespace_labels.find(ns);
  return it == snapshot_->namespace_labels.end() ? nullptr : &it->second;
}

NodeInfo& ClusterView::MutableNode(size_t i) {
  ++node_version_[i];
  return nodes_.Mutable(i);
}

StatusOr<const TaskInfo*> ClusterView::Place(size_t job, const std::string& uid, size_t node,
                                             TaskStatus status) {
  JobInfo& j = jobs_.Mutable(job);
  NodeInfo& n = MutableNode(node);
  auto it = j.tasks.find(uid);
  if (it == j.tasks.end()) return NotFound("task " + uid + " is not in job " + j.id);
  if (it->second.status != TaskStatus::kPending) {
    return FailedPrecondition("task " + it->second.name() + " is " +
                              std::string(TaskStatusName(it->second.status)));
  }
  j.SetStatus(uid, status, n.name);
  n.AddTask(it->second);
  return &j.tasks.at(uid);
}

StatusOr<const TaskInfo*> ClusterView::Release(size_t job, const std::string& uid) {
  JobInfo& j = jobs_.Mutable(job);
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
  return &j.tasks.at(uid);
}

std::optional<TaskInfo> ClusterView::Unplace(size_t job, const std::string& uid, size_t node) {
  JobInfo& j = jobs_.Mutable(job);
  NodeInfo& n = MutableNode(node);
  auto it = j.tasks.find(uid);
  if (it == j.tasks.end()) return std::nullopt;
  TaskInfo before = it->second;
  n.RemoveTask(uid);
  j.SetStatus(uid, TaskStatus::kPending, "");
  return before;
}

const TaskInfo* ClusterView::Unrelease(size_t job, const std::string& uid, TaskStatus previous) {
  JobInfo& j = jobs_.Mutable(job);
  auto it = j.tasks.find(uid);
  if (it == j.tasks.end()) return nullptr;
  std::string node_name = it->second.node;
  j.SetStatus(uid, previous, node_name);
  if (auto n = NodeIndex(node_name)) MutableNode(*n).AddTask(j.tasks.at(uid));
  return &j.tasks.at(uid);
}

}  // namespace tephra::scheduler
