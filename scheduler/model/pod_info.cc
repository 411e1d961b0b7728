#include "scheduler/model/pod_info.h"

#include <array>
#include <functional>

#include <rapidjson/document.h>

#include "api/core_protobuf.h"
#include "api/labels.h"
#include "api/scheduling.h"

namespace tephra::scheduler {

bool SchedulingSpec::operator==(const SchedulingSpec& o) const {
  return request == o.request && node_selector == o.node_selector && affinity == o.affinity &&
         tolerations == o.tolerations && spread == o.spread && host_ports == o.host_ports &&
         priority == o.priority && priority_class_name == o.priority_class_name &&
         scheduler_name == o.scheduler_name && preempt_never == o.preempt_never &&
         scheduling_gates == o.scheduling_gates && claims == o.claims &&
         claims_namespace == o.claims_namespace && host_network == o.host_network;
}

namespace {

void Mix(size_t* seed, size_t v) {
  *seed ^= v + 0x9e3779b97f4a7c15ULL + (*seed << 6) + (*seed >> 2);
}

size_t HashString(std::string_view s) {
  return std::hash<std::string_view>{}(s);
}

void MixRequirements(size_t* h, const std::vector<api::NodeSelectorRequirement>& reqs) {
  for (const auto& r : reqs) {
    Mix(h, HashString(r.key) ^ HashString(r.op));
    for (const auto& v : r.values) Mix(h, HashString(v));
  }
}

void MixSelector(size_t* h, const std::optional<api::LabelSelector>& s) {
  if (!s) return;
  for (const auto& [k, v] : s->match_labels) Mix(h, HashString(k) ^ HashString(v));
  for (const auto& e : s->match_expressions) {
    Mix(h, HashString(e.key) ^ HashString(e.op));
    for (const auto& v : e.values) Mix(h, HashString(v));
  }
}

void MixPodAffinity(size_t* h, const std::optional<api::PodAffinity>& a) {
  if (!a) return;
  auto term = [&](const api::PodAffinityTerm& t) {
    Mix(h, HashString(t.topology_key));
    MixSelector(h, t.label_selector);
    for (const auto& ns : t.namespaces) Mix(h, HashString(ns));
  };
  for (const auto& t : a->required) term(t);
  for (const auto& w : a->preferred) {
    Mix(h, static_cast<size_t>(w.weight));
    term(w.term);
  }
}

// Pods that differ only in their affinity (per-pod node pinning) must not share a hash, or
// interning n of them would compare each with all the others.
void MixAffinity(size_t* h, const std::optional<api::Affinity>& a) {
  Mix(h, a.has_value());
  if (!a) return;
  if (const auto& na = a->node_affinity) {
    if (na->required) {
      for (const auto& term : *na->required) {
        MixRequirements(h, term.match_expressions);
        MixRequirements(h, term.match_fields);
      }
    }
    for (const auto& p : na->preferred) {
      Mix(h, static_cast<size_t>(p.weight));
      MixRequirements(h, p.preference.match_expressions);
      MixRequirements(h, p.preference.match_fields);
    }
  }
  MixPodAffinity(h, a->pod_affinity);
  MixPodAffinity(h, a->pod_anti_affinity);
}

}  // namespace

size_t SpecInterner::Hash(const SchedulingSpec& s) {
  // Every field that tells pods apart in practice; collisions are resolved by operator==.
  size_t h = 0;
  Mix(&h, static_cast<size_t>(s.request.milli_cpu()));
  Mix(&h, static_cast<size_t>(s.request.memory()));
  for (const auto& sc : s.request.scalars()) Mix(&h, sc.id ^ static_cast<size_t>(sc.value));
  for (const auto& [k, v] : s.node_selector) Mix(&h, HashString(k) ^ HashString(v));
  for (const auto& t : s.tolerations) Mix(&h, HashString(t.key) ^ HashString(t.value));
  for (const auto& p : s.host_ports) Mix(&h, static_cast<size_t>(p.port));
  MixAffinity(&h, s.affinity);
  for (const auto& c : s.spread) {
    Mix(&h, HashString(c.topology_key) ^ static_cast<size_t>(c.max_skew));
    MixSelector(&h, c.label_selector);
  }
  for (const auto& g : s.scheduling_gates) Mix(&h, HashString(g));
  for (const auto& c : s.claims) Mix(&h, HashString(c.name) + c.ephemeral);
  Mix(&h, HashString(s.claims_namespace));
  Mix(&h, static_cast<size_t>(s.priority.value_or(-1)));
  Mix(&h, HashString(s.priority_class_name));
  Mix(&h, HashString(s.scheduler_name));
  return h;
}

std::shared_ptr<const SchedulingSpec> SpecInterner::Intern(SchedulingSpec spec) {
  size_t h = Hash(spec);
  sync::MutexLock l(mu_);
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
  sync::MutexLock l(mu_);
  return specs_.size();
}

SchedulingSpec MakeSchedulingSpec(const api::PodSpec& spec, std::string_view pod_name,
                                  std::string_view namespace_) {
  SchedulingSpec s;
  s.request = api::PodRequest(spec);
  s.best_effort =
      s.request.milli_cpu() == 0 && s.request.memory() == 0 && s.request.scalars().empty();
  s.request.SetPods(1);
  s.node_selector = spec.node_selector;
  s.affinity = spec.affinity;
  if (s.affinity) {
    s.has_pod_affinity =
        s.affinity->pod_affinity.has_value() || s.affinity->pod_anti_affinity.has_value();
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
    if (!v.pvc_claim_name.empty()) {
      s.claims.push_back({v.pvc_claim_name, false});
    } else if (v.ephemeral) {
      s.claims.push_back({api::EphemeralClaimName(pod_name, v.name), true});
    }
  }
  if (!s.claims.empty()) s.claims_namespace = std::string(namespace_);
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

// Completes a pod whose metadata and status fields are decoded: the same steps whichever
// encoding it came in.
std::shared_ptr<PodInfo> Assemble(std::shared_ptr<PodInfo> pod, api::PodSpec spec,
                                  SpecInterner& interner) {
  // LIST items carry no apiVersion and kind; watch events do.
  if (pod->api_version.empty()) pod->api_version = "v1";
  if (pod->kind.empty()) pod->kind = "Pod";
  for (auto it = pod->metadata.annotations.begin(); it != pod->metadata.annotations.end();) {
    it = KeepAnnotation(it->first) ? std::next(it) : pod->metadata.annotations.erase(it);
  }
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
  pod->spec =
      interner.Intern(MakeSchedulingSpec(spec, pod->metadata.name, pod->metadata.namespace_));
  if (pod->implicit_group && pod->metadata.ControllerRef() == nullptr && spec.node_name.empty() &&
      (pod->phase.empty() || pod->phase == "Pending") && !pod->terminating) {
    api::Pod whole;
    whole.metadata = pod->metadata;
    whole.spec = std::move(spec);
    // The queue stays empty when the pod names none: the cache reads that as its default queue.
    auto group = std::make_shared<api::PodGroup>(api::ImplicitPodGroup(whole, {}, ""));
    group->metadata.creation_timestamp = pod->metadata.creation_timestamp;
    pod->implicit_pod_group = std::move(group);
  }
  // Every annotation the scheduler reads is a field now; 100,000 pods would keep ~20 MB of them.
  pod->metadata.annotations.clear();
  return pod;
}

}  // namespace

StatusOr<std::shared_ptr<PodInfo>> DecodePodInfo(const json::Value& value, SpecInterner& interner) {
  json::Errors errors;
  json::Reader r(&value, &errors);
  if (!r.is_object()) return InvalidArgument("pod: expected a JSON object");
  auto pod = std::make_shared<PodInfo>();
  kube::DecodeObjectHeader(r, pod.get());
  api::PodSpec spec;
  api::DecodePodSpec(r["spec"], &spec);
  json::Reader status = r["status"];
  pod->phase = status["phase"].String();
  pod->nominated_node = status["nominatedNodeName"].String();
  status["conditions"].ForEach([&](const json::Reader& c) {
    if (c["type"].String() != "PodScheduled") return;
    pod->scheduled = std::make_shared<const ScheduledCondition>(
        ScheduledCondition{c["status"].String(), c["reason"].String(), c["message"].String()});
  });
  status["containerStatuses"].ForEach(
      [&](const json::Reader& c) { pod->restarts += c["restartCount"].Int32(); });
  TEPHRA_RETURN_IF_ERROR(errors.ToStatus("pod " + pod->metadata.Key()));
  return Assemble(std::move(pod), std::move(spec), interner);
}

StatusOr<std::shared_ptr<PodInfo>> DecodePodInfoProtobuf(std::string_view bytes,
                                                         SpecInterner& interner) {
  // One arena per pod frees the message's many small strings in one go; its first block is
  // reused by every pod this thread decodes, so a pod of ordinary size allocates nothing for
  // the message itself.
  // Protobuf requires the block to be 8-byte aligned; a char array alone need not be.
  alignas(8) thread_local std::array<char, 32 * 1024> first_block;
  google::protobuf::ArenaOptions options;
  options.initial_block = first_block.data();
  options.initial_block_size = first_block.size();
  google::protobuf::Arena arena(options);
  auto* message = google::protobuf::Arena::CreateMessage<k8s::v1::Pod>(&arena);
  if (!message->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return InvalidArgument("pod: malformed protobuf (" + std::to_string(bytes.size()) + " bytes)");
  }
  auto pod = std::make_shared<PodInfo>();
  api::DecodeObjectMeta(message->metadata(), &pod->metadata);
  api::PodSpec spec;
  TEPHRA_RETURN_IF_ERROR(
      api::DecodePodSpec(message->spec(), &spec).WithContext("pod " + pod->metadata.Key()));
  const k8s::v1::PodStatus& status = message->status();
  pod->phase = status.phase();
  pod->nominated_node = status.nominatednodename();
  for (const auto& c : status.conditions()) {
    if (c.type() != "PodScheduled") continue;
    pod->scheduled = std::make_shared<const ScheduledCondition>(
        ScheduledCondition{c.status(), c.reason(), c.message()});
  }
  for (const auto& c : status.containerstatuses()) pod->restarts += c.restartcount();
  return Assemble(std::move(pod), std::move(spec), interner);
}

}  // namespace tephra::scheduler
