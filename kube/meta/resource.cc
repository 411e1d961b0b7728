#include "kube/meta/resource.h"

namespace tephra::kube {

std::string Resource::GroupVersion() const {
  return group.empty() ? version : group + "/" + version;
}

std::string Resource::Path(std::string_view ns, std::string_view name,
                           std::string_view subresource) const {
  std::string p = group.empty() ? "/api/" + version : "/apis/" + group + "/" + version;
  if (namespaced && !ns.empty()) {
    p += "/namespaces/";
    p += ns;
  }
  p += "/";
  p += plural;
  if (!name.empty()) {
    p += "/";
    p += name;
    if (!subresource.empty()) {
      p += "/";
      p += subresource;
    }
  }
  return p;
}

std::string Resource::ToString() const {
  std::string s = plural + "." + version;
  if (!group.empty()) s += "." + group;
  return s;
}

namespace resources {
const Resource kPods{"", "v1", "pods", true, "Pod"};
const Resource kNodes{"", "v1", "nodes", false, "Node"};
const Resource kNamespaces{"", "v1", "namespaces", false, "Namespace"};
const Resource kConfigMaps{"", "v1", "configmaps", true, "ConfigMap"};
const Resource kSecrets{"", "v1", "secrets", true, "Secret"};
const Resource kServices{"", "v1", "services", true, "Service"};
const Resource kEvents{"", "v1", "events", true, "Event"};
const Resource kPersistentVolumeClaims{"", "v1", "persistentvolumeclaims", true,
                                       "PersistentVolumeClaim"};
const Resource kPersistentVolumes{"", "v1", "persistentvolumes", false, "PersistentVolume"};
const Resource kStorageClasses{"storage.k8s.io", "v1", "storageclasses", false, "StorageClass"};
const Resource kCSINodes{"storage.k8s.io", "v1", "csinodes", false, "CSINode"};
const Resource kCSIDrivers{"storage.k8s.io", "v1", "csidrivers", false, "CSIDriver"};
const Resource kLeases{"coordination.k8s.io", "v1", "leases", true, "Lease"};
const Resource kPriorityClasses{"scheduling.k8s.io", "v1", "priorityclasses", false,
                                "PriorityClass"};
const Resource kCustomResourceDefinitions{"apiextensions.k8s.io", "v1", "customresourcedefinitions",
                                          false, "CustomResourceDefinition"};
const Resource kPodDisruptionBudgets{"policy", "v1", "poddisruptionbudgets", true,
                                     "PodDisruptionBudget"};
const Resource kResourceQuotas{"", "v1", "resourcequotas", true, "ResourceQuota"};
const Resource kReplicaSets{"apps", "v1", "replicasets", true, "ReplicaSet"};
const Resource kNetworkPolicies{"networking.k8s.io", "v1", "networkpolicies", true,
                                "NetworkPolicy"};
const Resource kMutatingWebhookConfigurations{"admissionregistration.k8s.io", "v1",
                                              "mutatingwebhookconfigurations", false,
                                              "MutatingWebhookConfiguration"};
const Resource kValidatingWebhookConfigurations{"admissionregistration.k8s.io", "v1",
                                                "validatingwebhookconfigurations", false,
                                                "ValidatingWebhookConfiguration"};
}  // namespace resources

}  // namespace tephra::kube
