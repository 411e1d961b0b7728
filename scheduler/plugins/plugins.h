// Factories of the builtin plugins (Volcano's names and arguments), and the reasons their
// predicates report. Each plugin's behaviour is described at its factory's definition; what
// several plugins share is in support/.
#pragma once

#include <memory>
#include <vector>

#include "scheduler/framework/conf.h"
#include "scheduler/framework/interfaces.h"
#include "scheduler/framework/registry.h"

namespace tephra::scheduler {

std::unique_ptr<Plugin> NewGangPlugin(const PluginOption& option);
std::unique_ptr<Plugin> NewPriorityPlugin(const PluginOption& option);
std::unique_ptr<Plugin> NewDrfPlugin(const PluginOption& option);
std::unique_ptr<Plugin> NewProportionPlugin(const PluginOption& option);
std::unique_ptr<Plugin> NewPredicatesPlugin(const PluginOption& option);
std::unique_ptr<Plugin> NewNodeOrderPlugin(const PluginOption& option);
std::unique_ptr<Plugin> NewBinpackPlugin(const PluginOption& option);
std::unique_ptr<Plugin> NewConformancePlugin(const PluginOption& option);
std::unique_ptr<Plugin> NewOvercommitPlugin(const PluginOption& option);
std::unique_ptr<Plugin> NewCapacityPlugin(const PluginOption& option);
std::unique_ptr<Plugin> NewPdbPlugin(const PluginOption& option);
std::unique_ptr<Plugin> NewSlaPlugin(const PluginOption& option);
std::unique_ptr<Plugin> NewNodeGroupPlugin(const PluginOption& option);
std::unique_ptr<Plugin> NewResourceQuotaPlugin(const PluginOption& option);
std::unique_ptr<Plugin> NewNetworkTopologyPlugin(const PluginOption& option);

// Every plugin above, in the order RegisterBuiltins registers them: the one list of them.
std::vector<PluginFactory> BuiltinPluginFactories();

// Reasons plugins and actions report (shared so explanations aggregate them).
namespace reason {
inline constexpr char kInsufficientCpu[] = "Insufficient cpu";
inline constexpr char kInsufficientMemory[] = "Insufficient memory";
inline constexpr char kInsufficientPods[] = "Too many pods";
inline constexpr char kInsufficientEphemeral[] = "Insufficient ephemeral-storage";
inline constexpr char kInsufficientOther[] = "Insufficient extended resource";
inline constexpr char kNodeUnschedulable[] = "node(s) were unschedulable";
inline constexpr char kNodeSelector[] = "node(s) didn't match Pod's node affinity/selector";
inline constexpr char kTaint[] = "node(s) had untolerated taint";
inline constexpr char kHostPorts[] = "node(s) didn't have free ports for the requested pod ports";
inline constexpr char kPodAffinity[] = "node(s) didn't match pod affinity rules";
inline constexpr char kPodAntiAffinity[] = "node(s) didn't match pod anti-affinity rules";
inline constexpr char kExistingAntiAffinity[] =
    "node(s) didn't satisfy existing pods anti-affinity rules";
inline constexpr char kTopologySpread[] = "node(s) didn't match pod topology spread constraints";
inline constexpr char kTopologySpreadMissing[] =
    "node(s) didn't match pod topology spread constraints (missing required label)";
// Volumes (support/volumes.h), in kube-scheduler's words. Those that name an object
// ("persistentvolumeclaim \"data\" not found") are built per object and fall back to these
// generic ones past a bound.
inline constexpr char kUnboundImmediateClaims[] =
    "pod has unbound immediate PersistentVolumeClaims";
inline constexpr char kClaimNotFound[] = "persistentvolumeclaim not found";
inline constexpr char kClaimLost[] = "persistentvolumeclaim bound to non-existent persistentvolume";
inline constexpr char kClaimDeleting[] = "persistentvolumeclaim is being deleted";
inline constexpr char kEphemeralNotOwner[] = "PVC was not created for the pod (pod is not owner)";
inline constexpr char kVolumeNotFound[] = "persistentvolume not found";
inline constexpr char kVolumeBindConflict[] =
    "node(s) didn't find available persistent volumes to bind";
inline constexpr char kVolumeNodeConflict[] =
    "node(s) didn't match PersistentVolume's node affinity";
inline constexpr char kVolumeNotExist[] =
    "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)";
inline constexpr char kVolumeZoneConflict[] = "node(s) had no available volume zone";
inline constexpr char kReadWriteOncePodConflict[] =
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already "
    "in-use by another pod";
inline constexpr char kMaxVolumeCount[] = "node(s) exceed max volume count";
inline constexpr char kCsiDriverMissing[] = "CSI driver is not installed on the node";
}  // namespace reason

}  // namespace tephra::scheduler
