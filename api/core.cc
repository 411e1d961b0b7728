#include "api/core.h"

#include <algorithm>

#include <rapidjson/document.h>

namespace tephra::api {
namespace {

// ---------------------------------------------------------------------------------------------
// Decoding

void DecodeResourceRequirements(const json::Reader& r, ResourceRequirements* out) {
  out->requests = DecodeResourceList(r["requests"]);
  out->limits = DecodeResourceList(r["limits"]);
}

void DecodeContainer(const json::Reader& r, Container* c) {
  c->name = r["name"].String();
  c->image = r["image"].String();
  DecodeResourceRequirements(r["resources"], &c->resources);
  r["ports"].ForEach([&](const json::Reader& p) {
    ContainerPort port;
    port.name = p["name"].String();
    port.container_port = p["containerPort"].Int32();
    port.host_port = p["hostPort"].Int32();
    port.protocol = p["protocol"].String();
    port.host_ip = p["hostIP"].String();
    c->ports.push_back(std::move(port));
  });
  c->restart_policy = r["restartPolicy"].OptString();
}

std::vector<Container> DecodeContainers(const json::Reader& r) {
  std::vector<Container> out;
  out.reserve(r.size());
  r.ForEach([&](const json::Reader& c) { DecodeContainer(c, &out.emplace_back()); });
  return out;
}

template <typename Requirement>
std::vector<Requirement> DecodeRequirements(const json::Reader& r) {
  std::vector<Requirement> out;
  r.ForEach([&](const json::Reader& e) {
    Requirement req;
    req.key = e["key"].String();
    req.op = e["operator"].String();
    req.values = e["values"].StringList();
    out.push_back(std::move(req));
  });
  return out;
}

std::optional<LabelSelector> DecodeOptLabelSelector(const json::Reader& r) {
  if (!r.present()) return std::nullopt;
  LabelSelector s;
  DecodeLabelSelector(r, &s);
  return s;
}

void DecodePodAffinityTerm(const json::Reader& r, PodAffinityTerm* out) {
  out->label_selector = DecodeOptLabelSelector(r["labelSelector"]);
  out->namespaces = r["namespaces"].StringList();
  out->namespace_selector = DecodeOptLabelSelector(r["namespaceSelector"]);
  out->topology_key = r["topologyKey"].String();
  out->match_label_keys = r["matchLabelKeys"].StringList();
  out->mismatch_label_keys = r["mismatchLabelKeys"].StringList();
}

std::optional<PodAffinity> DecodePodAffinity(const json::Reader& r) {
  if (!r.present()) return std::nullopt;
  PodAffinity a;
  r["requiredDuringSchedulingIgnoredDuringExecution"].ForEach(
      [&](const json::Reader& t) { DecodePodAffinityTerm(t, &a.required.emplace_back()); });
  r["preferredDuringSchedulingIgnoredDuringExecution"].ForEach([&](const json::Reader& t) {
    WeightedPodAffinityTerm& w = a.preferred.emplace_back();
    w.weight = t["weight"].Int32();
    DecodePodAffinityTerm(t["podAffinityTerm"], &w.term);
  });
  return a;
}

std::optional<Affinity> DecodeAffinity(const json::Reader& r) {
  if (!r.present()) return std::nullopt;
  Affinity a;
  json::Reader node = r["nodeAffinity"];
  if (node.present()) {
    NodeAffinity& na = a.node_affinity.emplace();
    json::Reader required = node["requiredDuringSchedulingIgnoredDuringExecution"];
    if (required.present()) {
      auto& terms = na.required.emplace();
      required["nodeSelectorTerms"].ForEach(
          [&](const json::Reader& t) { DecodeNodeSelectorTerm(t, &terms.emplace_back()); });
    }
    node["preferredDuringSchedulingIgnoredDuringExecution"].ForEach([&](const json::Reader& t) {
      PreferredSchedulingTerm& p = na.preferred.emplace_back();
      p.weight = t["weight"].Int32();
      DecodeNodeSelectorTerm(t["preference"], &p.preference);
    });
  }
  a.pod_affinity = DecodePodAffinity(r["podAffinity"]);
  a.pod_anti_affinity = DecodePodAffinity(r["podAntiAffinity"]);
  return a;
}

void DecodeContainerState(const json::Reader& r, ContainerState* out) {
  if (json::Reader t = r["terminated"]; t.present()) {
    out->kind = ContainerState::Kind::kTerminated;
    out->exit_code = t["exitCode"].Int32();
    out->reason = t["reason"].String();
    out->started_at = DecodeTime(t["startedAt"]);
    out->finished_at = DecodeTime(t["finishedAt"]);
  } else if (json::Reader run = r["running"]; run.present()) {
    out->kind = ContainerState::Kind::kRunning;
    out->started_at = DecodeTime(run["startedAt"]);
  } else if (json::Reader w = r["waiting"]; w.present()) {
    out->kind = ContainerState::Kind::kWaiting;
    out->reason = w["reason"].String();
  }
}

std::vector<ContainerStatus> DecodeContainerStatuses(const json::Reader& r) {
  std::vector<ContainerStatus> out;
  r.ForEach([&](const json::Reader& s) {
    ContainerStatus& cs = out.emplace_back();
    cs.name = s["name"].String();
    cs.ready = s["ready"].Bool();
    cs.restart_count = s["restartCount"].Int32();
    DecodeContainerState(s["state"], &cs.state);
    DecodeContainerState(s["lastState"], &cs.last_state);
  });
  return out;
}

void DecodePodStatus(const json::Reader& r, PodStatus* out) {
  out->phase = r["phase"].String();
  out->reason = r["reason"].String();
  out->message = r["message"].String();
  r["conditions"].ForEach([&](const json::Reader& c) {
    PodCondition& cond = out->conditions.emplace_back();
    cond.type = c["type"].String();
    cond.status = c["status"].String();
    cond.reason = c["reason"].String();
    cond.message = c["message"].String();
    cond.last_transition_time = DecodeTime(c["lastTransitionTime"]);
  });
  out->init_container_statuses = DecodeContainerStatuses(r["initContainerStatuses"]);
  out->container_statuses = DecodeContainerStatuses(r["containerStatuses"]);
  out->nominated_node_name = r["nominatedNodeName"].String();
  out->host_ip = r["hostIP"].String();
  out->pod_ip = r["podIP"].String();
  out->start_time = DecodeTime(r["startTime"]);
}

// ---------------------------------------------------------------------------------------------
// Encoding

void EncodeResourceRequirementsInto(const ResourceRequirements& res, JsonObject& o) {
  o.SetQuantities("requests", res.requests);
  o.SetQuantities("limits", res.limits);
}

void EncodeContainersInto(JsonObject& o, std::string_view key,
                          const std::vector<Container>& containers) {
  o.EditList(
      key, containers.size(),
      [&](size_t i, JsonObject& c) {
        const Container& ctr = containers[i];
        c.SetString("name", ctr.name);
        c.SetString("image", ctr.image);
        c.Edit("resources",
               [&](JsonObject& r) { EncodeResourceRequirementsInto(ctr.resources, r); });
        c.EditList("ports", ctr.ports.size(), [&](size_t j, JsonObject& p) {
          const ContainerPort& port = ctr.ports[j];
          p.SetString("name", port.name);
          p.SetInt("containerPort", port.container_port);
          p.SetInt("hostPort", port.host_port);
          p.SetString("protocol", port.protocol);
          p.SetString("hostIP", port.host_ip);
        });
        c.SetOptString("restartPolicy", ctr.restart_policy);
      },
      [&](size_t i) { return containers[i].name; });
}

template <typename Requirement>
void EncodeRequirementsInto(JsonObject& o, std::string_view key,
                            const std::vector<Requirement>& reqs) {
  o.EditList(key, reqs.size(), [&](size_t i, JsonObject& e) {
    e.SetString("key", reqs[i].key);
    e.SetString("operator", reqs[i].op);
    e.SetStringList("values", reqs[i].values);
  });
}

void EncodePodAffinityTermInto(const PodAffinityTerm& term, JsonObject& o) {
  o.EditIf("labelSelector", term.label_selector.has_value(),
           [&](JsonObject& s) { EncodeLabelSelectorInto(*term.label_selector, s); });
  o.SetStringList("namespaces", term.namespaces);
  o.EditIf("namespaceSelector", term.namespace_selector.has_value(),
           [&](JsonObject& s) { EncodeLabelSelectorInto(*term.namespace_selector, s); });
  o.SetString("topologyKey", term.topology_key);
  o.SetStringList("matchLabelKeys", term.match_label_keys);
  o.SetStringList("mismatchLabelKeys", term.mismatch_label_keys);
}

void EncodePodAffinityInto(const PodAffinity& a, JsonObject& o) {
  o.EditList("requiredDuringSchedulingIgnoredDuringExecution", a.required.size(),
             [&](size_t i, JsonObject& t) { EncodePodAffinityTermInto(a.required[i], t); });
  o.EditList("preferredDuringSchedulingIgnoredDuringExecution", a.preferred.size(),
             [&](size_t i, JsonObject& t) {
               t.SetInt("weight", a.preferred[i].weight);
               t.Edit("podAffinityTerm",
                      [&](JsonObject& pt) { EncodePodAffinityTermInto(a.preferred[i].term, pt); });
             });
}

void EncodeAffinityInto(const Affinity& a, JsonObject& o) {
  o.EditIf("nodeAffinity", a.node_affinity.has_value(), [&](JsonObject& n) {
    const NodeAffinity& na = *a.node_affinity;
    n.EditIf("requiredDuringSchedulingIgnoredDuringExecution", na.required.has_value(),
             [&](JsonObject& req) {
               req.EditList("nodeSelectorTerms", na.required->size(), [&](size_t i, JsonObject& t) {
                 EncodeNodeSelectorTermInto((*na.required)[i], t);
               });
             });
    n.EditList("preferredDuringSchedulingIgnoredDuringExecution", na.preferred.size(),
               [&](size_t i, JsonObject& t) {
                 t.SetInt("weight", na.preferred[i].weight);
                 t.Edit("preference", [&](JsonObject& p) {
                   EncodeNodeSelectorTermInto(na.preferred[i].preference, p);
                 });
               });
  });
  o.EditIf("podAffinity", a.pod_affinity.has_value(),
           [&](JsonObject& p) { EncodePodAffinityInto(*a.pod_affinity, p); });
  o.EditIf("podAntiAffinity", a.pod_anti_affinity.has_value(),
           [&](JsonObject& p) { EncodePodAffinityInto(*a.pod_anti_affinity, p); });
}

void EncodeContainerStateInto(const ContainerState& s, JsonObject& o) {
  using Kind = ContainerState::Kind;
  o.EditIf("waiting", s.kind == Kind::kWaiting,
           [&](JsonObject& w) { w.SetString("reason", s.reason); });
  o.EditIf("running", s.kind == Kind::kRunning,
           [&](JsonObject& r) { r.SetTime("startedAt", s.started_at); });
  o.EditIf("terminated", s.kind == Kind::kTerminated, [&](JsonObject& t) {
    // exitCode is required in the API: write it even when 0.
    t.SetOptInt("exitCode", s.exit_code);
    t.SetString("reason", s.reason);
    t.SetTime("startedAt", s.started_at);
    t.SetTime("finishedAt", s.finished_at);
  });
}

void EncodeContainerStatusesInto(JsonObject& o, std::string_view key,
                                 const std::vector<ContainerStatus>& statuses) {
  o.EditList(
      key, statuses.size(),
      [&](size_t i, JsonObject& s) {
        const ContainerStatus& cs = statuses[i];
        s.SetString("name", cs.name);
        s.SetOptBool("ready", cs.ready);
        s.SetOptInt("restartCount", cs.restart_count);
        s.Edit("state", [&](JsonObject& st) { EncodeContainerStateInto(cs.state, st); });
        s.Edit("lastState", [&](JsonObject& st) { EncodeContainerStateInto(cs.last_state, st); });
      },
      [&](size_t i) { return statuses[i].name; });
}

void EncodePodStatusInto(const PodStatus& st, JsonObject& o) {
  o.SetString("phase", st.phase);
  o.SetString("reason", st.reason);
  o.SetString("message", st.message);
  o.EditList("conditions", st.conditions.size(), [&](size_t i, JsonObject& c) {
    const PodCondition& cond = st.conditions[i];
    c.SetString("type", cond.type);
    c.SetString("status", cond.status);
    c.SetString("reason", cond.reason);
    c.SetString("message", cond.message);
    c.SetTime("lastTransitionTime", cond.last_transition_time);
  });
  EncodeContainerStatusesInto(o, "initContainerStatuses", st.init_container_statuses);
  EncodeContainerStatusesInto(o, "containerStatuses", st.container_statuses);
  o.SetString("nominatedNodeName", st.nominated_node_name);
  o.SetString("hostIP", st.host_ip);
  o.SetString("podIP", st.pod_ip);
  o.SetTime("startTime", st.start_time);
}

bool IsPodLevelResource(std::string_view name) {
  return name == kResourceCpu || name == kResourceMemory ||
         name.substr(0, kResourceHugePagesPrefix.size()) == kResourceHugePagesPrefix;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Shared pieces

std::string EphemeralClaimName(std::string_view pod, std::string_view volume) {
  std::string name(pod);
  name += '-';
  name += volume;
  return name;
}

bool MatchesLabelSelector(const LabelSelector& selector,
                          const std::map<std::string, std::string>& labels) {
  auto contains = [](const std::vector<std::string>& values, const std::string& v) {
    return std::find(values.begin(), values.end(), v) != values.end();
  };
  for (const auto& [k, v] : selector.match_labels) {
    auto it = labels.find(k);
    if (it == labels.end() || it->second != v) return false;
  }
  for (const auto& e : selector.match_expressions) {
    auto it = labels.find(e.key);
    const bool has = it != labels.end();
    if (e.op == "In") {
      if (!has || !contains(e.values, it->second)) return false;
    } else if (e.op == "NotIn") {
      if (has && contains(e.values, it->second)) return false;
    } else if (e.op == "Exists") {
      if (!has) return false;
    } else if (e.op == "DoesNotExist") {
      if (has) return false;
    } else {
      return false;
    }
  }
  return true;
}

void DecodeNodeSelectorTerm(const json::Reader& r, NodeSelectorTerm* out) {
  out->match_expressions = DecodeRequirements<NodeSelectorRequirement>(r["matchExpressions"]);
  out->match_fields = DecodeRequirements<NodeSelectorRequirement>(r["matchFields"]);
}

void EncodeNodeSelectorTermInto(const NodeSelectorTerm& term, JsonObject& o) {
  EncodeRequirementsInto(o, "matchExpressions", term.match_expressions);
  EncodeRequirementsInto(o, "matchFields", term.match_fields);
}

void DecodeLabelSelector(const json::Reader& r, LabelSelector* out) {
  out->match_labels = r["matchLabels"].StringMap();
  out->match_expressions = DecodeRequirements<LabelSelectorRequirement>(r["matchExpressions"]);
}

void EncodeLabelSelectorInto(const LabelSelector& selector, JsonObject& o) {
  o.SetStringMap("matchLabels", selector.match_labels);
  EncodeRequirementsInto(o, "matchExpressions", selector.match_expressions);
}

void DecodePodSpec(const json::Reader& r, PodSpec* out) {
  out->init_containers = DecodeContainers(r["initContainers"]);
  out->containers = DecodeContainers(r["containers"]);
  out->overhead = DecodeResourceList(r["overhead"]);
  if (json::Reader res = r["resources"]; res.present()) {
    DecodeResourceRequirements(res, &out->resources.emplace());
  }
  out->node_selector = r["nodeSelector"].StringMap();
  out->affinity = DecodeAffinity(r["affinity"]);
  r["tolerations"].ForEach([&](const json::Reader& t) {
    Toleration& tol = out->tolerations.emplace_back();
    tol.key = t["key"].String();
    tol.op = t["operator"].String();
    tol.value = t["value"].String();
    tol.effect = t["effect"].String();
    tol.toleration_seconds = t["tolerationSeconds"].OptInt();
  });
  r["topologySpreadConstraints"].ForEach([&](const json::Reader& t) {
    TopologySpreadConstraint& c = out->topology_spread_constraints.emplace_back();
    c.max_skew = t["maxSkew"].Int32();
    c.topology_key = t["topologyKey"].String();
    c.when_unsatisfiable = t["whenUnsatisfiable"].String();
    if (json::Reader sel = t["labelSelector"]; sel.present()) {
      DecodeLabelSelector(sel, &c.label_selector.emplace());
    }
    c.min_domains = t["minDomains"].OptInt32();
    c.match_label_keys = t["matchLabelKeys"].StringList();
    c.node_affinity_policy = t["nodeAffinityPolicy"].String();
    c.node_taints_policy = t["nodeTaintsPolicy"].String();
  });
  out->priority = r["priority"].OptInt32();
  out->priority_class_name = r["priorityClassName"].String();
  out->scheduler_name = r["schedulerName"].String();
  out->node_name = r["nodeName"].String();
  r["schedulingGates"].ForEach(
      [&](const json::Reader& g) { out->scheduling_gates.push_back(g["name"].String()); });
  r["volumes"].ForEach([&](const json::Reader& v) {
    Volume& vol = out->volumes.emplace_back();
    vol.name = v["name"].String();
    vol.pvc_claim_name = v["persistentVolumeClaim"]["claimName"].String();
    vol.ephemeral = v["ephemeral"].present();
  });
  out->preemption_policy = r["preemptionPolicy"].OptString();
  out->restart_policy = r["restartPolicy"].String();
  out->host_network = r["hostNetwork"].Bool();
  out->dns_policy = r["dnsPolicy"].String();
}

void EncodePodSpecInto(const PodSpec& spec, JsonObject& o) {
  EncodeContainersInto(o, "initContainers", spec.init_containers);
  EncodeContainersInto(o, "containers", spec.containers);
  o.SetQuantities("overhead", spec.overhead);
  o.EditIf("resources", spec.resources.has_value(),
           [&](JsonObject& r) { EncodeResourceRequirementsInto(*spec.resources, r); });
  o.SetStringMap("nodeSelector", spec.node_selector);
  o.EditIf("affinity", spec.affinity.has_value(),
           [&](JsonObject& a) { EncodeAffinityInto(*spec.affinity, a); });
  o.EditList("tolerations", spec.tolerations.size(), [&](size_t i, JsonObject& t) {
    const Toleration& tol = spec.tolerations[i];
    t.SetString("key", tol.key);
    t.SetString("operator", tol.op);
    t.SetString("value", tol.value);
    t.SetString("effect", tol.effect);
    t.SetOptInt("tolerationSeconds", tol.toleration_seconds);
  });
  o.EditList("topologySpreadConstraints", spec.topology_spread_constraints.size(),
             [&](size_t i, JsonObject& t) {
               const TopologySpreadConstraint& c = spec.topology_spread_constraints[i];
               t.SetInt("maxSkew", c.max_skew);
               t.SetString("topologyKey", c.topology_key);
               t.SetString("whenUnsatisfiable", c.when_unsatisfiable);
               t.EditIf("labelSelector", c.label_selector.has_value(),
                        [&](JsonObject& sel) { EncodeLabelSelectorInto(*c.label_selector, sel); });
               t.SetOptInt("minDomains", c.min_domains);
               t.SetStringList("matchLabelKeys", c.match_label_keys);
               t.SetString("nodeAffinityPolicy", c.node_affinity_policy);
               t.SetString("nodeTaintsPolicy", c.node_taints_policy);
             });
  o.SetOptInt("priority", spec.priority);
  o.SetString("priorityClassName", spec.priority_class_name);
  o.SetString("schedulerName", spec.scheduler_name);
  o.SetString("nodeName", spec.node_name);
  o.EditList(
      "schedulingGates", spec.scheduling_gates.size(),
      [&](size_t i, JsonObject& g) { g.SetString("name", spec.scheduling_gates[i]); },
      [&](size_t i) { return spec.scheduling_gates[i]; });
  o.EditList(
      "volumes", spec.volumes.size(),
      [&](size_t i, JsonObject& v) {
        const Volume& vol = spec.volumes[i];
        v.SetString("name", vol.name);
        // Only a PVC's claim name is modelled; other volume sources stay as written.
        v.EditIf("persistentVolumeClaim", !vol.pvc_claim_name.empty(),
                 [&](JsonObject& pvc) { pvc.SetString("claimName", vol.pvc_claim_name); });
        // The claim template is not modelled: an ephemeral volume written from the view alone
        // gets an empty one, which still names its claim.
        if (!vol.ephemeral) {
          v.Remove("ephemeral");
        } else if (!v.Has("ephemeral")) {
          v.SetRawJson("ephemeral", R"({"volumeClaimTemplate":{"spec":{}}})");
        }
      },
      [&](size_t i) { return spec.volumes[i].name; });
  o.SetOptString("preemptionPolicy", spec.preemption_policy);
  o.SetString("restartPolicy", spec.restart_policy);
  o.SetBool("hostNetwork", spec.host_network);
  o.SetString("dnsPolicy", spec.dns_policy);
}

void DecodePodTemplate(const json::Reader& r, PodTemplate* out) {
  if (!r.present()) return;
  if (!r.is_object()) {
    r.Fail("expected a pod template object");
    return;
  }
  out->json = json::Write(*r.value());
  kube::DecodeObjectMeta(r["metadata"], &out->metadata);
  DecodePodSpec(r["spec"], &out->spec);
}

void EncodePodTemplateInto(const PodTemplate& tmpl, JsonObject& o) {
  if (!tmpl.json.empty()) o.ResetFrom(tmpl.json);
  o.Edit("metadata", [&](JsonObject& m) { EncodeObjectMetaInto(tmpl.metadata, m); });
  o.Edit("spec", [&](JsonObject& s) { EncodePodSpecInto(tmpl.spec, s); });
}

void SyncPodTemplateJson(PodTemplate* tmpl) {
  tmpl->json = OverlayJson(tmpl->json, [&](JsonObject& o) { EncodePodTemplateInto(*tmpl, o); });
}

StatusOr<PodTemplate> ParsePodTemplate(std::string_view text) {
  PodTemplate tmpl;
  TEPHRA_RETURN_IF_ERROR(WithParsedJson(text, [&](const json::Value& v) {
    json::Errors errors;
    DecodePodTemplate(json::Reader(&v, &errors), &tmpl);
    return errors.ToStatus("pod template");
  }));
  return tmpl;
}

// ---------------------------------------------------------------------------------------------
// Requests

ResourceList EffectiveRequests(const ResourceRequirements& resources) {
  ResourceList out = resources.requests;
  for (const auto& [name, limit] : resources.limits) {
    if (!out.Contains(name)) out.Set(name, limit);
  }
  return out;
}

namespace {

// The pod's total of one per-container list (`of`: its requests or its limits), by the formula
// PodRequest documents, before the overhead.
template <typename PerContainer>
Resources PodTotal(const PodSpec& spec, PerContainer of) {
  Resources total;
  for (const Container& c : spec.containers) total.Add(Resources::FromList(of(c.resources)));
  // Init containers run one after another before the regular ones; sidecars (restartable init
  // containers) start in order and keep running, so each later init container runs beside
  // every sidecar started before it, and the sidecars also run beside the regular containers.
  Resources sidecars;
  Resources init_peak;
  for (const Container& c : spec.init_containers) {
    Resources r = Resources::FromList(of(c.resources));
    if (c.IsSidecar()) {
      total.Add(r);
      sidecars.Add(r);
      init_peak.MaxWith(sidecars);
    } else {
      r.Add(sidecars);
      init_peak.MaxWith(r);
    }
  }
  total.MaxWith(init_peak);
  if (spec.resources) {
    ResourceList pod_level;
    for (const auto& [name, q] : of(*spec.resources)) {
      if (IsPodLevelResource(name)) pod_level.Set(name, q);
    }
    Resources values = Resources::FromList(pod_level);
    for (const auto& [name, q] : pod_level) total.Set(name, values.Get(name));
  }
  return total;
}

}  // namespace

Resources PodRequest(const PodSpec& spec) {
  Resources request = PodTotal(spec, EffectiveRequests);
  request.Add(Resources::FromList(spec.overhead));
  return request;
}

Resources PodLimit(const PodSpec& spec) {
  Resources limit = PodTotal(spec, [](const ResourceRequirements& r) { return r.limits; });
  for (const auto& [name, q] : spec.overhead) {
    if (limit.Has(name)) limit.Add(Resources::FromList(ResourceList{{name, q}}));
  }
  return limit;
}

ResourceList QuotaStyleResources(const Resources& requests, const Resources& limits, int64_t pods) {
  ResourceList out;
  for (const auto& [name, q] : requests.ToList()) {
    if (name == kResourcePods) continue;
    out.Set(name, q);
    out.Set(std::string(kQuotaRequestsPrefix) + name, q);
  }
  for (const auto& [name, q] : limits.ToList()) {
    if (name == kResourceCpu || name == kResourceMemory || name == kResourceEphemeralStorage) {
      out.Set(std::string(kQuotaLimitsPrefix) + name, q);
    }
  }
  out.Set(kResourcePods, Quantity::FromInt(pods));
  out.Set(kQuotaCountPods, Quantity::FromInt(pods));
  return out;
}

// ---------------------------------------------------------------------------------------------
// Objects

const PodCondition* Pod::Condition(std::string_view type) const {
  for (const PodCondition& c : status.conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

bool Node::Ready() const {
  for (const NodeCondition& c : status.conditions) {
    if (c.type == "Ready") return c.status == "True";
  }
  return false;
}

namespace {

void FillPod(const json::Reader& r, Pod* pod) {
  DecodePodSpec(r["spec"], &pod->spec);
  DecodePodStatus(r["status"], &pod->status);
}

void FillNode(const json::Reader& r, Node* node) {
  json::Reader spec = r["spec"];
  node->spec.unschedulable = spec["unschedulable"].Bool();
  node->spec.provider_id = spec["providerID"].String();
  spec["taints"].ForEach([&](const json::Reader& t) {
    Taint& taint = node->spec.taints.emplace_back();
    taint.key = t["key"].String();
    taint.value = t["value"].String();
    taint.effect = t["effect"].String();
    taint.time_added = DecodeTime(t["timeAdded"]);
  });
  json::Reader status = r["status"];
  node->status.capacity = DecodeResourceList(status["capacity"]);
  node->status.allocatable = DecodeResourceList(status["allocatable"]);
  status["conditions"].ForEach([&](const json::Reader& c) {
    NodeCondition& cond = node->status.conditions.emplace_back();
    cond.type = c["type"].String();
    cond.status = c["status"].String();
    cond.reason = c["reason"].String();
    cond.message = c["message"].String();
  });
  status["addresses"].ForEach([&](const json::Reader& a) {
    node->status.addresses.push_back({a["type"].String(), a["address"].String()});
  });
}

void FillPriorityClass(const json::Reader& r, PriorityClass* pc) {
  pc->value = r["value"].Int32();
  pc->global_default = r["globalDefault"].Bool();
  pc->preemption_policy = r["preemptionPolicy"].OptString();
  pc->description = r["description"].String();
}

void FillNamespace(const json::Reader& r, Namespace* ns) {
  ns->phase = r["status"]["phase"].String();
}

void FillReplicaSet(const json::Reader& r, ReplicaSet* rs) {
  rs->replicas = r["spec"]["replicas"].Int32(1);
}

}  // namespace

StatusOr<std::shared_ptr<Pod>> DecodePod(const json::Value& value, const DecodeOptions& options) {
  return DecodeTypedObject<Pod>(value, options, "Pod", FillPod);
}

StatusOr<std::shared_ptr<Pod>> DecodePod(std::string_view text, const DecodeOptions& options) {
  return DecodeTypedObjectText<Pod>(text, options, "Pod", FillPod);
}

StatusOr<std::shared_ptr<Node>> DecodeNode(const json::Value& value, const DecodeOptions& options) {
  return DecodeTypedObject<Node>(value, options, "Node", FillNode);
}

StatusOr<std::shared_ptr<Node>> DecodeNode(std::string_view text, const DecodeOptions& options) {
  return DecodeTypedObjectText<Node>(text, options, "Node", FillNode);
}

StatusOr<std::shared_ptr<PriorityClass>> DecodePriorityClass(const json::Value& value,
                                                             const DecodeOptions& options) {
  return DecodeTypedObject<PriorityClass>(value, options, "PriorityClass", FillPriorityClass);
}

StatusOr<std::shared_ptr<PriorityClass>> DecodePriorityClass(std::string_view text,
                                                             const DecodeOptions& options) {
  return DecodeTypedObjectText<PriorityClass>(text, options, "PriorityClass", FillPriorityClass);
}

StatusOr<std::shared_ptr<Namespace>> DecodeNamespace(const json::Value& value,
                                                     const DecodeOptions& options) {
  return DecodeTypedObject<Namespace>(value, options, "Namespace", FillNamespace);
}

StatusOr<std::shared_ptr<Namespace>> DecodeNamespace(std::string_view text,
                                                     const DecodeOptions& options) {
  return DecodeTypedObjectText<Namespace>(text, options, "Namespace", FillNamespace);
}

StatusOr<std::shared_ptr<ReplicaSet>> DecodeReplicaSet(const json::Value& value,
                                                       const DecodeOptions& options) {
  return DecodeTypedObject<ReplicaSet>(value, options, "ReplicaSet", FillReplicaSet);
}

std::string EncodePod(const Pod& pod) {
  return EncodeObject(pod, [&](JsonObject& o) {
    o.Edit("spec", [&](JsonObject& s) { EncodePodSpecInto(pod.spec, s); });
    o.Edit("status", [&](JsonObject& s) { EncodePodStatusInto(pod.status, s); });
  });
}

std::string EncodeNode(const Node& node) {
  return EncodeObject(node, [&](JsonObject& o) {
    o.Edit("spec", [&](JsonObject& s) {
      s.SetBool("unschedulable", node.spec.unschedulable);
      s.SetString("providerID", node.spec.provider_id);
      s.EditList("taints", node.spec.taints.size(), [&](size_t i, JsonObject& t) {
        const Taint& taint = node.spec.taints[i];
        t.SetString("key", taint.key);
        t.SetString("value", taint.value);
        t.SetString("effect", taint.effect);
        t.SetTime("timeAdded", taint.time_added);
      });
    });
    o.Edit("status", [&](JsonObject& s) {
      s.SetQuantities("capacity", node.status.capacity);
      s.SetQuantities("allocatable", node.status.allocatable);
      s.EditList("conditions", node.status.conditions.size(), [&](size_t i, JsonObject& c) {
        const NodeCondition& cond = node.status.conditions[i];
        c.SetString("type", cond.type);
        c.SetString("status", cond.status);
        c.SetString("reason", cond.reason);
        c.SetString("message", cond.message);
      });
      s.EditList("addresses", node.status.addresses.size(), [&](size_t i, JsonObject& a) {
        a.SetString("type", node.status.addresses[i].type);
        a.SetString("address", node.status.addresses[i].address);
      });
    });
  });
}

std::string EncodePriorityClass(const PriorityClass& pc) {
  return EncodeObject(pc, [&](JsonObject& o) {
    o.SetOptInt("value", pc.value);
    o.SetBool("globalDefault", pc.global_default);
    o.SetOptString("preemptionPolicy", pc.preemption_policy);
    o.SetString("description", pc.description);
  });
}

std::string EncodeNamespace(const Namespace& ns) {
  return EncodeObject(ns, [&](JsonObject& o) {
    o.Edit("status", [&](JsonObject& s) { s.SetString("phase", ns.phase); });
  });
}

std::string EncodePodBinding(std::string_view namespace_, std::string_view name,
                             std::string_view uid, std::string_view node,
                             const std::map<std::string, std::string>& annotations) {
  json::Writer w;
  w.StartObject().Field("apiVersion", "v1").Field("kind", "Binding");
  w.Key("metadata").StartObject().Field("name", name).Field("namespace", namespace_);
  if (!uid.empty()) w.Field("uid", uid);
  if (!annotations.empty()) {
    w.Key("annotations").StartObject();
    for (const auto& [key, value] : annotations) w.Field(key, value);
    w.EndObject();
  }
  w.EndObject();
  w.Key("target").StartObject().Field("apiVersion", "v1").Field("kind", "Node");
  w.Field("name", node).EndObject();
  w.EndObject();
  return w.str();
}

}  // namespace tephra::api
