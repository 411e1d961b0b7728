#include "api/core_protobuf.h"

#include <string>
#include <utility>
#include <vector>

namespace tephra::api {
namespace {

using google::protobuf::Map;
using google::protobuf::RepeatedPtrField;

// The first error found while decoding, with the path of its field.
struct Errors {
  Status first;
  void Add(const std::string& path, const Status& status) {
    if (first.ok()) first = status.WithContext(path);
  }
};

std::vector<std::string> Strings(const RepeatedPtrField<std::string>& in) {
  return {in.begin(), in.end()};
}

std::map<std::string, std::string> StringMap(const Map<std::string, std::string>& in) {
  return {in.begin(), in.end()};
}

ResourceList DecodeResourceList(const Map<std::string, k8s::v1::Quantity>& in,
                                const std::string& path, Errors* errors) {
  std::vector<ResourceList::Entry> entries;
  entries.reserve(in.size());
  for (const auto& [name, quantity] : in) {
    StatusOr<Quantity> q = Quantity::Parse(quantity.string());
    if (!q.ok()) {
      errors->Add(path + "[" + name + "]", q.status());
      continue;
    }
    entries.emplace_back(name, *std::move(q));
  }
  return ResourceList(std::move(entries));
}

void DecodeResourceRequirements(const k8s::v1::ResourceRequirements& in, const std::string& path,
                                ResourceRequirements* out, Errors* errors) {
  out->requests = DecodeResourceList(in.requests(), path + ".requests", errors);
  out->limits = DecodeResourceList(in.limits(), path + ".limits", errors);
}

std::vector<Container> DecodeContainers(const RepeatedPtrField<k8s::v1::Container>& in,
                                        const std::string& path, Errors* errors) {
  std::vector<Container> out;
  out.reserve(static_cast<size_t>(in.size()));
  for (int i = 0; i < in.size(); ++i) {
    const k8s::v1::Container& c = in[i];
    Container& container = out.emplace_back();
    container.name = c.name();
    container.image = c.image();
    DecodeResourceRequirements(c.resources(), path + "[" + std::to_string(i) + "].resources",
                               &container.resources, errors);
    for (const auto& p : c.ports()) {
      ContainerPort& port = container.ports.emplace_back();
      port.name = p.name();
      port.container_port = p.containerport();
      port.host_port = p.hostport();
      port.protocol = p.protocol();
      port.host_ip = p.hostip();
    }
    if (c.has_restartpolicy()) container.restart_policy = c.restartpolicy();
  }
  return out;
}

template <typename Requirement, typename In>
std::vector<Requirement> DecodeRequirements(const RepeatedPtrField<In>& in) {
  std::vector<Requirement> out;
  out.reserve(static_cast<size_t>(in.size()));
  for (const auto& e : in) {
    Requirement& req = out.emplace_back();
    req.key = e.key();
    req.op = e.operator_();
    req.values = Strings(e.values());
  }
  return out;
}

NodeSelectorTerm DecodeNodeSelectorTerm(const k8s::v1::NodeSelectorTerm& in) {
  NodeSelectorTerm out;
  out.match_expressions = DecodeRequirements<NodeSelectorRequirement>(in.matchexpressions());
  out.match_fields = DecodeRequirements<NodeSelectorRequirement>(in.matchfields());
  return out;
}

LabelSelector DecodeLabelSelector(const k8s::v1::LabelSelector& in) {
  LabelSelector out;
  out.match_labels = StringMap(in.matchlabels());
  out.match_expressions = DecodeRequirements<LabelSelectorRequirement>(in.matchexpressions());
  return out;
}

PodAffinityTerm DecodePodAffinityTerm(const k8s::v1::PodAffinityTerm& in) {
  PodAffinityTerm out;
  if (in.has_labelselector()) out.label_selector = DecodeLabelSelector(in.labelselector());
  out.namespaces = Strings(in.namespaces());
  if (in.has_namespaceselector()) {
    out.namespace_selector = DecodeLabelSelector(in.namespaceselector());
  }
  out.topology_key = in.topologykey();
  out.match_label_keys = Strings(in.matchlabelkeys());
  out.mismatch_label_keys = Strings(in.mismatchlabelkeys());
  return out;
}

PodAffinity DecodePodAffinity(const k8s::v1::PodAffinity& in) {
  PodAffinity out;
  for (const auto& t : in.requiredduringschedulingignoredduringexecution()) {
    out.required.push_back(DecodePodAffinityTerm(t));
  }
  for (const auto& t : in.preferredduringschedulingignoredduringexecution()) {
    WeightedPodAffinityTerm& w = out.preferred.emplace_back();
    w.weight = t.weight();
    w.term = DecodePodAffinityTerm(t.podaffinityterm());
  }
  return out;
}

Affinity DecodeAffinity(const k8s::v1::Affinity& in) {
  Affinity out;
  if (in.has_nodeaffinity()) {
    const k8s::v1::NodeAffinity& node = in.nodeaffinity();
    NodeAffinity& na = out.node_affinity.emplace();
    if (node.has_requiredduringschedulingignoredduringexecution()) {
      auto& terms = na.required.emplace();
      for (const auto& t :
           node.requiredduringschedulingignoredduringexecution().nodeselectorterms()) {
        terms.push_back(DecodeNodeSelectorTerm(t));
      }
    }
    for (const auto& t : node.preferredduringschedulingignoredduringexecution()) {
      PreferredSchedulingTerm& p = na.preferred.emplace_back();
      p.weight = t.weight();
      p.preference = DecodeNodeSelectorTerm(t.preference());
    }
  }
  if (in.has_podaffinity()) out.pod_affinity = DecodePodAffinity(in.podaffinity());
  if (in.has_podantiaffinity()) out.pod_anti_affinity = DecodePodAffinity(in.podantiaffinity());
  return out;
}

}  // namespace

std::optional<base::Time> DecodeTime(const k8s::v1::Time& time) {
  if (time.seconds() == 0 && time.nanos() == 0) return std::nullopt;
  return base::Time(std::chrono::duration_cast<base::Clock::duration>(
      std::chrono::seconds(time.seconds()) + std::chrono::nanoseconds(time.nanos())));
}

void DecodeObjectMeta(const k8s::v1::ObjectMeta& meta, kube::ObjectMeta* out) {
  out->name = meta.name();
  out->generate_name = meta.generatename();
  out->namespace_ = meta.namespace_();
  out->uid = meta.uid();
  out->resource_version = meta.resourceversion();
  out->generation = meta.generation();
  out->creation_timestamp = DecodeTime(meta.creationtimestamp());
  out->deletion_timestamp = DecodeTime(meta.deletiontimestamp());
  if (meta.has_deletiongraceperiodseconds()) {
    out->deletion_grace_period_seconds = meta.deletiongraceperiodseconds();
  }
  out->labels = StringMap(meta.labels());
  out->annotations = StringMap(meta.annotations());
  out->finalizers = Strings(meta.finalizers());
  out->owner_references.clear();
  for (const auto& r : meta.ownerreferences()) {
    kube::OwnerReference& ref = out->owner_references.emplace_back();
    ref.api_version = r.apiversion();
    ref.kind = r.kind();
    ref.name = r.name();
    ref.uid = r.uid();
    ref.controller = r.controller();
    ref.block_owner_deletion = r.blockownerdeletion();
  }
}

Status DecodePodSpec(const k8s::v1::PodSpec& in, PodSpec* out) {
  Errors errors;
  out->init_containers = DecodeContainers(in.initcontainers(), "spec.initContainers", &errors);
  out->containers = DecodeContainers(in.containers(), "spec.containers", &errors);
  out->overhead = DecodeResourceList(in.overhead(), "spec.overhead", &errors);
  if (in.has_resources()) {
    DecodeResourceRequirements(in.resources(), "spec.resources", &out->resources.emplace(),
                               &errors);
  }
  out->node_selector = StringMap(in.nodeselector());
  if (in.has_affinity()) out->affinity = DecodeAffinity(in.affinity());
  for (const auto& t : in.tolerations()) {
    Toleration& tol = out->tolerations.emplace_back();
    tol.key = t.key();
    tol.op = t.operator_();
    tol.value = t.value();
    tol.effect = t.effect();
    if (t.has_tolerationseconds()) tol.toleration_seconds = t.tolerationseconds();
  }
  for (const auto& t : in.topologyspreadconstraints()) {
    TopologySpreadConstraint& c = out->topology_spread_constraints.emplace_back();
    c.max_skew = t.maxskew();
    c.topology_key = t.topologykey();
    c.when_unsatisfiable = t.whenunsatisfiable();
    if (t.has_labelselector()) c.label_selector = DecodeLabelSelector(t.labelselector());
    if (t.has_mindomains()) c.min_domains = t.mindomains();
    c.match_label_keys = Strings(t.matchlabelkeys());
    c.node_affinity_policy = t.nodeaffinitypolicy();
    c.node_taints_policy = t.nodetaintspolicy();
  }
  if (in.has_priority()) out->priority = in.priority();
  out->priority_class_name = in.priorityclassname();
  out->scheduler_name = in.schedulername();
  out->node_name = in.nodename();
  for (const auto& g : in.schedulinggates()) out->scheduling_gates.push_back(g.name());
  for (const auto& v : in.volumes()) {
    Volume& vol = out->volumes.emplace_back();
    vol.name = v.name();
    vol.pvc_claim_name = v.volumesource().persistentvolumeclaim().claimname();
    vol.ephemeral = v.volumesource().has_ephemeral();
  }
  if (in.has_preemptionpolicy()) out->preemption_policy = in.preemptionpolicy();
  out->restart_policy = in.restartpolicy();
  out->host_network = in.hostnetwork();
  out->dns_policy = in.dnspolicy();
  return errors.first;
}

}  // namespace tephra::api
