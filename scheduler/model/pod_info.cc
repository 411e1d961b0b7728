#include "scheduler/model/pod_info.h"

#include <functional>

#include <rapidjson/document.h>

#include "api/labels.h"
#include "api/scheduling.h"

namespace tephra::scheduler {

bool SchedulingSpec::operator==(const SchedulingSpec& o) const {
  return request == o.request && node_selector == o.node_selector && affinity == o.affinity &&
         tolerations == o.tolerations && spread == o.spread && host_ports == o.host_ports &&
         priority == o.priority && priority_class_name == o.priority_class_name &&
         scheduler_name == o.scheduler_name && preempt_never == o.preempt_never &&
         scheduling_gates == o.scheduling_gates && pvc_claims == o.pvc_claims &&
         host_network == o.host_network;
}

namespace {

void Mix(size_t* seed, size_t v) { *seed ^= v + 0x9e3779b97f4a7c15ULL + (*seed << 6) + (*seed >> 2); }

size_t HashString(std::string_view s) { return std::hash<std::string_view>{}(s); }

}  // namespace

size_t SpecInterner::Hash(const SchedulingSpec& s) {
  // Cheap fields only: collisions are resolved by operator==.
  size_t h = 0;
  Mix(&h, static_cast<size_t>(s.request.milli_cpu()));
  Mix(&h, static_cast<size_t>(s.request.memory()));
  for (const auto& sc : s.request.scalars()) Mix(&h, sc.id ^ static_cast<size_t>(sc.value));
  for (const auto& [k, v] : s.node_selector) Mix(&h, HashString(k) ^ HashString(v));
  for (const auto& t : s.tolerations) Mix(&h, HashString(t.key) ^ HashString(t.value));
  for (const auto& p : s.host_ports) Mix(&h, static_cast<size_t>(p.port));
  Mix(&h, s.affinity.has_value());
  Mix(&h, s.spread.size());
  Mix(&h, static_cast<size_t>(s.priority.value_or(-1)));
  Mix(&h, HashString(s.priority_class_name));
  Mix(&h, HashString(s.scheduler_name));
  return h;
}

std::shared_ptr<const SchedulingSpec> SpecInterner::Intern(SchedulingSpec spec) {
  size_t h = Hash(spec);
  std::lock_guard<std::mutex> l(mu_);
  auto range = specs_.equal_range(h);
  for (auto it = range.first; it != range.second; ++it) {
    if (auto existing = it->second.lock(); existing && *existing == spec) return existing;
  }
  auto fresh = std::make_shared<const SchedulingSpec>(std::move(spec));
  specs_.emplace(h, fresh);
  // Drop entries whose pods are all gone, amortised over inserts.
  if (++inserts_since_prune_ > 1024 && inserts_since_prune_ > specs_.size()) {
    for (auto it = specs_.begin(); it != specs_.end();) {
      it = it->second.expired() ? specs_.erase(it) : std::next(it);
    }
    inserts_since_prune_ = 0;
  }
  return fresh;
}

size_t SpecInterner::size() {
  std::lock_guard<std::mutex> l(mu_);
  return specs_.size();
}

SchedulingSpec MakeSchedulingSpec(const api::PodSpec& spec) {
  SchedulingSpec s;
  s.request = api::PodRequest(spec);
  s.best_effort = s.request.milli_cpu() == 0 && s.request.memory() == 0 && s.request.scalars().empty();
  s.request.SetPods(1);
  s.node_selector = spec.node_selector;
  s.affinity = spec.affinity;
  if (s.affinity) {
    s.has_pod_affinity = s.affinity->pod_affinity.has_value() || s.affinity->pod_anti_affinity.has_value();
  }
  s.tolerations = spec.tolerations;
  s.spread = spec.topology_spread_constraints;
  for (const auto* list : {&spec.init_containers, &spec.containers}) {
    for (const auto& c : *list) {
      for (const auto& p : c.ports) {
        if (p.host_port <= 0) continue;
        s.host_ports.push_back({p.protocol.empty() ? "TCP" : p.protocol, p.host_ip, p.host_port});
      }
    }
  }
  s.priority = spec.priority;
  s.priority_class_name = spec.priority_class_name;
  s.scheduler_name = spec.scheduler_name;
  s.preempt_never = spec.preemption_policy && *spec.preemption_policy == "Never";
  s.scheduling_gates = spec.scheduling_gates;
  for (const auto& v : spec.volumes) {
    if (!v.pvc_claim_name.empty()) s.pvc_claims.push_back(v.pvc_claim_name);
  }
  s.host_network = spec.host_network;
  return s;
}

namespace {

bool KeepAnnotation(const std::string& key) {
  return key.rfind("volcano.sh/", 0) == 0 || key.rfind("scheduling.k8s.io/", 0) == 0 ||
         key.rfind("scheduling.volcano.sh/", 0) == 0;
}

std::optional<bool> ParseBool(const std::string& s) {
  if (s == "true" || s == "True" || s == "1") return true;
  if (s == "false" || s == "False" || s == "0") return false;
  return std::nullopt;
}

}  // namespace

StatusOr<std::shared_ptr<PodInfo>> DecodePodInfo(const json::Value& value, SpecInterner& interner) {
  json::Errors errors;
  json::Reader r(&value, &errors);
  if (!r.is_object()) return InvalidArgument("pod: expected a JSON object");
  auto pod = std::make_shared<PodInfo>();
  kube::DecodeObjectHeader(r, pod.get());
  for (auto it = pod->metadata.annotations.begin(); it != pod->metadata.annotations.end();) {
    it = KeepAnnotation(it->first) ? std::next(it) : pod->metadata.annotations.erase(it);
  }
  api::PodSpec spec;
  api::DecodePodSpec(r["spec"], &spec);
  json::Reader status = r["status"];
  pod->phase = status["phase"].String();
  pod->nominated_node = status["nominatedNodeName"].String();
  status["conditions"].ForEach([&](const json::Reader& c) {
    if (c["type"].String() != "PodScheduled") return;
    pod->scheduled = ScheduledCondition{c["status"].String(), c["reason"].String(), c["message"].String()};
  });
  status["containerStatuses"].ForEach(
      [&](const json::Reader& c) { pod->restarts += c["restartCount"].Int32(); });
  TEPHRA_RETURN_IF_ERROR(errors.ToStatus("pod " + pod->metadata.Key()));

  pod->node_name = spec.node_name;
  pod->terminating = pod->metadata.deletion_timestamp.has_value();
  pod->group_name = pod->metadata.Annotation(api::kGroupNameAnnotation);
  if (pod->group_name.empty()) {
    pod->group_name = pod->metadata.Label(api::kSchedPluginsPodGroupLabel);
    pod->sched_plugins_group = !pod->group_name.empty();
  }
  if (pod->group_name.empty()) {
    // The PodGroup controller will make this group and annotate the pod; holding the pod under
    // that name now lets one session admit and place it as soon as the group arrives.
    pod->group_name = api::ImplicitPodGroupName(pod->metadata);
    pod->implicit_group = true;
  }
  pod->task_role = pod->metadata.Annotation(api::kTaskSpecKey);
  if (pod->task_role.empty()) pod->task_role = pod->metadata.Label(api::kTaskSpecKey);
  std::string task_priority = pod->metadata.Annotation(api::kTaskPriorityAnnotation);
  if (!task_priority.empty()) {
    char* end = nullptr;
    long v = std::strtol(task_priority.c_str(), &end, 10);
    if (end != nullptr && *end == '\0') pod->task_priority = static_cast<int32_t>(v);
  }
  std::string preemptable = pod->metadata.Annotation(api::kPreemptableKey);
  if (preemptable.empty()) preemptable = pod->metadata.Label(api::kPreemptableKey);
  pod->preemptable = ParseBool(preemptable).value_or(true);
  pod->spec = interner.Intern(MakeSchedulingSpec(spec));
  return pod;
}

kube::ObjectDecoder PodInfoDecoder(std::shared_ptr<SpecInterner> interner) {
  return [interner](const json::Value& v) -> StatusOr<kube::ObjectPtr> {
    TEPHRA_ASSIGN_OR_RETURN(std::shared_ptr<PodInfo> pod, DecodePodInfo(v, *interner));
    return kube::ObjectPtr(std::move(pod));
  };
}

}  // namespace tephra::scheduler
