// The scheduler's view of a pod: what placement needs and nothing more. The pod informer
// decodes straight into PodInfo, so the cache never holds whole pods: 100,000 pods cost what
// their labels and a few strings cost, because the scheduling-relevant spec is interned —
// every pod of one task template points at one SchedulingSpec.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "api/core.h"
#include "api/resources.h"
#include "api/scheduling.h"
#include "kube/meta/object.h"
#include "sync/mutex.h"

namespace tephra::scheduler {

struct HostPort {
  std::string protocol;  // TCP when unset
  std::string ip;        // "" or 0.0.0.0 means every address
  int32_t port = 0;
  bool operator==(const HostPort&) const = default;
};

// A claim a pod mounts: persistentVolumeClaim.claimName, or the claim kube-controller-manager
// creates for a generic ephemeral volume ("<pod>-<volume>", owned by the pod).
struct PodClaim {
  std::string name;
  bool ephemeral = false;
  bool operator==(const PodClaim&) const = default;
};

// Everything about a pod's spec that placement reads. Immutable and shared.
struct SchedulingSpec {
  api::Resources request;  // PodRequest + pods=1
  std::map<std::string, std::string> node_selector;
  std::optional<api::Affinity> affinity;
  std::vector<api::Toleration> tolerations;
  std::vector<api::TopologySpreadConstraint> spread;
  std::vector<HostPort> host_ports;
  std::optional<int32_t> priority;
  std::string priority_class_name;
  std::string scheduler_name;
  bool preempt_never = false;  // preemptionPolicy: Never
  std::vector<std::string> scheduling_gates;
  std::vector<PodClaim> claims;
  // The pod's namespace when it mounts claims, else "": claims are namespaced, so pods of two
  // namespaces that mount claims of the same names must not share a spec (nor what a session
  // concludes about it).
  std::string claims_namespace;
  bool host_network = false;

  // No cpu, memory or extended-resource request (Kubernetes' BestEffort for scheduling).
  bool best_effort = false;
  bool has_pod_affinity = false;  // pod affinity or anti-affinity terms
  bool operator==(const SchedulingSpec& other) const;
};

// Shares identical SchedulingSpecs. Thread-safe; entries die with their last pod.
class SpecInterner {
 public:
  std::shared_ptr<const SchedulingSpec> Intern(SchedulingSpec spec);
  size_t size();

 private:
  static size_t Hash(const SchedulingSpec& spec);
  sync::Mutex mu_;
  std::unordered_multimap<size_t, std::weak_ptr<const SchedulingSpec>> specs_ GUARDED_BY(mu_);
  size_t inserts_since_prune_ GUARDED_BY(mu_) = 0;
};

// The PodScheduled condition as last written, so the scheduler writes it only on change.
struct ScheduledCondition {
  std::string status;
  std::string reason;
  std::string message;
  bool operator==(const ScheduledCondition&) const = default;
};

class PodInfo : public kube::Object {
 public:
  std::shared_ptr<const SchedulingSpec> spec;
  std::string node_name;
  std::string phase;
  bool terminating = false;  // deletionTimestamp set
  // scheduling.k8s.io/group-name annotation, or the scheduler-plugins pod-group label.
  std::string group_name;
  bool sched_plugins_group = false;  // group_name came from scheduling.x-k8s.io/pod-group
  bool implicit_group = false;       // no group named: the PodGroup controller's name for it
  // For a pending bare pod (implicit group, no controller owner): the PodGroup the controller
  // will create for it, which it determines alone, so the pod can be admitted and placed on it
  // before the object exists. Null otherwise (an owner's annotations may change the group).
  std::shared_ptr<const api::PodGroup> implicit_pod_group;
  std::string task_role;                 // volcano.sh/task-spec
  std::optional<int32_t> task_priority;  // volcano.sh/task-priority
  bool preemptable = true;               // volcano.sh/preemptable (tasks default to true)
  std::string nominated_node;
  // Null without one. A pointer: most pods carry none, and inline it took 104 bytes a pod.
  std::shared_ptr<const ScheduledCondition> scheduled;
  int32_t restarts = 0;

  const api::Resources& request() const { return spec->request; }
};

using PodInfoPtr = std::shared_ptr<const PodInfo>;

// A pod decoded into PodInfo, from JSON and from one protobuf LIST item. Annotations Tephra
// reads become fields; none is kept. Both encodings of a pod decode to the same PodInfo. The
// informer's decoders over these are scheduler/app/pod_decoders.h.
StatusOr<std::shared_ptr<PodInfo>> DecodePodInfo(const json::Value& value, SpecInterner& interner);
StatusOr<std::shared_ptr<PodInfo>> DecodePodInfoProtobuf(std::string_view bytes,
                                                         SpecInterner& interner);

// Builds the interned spec of a decoded pod spec (also used by tests and benchmarks). The pod's
// name and namespace name its claims (an ephemeral volume's claim is "<pod>-<volume>").
SchedulingSpec MakeSchedulingSpec(const api::PodSpec& spec, std::string_view pod_name = "",
                                  std::string_view namespace_ = "");

}  // namespace tephra::scheduler
