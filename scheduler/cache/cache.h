// The scheduler cache: the cluster as informers report it, plus the scheduler's own promises
// (pods it is binding, pods it is evicting). Sessions read it through snapshots that share its
// NodeInfo/JobInfo objects; a change copies only the object it touches, and only while a
// snapshot still holds the old version.
//
// Thread-safety: every method may be called from any thread (informer handlers, the session
// loop, binder callbacks).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "api/core.h"
#include "api/scheduling.h"
#include "api/topology.h"
#include "base/clock.h"
#include "scheduler/model/hypernodes.h"
#include "scheduler/model/model.h"
#include "scheduler/model/prebind.h"
#include "sync/mutex.h"

namespace tephra::scheduler {

struct CacheOptions {
  std::vector<std::string> scheduler_names{"volcano"};
  std::string default_queue = "default";
  // How long a successful bind may go unconfirmed by the informer before the cache stops
  // trusting its own assumption and waits for the API server's view.
  std::chrono::seconds assume_ttl{60};
};

class SchedulerCache {
 public:
  explicit SchedulerCache(CacheOptions options, base::ClockInterface& clock = base::RealClock());

  // ---- informer input ----
  void UpsertNode(std::shared_ptr<const api::Node> node);
  void DeleteNode(const std::string& name);
  void UpsertPod(PodInfoPtr pod);
  void DeletePod(const PodInfo& pod);
  void UpsertPodGroup(std::shared_ptr<const api::PodGroup> pg);
  void DeletePodGroup(const std::string& namespace_, const std::string& name);
  void UpsertQueue(std::shared_ptr<const api::Queue> queue);
  void DeleteQueue(const std::string& name);
  void UpsertPriorityClass(std::shared_ptr<const api::PriorityClass> pc);
  void DeletePriorityClass(const std::string& name);
  void UpsertNamespace(std::shared_ptr<const api::Namespace> ns);
  void DeleteNamespace(const std::string& name);
  void UpsertPdb(std::shared_ptr<const PdbInfo> pdb);
  void DeletePdb(const std::string& key);
  void UpsertQuota(std::shared_ptr<const QuotaInfo> quota);
  void DeleteQuota(const std::string& key);
  void UpsertHyperNode(std::shared_ptr<const api::HyperNode> hypernode);
  void DeleteHyperNode(const std::string& name);
  // Storage (docs/scheduler.md, "Storage"). A change may let a pod waiting for its volumes go.
  void UpsertClaim(std::shared_ptr<const api::PersistentVolumeClaim> claim);
  void DeleteClaim(const std::string& key);  // "namespace/name"
  void UpsertVolume(std::shared_ptr<const api::PersistentVolume> volume);
  void DeleteVolume(const std::string& name);
  void UpsertStorageClass(std::shared_ptr<const api::StorageClass> klass);
  void DeleteStorageClass(const std::string& name);
  void UpsertCSINode(std::shared_ptr<const api::CSINode> node);
  void DeleteCSINode(const std::string& name);
  void UpsertCSIDriver(std::shared_ptr<const api::CSIDriver> driver);
  void DeleteCSIDriver(const std::string& name);

  // ---- the scheduler's own changes ----
  // A bind request is about to be sent: the task occupies `node` from now on.
  Status AssumeBinding(const JobId& job, const std::string& uid, const std::string& node);
  // The bind failed: the task is Pending again and the node is freed.
  void ForgetBinding(const JobId& job, const std::string& uid);
  // An eviction was requested: the task releases its resources.
  Status MarkReleasing(const JobId& job, const std::string& uid);
  // The volume steps of a committed unit are about to be written: sessions from now see the PV
  // taken by its claim (claimRef set) and the claim's selected node, so no later session hands
  // the same PV out again before the informer shows the writes. An assumption stands until the
  // informer shows the object as assumed (or taken by another claim, or gone), until it is
  // forgotten, or for assume_ttl.
  void AssumeVolumeSteps(const std::vector<PreBindStep>& steps);
  // The unit failed: sessions see the informer's objects again.
  void ForgetVolumeSteps(const std::vector<PreBindStep>& steps);
  // A unit of binds failed: its binds and volume steps are forgotten at once, so no session
  // sees part of a gang given back while the rest still counts as bound.
  void ForgetUnit(const std::vector<std::pair<JobId, std::string>>& binds,
                  const std::vector<PreBindStep>& steps);
  // The API server's view, without assumptions (the binder checks its steps against it): null
  // when the informer has no such object.
  std::shared_ptr<const api::PersistentVolumeClaim> ObservedClaim(const std::string& key) const;
  std::shared_ptr<const api::PersistentVolume> ObservedVolume(const std::string& name) const;
  // Whether the informer still has the pod (a unit waiting for its volumes stops when not).
  bool HasPod(const std::string& uid) const;
  // A PodGroup status write is about to be sent: sessions see `status` from now on. Without
  // this, sessions that start before the informer echoes the write compare against the old
  // status and send the same write again. Informer updates keep flowing (spec, metadata); the
  // assumed status stands until an update carries it, or for assume_ttl.
  void AssumePodGroupStatus(const JobId& job, api::PodGroupStatus status);
  // The write failed: sessions see the informer's status again (and write again).
  void ForgetPodGroupStatus(const JobId& job);
  // Called (from the informer's thread, outside the cache's lock) when a PodGroup object
  // appears for a job that had none or only a provisional one: status updates decided before
  // can be written now. Null clears it; a call in progress finishes first.
  void SetGroupArrivalListener(std::function<void(const JobId&)> listener);
  // Whether the API server holds job's PodGroup (as far as the informer has said).
  bool HasPodGroupObject(const JobId& job) const;
  // Whether the pod is on a node: bound as the informer says, or by a bind in flight.
  bool PodPlaced(const std::string& uid) const;

  std::shared_ptr<const Snapshot> TakeSnapshot();
  uint64_t generation() const;
  // Blocks until something that might let a pending pod be placed changed after
  // `since_generation`, or until `deadline`. Returns the generation it woke at.
  uint64_t WaitForWork(uint64_t since_generation, std::chrono::steady_clock::time_point deadline);

  // For metrics and tests.
  size_t NodeCount() const;
  size_t JobCount() const;
  size_t PodCount() const;
  size_t AssumedCount() const;
  std::shared_ptr<const JobInfo> Job(const JobId& id) const;
  std::shared_ptr<const NodeInfo> Node(const std::string& name) const;
  // For the admin API: the jobs of one namespace (to find a Volcano Job's PodGroup) and a queue.
  std::vector<std::shared_ptr<const JobInfo>> JobsIn(const std::string& namespace_) const;
  std::shared_ptr<const QueueInfo> Queue(const std::string& name) const;
  // The newest PodGroup (by creation) of Volcano Job `job` in `namespace_`, or null.
  std::shared_ptr<const JobInfo> JobOfVolcanoJob(const std::string& namespace_,
                                                 const std::string& job) const;

 private:
  // A pod as the informer last gave it, and where the cache holds it.
  struct PodEntry {
    PodInfoPtr pod;
    JobId job;         // "" when the pod is not one of our jobs' tasks
    std::string node;  // "" when not on a node
  };
  struct Assumed {
    JobId job;
    std::string node;
    std::chrono::steady_clock::time_point expires;
  };
  // A PV the scheduler gave a claim (BindVolumeStep), or a node it selected for a claim's
  // provisioning (ProvisionVolumeStep), not shown by the informer yet.
  struct AssumedClaimRef {
    api::ClaimReference ref;
    std::chrono::steady_clock::time_point expires;
  };
  struct AssumedSelectedNode {
    std::string node;
    std::chrono::steady_clock::time_point expires;
  };
  struct AssumedStatus {
    api::PodGroupStatus status;
    std::shared_ptr<const api::PodGroup> observed;  // the informer's latest version
    std::chrono::steady_clock::time_point expires;
  };

  bool Ours(const PodInfo& pod) const;
  // Copy-on-write accessors.
  NodeInfo* MutableNode(const std::string& name, bool create) REQUIRES(mu_);
  JobInfo* MutableJob(const JobId& id, bool create) REQUIRES(mu_);
  // Removes the pod from its node and job; returns the job's id. A job left without tasks and
  // without a PodGroup object goes too, unless `keep_job` (the caller places the pod again).
  JobId RemovePodLocked(const std::string& uid, bool keep_job = false) REQUIRES(mu_);
  void EraseJobIfUnusedLocked(const JobId& id) REQUIRES(mu_);
  void PlacePodLocked(const PodInfoPtr& pod) REQUIRES(mu_);
  // Places `pod` afresh where the pod with `uid` was (a new version of it, or the API server's
  // view again). A pod whose group has no object yet keeps the provisional one it was placed
  // under when it is bound (a bound pod makes none), until the object arrives: the job it
  // leaves goes only if nothing is left in it.
  void ReplacePodLocked(const std::string& uid, const PodInfoPtr& pod) REQUIRES(mu_);
  // Stores `pod` as the informer's latest; returns the version it replaces (null if none).
  PodInfoPtr SetPodLocked(const PodInfoPtr& pod) REQUIRES(mu_);
  int32_t TaskPriorityLocked(const PodInfo& pod) const REQUIRES(mu_);
  int32_t ClassValueLocked(const std::string& class_name) const REQUIRES(mu_);
  void RefreshJobFromPodGroupLocked(JobInfo& job) const REQUIRES(mu_);
  // Gives a job without a PodGroup object the one pod's controller will create for it.
  void InstallProvisionalGroupLocked(JobInfo& job, const PodInfo& pod) REQUIRES(mu_);
  // Returns whether the group arrived (the job had no object before).
  bool StorePodGroup(std::shared_ptr<const api::PodGroup> pg) EXCLUDES(mu_);
  // `observed` with the status the scheduler wrote but the informer has not echoed yet.
  static std::shared_ptr<const api::PodGroup> WithStatus(const api::PodGroup& observed,
                                                         const api::PodGroupStatus& status);
  void ExpireAssumedLocked() REQUIRES(mu_);
  void ForgetBindingLocked(const JobId& job, const std::string& uid) REQUIRES(mu_);
  void ForgetVolumeStepsLocked(const std::vector<PreBindStep>& steps) REQUIRES(mu_);
  // The storage the next snapshot carries: the informers' objects with the assumptions laid
  // over them (built when storage changed since the last one).
  std::shared_ptr<const StorageState> StorageLocked() REQUIRES(mu_);
  void StorageChangedLocked() REQUIRES(mu_);
  void ChangedLocked(bool may_unblock_pending) REQUIRES(mu_);

  CacheOptions options_;
  base::ClockInterface& clock_;

  sync::Mutex listener_mu_;  // taken after mu_ is released, never with it
  std::function<void(const JobId&)> on_group_arrived_ GUARDED_BY(listener_mu_);
  mutable sync::Mutex mu_;
  sync::CondVar work_cv_;
  uint64_t generation_ GUARDED_BY(mu_) = 0;       // bumped by every change
  uint64_t work_generation_ GUARDED_BY(mu_) = 0;  // bumped by changes that may unblock pods
  std::unordered_map<std::string, std::shared_ptr<NodeInfo>> nodes_ GUARDED_BY(mu_);
  std::unordered_map<JobId, std::shared_ptr<JobInfo>> jobs_ GUARDED_BY(mu_);
  // By a view of the entry's own pod uid (no uid copy per pod): SetPodLocked re-keys an entry
  // whenever it changes the entry's pod.
  std::unordered_map<std::string_view, PodEntry> pods_ GUARDED_BY(mu_);
  std::unordered_map<std::string, Assumed> assumed_ GUARDED_BY(mu_);  // by uid
  std::unordered_map<JobId, AssumedStatus> assumed_status_ GUARDED_BY(mu_);
  std::map<std::string, std::shared_ptr<QueueInfo>> queues_ GUARDED_BY(mu_);
  std::map<std::string, std::shared_ptr<const api::PriorityClass>> priority_classes_
      GUARDED_BY(mu_);
  std::map<std::string, std::map<std::string, std::string>> namespace_labels_ GUARDED_BY(mu_);
  std::map<std::string, std::shared_ptr<const PdbInfo>> pdbs_ GUARDED_BY(mu_);
  std::map<std::string, std::shared_ptr<const QuotaInfo>> quotas_ GUARDED_BY(mu_);
  std::map<std::string, std::shared_ptr<const api::HyperNode>> hypernodes_ GUARDED_BY(mu_);
  // Built at the next snapshot after HyperNodes, or the nodes they cover, changed.
  std::shared_ptr<const HyperNodeTree> topology_ GUARDED_BY(mu_);
  // Storage as the informers report it (no assumptions; StorageLocked() adds them).
  StorageState observed_storage_ GUARDED_BY(mu_);
  std::map<std::string, AssumedClaimRef> assumed_claim_refs_ GUARDED_BY(mu_);    // by PV
  std::map<std::string, AssumedSelectedNode> assumed_selected_ GUARDED_BY(mu_);  // by claim
  // Built at the next snapshot after storage or an assumption about it changed.
  std::shared_ptr<const StorageState> storage_ GUARDED_BY(mu_);
};

// Builds a QueueInfo from a Queue object (weight, capability, deserved, guarantee, state).
QueueInfo MakeQueueInfo(const api::Queue& queue);

// A PodGroup's minResources as enqueue counts it: negative amounts (possible only when the
// PodGroup bypassed admission) reserve nothing (docs/controllers.md).
api::Resources ReservedMinResources(const api::ResourceList& min_resources);

}  // namespace tephra::scheduler
