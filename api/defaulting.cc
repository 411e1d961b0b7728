#include "api/defaulting.h"

#include <algorithm>
#include <limits>

#include "api/labels.h"

namespace tephra::api {
namespace {

constexpr std::string_view kHostNetworkDnsPolicy = "ClusterFirstWithHostNet";

// Both texts are valid JSON (a decoded object's raw text, our own encoding), so the diff cannot
// fail; an empty patch is the safe answer if it ever did.
JsonPatch PatchBetween(const std::string& before, const std::string& after) {
  StatusOr<JsonPatch> patch = DiffJson(before, after);
  return patch.ok() ? *std::move(patch) : JsonPatch{};
}

bool HasPlugin(const JobSpec& spec, std::string_view name) {
  return spec.plugins.count(std::string(name)) > 0;
}

bool IsUnderRoot(std::string_view hierarchy) {
  return hierarchy == kRootQueue ||
         hierarchy.substr(0, kRootQueue.size() + 1) == std::string(kRootQueue) + "/";
}

}  // namespace

void ApplyJobDefaults(Job* job, const JobDefaultingOptions& options) {
  JobSpec& spec = job->spec;
  if (spec.queue.empty()) spec.queue = options.default_queue;
  if (spec.scheduler_name.empty()) spec.scheduler_name = options.scheduler_name;
  if (spec.max_retry == 0) spec.max_retry = kDefaultMaxRetry;
  int64_t sum = 0;
  for (size_t i = 0; i < spec.tasks.size(); ++i) {
    TaskSpec& task = spec.tasks[i];
    if (task.name.empty()) task.name = "default" + std::to_string(i);
    PodSpec& pod = task.template_.spec;
    if (pod.host_network && pod.dns_policy.empty()) {
      pod.dns_policy = std::string(kHostNetworkDnsPolicy);
      SyncPodTemplateJson(&task.template_);
    }
    if (!task.min_available) {
      const auto& partition = task.partition_policy;
      task.min_available = partition && partition->min_partitions > 0
                               ? partition->min_partitions * partition->partition_size
                               : task.replicas;
    }
    if (task.max_retry == 0) task.max_retry = kDefaultMaxRetry;
    sum += *task.min_available;
  }
  if (spec.min_available == 0) {
    spec.min_available =
        static_cast<int32_t>(std::clamp<int64_t>(sum, 0, std::numeric_limits<int32_t>::max()));
  }
  bool needs_svc = HasPlugin(spec, "tensorflow") || HasPlugin(spec, "mpi") ||
                   HasPlugin(spec, "pytorch") || HasPlugin(spec, "ray");
  if (needs_svc && !HasPlugin(spec, "svc")) spec.plugins["svc"] = {};
  if (HasPlugin(spec, "mpi") && !HasPlugin(spec, "ssh")) spec.plugins["ssh"] = {};
}

JsonPatch DefaultJob(Job* job, const JobDefaultingOptions& options) {
  std::string before = job->raw ? *job->raw : EncodeJob(*job);
  ApplyJobDefaults(job, options);
  return PatchBetween(before, EncodeJob(*job));
}

void ApplyQueueDefaults(Queue* queue) {
  auto& annotations = queue->metadata.annotations;
  auto hierarchy = annotations.find(std::string(kQueueHierarchyAnnotation));
  if (hierarchy != annotations.end() && !IsUnderRoot(hierarchy->second)) {
    hierarchy->second = std::string(kRootQueue) + "/" + hierarchy->second;
    auto weights = annotations.find(std::string(kQueueHierarchyWeightsAnnotation));
    if (weights != annotations.end()) weights->second = "1/" + weights->second;
  }
  if (!queue->spec.reclaimable) queue->spec.reclaimable = true;
  if (queue->spec.weight == 0) queue->spec.weight = 1;
}

JsonPatch DefaultQueue(Queue* queue) {
  std::string before = queue->raw ? *queue->raw : EncodeQueue(*queue);
  ApplyQueueDefaults(queue);
  return PatchBetween(before, EncodeQueue(*queue));
}

void ApplyPodGroupDefaults(PodGroup* pg, const NamespaceLookup* namespaces) {
  if (namespaces == nullptr) return;
  if (!pg->spec.queue.empty() && pg->spec.queue != kDefaultQueue) return;
  std::shared_ptr<const Namespace> ns = namespaces->Get(pg->metadata.namespace_);
  if (ns == nullptr) return;
  std::string queue = ns->metadata.Annotation(kSchedulingQueueNameAnnotation);
  if (!queue.empty()) pg->spec.queue = queue;
}

JsonPatch DefaultPodGroup(PodGroup* pg, const NamespaceLookup* namespaces) {
  std::string before = pg->raw ? *pg->raw : EncodePodGroup(*pg);
  ApplyPodGroupDefaults(pg, namespaces);
  return PatchBetween(before, EncodePodGroup(*pg));
}

}  // namespace tephra::api
