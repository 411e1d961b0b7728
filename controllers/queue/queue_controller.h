// The queue controller (docs/compatibility.md §2.7): keeps each Queue's
// status.state (Open, Closing, Closed, Unknown) in step with OpenQueue/CloseQueue Commands and
// with whether PodGroups remain in it, defaults spec.parent to root, cascades closing to child
// queues and exports PodGroup counts per queue and phase. status.state is written with
// server-side apply under the field manager tephra-controller-manager; status.allocated
// belongs to the scheduler and is never touched.
#pragma once

#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "api/scheduling.h"
#include "base/workqueue.h"
#include "controllers/framework/controller.h"
#include "metrics/metrics.h"
#include "sync/mutex.h"

namespace tephra::controllers::queue {

inline constexpr std::string_view kFieldManager = "tephra-controller-manager";
// Set on a child queue that was closed because its parent closed; opening the parent reopens it.
inline constexpr std::string_view kClosedByParentAnnotation = "volcano.sh/closed-by-parent";

enum class QueueAction { kSync, kOpen, kClose };

// The state table of §2.7: the next status.state from the current one, the action and the
// number of PodGroups still in the queue.
//   Open/""  : Open → Open, Close → Closed if no PodGroups else Closing, Sync → Open
//   Closed   : Open → Open, Close → Closed, Sync → Closed
//   Closing  : Open → Open, Close and Sync → Closed once no PodGroups remain, else Closing
//   Unknown  : Open → Open, Close → Closed/Closing, Sync → Unknown
std::string NextQueueState(std::string_view state, QueueAction action, size_t podgroups);

// PodGroups per queue and phase ("" counted as Pending), kept in step with the PodGroup
// informer's events: a pass reads its queue's counts instead of walking every PodGroup in it,
// which under a stream of plain pods was a walk of thousands per phase change.
class PodGroupTally {
 public:
  void Add(const api::PodGroup& pg) { Count(pg, +1); }
  void Remove(const api::PodGroup& pg) { Count(pg, -1); }
  std::map<std::string, size_t> ByPhase(const std::string& queue) const;

 private:
  void Count(const api::PodGroup& pg, int delta);

  mutable sync::Mutex mu_;
  std::unordered_map<std::string, std::map<std::string, size_t>> counts_ GUARDED_BY(mu_);
};

class QueueController : public Controller {
 public:
  QueueController();
  ~QueueController() override;

  std::string_view Name() const override { return "queue-controller"; }
  Status Initialize(ControllerContext& context) override;
  void Start() override;
  void Stop() override;

  // One pass over a queue name (tests drive it without workers).
  Status Sync(const std::string& name);

 private:
  struct Pending {
    QueueAction action = QueueAction::kSync;
    std::string command_namespace;
    std::string command_name;
    std::string command_uid;
    bool consumed = false;
    std::chrono::steady_clock::time_point seen;  // monotonic, when the Command arrived
  };

  void Enqueue(const std::string& queue, Pending item);
  // A pass over a queue this controller does not see: Commands for a queue that does not
  // exist are deleted after their grace period (controllers/framework/commands.h).
  Status SettleCommandsWithoutQueue(const std::string& name);
  Status ApplyState(const std::string& name, const std::string& state);
  Status SetClosedByParent(const api::Queue& child, bool closed);
  void UpdateMetrics(const std::string& queue, const std::map<std::string, size_t>& by_phase);

  ControllerContext ctx_;
  std::shared_ptr<kube::Informer> queues_, podgroups_, commands_;
  // Every queue in the cluster: a Command's target missing from queues_ may be another
  // manager's (--queue-label-selector).
  std::shared_ptr<kube::Informer> all_queues_;
  std::unique_ptr<base::WorkQueue> queue_;
  base::QueueWorkers workers_;
  sync::Mutex mu_;
  std::unordered_map<std::string, std::deque<Pending>> inbox_ GUARDED_BY(mu_);
  metrics::GaugeVec* podgroups_gauge_ = nullptr;
  PodGroupTally tally_;
};

}  // namespace tephra::controllers::queue
