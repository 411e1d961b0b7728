// Core Kubernetes objects the suite reads: Pod (and the pod template inside a Job task), Node,
// PriorityClass, Namespace. Only the fields Tephra uses are modelled; with
// DecodeOptions::keep_raw the encoders write everything else back unchanged.
//
// Enumerated API values (phases, operators, effects) are kept as strings so that values newer
// than Tephra survive a round trip; constants for the known ones are below.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/codec.h"
#include "api/resources.h"
#include "base/status.h"
#include "base/time.h"
#include "json/json.h"
#include "kube/meta/object.h"

namespace tephra::api {

namespace pod_phase {
inline constexpr std::string_view kPending = "Pending";
inline constexpr std::string_view kRunning = "Running";
inline constexpr std::string_view kSucceeded = "Succeeded";
inline constexpr std::string_view kFailed = "Failed";
inline constexpr std::string_view kUnknown = "Unknown";
}  // namespace pod_phase

struct ResourceRequirements {
  ResourceList requests;
  ResourceList limits;
  bool operator==(const ResourceRequirements&) const = default;
};

struct ContainerPort {
  std::string name;
  int32_t container_port = 0;
  int32_t host_port = 0;
  std::string protocol;  // "" means TCP
  std::string host_ip;
  bool operator==(const ContainerPort&) const = default;
};

struct Container {
  std::string name;
  std::string image;
  ResourceRequirements resources;
  std::vector<ContainerPort> ports;
  // Only init containers: "Always" makes it a sidecar that keeps running beside the others.
  std::optional<std::string> restart_policy;
  bool operator==(const Container&) const = default;

  bool IsSidecar() const { return restart_policy && *restart_policy == "Always"; }
};

struct LabelSelectorRequirement {
  std::string key;
  std::string op;  // In, NotIn, Exists, DoesNotExist
  std::vector<std::string> values;
  bool operator==(const LabelSelectorRequirement&) const = default;
};

struct LabelSelector {
  std::map<std::string, std::string> match_labels;
  std::vector<LabelSelectorRequirement> match_expressions;
  bool operator==(const LabelSelector&) const = default;
};

// metav1.LabelSelector: matchLabels AND every matchExpression (In, NotIn, Exists,
// DoesNotExist). An empty selector matches everything; an unknown operator matches nothing.
bool MatchesLabelSelector(const LabelSelector& selector,
                          const std::map<std::string, std::string>& labels);

struct NodeSelectorRequirement {
  std::string key;
  std::string op;  // In, NotIn, Exists, DoesNotExist, Gt, Lt
  std::vector<std::string> values;
  bool operator==(const NodeSelectorRequirement&) const = default;
};

struct NodeSelectorTerm {
  std::vector<NodeSelectorRequirement> match_expressions;
  std::vector<NodeSelectorRequirement> match_fields;
  bool operator==(const NodeSelectorTerm&) const = default;
};

struct PreferredSchedulingTerm {
  int32_t weight = 0;
  NodeSelectorTerm preference;
  bool operator==(const PreferredSchedulingTerm&) const = default;
};

struct NodeAffinity {
  // requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms (ORed); nullopt = none.
  std::optional<std::vector<NodeSelectorTerm>> required;
  std::vector<PreferredSchedulingTerm> preferred;
  bool operator==(const NodeAffinity&) const = default;
};

struct PodAffinityTerm {
  std::optional<LabelSelector> label_selector;
  std::vector<std::string> namespaces;
  std::optional<LabelSelector> namespace_selector;
  std::string topology_key;
  std::vector<std::string> match_label_keys;
  std::vector<std::string> mismatch_label_keys;
  bool operator==(const PodAffinityTerm&) const = default;
};

struct WeightedPodAffinityTerm {
  int32_t weight = 0;
  PodAffinityTerm term;
  bool operator==(const WeightedPodAffinityTerm&) const = default;
};

// PodAffinity and PodAntiAffinity have the same shape.
struct PodAffinity {
  std::vector<PodAffinityTerm> required;
  std::vector<WeightedPodAffinityTerm> preferred;
  bool operator==(const PodAffinity&) const = default;
};

struct Affinity {
  std::optional<NodeAffinity> node_affinity;
  std::optional<PodAffinity> pod_affinity;
  std::optional<PodAffinity> pod_anti_affinity;
  bool operator==(const Affinity&) const = default;
};

struct Toleration {
  std::string key;
  std::string op;  // "" means Equal; Exists
  std::string value;
  std::string effect;  // "" means all; NoSchedule, PreferNoSchedule, NoExecute
  std::optional<int64_t> toleration_seconds;
  bool operator==(const Toleration&) const = default;
};

// spec.topologySpreadConstraints[i].
struct TopologySpreadConstraint {
  int32_t max_skew = 0;
  std::string topology_key;
  std::string when_unsatisfiable;  // DoNotSchedule or ScheduleAnyway
  std::optional<LabelSelector> label_selector;
  std::optional<int32_t> min_domains;
  std::vector<std::string> match_label_keys;
  std::string node_affinity_policy;  // "" means Honor
  std::string node_taints_policy;    // "" means Ignore
  bool operator==(const TopologySpreadConstraint&) const = default;
};

struct Volume {
  std::string name;
  // persistentVolumeClaim.claimName when the volume is a PVC, else empty.
  std::string pvc_claim_name;
  // A generic ephemeral volume (spec.volumes[i].ephemeral): its claim, created for the pod by
  // kube-controller-manager, is named "<pod>-<volume>" (EphemeralClaimName).
  bool ephemeral = false;
  bool operator==(const Volume&) const = default;
};

// The claim of generic ephemeral volume `volume` of pod `pod`, as kube-controller-manager names it.
std::string EphemeralClaimName(std::string_view pod, std::string_view volume);

struct PodSpec {
  std::vector<Container> init_containers;
  std::vector<Container> containers;
  ResourceList overhead;
  // Pod-level resources (spec.resources); when set they override the container sum for cpu,
  // memory and hugepages.
  std::optional<ResourceRequirements> resources;
  std::map<std::string, std::string> node_selector;
  std::optional<Affinity> affinity;
  std::vector<Toleration> tolerations;
  std::vector<TopologySpreadConstraint> topology_spread_constraints;
  std::optional<int32_t> priority;
  std::string priority_class_name;
  std::string scheduler_name;
  std::string node_name;
  std::vector<std::string> scheduling_gates;
  std::vector<Volume> volumes;
  std::optional<std::string> preemption_policy;
  std::string restart_policy;
  bool host_network = false;
  std::string dns_policy;
  bool operator==(const PodSpec&) const = default;
};

struct PodCondition {
  std::string type;
  std::string status;
  std::string reason;
  std::string message;
  std::optional<base::Time> last_transition_time;
  bool operator==(const PodCondition&) const = default;
};

// The interesting parts of a container's state: which state it is in and how it ended.
struct ContainerState {
  enum class Kind { kNone, kWaiting, kRunning, kTerminated };
  Kind kind = Kind::kNone;
  std::string reason;     // waiting or terminated
  int32_t exit_code = 0;  // terminated
  std::optional<base::Time> started_at;
  std::optional<base::Time> finished_at;
  bool operator==(const ContainerState&) const = default;
};

struct ContainerStatus {
  std::string name;
  bool ready = false;
  int32_t restart_count = 0;
  ContainerState state;
  ContainerState last_state;
  bool operator==(const ContainerStatus&) const = default;
};

struct PodStatus {
  std::string phase;
  std::string reason;
  std::string message;
  std::vector<PodCondition> conditions;
  std::vector<ContainerStatus> init_container_statuses;
  std::vector<ContainerStatus> container_statuses;
  std::string nominated_node_name;
  std::string host_ip;
  std::string pod_ip;
  std::optional<base::Time> start_time;
  bool operator==(const PodStatus&) const = default;
};

class Pod : public kube::Object {
 public:
  PodSpec spec;
  PodStatus status;

  const PodCondition* Condition(std::string_view type) const;
};

// A PodTemplateSpec inside another object (a Job task). `json` is the template exactly as
// written, so pods created from it keep every field; metadata and spec are the decoded view.
// Encoding overlays the view on `json`, so changing the view (defaulting dnsPolicy) shows up.
struct PodTemplate {
  std::string json;
  kube::ObjectMeta metadata;
  PodSpec spec;
};

struct Taint {
  std::string key;
  std::string value;
  std::string effect;
  std::optional<base::Time> time_added;
  bool operator==(const Taint&) const = default;
};

struct NodeCondition {
  std::string type;
  std::string status;
  std::string reason;
  std::string message;
  bool operator==(const NodeCondition&) const = default;
};

struct NodeAddress {
  std::string type;
  std::string address;
  bool operator==(const NodeAddress&) const = default;
};

class Node : public kube::Object {
 public:
  struct Spec {
    bool unschedulable = false;
    std::vector<Taint> taints;
    std::string provider_id;
    bool operator==(const Spec&) const = default;
  } spec;
  struct Status {
    ResourceList capacity;
    ResourceList allocatable;
    std::vector<NodeCondition> conditions;
    std::vector<NodeAddress> addresses;
    bool operator==(const Status&) const = default;
  } status;

  // The Ready condition is True.
  bool Ready() const;
};

class PriorityClass : public kube::Object {
 public:
  int32_t value = 0;
  bool global_default = false;
  std::optional<std::string> preemption_policy;  // PreemptLowerPriority (default) or Never
  std::string description;
};

class Namespace : public kube::Object {
 public:
  std::string phase;  // Active, Terminating
};

// What Tephra reads of an apps/v1 ReplicaSet: its size (the PodGroup of a drained one goes).
class ReplicaSet : public kube::Object {
 public:
  int32_t replicas = 1;  // spec.replicas, 1 when unset as the API server defaults it
};

// Decoders; errors name the object and the field path. The text overloads parse first.
StatusOr<std::shared_ptr<Pod>> DecodePod(const json::Value& value,
                                         const DecodeOptions& options = {});
StatusOr<std::shared_ptr<Pod>> DecodePod(std::string_view text, const DecodeOptions& options = {});
StatusOr<std::shared_ptr<Node>> DecodeNode(const json::Value& value,
                                           const DecodeOptions& options = {});
StatusOr<std::shared_ptr<Node>> DecodeNode(std::string_view text,
                                           const DecodeOptions& options = {});
StatusOr<std::shared_ptr<PriorityClass>> DecodePriorityClass(const json::Value& value,
                                                             const DecodeOptions& options = {});
StatusOr<std::shared_ptr<PriorityClass>> DecodePriorityClass(std::string_view text,
                                                             const DecodeOptions& options = {});
StatusOr<std::shared_ptr<Namespace>> DecodeNamespace(const json::Value& value,
                                                     const DecodeOptions& options = {});
StatusOr<std::shared_ptr<Namespace>> DecodeNamespace(std::string_view text,
                                                     const DecodeOptions& options = {});
StatusOr<std::shared_ptr<ReplicaSet>> DecodeReplicaSet(const json::Value& value,
                                                       const DecodeOptions& options = {});

// Encoders: modelled fields written over `raw` (when kept), so unknown fields survive.
std::string EncodePod(const Pod& pod);
std::string EncodeNode(const Node& node);
std::string EncodePriorityClass(const PriorityClass& pc);
std::string EncodeNamespace(const Namespace& ns);
// The pods/binding body that places pod namespace_/name on `node`. With a non-empty `uid` the
// API server refuses it for a pod recreated under the same name. The API server adds the
// binding's `annotations` to the pod's as it binds it, in the same write.
std::string EncodePodBinding(std::string_view namespace_, std::string_view name,
                             std::string_view uid, std::string_view node,
                             const std::map<std::string, std::string>& annotations = {});

// Pieces shared with the Job and storage codecs.
void DecodePodSpec(const json::Reader& r, PodSpec* out);
void EncodePodSpecInto(const PodSpec& spec, JsonObject& o);
void DecodeLabelSelector(const json::Reader& r, LabelSelector* out);
void DecodeNodeSelectorTerm(const json::Reader& r, NodeSelectorTerm* out);
void EncodeNodeSelectorTermInto(const NodeSelectorTerm& term, JsonObject& o);
void EncodeLabelSelectorInto(const LabelSelector& selector, JsonObject& o);
// Decodes a PodTemplateSpec, keeping its text.
void DecodePodTemplate(const json::Reader& r, PodTemplate* out);
// Writes the template: its json with the view overlaid.
void EncodePodTemplateInto(const PodTemplate& tmpl, JsonObject& o);
// Decodes a PodTemplate from text (for templates built in code).
StatusOr<PodTemplate> ParsePodTemplate(std::string_view json);
// Rewrites tmpl->json with the view overlaid, after code changed the view, so that pods
// created from the text see the change.
void SyncPodTemplateJson(PodTemplate* tmpl);

// A container's requests as Kubernetes defaults them: a resource with a limit but no request
// requests its limit.
ResourceList EffectiveRequests(const ResourceRequirements& resources);

// The pod's scheduling request exactly as Kubernetes computes it (resourcehelper.PodRequests):
//   max(Σ containers + Σ sidecar init containers,
//       max over init containers i of (i + sidecars started before i)) + overhead,
// where a sidecar's own start counts itself and the sidecars before it. Pod-level requests,
// when set, replace the result for cpu, memory and hugepages. Requests default to limits.
// The pods dimension is not included (schedulers count pods per node separately).
Resources PodRequest(const PodSpec& spec);

// The pod's limits as Kubernetes totals them for a ResourceQuota (resourcehelper.PodLimits):
// PodRequest's formula over the containers' limits, without defaulting; the overhead counts
// only for a resource that is limited.
Resources PodLimit(const PodSpec& spec);

// A PodGroup's minResources as Volcano writes them (docs/compatibility.md §2.5) for `pods` pods
// whose requests total `requests` and limits `limits`: every request under its own name and as
// requests.<name>, the cpu, memory and ephemeral-storage limits as limits.<name>, and the pod
// count as pods and count/pods.
ResourceList QuotaStyleResources(const Resources& requests, const Resources& limits, int64_t pods);

}  // namespace tephra::api
