#include "scheduler/framework/cluster_view.h"

namespace tephra::scheduler {

ClusterView::ClusterView(std::shared_ptr<const Snapshot> snapshot)
    : snapshot_(std::move(snapshot)), nodes_(snapshot_->nodes), jobs_(snapshot_->jobs) {
  node_version_.assign(nodes_.size(), 0);
  node_index_.reserve(nodes_.size());
  for (size_t i = 0; i < nodes_.size(); ++i) node_index_.emplace(nodes_[i].name, i);
  job_index_.reserve(jobs_.size());
  for (size_t i = 0; i < jobs_.size(); ++i) job_index_.emplace(jobs_[i].id, i);
}

std::optional<size_t> ClusterView::NodeIndex(const std::string& name) const {
  auto it = node_index_.find(name);
  if (it == node_index_.end()) return std::nullopt;
  return it->second;
}

std::optional<size_t> ClusterView::JobIndex(const JobId& id) const {
  auto it = job_index_.find(id);
  if (it == job_index_.end()) return std::nullopt;
  return it->second;
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
