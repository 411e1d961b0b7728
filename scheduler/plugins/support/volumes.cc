#include "scheduler/plugins/support/volumes.h"

#include <algorithm>
#include <cmath>

#include "scheduler/plugins/plugins.h"
#include "scheduler/plugins/support/matching.h"

namespace tephra::scheduler {
namespace {

// Distinct object-naming reasons a session keeps; past it the generic reason is used.
constexpr size_t kMaxReasons = 256;

// The node labels VolumeZone compares, and the GA key of each beta one.
constexpr std::pair<std::string_view, std::string_view> kZoneLabels[] = {
    {"failure-domain.beta.kubernetes.io/zone", "topology.kubernetes.io/zone"},
    {"failure-domain.beta.kubernetes.io/region", "topology.kubernetes.io/region"},
    {"topology.kubernetes.io/zone", "topology.kubernetes.io/zone"},
    {"topology.kubernetes.io/region", "topology.kubernetes.io/region"},
};

// A PV's node affinity against a node's labels, as kube-scheduler checks it: on the labels alone
// (a matchFields term names no node there).
bool VolumeAcceptsNode(const api::PersistentVolume& volume, const NodeInfo& node) {
  if (!volume.spec.node_affinity) return true;
  static const std::string kNoName;
  for (const auto& term : *volume.spec.node_affinity) {
    if (MatchesNodeSelectorTerm(term, node.labels(), kNoName)) return true;
  }
  return false;
}

bool HasZoneLabel(const Labels& labels) {
  for (const auto& [key, ga] : kZoneLabels) {
    if (labels.count(std::string(key)) != 0) return true;
  }
  return false;
}

// A PV's zone or region label may list several values joined by "__".
bool ZoneListed(std::string_view list, std::string_view value) {
  size_t at = 0;
  while (at <= list.size()) {
    size_t end = list.find("__", at);
    if (end == std::string_view::npos) end = list.size();
    if (list.substr(at, end - at) == value) return true;
    at = end + 2;
  }
  return false;
}

bool ZonesMatch(const api::PersistentVolume& volume, const Labels& node) {
  for (const auto& [key, ga] : kZoneLabels) {
    auto pv = volume.metadata.labels.find(std::string(key));
    if (pv == volume.metadata.labels.end()) continue;
    auto have = node.find(std::string(key));
    if (have == node.end()) have = node.find(std::string(ga));
    if (have == node.end() || !ZoneListed(pv->second, have->second)) return false;
  }
  return true;
}

api::Quantity Capacity(const api::PersistentVolume& volume) {
  return volume.spec.capacity.value_or(api::Quantity());
}

// Whether the PV could go to some claim at all: unclaimed, available, not being deleted.
bool Free(const api::PersistentVolume& volume) {
  return !volume.spec.claim_ref && volume.phase == api::storage::kVolumeAvailable &&
         !volume.metadata.deletion_timestamp;
}

// The score (0..10) of `utilisation` (0..100) on the shape, linear between its points.
double ShapeScore(const std::vector<std::pair<int, int>>& shape, double utilisation) {
  if (shape.empty()) return 0;
  if (utilisation <= shape.front().first) return shape.front().second;
  for (size_t i = 1; i < shape.size(); ++i) {
    const auto& [u1, s1] = shape[i];
    if (utilisation <= u1) {
      const auto& [u0, s0] = shape[i - 1];
      if (u1 == u0) return s1;
      return s0 + (s1 - s0) * (utilisation - u0) / (u1 - u0);
    }
  }
  return shape.back().second;
}

}  // namespace

VolumePlacement::VolumePlacement(const Session& session, VolumeOptions options)
    : session_(session), storage_(session.storage()), options_(std::move(options)) {
  if (storage_.any_read_write_once_pod) CountReadWriteOncePodUsers();
}

const char* VolumePlacement::Reason(std::string text, const char* fallback) {
  auto known = reasons_.find(text);
  if (known != reasons_.end()) return known->second;
  if (reason_texts_.size() >= kMaxReasons) return fallback;
  reason_texts_.push_back(text);
  const char* interned = reason_texts_.back().c_str();
  reasons_.emplace(std::move(text), interned);
  return interned;
}

const VolumePlacement::PodVolumes& VolumePlacement::Resolve(const TaskInfo& task) {
  const SchedulingSpec& spec = *task.pod->spec;
  auto [it, fresh] = pods_.try_emplace(&spec);
  PodVolumes& out = it->second;
  if (!fresh) return out;
  const std::string& ns = spec.claims_namespace.empty() ? task.namespace_() : spec.claims_namespace;
  bool immediate_unbound = false;
  for (const PodClaim& c : spec.claims) {
    const api::PersistentVolumeClaim* claim = storage_.Claim(ns, c.name);
    if (claim == nullptr) {
      out.error = Fit::Unresolvable(
          c.ephemeral ? Reason("waiting for ephemeral volume controller to create the "
                               "persistentvolumeclaim \"" +
                                   c.name + "\"",
                               reason::kClaimNotFound)
                      : Reason("persistentvolumeclaim \"" + c.name + "\" not found",
                               reason::kClaimNotFound));
      return out;
    }
    if (claim->phase == api::storage::kClaimLost) {
      out.error = Fit::Unresolvable(Reason("persistentvolumeclaim \"" + c.name +
                                               "\" bound to non-existent persistentvolume \"" +
                                               claim->spec.volume_name + "\"",
                                           reason::kClaimLost));
      return out;
    }
    if (claim->metadata.deletion_timestamp) {
      out.error = Fit::Unresolvable(Reason(
          "persistentvolumeclaim \"" + c.name + "\" is being deleted", reason::kClaimDeleting));
      return out;
    }
    if (c.ephemeral) {
      const kube::OwnerReference* owner = claim->metadata.ControllerRef();
      if (owner == nullptr || owner->uid != task.uid()) {
        out.error =
            Fit::Unresolvable(Reason("PVC " + ns + "/" + c.name + " was not created for pod " + ns +
                                         "/" + task.name() + " (pod is not owner)",
                                     reason::kEphemeralNotOwner));
        return out;
      }
    }
    ClaimUse use;
    use.claim = claim;
    use.key = ClaimKey(ns, c.name);
    use.read_write_once_pod = claim->HasAccessMode(api::storage::kReadWriteOncePod);
    if (claim->FullyBound() || !options_.binding) {
      use.volume =
          claim->spec.volume_name.empty() ? nullptr : storage_.Volume(claim->spec.volume_name);
    } else {
      const api::StorageClass* klass = storage_.Class(claim->StorageClass());
      if (!claim->spec.volume_name.empty() || klass == nullptr || !klass->WaitForFirstConsumer()) {
        immediate_unbound = true;  // pre-bound, or of an Immediate class: the PV controller's
      } else {
        use.state = claim->selected_node.empty() ? ClaimUse::State::kDelayed
                                                 : ClaimUse::State::kProvisioning;
        use.klass = klass;
        out.unbound.push_back(out.claims.size());
      }
    }
    out.claims.push_back(std::move(use));
  }
  if (immediate_unbound) {
    out.error = Fit::Unresolvable(reason::kUnboundImmediateClaims);
    return out;
  }
  if (options_.zone) {
    for (const ClaimUse& use : out.claims) {
      const std::string& pv = use.claim->spec.volume_name;
      if (use.state == ClaimUse::State::kBound && !pv.empty() && use.volume == nullptr) {
        out.error = Fit::Unresolvable(
            Reason("persistentvolume \"" + pv + "\" not found", reason::kVolumeNotFound));
        return out;
      }
    }
  }
  // The smallest claims first, so each takes the smallest PV that fits it.
  std::stable_sort(out.unbound.begin(), out.unbound.end(), [&](size_t a, size_t b) {
    const auto& qa = out.claims[a].claim->spec.storage_request;
    const auto& qb = out.claims[b].claim->spec.storage_request;
    return (qa ? *qa : api::Quantity()) < (qb ? *qb : api::Quantity());
  });
  return out;
}

Fit VolumePlacement::Static(const TaskInfo& task, const NodeInfo& node) {
  if (task.pod->spec->claims.empty()) return Fit::Ok();
  const PodVolumes& pod = Resolve(task);
  if (!pod.error.ok()) return pod.error;
  if (options_.binding) {
    for (const ClaimUse& use : pod.claims) {
      if (use.state == ClaimUse::State::kProvisioning) {
        if (use.claim->selected_node != node.name)
          return Fit::Unresolvable(reason::kVolumeBindConflict);
        continue;
      }
      if (use.state != ClaimUse::State::kBound) continue;
      if (use.volume == nullptr) return Fit::Unresolvable(reason::kVolumeNotExist);
      if (!VolumeAcceptsNode(*use.volume, node))
        return Fit::Unresolvable(reason::kVolumeNodeConflict);
    }
  }
  if (options_.zone && HasZoneLabel(node.labels())) {
    for (const ClaimUse& use : pod.claims) {
      if (use.volume != nullptr && !ZonesMatch(*use.volume, node.labels()))
        return Fit::Unresolvable(reason::kVolumeZoneConflict);
    }
  }
  return Fit::Ok();
}

Fit VolumePlacement::Dynamic(const TaskInfo& task, const NodeInfo& node) {
  if (task.pod->spec->claims.empty()) return Fit::Ok();
  const PodVolumes& pod = Resolve(task);
  if (!pod.error.ok()) return pod.error;
  for (const ClaimUse& use : pod.claims) {
    if (!use.read_write_once_pod) continue;
    auto users = read_write_once_pod_users_.find(use.key);
    int others = users == read_write_once_pod_users_.end() ? 0 : users->second;
    if (HoldsPlace(task.status)) --others;  // the task itself, placed in this session
    if (others > 0) return Fit::Fail(reason::kReadWriteOncePodConflict);
  }
  if (options_.limits) {
    Fit f = CheckLimits(task, pod, node);
    if (!f.ok()) return f;
  }
  if (options_.binding && !pod.unbound.empty()) {
    std::vector<const api::PersistentVolume*> volumes;
    if (!ChooseAll(pod, node, &volumes)) return Fit::Unresolvable(reason::kVolumeBindConflict);
  }
  return Fit::Ok();
}

const VolumePlacement::ClassVolumes& VolumePlacement::VolumesOf(const std::string& klass) {
  auto [it, fresh] = classes_.try_emplace(klass);
  ClassVolumes& out = it->second;
  if (!fresh) return out;
  auto listed = storage_.volumes_by_class.find(klass);
  if (listed == storage_.volumes_by_class.end()) return out;
  for (const api::PersistentVolume* volume : listed->second) {
    if (!Free(*volume)) continue;
    const auto& affinity = volume->spec.node_affinity;
    if (!affinity) {
      out.anywhere.push_back(volume);
      continue;
    }
    const bool one_in = affinity->size() == 1 && (*affinity)[0].match_fields.empty() &&
                        (*affinity)[0].match_expressions.size() == 1 &&
                        (*affinity)[0].match_expressions[0].op == "In";
    if (!one_in) {
      out.other.push_back(volume);
      continue;
    }
    const api::NodeSelectorRequirement& r = (*affinity)[0].match_expressions[0];
    for (const std::string& value : r.values) out.by_label[r.key + "=" + value].push_back(volume);
  }
  return out;
}

bool VolumePlacement::Choose(const ClaimUse& use, const NodeInfo& node,
                             const std::unordered_set<const api::PersistentVolume*>& chosen,
                             const api::PersistentVolume** volume) {
  *volume = nullptr;
  auto usable = [&](const api::PersistentVolume* pv) {
    return taken_.count(pv) == 0 && chosen.count(pv) == 0;
  };
  // A PV pre-bound to the claim (its claimRef names it) is the only one it may take.
  auto pre = storage_.volume_by_claim.find(use.key);
  if (pre != storage_.volume_by_claim.end() && pre->second->BoundTo(*use.claim)) {
    if (usable(pre->second) && VolumeAcceptsNode(*pre->second, node)) {
      *volume = pre->second;
      return true;
    }
  } else {
    const api::PersistentVolume* best = nullptr;
    auto consider = [&](const api::PersistentVolume* pv) {
      if (!usable(pv) || !VolumeFitsClaim(*pv, *use.claim)) return;
      if (best == nullptr || Capacity(*pv) < Capacity(*best)) best = pv;
    };
    const ClassVolumes& candidates = VolumesOf(use.claim->StorageClass());
    for (const api::PersistentVolume* pv : candidates.anywhere) consider(pv);
    if (!candidates.by_label.empty()) {
      for (const auto& [key, value] : node.labels()) {
        auto it = candidates.by_label.find(key + "=" + value);
        if (it == candidates.by_label.end()) continue;
        for (const api::PersistentVolume* pv : it->second) consider(pv);
      }
    }
    for (const api::PersistentVolume* pv : candidates.other) {
      if (VolumeAcceptsNode(*pv, node)) consider(pv);
    }
    if (best != nullptr) {
      *volume = best;
      return true;
    }
  }
  // No PV: provisioning, where the class has a provisioner whose topology admits the node.
  return use.klass != nullptr && use.klass->Provisions() && use.klass->AdmitsNode(node.labels());
}

bool VolumePlacement::ChooseAll(const PodVolumes& pod, const NodeInfo& node,
                                std::vector<const api::PersistentVolume*>* volumes) {
  std::unordered_set<const api::PersistentVolume*> chosen;
  for (size_t i : pod.unbound) {
    const ClaimUse& use = pod.claims[i];
    if (auto d = decided_.find(use.key); d != decided_.end()) {
      // Decided by another pod of this session: this pod must go where that volume is.
      const Decision& decision = d->second;
      if (decision.volume != nullptr ? !VolumeAcceptsNode(*decision.volume, node)
                                     : decision.node != node.name)
        return false;
      volumes->push_back(decision.volume);
      continue;
    }
    if (use.state == ClaimUse::State::kProvisioning) {  // its node was selected already
      volumes->push_back(nullptr);
      continue;
    }
    const api::PersistentVolume* volume = nullptr;
    if (!Choose(use, node, chosen, &volume)) return false;
    if (volume != nullptr) chosen.insert(volume);
    volumes->push_back(volume);
  }
  return true;
}

std::pair<std::string, std::string> VolumePlacement::CsiVolumeOf(
    const api::PersistentVolumeClaim& claim) const {
  if (!claim.spec.volume_name.empty()) {
    if (const api::PersistentVolume* pv = storage_.Volume(claim.spec.volume_name)) {
      if (!pv->spec.csi) return {};
      return {pv->spec.csi->driver, pv->spec.csi->volume_handle};
    }
  }
  // Not bound yet (or its PV is not seen): counted as a volume of its class's provisioner.
  const api::StorageClass* klass = storage_.Class(claim.StorageClass());
  if (klass == nullptr || klass->provisioner.empty()) return {};
  return {klass->provisioner, "unbound/" + claim.metadata.Key()};
}

Fit VolumePlacement::CheckLimits(const TaskInfo& task, const PodVolumes& pod,
                                 const NodeInfo& node) {
  std::map<std::string, std::string> fresh;  // volume "driver/handle" -> driver
  for (const ClaimUse& use : pod.claims) {
    auto [driver, handle] = CsiVolumeOf(*use.claim);
    if (!driver.empty()) fresh.emplace(driver + "/" + handle, driver);
  }
  if (fresh.empty()) return Fit::Ok();
  const api::CSINode* csi_node = storage_.CsiNode(node.name);
  for (const auto& [volume, driver] : fresh) {
    const api::CSIDriver* d = storage_.CsiDriver(driver);
    if (d != nullptr && d->prevent_pod_scheduling_if_missing.value_or(false) &&
        (csi_node == nullptr || csi_node->FindDriver(driver) == nullptr)) {
      return Fit::Fail(
          Reason(driver + " CSI driver is not installed on the node", reason::kCsiDriverMissing));
    }
  }
  if (csi_node == nullptr) return Fit::Ok();
  std::map<std::string, int64_t> limits;
  for (const auto& d : csi_node->drivers) {
    if (d.allocatable_count) limits[d.name] = *d.allocatable_count;
  }
  if (limits.empty()) return Fit::Ok();
  // The volumes of the pods on the node, each counted once however many pods use it.
  std::map<std::string, std::string> attached;
  for (const auto& [uid, t] : node.tasks) {
    if (uid == task.uid()) continue;
    const SchedulingSpec& spec = *t.pod->spec;
    const std::string& ns =
        spec.claims_namespace.empty() ? t.pod->metadata.namespace_ : spec.claims_namespace;
    for (const PodClaim& c : spec.claims) {
      const api::PersistentVolumeClaim* claim = storage_.Claim(ns, c.name);
      if (claim == nullptr) continue;
      auto [driver, handle] = CsiVolumeOf(*claim);
      if (!driver.empty()) attached.emplace(driver + "/" + handle, driver);
    }
  }
  std::map<std::string, int64_t> count;
  for (const auto& [volume, driver] : attached) ++count[driver];
  std::map<std::string, int64_t> more;
  for (const auto& [volume, driver] : fresh) {
    if (attached.count(volume) == 0) ++more[driver];
  }
  for (const auto& [driver, n] : more) {
    auto limit = limits.find(driver);
    if (limit != limits.end() && count[driver] + n > limit->second)
      return Fit::Fail(reason::kMaxVolumeCount);
  }
  return Fit::Ok();
}

void VolumePlacement::CountReadWriteOncePodUsers() {
  for (size_t i = 0; i < session_.node_count(); ++i) {
    for (const auto& [uid, t] : session_.node(i).tasks) {
      const SchedulingSpec& spec = *t.pod->spec;
      if (spec.claims.empty()) continue;
      const std::string& ns =
          spec.claims_namespace.empty() ? t.pod->metadata.namespace_ : spec.claims_namespace;
      for (const PodClaim& c : spec.claims) {
        const api::PersistentVolumeClaim* claim = storage_.Claim(ns, c.name);
        if (claim != nullptr && claim->HasAccessMode(api::storage::kReadWriteOncePod))
          ++read_write_once_pod_users_[ClaimKey(ns, c.name)];
      }
    }
  }
}

double VolumePlacement::Score(const TaskInfo& task, const NodeInfo& node) {
  if (options_.weight <= 0 || task.pod->spec->claims.empty()) return 0;
  const PodVolumes& pod = Resolve(task);
  if (!pod.error.ok() || pod.unbound.empty()) return 0;
  std::vector<const api::PersistentVolume*> volumes;
  if (!ChooseAll(pod, node, &volumes)) return 0;
  // Per class: what the claims ask against what the PVs they take hold.
  std::map<std::string, std::pair<double, double>> by_class;
  for (size_t k = 0; k < volumes.size(); ++k) {
    if (volumes[k] == nullptr) continue;
    auto& [requested, capacity] = by_class[volumes[k]->StorageClass()];
    requested += static_cast<double>(pod.claims[pod.unbound[k]].claim->RequestBytes());
    capacity += static_cast<double>(volumes[k]->CapacityBytes());
  }
  if (by_class.empty()) return 0;
  double sum = 0;
  for (const auto& [klass, rc] : by_class) {
    const auto& [requested, capacity] = rc;
    double utilisation = capacity <= 0 || requested > capacity ? 100 : requested * 100 / capacity;
    sum += ShapeScore(options_.shape, std::floor(utilisation));
  }
  return std::round(sum / static_cast<double>(by_class.size())) * 10 * options_.weight;
}

void VolumePlacement::Allocated(const TaskInfo& task, const std::string& node_name) {
  if (task.pod->spec->claims.empty()) return;
  std::optional<size_t> index = session_.NodeIndex(node_name);
  if (!index) return;
  const NodeInfo& node = session_.node(*index);
  const PodVolumes& pod = Resolve(task);
  if (!pod.error.ok()) return;
  for (const ClaimUse& use : pod.claims) {
    if (use.read_write_once_pod) ++read_write_once_pod_users_[use.key];
  }
  if (!options_.binding) return;
  std::unordered_set<const api::PersistentVolume*> chosen;
  for (size_t i : pod.unbound) {
    const ClaimUse& use = pod.claims[i];
    auto d = decided_.find(use.key);
    if (d != decided_.end()) {
      d->second.users.push_back(task.uid());
      continue;
    }
    Decision decision;
    decision.node = node.name;
    if (use.state == ClaimUse::State::kDelayed) {
      const api::PersistentVolume* volume = nullptr;
      // The predicates passed on this node, so a volume is there; a pipelined placement may
      // come without asking again, and then the claim stays undecided.
      if (!Choose(use, node, chosen, &volume)) continue;
      decision.volume = volume;
      if (volume != nullptr) {
        chosen.insert(volume);
        taken_.insert(volume);
      }
    }
    decision.users.push_back(task.uid());
    decided_.emplace(use.key, std::move(decision));
  }
}

void VolumePlacement::Deallocated(const TaskInfo& task, const std::string& node) {
  (void)node;
  auto it = pods_.find(task.pod->spec.get());
  if (it == pods_.end() || !it->second.error.ok()) return;
  const PodVolumes& pod = it->second;
  for (const ClaimUse& use : pod.claims) {
    if (use.read_write_once_pod) --read_write_once_pod_users_[use.key];
  }
  for (size_t i : pod.unbound) {
    auto d = decided_.find(pod.claims[i].key);
    if (d == decided_.end()) continue;
    auto& users = d->second.users;
    auto user = std::find(users.begin(), users.end(), task.uid());
    if (user == users.end()) continue;
    users.erase(user);
    if (!users.empty()) continue;  // still used; its next user writes it
    if (d->second.volume != nullptr) taken_.erase(d->second.volume);
    decided_.erase(d);
  }
}

std::vector<PreBindStep> VolumePlacement::PreBind(const TaskInfo& task,
                                                  const std::string& node) const {
  (void)node;
  std::vector<PreBindStep> steps;
  auto it = pods_.find(task.pod->spec.get());
  if (it == pods_.end() || !it->second.error.ok()) return steps;
  const PodVolumes& pod = it->second;
  for (size_t i : pod.unbound) {
    const ClaimUse& use = pod.claims[i];
    auto d = decided_.find(use.key);
    if (d == decided_.end() || d->second.users.empty() || d->second.users.front() != task.uid())
      continue;
    const api::PersistentVolumeClaim& claim = *use.claim;
    PreBindStep step;
    step.timeout = options_.bind_timeout;
    if (const api::PersistentVolume* volume = d->second.volume) {
      step.what = BindVolumeStep{use.key, claim.metadata.uid, claim.metadata.resource_version,
                                 volume->metadata.name, volume->metadata.resource_version};
    } else {
      step.what = ProvisionVolumeStep{use.key, claim.metadata.uid, claim.metadata.resource_version,
                                      d->second.node};
    }
    steps.push_back(std::move(step));
  }
  return steps;
}

}  // namespace tephra::scheduler
