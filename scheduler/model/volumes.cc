#include "scheduler/model/volumes.h"

#include <variant>

#include "scheduler/model/prebind.h"

namespace tephra::scheduler {
namespace {

template <typename T>
const T* Find(const StorageMap<T>& map, std::string_view key) {
  auto it = map.find(key);
  return it == map.end() ? nullptr : it->second.get();
}

std::string_view VolumeMode(const std::optional<std::string>& mode) {
  return mode ? std::string_view(*mode) : std::string_view("Filesystem");
}

}  // namespace

const StorageState& EmptyStorageState() {
  static const StorageState* const kEmpty = new StorageState();
  return *kEmpty;
}

std::string ClaimKey(std::string_view namespace_, std::string_view name) {
  std::string key(namespace_);
  key += '/';
  key += name;
  return key;
}

void StorageState::Index() {
  volumes_by_class.clear();
  volume_by_claim.clear();
  for (const auto& [name, volume] : volumes) {
    volumes_by_class[volume->StorageClass()].push_back(volume.get());
    if (volume->spec.claim_ref) {
      const api::ClaimReference& ref = *volume->spec.claim_ref;
      volume_by_claim.emplace(ClaimKey(ref.namespace_, ref.name), volume.get());
    }
  }
  any_read_write_once_pod = false;
  for (const auto& [key, claim] : claims) {
    if (claim->HasAccessMode(api::storage::kReadWriteOncePod)) {
      any_read_write_once_pod = true;
      break;
    }
  }
}

const api::PersistentVolumeClaim* StorageState::Claim(std::string_view namespace_,
                                                      std::string_view name) const {
  return Find(claims, ClaimKey(namespace_, name));
}

const api::PersistentVolume* StorageState::Volume(std::string_view name) const {
  return Find(volumes, name);
}

const api::StorageClass* StorageState::Class(std::string_view name) const {
  return Find(classes, name);
}

const api::CSINode* StorageState::CsiNode(std::string_view node) const {
  return Find(csi_nodes, node);
}

const api::CSIDriver* StorageState::CsiDriver(std::string_view name) const {
  return Find(csi_drivers, name);
}

bool VolumeFitsClaim(const api::PersistentVolume& volume, const api::PersistentVolumeClaim& claim) {
  if (volume.spec.claim_ref) return false;  // another claim's, or pre-bound (looked up apart)
  if (volume.phase != api::storage::kVolumeAvailable) return false;
  if (volume.metadata.deletion_timestamp) return false;
  if (volume.StorageClass() != claim.StorageClass()) return false;
  const api::Quantity none;
  const api::Quantity& capacity = volume.spec.capacity ? *volume.spec.capacity : none;
  const api::Quantity& request = claim.spec.storage_request ? *claim.spec.storage_request : none;
  if (capacity < request) return false;
  if (VolumeMode(volume.spec.volume_mode) != VolumeMode(claim.spec.volume_mode)) return false;
  for (const auto& mode : claim.spec.access_modes) {
    if (!volume.HasAccessMode(mode)) return false;
  }
  return !claim.spec.selector ||
         api::MatchesLabelSelector(*claim.spec.selector, volume.metadata.labels);
}

std::string PreBindStep::Describe() const {
  if (const auto* bind = std::get_if<BindVolumeStep>(&what)) {
    return "bind PersistentVolume " + bind->volume + " to claim " + bind->claim;
  }
  const auto& provision = std::get<ProvisionVolumeStep>(what);
  return "provision claim " + provision.claim + " on node " + provision.node;
}

}  // namespace tephra::scheduler
