// Pre-bind steps: writes a session decided that must complete before a pod is bound, as data
// (the session does no I/O). The binder carries them out for a whole committed unit — every
// member's steps first, then, once each is complete, the pods' binds — and undoes them when one
// fails (docs/scheduler.md, "Storage"; docs/architecture.md, "Who writes what").
//
// Each kind of step is a struct of its own in PreBindStep's variant, so a new kind (a DRA
// ResourceClaim's allocation, pod annotations for device sharing) adds a struct and the
// binder's handling of it, and changes nothing here.
#pragma once

#include <chrono>
#include <string>
#include <variant>
#include <vector>

namespace tephra::scheduler {

// A claim of WaitForFirstConsumer class takes a statically created PV: the PV's spec.claimRef
// is set to the claim (as the PV controller expects of a scheduler), which then binds the claim.
struct BindVolumeStep {
  std::string claim;  // "namespace/name"
  std::string claim_uid;
  std::string claim_resource_version;
  std::string volume;  // the PV's name
  std::string volume_resource_version;
  bool operator==(const BindVolumeStep&) const = default;
};

// A claim of WaitForFirstConsumer class is provisioned on the pod's node: the claim is annotated
// volume.kubernetes.io/selected-node, which the provisioner acts on.
struct ProvisionVolumeStep {
  std::string claim;  // "namespace/name"
  std::string claim_uid;
  std::string claim_resource_version;
  std::string node;
  bool operator==(const ProvisionVolumeStep&) const = default;
};

struct PreBindStep {
  std::variant<BindVolumeStep, ProvisionVolumeStep> what;
  // How long the binder waits for the step to complete (volumebinding.bindTimeoutSeconds).
  std::chrono::seconds timeout{600};
  bool operator==(const PreBindStep&) const = default;

  // One line for events, logs and decisions: "bind PV pv-1 to claim ns/data",
  // "provision claim ns/data on node n1".
  std::string Describe() const;
};

}  // namespace tephra::scheduler
