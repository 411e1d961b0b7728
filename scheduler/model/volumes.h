// The cluster's storage as volume placement reads it: claims, PVs, storage classes, CSI nodes and
// drivers, as the informers last reported them with the scheduler's own assumptions laid over
// them (a PV it gave a claim, a node it selected for provisioning, until the API server shows
// them; docs/scheduler.md, "Storage"). Immutable once built: the cache builds one when storage
// changed and every snapshot after shares it.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "api/storage.h"

namespace tephra::scheduler {

template <typename T>
using StorageMap = std::map<std::string, std::shared_ptr<const T>, std::less<>>;

struct StorageState {
  StorageMap<api::PersistentVolumeClaim> claims;  // by "namespace/name"
  StorageMap<api::PersistentVolume> volumes;      // by name
  StorageMap<api::StorageClass> classes;
  StorageMap<api::CSINode> csi_nodes;  // by node name
  StorageMap<api::CSIDriver> csi_drivers;

  // Built by Index(): the PVs of each class (StorageClass()), by name, which a class's unbound
  // claims may take; the PV whose claimRef names a claim, by the claim's key.
  std::map<std::string, std::vector<const api::PersistentVolume*>, std::less<>> volumes_by_class;
  std::map<std::string, const api::PersistentVolume*, std::less<>> volume_by_claim;
  // Whether any claim asks for ReadWriteOncePod (sessions count the pods using such claims).
  bool any_read_write_once_pod = false;

  void Index();

  const api::PersistentVolumeClaim* Claim(std::string_view namespace_, std::string_view name) const;
  const api::PersistentVolume* Volume(std::string_view name) const;
  const api::StorageClass* Class(std::string_view name) const;
  const api::CSINode* CsiNode(std::string_view node) const;
  const api::CSIDriver* CsiDriver(std::string_view name) const;
};

// The state of a cluster without storage (a snapshot built by hand may carry none).
const StorageState& EmptyStorageState();

// "namespace/name" of a claim.
std::string ClaimKey(std::string_view namespace_, std::string_view name);

// Whether `volume` may be given to `claim` apart from where it is (its node affinity): available
// and unclaimed, of the claim's class, large enough, of its volume mode, with every access mode
// it asks for, and matched by its selector. As the PV controller and kube-scheduler match them.
bool VolumeFitsClaim(const api::PersistentVolume& volume, const api::PersistentVolumeClaim& claim);

}  // namespace tephra::scheduler
