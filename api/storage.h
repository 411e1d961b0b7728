// Kubernetes storage objects the scheduler reads to place pods with volumes: PersistentVolumeClaim
// and PersistentVolume (core/v1), StorageClass, CSINode and CSIDriver (storage.k8s.io/v1). Only
// the fields placement and volume binding use are modelled (docs/scheduler.md, "Storage"); the
// annotations the PV controller and kube-scheduler agree on are decoded into fields of their own.
//
// Enumerated values (phases, access modes, binding modes) are kept as strings so that values
// newer than Tephra survive; constants for the known ones are below.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/codec.h"
#include "api/core.h"
#include "api/quantity.h"
#include "base/status.h"
#include "json/json.h"
#include "kube/meta/object.h"

namespace tephra::api {

// Annotations and names the PV controller (kube-controller-manager), provisioners and
// schedulers share.
namespace storage {
// On a claim: the node the scheduler chose, which tells the provisioner where to provision.
inline constexpr std::string_view kSelectedNodeAnnotation = "volume.kubernetes.io/selected-node";
// On a claim: the PV controller finished binding it (with spec.volumeName: fully bound).
inline constexpr std::string_view kBindCompletedAnnotation = "pv.kubernetes.io/bind-completed";
// On a PV (and a claim): the binding was made by a controller, not pre-bound by a user.
inline constexpr std::string_view kBoundByControllerAnnotation =
    "pv.kubernetes.io/bound-by-controller";
// The storage class as an annotation, which wins over spec.storageClassName where both are set.
inline constexpr std::string_view kBetaStorageClassAnnotation =
    "volume.beta.kubernetes.io/storage-class";
// A StorageClass's provisioner that provisions nothing (statically created PVs only).
inline constexpr std::string_view kNoProvisioner = "kubernetes.io/no-provisioner";

inline constexpr std::string_view kReadWriteOnce = "ReadWriteOnce";
inline constexpr std::string_view kReadOnlyMany = "ReadOnlyMany";
inline constexpr std::string_view kReadWriteMany = "ReadWriteMany";
inline constexpr std::string_view kReadWriteOncePod = "ReadWriteOncePod";

inline constexpr std::string_view kWaitForFirstConsumer = "WaitForFirstConsumer";
inline constexpr std::string_view kImmediate = "Immediate";

inline constexpr std::string_view kClaimPending = "Pending";
inline constexpr std::string_view kClaimBound = "Bound";
inline constexpr std::string_view kClaimLost = "Lost";
inline constexpr std::string_view kVolumeAvailable = "Available";
}  // namespace storage

class PersistentVolumeClaim : public kube::Object {
 public:
  struct Spec {
    std::vector<std::string> access_modes;
    std::optional<LabelSelector> selector;
    std::optional<Quantity> storage_request;  // resources.requests.storage
    std::string volume_name;                  // the PV it is bound (or pre-bound) to
    std::optional<std::string> storage_class_name;
    std::optional<std::string> volume_mode;  // Filesystem when unset
    bool operator==(const Spec&) const = default;
  } spec;
  std::string phase;  // status.phase
  // From annotations (kSelectedNodeAnnotation, kBindCompletedAnnotation,
  // kBetaStorageClassAnnotation).
  std::string selected_node;
  bool bind_completed = false;
  std::optional<std::string> class_annotation;

  // The class it asks for: the beta annotation, else spec.storageClassName, else "".
  std::string StorageClass() const;
  // Bound as the PV controller finishes it: spec.volumeName set and bind-completed annotated.
  bool FullyBound() const { return !spec.volume_name.empty() && bind_completed; }
  bool HasAccessMode(std::string_view mode) const;
  // The storage requested, in bytes (0 when none is).
  int64_t RequestBytes() const;
};

// A PV's spec.claimRef.
using ClaimReference = kube::ObjectReference;

// spec.csi of a PV: the driver that attaches it and its handle there.
struct CsiVolumeSource {
  std::string driver;
  std::string volume_handle;
  bool operator==(const CsiVolumeSource&) const = default;
};

class PersistentVolume : public kube::Object {
 public:
  struct Spec {
    std::optional<Quantity> capacity;  // capacity.storage
    std::vector<std::string> access_modes;
    std::optional<ClaimReference> claim_ref;
    std::string storage_class_name;
    std::optional<std::string> volume_mode;
    // nodeAffinity.required.nodeSelectorTerms (ORed); nullopt when the PV has none.
    std::optional<std::vector<NodeSelectorTerm>> node_affinity;
    std::optional<CsiVolumeSource> csi;
    bool operator==(const Spec&) const = default;
  } spec;
  std::string phase;                 // status.phase
  bool bound_by_controller = false;  // kBoundByControllerAnnotation
  std::optional<std::string> class_annotation;

  // The class it belongs to: the beta annotation, else spec.storageClassName.
  std::string StorageClass() const;
  bool HasAccessMode(std::string_view mode) const;
  int64_t CapacityBytes() const;
  // Whether spec.claimRef names the claim (by namespace and name, and by uid when both have one).
  bool BoundTo(const PersistentVolumeClaim& claim) const;
};

// One term of a StorageClass's allowedTopologies: every expression must match.
struct TopologySelectorTerm {
  struct Expression {
    std::string key;
    std::vector<std::string> values;
    bool operator==(const Expression&) const = default;
  };
  std::vector<Expression> match_label_expressions;
  bool operator==(const TopologySelectorTerm&) const = default;
};

class StorageClass : public kube::Object {
 public:
  std::string provisioner;
  std::optional<std::string> volume_binding_mode;        // the API server defaults it to Immediate
  std::vector<TopologySelectorTerm> allowed_topologies;  // ORed; empty admits every node

  bool WaitForFirstConsumer() const {
    return volume_binding_mode && *volume_binding_mode == storage::kWaitForFirstConsumer;
  }
  // Whether it can provision at all (a provisioner other than kNoProvisioner).
  bool Provisions() const;
  // Whether allowedTopologies admit a node with `labels`.
  bool AdmitsNode(const std::map<std::string, std::string>& labels) const;
};

class CSINode : public kube::Object {
 public:
  struct Driver {
    std::string name;
    std::string node_id;
    std::optional<int32_t> allocatable_count;  // allocatable.count: volumes it may attach here
    bool operator==(const Driver&) const = default;
  };
  std::vector<Driver> drivers;

  const Driver* FindDriver(std::string_view name) const;
};

class CSIDriver : public kube::Object {
 public:
  std::optional<bool> attach_required;
  std::optional<bool> storage_capacity;
  // A node whose CSINode lacks the driver may not take pods using it.
  std::optional<bool> prevent_pod_scheduling_if_missing;
};

// Decoders; errors name the object and the field path.
StatusOr<std::shared_ptr<PersistentVolumeClaim>> DecodePersistentVolumeClaim(
    const json::Value& value, const DecodeOptions& options = {});
StatusOr<std::shared_ptr<PersistentVolumeClaim>> DecodePersistentVolumeClaim(
    std::string_view text, const DecodeOptions& options = {});
StatusOr<std::shared_ptr<PersistentVolume>> DecodePersistentVolume(
    const json::Value& value, const DecodeOptions& options = {});
StatusOr<std::shared_ptr<PersistentVolume>> DecodePersistentVolume(
    std::string_view text, const DecodeOptions& options = {});
StatusOr<std::shared_ptr<StorageClass>> DecodeStorageClass(const json::Value& value,
                                                           const DecodeOptions& options = {});
StatusOr<std::shared_ptr<CSINode>> DecodeCSINode(const json::Value& value,
                                                 const DecodeOptions& options = {});
StatusOr<std::shared_ptr<CSIDriver>> DecodeCSIDriver(const json::Value& value,
                                                     const DecodeOptions& options = {});

// Encoders: modelled fields written over `raw` (when kept).
std::string EncodePersistentVolumeClaim(const PersistentVolumeClaim& claim);
std::string EncodePersistentVolume(const PersistentVolume& volume);
std::string EncodeStorageClass(const StorageClass& klass);
std::string EncodeCSINode(const CSINode& node);
std::string EncodeCSIDriver(const CSIDriver& driver);

}  // namespace tephra::api
