// scheduling.volcano.sh/v1beta1 Queue and PodGroup (docs/compatibility.md §1.2, §1.3),
// and the scheduler-plugins scheduling.x-k8s.io/v1alpha1 PodGroup read into the same model.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/batch.h"
#include "api/codec.h"
#include "api/core.h"
#include "api/resources.h"
#include "base/status.h"
#include "base/time.h"
#include "json/json.h"
#include "kube/meta/object.h"

namespace tephra::api {

inline constexpr std::string_view kSchedulingApiVersion = "scheduling.volcano.sh/v1beta1";
inline constexpr std::string_view kQueueKind = "Queue";
inline constexpr std::string_view kPodGroupKind = "PodGroup";
inline constexpr std::string_view kSchedPluginsApiVersion = "scheduling.x-k8s.io/v1alpha1";

inline constexpr std::string_view kDefaultSchedulerName = "volcano";
inline constexpr std::string_view kDefaultQueue = "default";
inline constexpr std::string_view kRootQueue = "root";

namespace queue_state {
inline constexpr std::string_view kOpen = "Open";
inline constexpr std::string_view kClosed = "Closed";
inline constexpr std::string_view kClosing = "Closing";
inline constexpr std::string_view kUnknown = "Unknown";
}  // namespace queue_state

namespace podgroup_phase {
inline constexpr std::string_view kPending = "Pending";
inline constexpr std::string_view kRunning = "Running";
inline constexpr std::string_view kUnknown = "Unknown";
inline constexpr std::string_view kInqueue = "Inqueue";
inline constexpr std::string_view kCompleted = "Completed";
}  // namespace podgroup_phase

// The PodGroup phases as a type, for code that branches on them (the scheduler). kNone: no
// phase written yet, as on a new PodGroup.
enum class PodGroupPhase { kNone, kPending, kInqueue, kRunning, kUnknown, kCompleted };
// "" for kNone, otherwise the podgroup_phase name ("Inqueue").
std::string_view ToString(PodGroupPhase phase);
// The phase `text` names: "" is kNone, and a name that is none of podgroup_phase is kUnknown.
PodGroupPhase PodGroupPhaseFromString(std::string_view text);

namespace podgroup_condition {
inline constexpr std::string_view kUnschedulable = "Unschedulable";
inline constexpr std::string_view kScheduled = "Scheduled";
// Reasons.
inline constexpr std::string_view kNotEnoughResources = "NotEnoughResources";
inline constexpr std::string_view kNotEnoughTasks = "NotEnoughTasks";
inline constexpr std::string_view kNotEnoughPodsOfTask = "NotEnoughPodsOfTask";
inline constexpr std::string_view kPodFailed = "PodFailed";
inline constexpr std::string_view kPodDeleted = "PodDeleted";
}  // namespace podgroup_condition

// ---------------------------------------------------------------------------------------------
// Queue

struct ExtendCluster {
  std::string name;
  int32_t weight = 0;
  ResourceList capacity;
  bool operator==(const ExtendCluster&) const = default;
};

struct NodeGroupAffinity {
  std::vector<std::string> required;   // requiredDuringSchedulingIgnoredDuringExecution
  std::vector<std::string> preferred;  // preferredDuringSchedulingIgnoredDuringExecution
  bool operator==(const NodeGroupAffinity&) const = default;
};

struct QueueAffinity {
  std::optional<NodeGroupAffinity> node_group_affinity;
  std::optional<NodeGroupAffinity> node_group_anti_affinity;
  bool operator==(const QueueAffinity&) const = default;
};

struct QueueSpec {
  int32_t weight = 0;
  ResourceList capability;
  std::optional<bool> reclaimable;
  std::vector<ExtendCluster> extend_clusters;
  std::optional<ResourceList> guarantee;  // guarantee.resource; nullopt when no guarantee
  std::optional<QueueAffinity> affinity;
  std::string type;
  std::string parent;
  ResourceList deserved;
  int32_t priority = 0;
  std::string dequeue_strategy;  // fifo or traverse
  bool operator==(const QueueSpec&) const = default;
};

struct QueueReservation {
  std::vector<std::string> nodes;
  ResourceList resource;
  bool operator==(const QueueReservation&) const = default;
};

struct QueueStatus {
  std::string state;
  int32_t unknown = 0;
  int32_t pending = 0;
  int32_t running = 0;
  int32_t inqueue = 0;
  int32_t completed = 0;
  ResourceList allocated;
  std::optional<QueueReservation> reservation;
  bool operator==(const QueueStatus&) const = default;
};

class Queue : public kube::Object {
 public:
  QueueSpec spec;
  QueueStatus status;

  // The parent queue's name: spec.parent, or root for every queue but root itself.
  std::string ParentName() const;
};

// ---------------------------------------------------------------------------------------------
// PodGroup

struct PodGroupCondition {
  std::string type;
  std::string status;
  std::string transition_id;
  std::optional<base::Time> last_transition_time;
  std::string reason;
  std::string message;
  bool operator==(const PodGroupCondition&) const = default;
};

struct SubGroupPolicy {
  std::string name;
  std::optional<NetworkTopologySpec> network_topology;
  std::optional<int32_t> sub_group_size;
  std::optional<int32_t> min_sub_groups;
  std::optional<LabelSelector> label_selector;
  std::vector<std::string> match_label_keys;
  bool operator==(const SubGroupPolicy&) const = default;
};

struct PodGroupSpec {
  int32_t min_member = 0;
  std::map<std::string, int32_t> min_task_member;
  std::string queue;
  std::string priority_class_name;
  std::optional<ResourceList> min_resources;
  std::optional<NetworkTopologySpec> network_topology;
  std::vector<SubGroupPolicy> sub_group_policy;
  bool operator==(const PodGroupSpec&) const = default;
};

struct PodGroupStatus {
  std::string phase;
  std::vector<PodGroupCondition> conditions;
  int32_t running = 0;
  int32_t succeeded = 0;
  int32_t failed = 0;
  bool operator==(const PodGroupStatus&) const = default;
};

class PodGroup : public kube::Object {
 public:
  PodGroupSpec spec;
  PodGroupStatus status;
};

// ---------------------------------------------------------------------------------------------
// scheduler-plugins (coscheduling) PodGroup

namespace sched_plugins_phase {
inline constexpr std::string_view kPending = "Pending";
inline constexpr std::string_view kScheduling = "Scheduling";
inline constexpr std::string_view kRunning = "Running";
inline constexpr std::string_view kFinished = "Finished";
inline constexpr std::string_view kFailed = "Failed";
inline constexpr std::string_view kUnknown = "Unknown";
}  // namespace sched_plugins_phase

class SchedPluginsPodGroup : public kube::Object {
 public:
  struct Spec {
    int32_t min_member = 0;
    ResourceList min_resources;
    std::optional<int32_t> schedule_timeout_seconds;
    bool operator==(const Spec&) const = default;
  } spec;
  struct Status {
    std::string phase;
    std::string occupied_by;
    int32_t running = 0;
    int32_t succeeded = 0;
    int32_t failed = 0;
    std::optional<base::Time> schedule_start_time;
    bool operator==(const Status&) const = default;
  } status;
};

// The Volcano model of a scheduler-plugins PodGroup, so one scheduler code path serves both.
// minMember and minResources carry over (an empty minResources becomes "not set"); the queue is
// `queue` (it has none of its own). Phases map Pending->Pending, Scheduling->Inqueue,
// Running->Running, Finished and Failed->Completed, Unknown->Unknown, ""->Pending. The result
// keeps the original's apiVersion and kind so writers know where it came from.
PodGroup ToVolcanoPodGroup(const SchedPluginsPodGroup& pg, std::string_view queue);
// The scheduler-plugins phase for a Volcano phase (Inqueue->Scheduling, Completed->Finished).
std::string SchedPluginsPhaseFor(std::string_view volcano_phase);
// The PodGroup the PodGroup controller makes for a pod that names none:
// podgroup-<uid of the pod's controller, or of the pod itself>. The scheduler uses the same
// name to hold such a pod before the group exists.
std::string ImplicitPodGroupName(const kube::ObjectMeta& pod);
// The name of that PodGroup for pods whose controller (or which itself) has this uid.
std::string ImplicitPodGroupNameOf(std::string_view owner_uid);
// The PodGroup for a plain pod. `owner_annotations` are the controller owner's annotations
// (empty for a bare pod): scheduling.volcano.sh/group-min-member gives minMember (default 1)
// and every volcano.sh/ annotation is inherited. minResources = pod requests × minMember
// (with the quota-style keys, QuotaStyleResources),
// queue from the pod's scheduling.volcano.sh/queue-name (else `default_queue`),
// priorityClassName from the pod, the pod's preemption/cooldown/revocable-zone/budget keys
// copied, owner = the pod's controller owner, else the pod. Status phase Pending.
PodGroup ImplicitPodGroup(const Pod& pod,
                          const std::map<std::string, std::string>& owner_annotations,
                          const std::string& default_queue);

// The network topology `volcano.sh/network-topology-mode` and `-highest-tier` ask for, as
// annotations or, as KubeRay writes them, labels (annotations win); nullopt without a mode.
std::optional<NetworkTopologySpec> NetworkTopologyFromMetadata(const kube::ObjectMeta& meta);
// A PodGroup's network topology: spec.networkTopology, else from its metadata.
std::optional<NetworkTopologySpec> NetworkTopologyOf(const PodGroup& pg);

StatusOr<std::shared_ptr<Queue>> DecodeQueue(const json::Value& value,
                                             const DecodeOptions& options = {});
StatusOr<std::shared_ptr<Queue>> DecodeQueue(std::string_view text,
                                             const DecodeOptions& options = {});
StatusOr<std::shared_ptr<PodGroup>> DecodePodGroup(const json::Value& value,
                                                   const DecodeOptions& options = {});
StatusOr<std::shared_ptr<PodGroup>> DecodePodGroup(std::string_view text,
                                                   const DecodeOptions& options = {});
StatusOr<std::shared_ptr<SchedPluginsPodGroup>> DecodeSchedPluginsPodGroup(
    const json::Value& value, const DecodeOptions& options = {});
StatusOr<std::shared_ptr<SchedPluginsPodGroup>> DecodeSchedPluginsPodGroup(
    std::string_view text, const DecodeOptions& options = {});

// Whole objects: bodies of create, update and status updates (Queue has a status subresource;
// a PodGroup's status is written with a plain update).
std::string EncodeQueue(const Queue& queue);
std::string EncodePodGroup(const PodGroup& pg);
std::string EncodeSchedPluginsPodGroup(const SchedPluginsPodGroup& pg);

}  // namespace tephra::api
