// The cluster as one session sees it: the snapshot's nodes and jobs, with the session's own
// changes (task placements, evictions, PodGroup phases) applied.
//
// Opening a view copies the snapshot's pointers; a node or job is copied only when it first
// changes (copy-on-write), and the name indexes are built on the first lookup, so a session
// over an unchanged cluster costs almost nothing.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "scheduler/model/model.h"

namespace tephra::scheduler {

// Shared, read-only items of a snapshot; an item is copied into one the owner may change the
// first time it asks to change it.
template <typename T>
class CopyOnWrite {
 public:
  explicit CopyOnWrite(std::vector<std::shared_ptr<const T>> shared)
      : items_(std::move(shared)), own_(items_.size()) {}

  size_t size() const { return items_.size(); }
  const T& operator[](size_t i) const { return *items_[i]; }
  T& Mutable(size_t i) {
    if (!own_[i]) {
      own_[i] = std::make_shared<T>(*items_[i]);
      items_[i] = own_[i];
    }
    return *own_[i];
  }

 private:
  std::vector<std::shared_ptr<const T>> items_;  // what readers see
  std::vector<std::shared_ptr<T>> own_;          // this owner's copies (null: still shared)
};

class ClusterView {
 public:
  explicit ClusterView(std::shared_ptr<const Snapshot> snapshot);
  ClusterView(const ClusterView&) = delete;
  ClusterView& operator=(const ClusterView&) = delete;

  size_t node_count() const { return nodes_.size(); }
  const NodeInfo& node(size_t i) const { return nodes_[i]; }
  std::optional<size_t> NodeIndex(const std::string& name) const;
  size_t job_count() const { return jobs_.size(); }
  const JobInfo& job(size_t i) const { return jobs_[i]; }
  std::optional<size_t> JobIndex(const JobId& id) const;
  const std::map<std::string, std::shared_ptr<const QueueInfo>>& queues() const {
    return snapshot_->queues;
  }
  const QueueInfo* queue(const std::string& name) const;
  const api::Resources& total_resource() const { return snapshot_->total; }
  const Snapshot& snapshot() const { return *snapshot_; }
  const std::shared_ptr<const Snapshot>& snapshot_ptr() const { return snapshot_; }
  const std::map<std::string, std::string>* NamespaceLabels(const std::string& ns) const;
  // Changes so far to node i (including undone ones).
  uint64_t NodeVersion(size_t i) const { return node_version_[i]; }

  // ---- changes; each returns the task as it is afterwards, for the plugins' event handlers ----
  // A pending task onto node `node` with `status` (Allocated or Pipelined).
  StatusOr<const TaskInfo*> Place(size_t job, const std::string& uid, size_t node,
                                  TaskStatus status);
  // A task running on a node becomes Releasing.
  StatusOr<const TaskInfo*> Release(size_t job, const std::string& uid);
  // Undoes Place: the task is pending again. Returns the task as it was placed (null when the
  // job has no such task).
  std::optional<TaskInfo> Unplace(size_t job, const std::string& uid, size_t node);
  // Undoes Release: the task is back to `previous` on its node (null when no such task).
  const TaskInfo* Unrelease(size_t job, const std::string& uid, TaskStatus previous);
  void SetPhase(size_t job, api::PodGroupPhase phase) { jobs_.Mutable(job).phase = phase; }

 private:
  NodeInfo& MutableNode(size_t i);

  // Keys view the snapshot's names, which the view keeps alive and never renames.
  using NameIndex = std::unordered_map<std::string_view, size_t>;

  std::shared_ptr<const Snapshot> snapshot_;
  CopyOnWrite<NodeInfo> nodes_;
  std::vector<uint64_t> node_version_;
  mutable std::optional<NameIndex> node_index_;
  CopyOnWrite<JobInfo> jobs_;
  mutable std::optional<NameIndex> job_index_;
};

}  // namespace tephra::scheduler
