// Volume placement, run inside the predicates plugin as Volcano runs kube-scheduler's volume
// filters there, with kube-scheduler's semantics and reasons (docs/scheduler.md, "Storage"):
//   * VolumeBinding: a missing claim, or an unbound claim of an Immediate class, rules the pod
//     out everywhere; a bound claim's PV must accept the node (node affinity); an unbound claim
//     of a WaitForFirstConsumer class needs, on the node, an available PV that fits it (the
//     smallest, as kube-scheduler picks) or a class that can provision there.
//   * VolumeZone: the zone and region labels of a bound claim's PV must match the node's.
//   * VolumeRestrictions: a ReadWriteOncePod claim used by another pod rules every node out.
//   * NodeVolumeLimits: the CSI volumes on a node stay within its CSINode allocatable counts.
// Generic ephemeral volumes are their claims ("<pod>-<volume>", owned by the pod).
//
// What depends only on the snapshot (a claim's state, a bound PV against a node) is answered by
// Static, which the session caches per spec and node. What depends on this session's placements
// is Dynamic and never cached: which PV each unbound claim takes is decided when its pod is
// allocated (Allocated) and undone when it is unallocated, so two pods of a session never take
// the same PV and a claim shared by pods is decided once; the decisions leave the session as
// the pods' pre-bind steps (PreBind).
#pragma once

#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "scheduler/framework/session.h"

namespace tephra::scheduler {

struct VolumeOptions {
  bool binding = true;                     // predicate.VolumeBindingEnable
  bool zone = true;                        // predicate.VolumeZoneEnable
  bool limits = true;                      // predicate.NodeVolumeLimitsEnable
  std::chrono::seconds bind_timeout{600};  // volumebinding.bindTimeoutSeconds
  // volumebinding.weight: how much the score of the PVs a pod would take on a node counts
  // (0: not at all); volumebinding.shape: the score (0..10) by utilisation (0..100 %) of
  // those PVs, linear between points.
  double weight = 0;
  std::vector<std::pair<int, int>> shape{{0, 10}, {100, 0}};
};

class VolumePlacement {
 public:
  VolumePlacement(const Session& session, VolumeOptions options);

  Fit Static(const TaskInfo& task, const NodeInfo& node);
  Fit Dynamic(const TaskInfo& task, const NodeInfo& node);
  // 0..100 times the weight: how well the PVs the pod would take on `node` fit its claims.
  double Score(const TaskInfo& task, const NodeInfo& node);
  // The session placed (or took back) `task` on `node`.
  void Allocated(const TaskInfo& task, const std::string& node);
  void Deallocated(const TaskInfo& task, const std::string& node);
  // The volume writes `task` needs before its bind: for each claim whose volume it decided.
  std::vector<PreBindStep> PreBind(const TaskInfo& task, const std::string& node) const;

 private:
  // One claim of a pod, resolved against the snapshot.
  struct ClaimUse {
    const api::PersistentVolumeClaim* claim = nullptr;
    std::string key;  // "namespace/name"
    enum class State { kBound, kDelayed, kProvisioning } state = State::kBound;
    const api::PersistentVolume* volume = nullptr;  // kBound: its PV (null: does not exist)
    const api::StorageClass* klass = nullptr;       // kDelayed
    bool read_write_once_pod = false;
  };
  // A spec's claims: a failure that rules out every node, or the claims, unbound ones of
  // WaitForFirstConsumer classes (kDelayed, kProvisioning) by ascending request.
  struct PodVolumes {
    Fit error;
    std::vector<ClaimUse> claims;
    std::vector<size_t> unbound;
  };
  // A claim's volume as this session decided it: a PV, or provisioning on `node`. Its users
  // are the session's pods placed with it, first the one whose pre-bind steps write it.
  struct Decision {
    const api::PersistentVolume* volume = nullptr;
    std::string node;
    std::vector<std::string> users;  // task uids
  };
  // Where a class's free PVs can go: PVs without node affinity, PVs whose affinity is one
  // `In` requirement (by "key=value" of a value it admits: local and zonal PVs), and the rest.
  struct ClassVolumes {
    std::vector<const api::PersistentVolume*> anywhere;
    std::unordered_map<std::string, std::vector<const api::PersistentVolume*>> by_label;
    std::vector<const api::PersistentVolume*> other;
  };

  const PodVolumes& Resolve(const TaskInfo& task);
  const ClassVolumes& VolumesOf(const std::string& klass);
  // The PV (or provisioning, null with *provision) claim `use` would take on `node`, skipping
  // PVs this session took and those in `chosen`; false when neither is possible.
  bool Choose(const ClaimUse& use, const NodeInfo& node,
              const std::unordered_set<const api::PersistentVolume*>& chosen,
              const api::PersistentVolume** volume);
  // Whether every unbound claim of the pod finds a volume on `node`; `volumes` gets the PV
  // each takes (null: provisioned), in the order of PodVolumes::unbound.
  bool ChooseAll(const PodVolumes& pod, const NodeInfo& node,
                 std::vector<const api::PersistentVolume*>* volumes);
  Fit CheckLimits(const TaskInfo& task, const PodVolumes& pod, const NodeInfo& node);
  // A claim's CSI volume: (driver, handle), or empty strings when it is not one.
  std::pair<std::string, std::string> CsiVolumeOf(const api::PersistentVolumeClaim& claim) const;
  // Pods using each ReadWriteOncePod claim, counted once per session and kept current.
  void CountReadWriteOncePodUsers();
  // A reason that names an object ("persistentvolumeclaim \"data\" not found"), kept for the
  // session so fit results can point at it; past a bound, `fallback`.
  const char* Reason(std::string text, const char* fallback);

  const Session& session_;
  const StorageState& storage_;
  const VolumeOptions options_;
  std::unordered_map<const SchedulingSpec*, PodVolumes> pods_;
  std::unordered_map<std::string, ClassVolumes> classes_;
  std::unordered_map<std::string, Decision> decided_;  // by claim key
  std::unordered_set<const api::PersistentVolume*> taken_;
  std::unordered_map<std::string, int> read_write_once_pod_users_;  // by claim key
  std::deque<std::string> reason_texts_;
  std::unordered_map<std::string, const char*> reasons_;
};

}  // namespace tephra::scheduler
