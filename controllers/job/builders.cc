#include "controllers/job/builders.h"

#include <algorithm>
#include <numeric>

#include "api/labels.h"
#include "base/workqueue.h"
#include "json/json.h"

namespace tephra::controllers::job {
namespace {

// Job annotations a pod inherits (cdp, tdm and the disruption-budget plugin read them there).
constexpr std::string_view kInheritedAnnotations[] = {api::kPreemptableKey, api::kCooldownTimeKey,
                                                      api::kRevocableZoneKey};
constexpr std::string_view kInheritedLabels[] = {api::kPreemptableKey, api::kCooldownTimeKey};

std::string Base36(uint64_t v, size_t width) {
  static constexpr char kDigits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
  std::string out(width, '0');
  for (size_t i = width; i-- > 0;) {
    out[i] = kDigits[v % 36];
    v /= 36;
  }
  return out;
}

// 12 base-36 characters from two FNV hashes of `seed`.
std::string StableSuffix(const std::string& seed) {
  uint64_t hi = base::Fnv32(seed);
  uint64_t lo = base::Fnv32(seed + "#");
  return Base36((hi << 32) | lo, 12);
}

}  // namespace

std::string PodName(std::string_view job, std::string_view task, int32_t index) {
  return std::string(job) + "-" + std::string(task) + "-" + std::to_string(index);
}

std::string PodGroupName(const api::Job& job) {
  return job.metadata.name + "-" + job.metadata.uid;
}

std::string VolumeClaimName(const api::Job& job, size_t i) {
  const api::VolumeSpec& v = job.spec.volumes.at(i);
  if (!v.volume_claim_name.empty()) return v.volume_claim_name;
  return job.metadata.name + "-pvc-" + StableSuffix(job.metadata.uid + "/" + std::to_string(i));
}

kube::OwnerReference JobOwnerReference(const api::Job& job) {
  kube::OwnerReference ref;
  ref.api_version = std::string(api::kBatchApiVersion);
  ref.kind = std::string(api::kJobKind);
  ref.name = job.metadata.name;
  ref.uid = job.metadata.uid;
  ref.controller = true;
  ref.block_owner_deletion = true;
  return ref;
}

kube::ObjectMeta JobOwnedMetadata(const api::Job& job, std::string name) {
  kube::ObjectMeta meta;
  meta.name = std::move(name);
  meta.namespace_ = job.metadata.namespace_;
  meta.owner_references.push_back(JobOwnerReference(job));
  return meta;
}

StatusOr<PodDraft> BuildPod(const api::Job& job, const api::TaskSpec& task, int32_t index) {
  TEPHRA_ASSIGN_OR_RETURN(PodDraft pod, PodDraft::FromTemplate(task.template_.json));
  const std::string& job_name = job.metadata.name;
  const std::string index_text = std::to_string(index);
  pod.SetNameAndNamespace(PodName(job_name, task.name, index), job.metadata.namespace_);
  pod.SetControllerReference(JobOwnerReference(job));

  pod.SetAnnotation(api::kGroupNameAnnotation, PodGroupName(job));
  pod.SetAnnotation(api::kJobNameKey, job_name);
  pod.SetAnnotation(api::kTaskSpecKey, task.name);
  pod.SetAnnotation(api::kTaskIndexKey, index_text);
  pod.SetAnnotation(api::kQueueNameKey, job.spec.queue);
  pod.SetAnnotation(api::kJobVersionAnnotation, std::to_string(job.status.version));
  pod.SetAnnotation(api::kJobRetryCountAnnotation, std::to_string(job.status.retry_count));
  pod.SetAnnotation(api::kTemplateUidAnnotation, job_name + "-" + task.name);
  if (!task.topology_policy.empty() && task.topology_policy != "none") {
    pod.SetAnnotation(api::kNumaTopologyPolicyAnnotation, task.topology_policy);
  }
  pod.SetLabel(api::kJobNameKey, job_name);
  pod.SetLabel(api::kJobNamespaceKey, job.metadata.namespace_);
  pod.SetLabel(api::kTaskSpecKey, task.name);
  pod.SetLabel(api::kTaskIndexKey, index_text);
  pod.SetLabel(api::kQueueNameKey, job.spec.queue);
  if (task.partition_policy && task.partition_policy->partition_size > 0) {
    pod.SetLabel(api::kPartitionIdLabel,
                 std::to_string(index / task.partition_policy->partition_size));
  }
  for (std::string_view key : kInheritedAnnotations) {
    std::string value = job.metadata.Annotation(key);
    if (!value.empty()) pod.SetAnnotation(key, value);
  }
  // A disruption budget is either a minimum available or a maximum unavailable.
  if (std::string v = job.metadata.Annotation(api::kJdbMinAvailableKey); !v.empty()) {
    pod.SetAnnotation(api::kJdbMinAvailableKey, v);
  } else if (std::string u = job.metadata.Annotation(api::kJdbMaxUnavailableKey); !u.empty()) {
    pod.SetAnnotation(api::kJdbMaxUnavailableKey, u);
  }
  for (std::string_view key : kInheritedLabels) {
    std::string value = job.metadata.Label(key);
    if (!value.empty()) pod.SetLabel(key, value);
  }

  pod.SetSpecStringIfEmpty("schedulerName", job.spec.scheduler_name);
  if (!job.spec.priority_class_name.empty()) {
    pod.SetSpecStringIfEmpty("priorityClassName", job.spec.priority_class_name);
  }

  std::vector<std::string> mounted_claims;
  for (size_t i = 0; i < job.spec.volumes.size(); ++i) {
    const std::string claim = VolumeClaimName(job, i);
    if (std::find(mounted_claims.begin(), mounted_claims.end(), claim) != mounted_claims.end()) {
      continue;
    }
    mounted_claims.push_back(claim);
    const std::string volume = job_name + "-" + StableSuffix(claim);
    json::Writer v;
    v.StartObject()
        .Field("name", volume)
        .Key("persistentVolumeClaim")
        .StartObject()
        .Field("claimName", claim)
        .EndObject()
        .EndObject();
    pod.AddVolume(v.str());
    json::Writer m;
    m.StartObject()
        .Field("name", volume)
        .Field("mountPath", job.spec.volumes[i].mount_path)
        .EndObject();
    pod.AddVolumeMount(m.str(), false);
  }
  return pod;
}

api::ResourceList MinResources(const api::Job& job, const PriorityLookup& priorities) {
  struct Entry {
    const api::TaskSpec* task;
    int32_t priority;
    api::Resources request;
    api::Resources limit;
    int32_t min;
  };
  std::vector<Entry> tasks;
  int64_t min_sum = 0;
  for (const api::TaskSpec& t : job.spec.tasks) {
    int32_t priority = 0;
    if (!t.template_.spec.priority_class_name.empty() && priorities) {
      priority = priorities(t.template_.spec.priority_class_name).value_or(0);
    }
    int32_t min = std::clamp(t.min_available.value_or(t.replicas), 0, t.replicas);
    tasks.push_back(Entry{&t, priority, api::PodRequest(t.template_.spec),
                          api::PodLimit(t.template_.spec), min});
    min_sum += min;
  }
  std::stable_sort(tasks.begin(), tasks.end(),
                   [](const Entry& a, const Entry& b) { return a.priority > b.priority; });
  api::Resources requests, limits;
  int64_t pod_count = 0;
  auto add = [&](const Entry& e, int64_t pods) {
    api::Resources request = e.request, limit = e.limit;
    requests.Add(request.Multiply(pods));
    limits.Add(limit.Multiply(pods));
    pod_count += pods;
  };
  int64_t want = job.spec.min_available;
  if (want < min_sum) {
    for (const Entry& e : tasks) {
      if (want <= 0) break;
      int64_t n = std::min<int64_t>(want, e.task->replicas);
      add(e, n);
      want -= n;
    }
  } else {
    for (const Entry& e : tasks) add(e, e.min);
    want -= min_sum;
    for (const Entry& e : tasks) {
      if (want <= 0) break;
      int64_t n = std::min<int64_t>(want, e.task->replicas - e.min);
      add(e, n);
      want -= n;
    }
  }
  return api::QuotaStyleResources(requests, limits, pod_count);
}

api::PodGroup BuildPodGroup(const api::Job& job, const PriorityLookup& priorities) {
  api::PodGroup pg;
  pg.api_version = std::string(api::kSchedulingApiVersion);
  pg.kind = std::string(api::kPodGroupKind);
  pg.metadata.name = PodGroupName(job);
  pg.metadata.namespace_ = job.metadata.namespace_;
  pg.metadata.labels = job.metadata.labels;
  pg.metadata.annotations = job.metadata.annotations;
  // kubectl's record of the last applied Job is not the PodGroup's.
  pg.metadata.annotations.erase("kubectl.kubernetes.io/last-applied-configuration");
  pg.metadata.owner_references.push_back(JobOwnerReference(job));
  pg.spec.min_member = job.spec.min_available;
  pg.spec.queue = job.spec.queue;
  pg.spec.priority_class_name = job.spec.priority_class_name;
  pg.spec.network_topology = job.spec.network_topology;
  for (const api::TaskSpec& t : job.spec.tasks) {
    int32_t min = t.replicas;
    if (t.min_available) {
      min = *t.min_available;
    } else if (t.partition_policy && t.partition_policy->min_partitions > 0) {
      min = t.partition_policy->min_partitions * t.partition_policy->partition_size;
    }
    pg.spec.min_task_member[t.name] = min;
    if (t.partition_policy) {
      api::SubGroupPolicy sub;
      sub.name = t.name;
      sub.network_topology = t.partition_policy->network_topology;
      sub.sub_group_size = t.partition_policy->partition_size;
      sub.min_sub_groups = t.partition_policy->min_partitions;
      api::LabelSelector selector;
      selector.match_labels[std::string(api::kTaskSpecKey)] = t.name;
      sub.label_selector = selector;
      sub.match_label_keys = {std::string(api::kPartitionIdLabel)};
      pg.spec.sub_group_policy.push_back(std::move(sub));
    }
  }
  pg.spec.min_resources = MinResources(job, priorities);
  return pg;
}

bool PodGroupSpecDrifted(const api::PodGroup& have, const api::PodGroup& want) {
  const api::PodGroupSpec& a = have.spec;
  const api::PodGroupSpec& b = want.spec;
  // An absent minResources equals an empty one.
  auto resources = [](const std::optional<api::ResourceList>& r) {
    return r ? api::Resources::FromList(*r) : api::Resources();
  };
  return a.min_member != b.min_member || a.min_task_member != b.min_task_member ||
         a.priority_class_name != b.priority_class_name ||
         !(resources(a.min_resources) == resources(b.min_resources)) ||
         a.sub_group_policy != b.sub_group_policy;
}

}  // namespace tephra::controllers::job
