// A pod decodes to the same PodInfo from protobuf (LIST pages) as from JSON (watch events).
#include <catch2/catch.hpp>
#include <rapidjson/document.h>

#include "k8s/core/v1/pod.pb.h"
#include "scheduler/model/pod_info.h"
#include "tests/support/pod_info_diff.h"

namespace tephra::scheduler {
namespace {

using Strings = std::vector<std::string>;

// A pod using every field the decoders read, in protobuf.
k8s::v1::Pod RichPodMessage() {
  k8s::v1::Pod pod;
  auto* meta = pod.mutable_metadata();
  meta->set_name("worker-0");
  meta->set_namespace_("team-a");
  meta->set_uid("u-1");
  meta->set_resourceversion("42");
  meta->set_generation(3);
  meta->mutable_creationtimestamp()->set_seconds(1764495000);  // 2025-11-30T09:30:00Z
  (*meta->mutable_labels())["app"] = "train";
  (*meta->mutable_annotations())["scheduling.k8s.io/group-name"] = "job-a";
  (*meta->mutable_annotations())["volcano.sh/task-spec"] = "worker";
  (*meta->mutable_annotations())["volcano.sh/task-priority"] = "7";
  (*meta->mutable_annotations())["volcano.sh/preemptable"] = "false";
  (*meta->mutable_annotations())["kubectl.kubernetes.io/last-applied-configuration"] = "{}";
  auto* owner = meta->add_ownerreferences();
  owner->set_apiversion("batch.volcano.sh/v1alpha1");
  owner->set_kind("Job");
  owner->set_name("job");
  owner->set_uid("job-uid");
  owner->set_controller(true);
  owner->set_blockownerdeletion(true);
  meta->add_finalizers("example.com/hold");

  auto* spec = pod.mutable_spec();
  auto* sidecar = spec->add_initcontainers();
  sidecar->set_name("proxy");
  sidecar->set_restartpolicy("Always");
  (*sidecar->mutable_resources()->mutable_requests())["cpu"].set_string("100m");
  auto* c = spec->add_containers();
  c->set_name("main");
  c->set_image("trainer:1");
  (*c->mutable_resources()->mutable_requests())["cpu"].set_string("1500m");
  (*c->mutable_resources()->mutable_requests())["memory"].set_string("2Gi");
  (*c->mutable_resources()->mutable_limits())["nvidia.com/gpu"].set_string("2");
  auto* port = c->add_ports();
  port->set_containerport(8080);
  port->set_hostport(18080);
  port->set_protocol("UDP");
  (*spec->mutable_overhead())["cpu"].set_string("10m");
  (*spec->mutable_nodeselector())["zone"] = "z1";
  auto* node_affinity = spec->mutable_affinity()->mutable_nodeaffinity();
  auto* term = node_affinity->mutable_requiredduringschedulingignoredduringexecution()
                   ->add_nodeselectorterms();
  auto* req = term->add_matchexpressions();
  req->set_key("gpu");
  req->set_operator_("In");
  req->add_values("a100");
  req->add_values("h100");
  auto* preferred = node_affinity->add_preferredduringschedulingignoredduringexecution();
  preferred->set_weight(5);
  preferred->mutable_preference()->add_matchfields()->set_key("metadata.name");
  auto* anti = spec->mutable_affinity()->mutable_podantiaffinity();
  auto* anti_term = anti->add_requiredduringschedulingignoredduringexecution();
  (*anti_term->mutable_labelselector()->mutable_matchlabels())["app"] = "train";
  anti_term->set_topologykey("kubernetes.io/hostname");
  anti_term->add_matchlabelkeys("pod-template-hash");
  auto* weighted = anti->add_preferredduringschedulingignoredduringexecution();
  weighted->set_weight(10);
  weighted->mutable_podaffinityterm()->set_topologykey("zone");
  weighted->mutable_podaffinityterm()->mutable_namespaceselector();
  auto* tol = spec->add_tolerations();
  tol->set_key("dedicated");
  tol->set_operator_("Equal");
  tol->set_value("gpu");
  tol->set_effect("NoExecute");
  tol->set_tolerationseconds(30);
  auto* spread = spec->add_topologyspreadconstraints();
  spread->set_maxskew(1);
  spread->set_topologykey("zone");
  spread->set_whenunsatisfiable("DoNotSchedule");
  spread->mutable_labelselector()->add_matchexpressions()->set_key("app");
  spread->mutable_labelselector()->mutable_matchexpressions(0)->set_operator_("Exists");
  spread->set_mindomains(2);
  spread->add_matchlabelkeys("version");
  spec->set_priority(1000);
  spec->set_priorityclassname("high");
  spec->set_schedulername("volcano");
  spec->add_schedulinggates()->set_name("wait");
  auto* volume = spec->add_volumes();
  volume->set_name("data");
  volume->mutable_volumesource()->mutable_persistentvolumeclaim()->set_claimname("data-0");
  spec->add_volumes()->set_name("scratch");
  auto* cache = spec->add_volumes();
  cache->set_name("cache");
  cache->mutable_volumesource()->mutable_ephemeral();
  spec->set_preemptionpolicy("Never");
  spec->set_restartpolicy("OnFailure");
  spec->set_hostnetwork(true);
  spec->set_dnspolicy("ClusterFirst");

  auto* status = pod.mutable_status();
  status->set_phase("Pending");
  status->set_nominatednodename("node-3");
  auto* cond = status->add_conditions();
  cond->set_type("PodScheduled");
  cond->set_status("False");
  cond->set_reason("Unschedulable");
  cond->set_message("0/3 nodes are available");
  status->add_containerstatuses()->set_restartcount(2);
  status->add_containerstatuses()->set_restartcount(1);
  return pod;
}

// The same pod as the API server writes it in JSON.
const char* kRichPodJson = R"({
  "metadata": {"name": "worker-0", "namespace": "team-a", "uid": "u-1", "resourceVersion": "42",
    "generation": 3, "creationTimestamp": "2025-11-30T09:30:00Z", "labels": {"app": "train"},
    "annotations": {"scheduling.k8s.io/group-name": "job-a", "volcano.sh/task-spec": "worker",
      "volcano.sh/task-priority": "7", "volcano.sh/preemptable": "false",
      "kubectl.kubernetes.io/last-applied-configuration": "{}"},
    "ownerReferences": [{"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "name": "job",
      "uid": "job-uid", "controller": true, "blockOwnerDeletion": true}],
    "finalizers": ["example.com/hold"]},
  "spec": {
    "initContainers": [{"name": "proxy", "restartPolicy": "Always",
      "resources": {"requests": {"cpu": "100m"}}}],
    "containers": [{"name": "main", "image": "trainer:1",
      "resources": {"requests": {"cpu": "1500m", "memory": "2Gi"}, "limits": {"nvidia.com/gpu": "2"}},
      "ports": [{"containerPort": 8080, "hostPort": 18080, "protocol": "UDP"}]}],
    "overhead": {"cpu": "10m"},
    "nodeSelector": {"zone": "z1"},
    "affinity": {
      "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
          {"matchExpressions": [{"key": "gpu", "operator": "In", "values": ["a100", "h100"]}]}]},
        "preferredDuringSchedulingIgnoredDuringExecution": [
          {"weight": 5, "preference": {"matchFields": [{"key": "metadata.name"}]}}]},
      "podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [{"labelSelector": {"matchLabels": {"app": "train"}},
          "topologyKey": "kubernetes.io/hostname", "matchLabelKeys": ["pod-template-hash"]}],
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 10,
          "podAffinityTerm": {"topologyKey": "zone", "namespaceSelector": {}}}]}},
    "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoExecute",
      "tolerationSeconds": 30}],
    "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone",
      "whenUnsatisfiable": "DoNotSchedule",
      "labelSelector": {"matchExpressions": [{"key": "app", "operator": "Exists"}]},
      "minDomains": 2, "matchLabelKeys": ["version"]}],
    "priority": 1000, "priorityClassName": "high", "schedulerName": "volcano",
    "schedulingGates": [{"name": "wait"}],
    "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data-0"}},
      {"name": "scratch", "emptyDir": {}},
      {"name": "cache", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}],
    "preemptionPolicy": "Never", "restartPolicy": "OnFailure", "hostNetwork": true,
    "dnsPolicy": "ClusterFirst"},
  "status": {"phase": "Pending", "nominatedNodeName": "node-3",
    "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
      "message": "0/3 nodes are available"}],
    "containerStatuses": [{"restartCount": 2}, {"restartCount": 1}]}
})";

std::shared_ptr<PodInfo> FromJson(const char* text, SpecInterner& interner) {
  json::Document doc;
  REQUIRE(json::Parse(text, &doc).ok());
  auto pod = DecodePodInfo(doc, interner);
  REQUIRE(pod.ok());
  return *pod;
}

std::shared_ptr<PodInfo> FromProtobuf(const k8s::v1::Pod& message, SpecInterner& interner) {
  auto pod = DecodePodInfoProtobuf(message.SerializeAsString(), interner);
  REQUIRE(pod.ok());
  return *pod;
}

TEST_CASE("a pod decodes from protobuf to the PodInfo its JSON decodes to") {
  SpecInterner interner;
  auto from_json = FromJson(kRichPodJson, interner);
  auto from_protobuf = FromProtobuf(RichPodMessage(), interner);
  CHECK(testing::PodInfoDifferences(*from_json, *from_protobuf) == Strings{});
  // And the values are the pod's, not two equal defaults.
  const PodInfo& pod = *from_protobuf;
  CHECK(pod.metadata.Key() == "team-a/worker-0");
  CHECK(pod.metadata.annotations.count("kubectl.kubernetes.io/last-applied-configuration") == 0);
  CHECK(pod.group_name == "job-a");
  CHECK(pod.task_role == "worker");
  CHECK(pod.task_priority == 7);
  CHECK_FALSE(pod.preemptable);
  CHECK(pod.phase == "Pending");
  CHECK(pod.nominated_node == "node-3");
  REQUIRE(pod.scheduled);
  CHECK(pod.scheduled->reason == "Unschedulable");
  CHECK(pod.restarts == 3);
  const SchedulingSpec& spec = *pod.spec;
  CHECK(spec.request.milli_cpu() == 1610);  // main + sidecar + overhead
  CHECK(spec.request.memory() == int64_t{2} << 30);
  CHECK(spec.host_ports == std::vector<HostPort>{{"UDP", "", 18080}});
  CHECK(spec.affinity->node_affinity->required->at(0).match_expressions[0].values ==
        Strings{"a100", "h100"});
  CHECK(spec.affinity->pod_anti_affinity->preferred[0].term.namespace_selector.has_value());
  CHECK_FALSE(spec.affinity->pod_anti_affinity->preferred[0].term.label_selector.has_value());
  CHECK(spec.tolerations[0].toleration_seconds == 30);
  CHECK(spec.spread[0].min_domains == 2);
  CHECK(spec.priority == 1000);
  CHECK(spec.preempt_never);
  CHECK(spec.scheduling_gates == Strings{"wait"});
  CHECK(spec.claims == std::vector<PodClaim>{{"data-0", false}, {"worker-0-cache", true}});
  CHECK(spec.claims_namespace == "team-a");
  CHECK(spec.host_network);
}

TEST_CASE("a bare pending pod from protobuf gets the implicit PodGroup its JSON gets") {
  SpecInterner interner;
  k8s::v1::Pod message;
  message.mutable_metadata()->set_name("bare");
  message.mutable_metadata()->set_namespace_("ns");
  message.mutable_metadata()->set_uid("u-7");
  message.mutable_metadata()->mutable_creationtimestamp()->set_seconds(1764495000);
  // A zero metav1.Time is encoded as an empty message: no deletion timestamp.
  message.mutable_metadata()->mutable_deletiontimestamp();
  message.mutable_spec()->set_schedulername("volcano");
  (*message.mutable_spec()->add_containers()->mutable_resources()->mutable_requests())["cpu"]
      .set_string("1");
  message.mutable_status()->set_phase("Pending");
  auto from_protobuf = FromProtobuf(message, interner);
  auto from_json = FromJson(R"({"metadata": {"name": "bare", "namespace": "ns", "uid": "u-7",
      "creationTimestamp": "2025-11-30T09:30:00Z"},
      "spec": {"schedulerName": "volcano", "containers": [{"resources": {"requests": {"cpu": "1"}}}]},
      "status": {"phase": "Pending"}})",
                            interner);
  CHECK(testing::PodInfoDifferences(*from_json, *from_protobuf) == Strings{});
  CHECK(from_protobuf->implicit_group);
  CHECK_FALSE(from_protobuf->terminating);
  REQUIRE(from_protobuf->implicit_pod_group != nullptr);
  CHECK(from_protobuf->implicit_pod_group->metadata.name == from_protobuf->group_name);
}

TEST_CASE("a protobuf pod with a bad quantity or bad bytes is refused with the field named") {
  SpecInterner interner;
  k8s::v1::Pod message = RichPodMessage();
  (*message.mutable_spec()->mutable_containers(0)->mutable_resources()->mutable_requests())["cpu"]
      .set_string("1.5 cores");
  auto bad_quantity = DecodePodInfoProtobuf(message.SerializeAsString(), interner);
  REQUIRE_FALSE(bad_quantity.ok());
  CHECK(bad_quantity.status().message().find("pod team-a/worker-0") != std::string::npos);
  CHECK(bad_quantity.status().message().find("spec.containers[0].resources.requests[cpu]") !=
        std::string::npos);
  std::string bytes = RichPodMessage().SerializeAsString();
  auto truncated =
      DecodePodInfoProtobuf(std::string_view(bytes).substr(0, bytes.size() / 2), interner);
  REQUIRE_FALSE(truncated.ok());
  CHECK(truncated.status().message().find("malformed protobuf") != std::string::npos);
}

}  // namespace
}  // namespace tephra::scheduler
