// What the job controller writes for a Job: names, its pods and its PodGroup
// (docs/compatibility.md §2.4, §2.5).
// Pure functions of the Job (and of PriorityClass values for minResources).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "api/batch.h"
#include "api/scheduling.h"
#include "controllers/job/pod_draft.h"
#include "kube/meta/object.h"

namespace tephra::controllers::job {

// "<job>-<task>-<index>".
std::string PodName(std::string_view job, std::string_view task, int32_t index);
// "<job>-<job uid>".
std::string PodGroupName(const api::Job& job);
// The claim of spec.volumes[i]: volumeClaimName, or for a claim Tephra creates
// "<job>-pvc-<12 characters [0-9a-z] derived from the job UID and i>", stable across restarts
// so that no spec write-back is needed.
std::string VolumeClaimName(const api::Job& job, size_t i);
// The controller ownerReference of everything the job controller creates.
kube::OwnerReference JobOwnerReference(const api::Job& job);
// Metadata of an object `name` the job owns (Service, ConfigMap, Secret, claim, ...): in the
// job's namespace, the job its controller; write it with kube::EncodeObjectMeta.
kube::ObjectMeta JobOwnedMetadata(const api::Job& job, std::string name);

// The pod for replica `index` of `task` before plugins run: the task template (every field
// kept), name and namespace, controller reference, schedulerName and priorityClassName from
// the job when the template has none, the job's volumes, and the labels and annotations of
// §1.6: group name, job name and namespace, task spec, task index, queue, job version, retry
// count, template uid, partition id, NUMA policy and the job's preemption / cooldown /
// revocable-zone / disruption-budget annotations.
StatusOr<PodDraft> BuildPod(const api::Job& job, const api::TaskSpec& task, int32_t index);

// PriorityClass name → value, nullopt when unknown.
using PriorityLookup = std::function<std::optional<int32_t>(std::string_view)>;

// Resources of the minimal gang: tasks ordered by their template's PriorityClass value
// (highest first, ties in spec order). If job.minAvailable < Σ task minAvailable, the requests
// of the first minAvailable pods in that order; otherwise every task's minAvailable pods, then
// more replicas in the same order until minAvailable pods are counted. Written with the
// quota-style keys too (api::QuotaStyleResources), as Volcano writes them.
api::ResourceList MinResources(const api::Job& job, const PriorityLookup& priorities);

// The PodGroup spec, labels, annotations and owner for the job (status left empty).
api::PodGroup BuildPodGroup(const api::Job& job, const PriorityLookup& priorities);

// Whether an existing PodGroup's spec must be rewritten to match `want` (the fields the
// controller owns: minMember, minTaskMember, minResources, queue... as §2.5 lists).
bool PodGroupSpecDrifted(const api::PodGroup& have, const api::PodGroup& want);

}  // namespace tephra::controllers::job
