// REST resources: group, version, plural and scope, and the paths built from them.
#pragma once

#include <string>
#include <string_view>

namespace tephra::kube {

// A REST resource: "pods" in "" / "v1", "leases" in "coordination.k8s.io" / "v1", ...
struct Resource {
  std::string group;  // "" for the core group
  std::string version;
  std::string plural;
  bool namespaced = true;
  std::string kind;

  std::string GroupVersion() const;  // "v1", "apps/v1"
  // "/api/v1/namespaces/ns/pods/name/status" (empty parts are left out).
  std::string Path(std::string_view ns, std::string_view name = "",
                   std::string_view subresource = "") const;
  std::string ToString() const;  // "pods.v1", "jobs.v1alpha1.batch.volcano.sh"
};

namespace resources {
extern const Resource kPods;
extern const Resource kNodes;
extern const Resource kNamespaces;
extern const Resource kConfigMaps;
extern const Resource kSecrets;
extern const Resource kServices;
extern const Resource kEvents;
extern const Resource kPersistentVolumeClaims;
extern const Resource kPersistentVolumes;
extern const Resource kStorageClasses;
extern const Resource kCSINodes;
extern const Resource kCSIDrivers;
extern const Resource kLeases;
extern const Resource kPriorityClasses;
extern const Resource kCustomResourceDefinitions;
extern const Resource kNetworkPolicies;
extern const Resource kPodDisruptionBudgets;
extern const Resource kResourceQuotas;
extern const Resource kReplicaSets;
extern const Resource kMutatingWebhookConfigurations;
extern const Resource kValidatingWebhookConfigurations;
}  // namespace resources

}  // namespace tephra::kube
