#include "api/core.h"

#include <catch2/catch.hpp>
#include <rapidjson/document.h>

#include "tests/unit/api/testing.h"

namespace tephra::api {
namespace {

// A pod as the API server returns it, with fields Tephra does not model at every depth.
constexpr const char* kPod = R"({
  "apiVersion": "v1", "kind": "Pod",
  "metadata": {"name": "job-a-worker-0", "namespace": "team", "uid": "u-1",
    "resourceVersion": "77", "creationTimestamp": "2026-03-01T10:00:00Z",
    "labels": {"volcano.sh/job-name": "job-a"},
    "annotations": {"scheduling.k8s.io/group-name": "job-a-u1"},
    "managedFields": [{"manager": "kubectl", "operation": "Apply"}],
    "ownerReferences": [{"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
      "name": "job-a", "uid": "j-1", "controller": true, "blockOwnerDeletion": true}]},
  "spec": {
    "initContainers": [
      {"name": "setup", "image": "busybox", "command": ["sh", "-c", "true"],
       "resources": {"requests": {"cpu": "2", "memory": "1Gi"}}},
      {"name": "proxy", "image": "envoy", "restartPolicy": "Always",
       "resources": {"requests": {"cpu": "500m", "memory": "128Mi"}}}],
    "containers": [
      {"name": "main", "image": "trainer:1", "env": [{"name": "A", "value": "1"}],
       "resources": {"requests": {"cpu": "1", "memory": "2Gi", "nvidia.com/gpu": "1"},
                     "limits": {"cpu": "2", "memory": "2Gi", "nvidia.com/gpu": "1"}},
       "ports": [{"name": "http", "containerPort": 8080, "hostPort": 80, "protocol": "TCP"}],
       "volumeMounts": [{"name": "data", "mountPath": "/data"}]},
      {"name": "logger", "image": "fluent", "resources": {"limits": {"cpu": "100m"}}}],
    "overhead": {"cpu": "50m"},
    "nodeSelector": {"disk": "ssd"},
    "affinity": {
      "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
          {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}],
           "matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["n9"]}]}]},
        "preferredDuringSchedulingIgnoredDuringExecution": [
          {"weight": 10, "preference": {"matchExpressions": [
            {"key": "gpu", "operator": "Exists"}]}}]},
      "podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
          {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": "kubernetes.io/hostname",
           "namespaces": ["team"]}],
        "preferredDuringSchedulingIgnoredDuringExecution": [
          {"weight": 5, "podAffinityTerm": {"labelSelector": {"matchExpressions": [
            {"key": "tier", "operator": "NotIn", "values": ["db"]}]},
            "namespaceSelector": {}, "topologyKey": "zone", "matchLabelKeys": ["pod-template-hash"]}}]}},
    "tolerations": [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"},
                    {"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                     "effect": "NoExecute", "tolerationSeconds": 300}],
    "priority": 1000, "priorityClassName": "high", "schedulerName": "volcano",
    "nodeName": "node-1", "schedulingGates": [{"name": "gate-a"}],
    "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "pvc-1", "readOnly": true}},
                {"name": "cfg", "configMap": {"name": "cm"}}],
    "preemptionPolicy": "PreemptLowerPriority", "restartPolicy": "Never",
    "hostNetwork": true, "dnsPolicy": "ClusterFirstWithHostNet",
    "terminationGracePeriodSeconds": 30,
    "securityContext": {"runAsUser": 1000}},
  "status": {
    "phase": "Running", "hostIP": "127.0.0.1", "podIP": "10.0.0.5",
    "startTime": "2026-03-01T10:00:05Z", "nominatedNodeName": "node-2", "qosClass": "Burstable",
    "conditions": [{"type": "PodScheduled", "status": "True",
                    "lastTransitionTime": "2026-03-01T10:00:01Z", "lastProbeTime": null},
                   {"type": "Ready", "status": "False", "reason": "ContainersNotReady"}],
    "initContainerStatuses": [{"name": "setup", "ready": false, "restartCount": 0,
      "state": {"terminated": {"exitCode": 0, "reason": "Completed",
        "startedAt": "2026-03-01T10:00:02Z", "finishedAt": "2026-03-01T10:00:03Z"}},
      "imageID": "sha256:abc"}],
    "containerStatuses": [
      {"name": "main", "ready": true, "restartCount": 2, "image": "trainer:1",
       "state": {"running": {"startedAt": "2026-03-01T10:00:04Z"}},
       "lastState": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}}},
      {"name": "logger", "ready": false, "restartCount": 0,
       "state": {"waiting": {"reason": "ContainerCreating"}}}]}
})";

TEST_CASE("DecodePod reads every modelled field") {
  auto decoded = DecodePod(kPod);
  REQUIRE(decoded.ok());
  const Pod& pod = **decoded;
  CHECK(pod.metadata.Key() == "team/job-a-worker-0");
  CHECK(pod.metadata.ControllerRef()->kind == "Job");
  const PodSpec& spec = pod.spec;
  REQUIRE(spec.init_containers.size() == 2);
  CHECK_FALSE(spec.init_containers[0].IsSidecar());
  CHECK(spec.init_containers[1].IsSidecar());
  REQUIRE(spec.containers.size() == 2);
  const Container& main = spec.containers[0];
  CHECK(main.image == "trainer:1");
  CHECK(main.resources.requests.Find("nvidia.com/gpu")->Value() == 1);
  CHECK(main.resources.limits.Find("cpu")->MilliValue() == 2000);
  REQUIRE(main.ports.size() == 1);
  CHECK(main.ports[0].host_port == 80);
  CHECK(main.ports[0].container_port == 8080);
  CHECK(spec.overhead.Find("cpu")->MilliValue() == 50);
  CHECK(spec.node_selector.at("disk") == "ssd");
  REQUIRE(spec.affinity);
  const NodeAffinity& na = *spec.affinity->node_affinity;
  REQUIRE(na.required);
  REQUIRE(na.required->size() == 1);
  CHECK((*na.required)[0].match_expressions[0].values == std::vector<std::string>{"a", "b"});
  CHECK((*na.required)[0].match_fields[0].op == "NotIn");
  CHECK(na.preferred[0].weight == 10);
  CHECK(na.preferred[0].preference.match_expressions[0].op == "Exists");
  CHECK_FALSE(spec.affinity->pod_affinity);
  const PodAffinity& anti = *spec.affinity->pod_anti_affinity;
  CHECK(anti.required[0].label_selector->match_labels.at("app") == "x");
  CHECK(anti.required[0].topology_key == "kubernetes.io/hostname");
  CHECK(anti.required[0].namespaces == std::vector<std::string>{"team"});
  CHECK(anti.preferred[0].weight == 5);
  CHECK(anti.preferred[0].term.label_selector->match_expressions[0].key == "tier");
  CHECK(anti.preferred[0].term.namespace_selector.has_value());
  CHECK(anti.preferred[0].term.match_label_keys == std::vector<std::string>{"pod-template-hash"});
  REQUIRE(spec.tolerations.size() == 2);
  CHECK(spec.tolerations[1].toleration_seconds == 300);
  CHECK_FALSE(spec.tolerations[0].toleration_seconds);
  CHECK(spec.priority == 1000);
  CHECK(spec.priority_class_name == "high");
  CHECK(spec.scheduler_name == "volcano");
  CHECK(spec.node_name == "node-1");
  CHECK(spec.scheduling_gates == std::vector<std::string>{"gate-a"});
  REQUIRE(spec.volumes.size() == 2);
  CHECK(spec.volumes[0].pvc_claim_name == "pvc-1");
  CHECK(spec.volumes[1].pvc_claim_name.empty());
  CHECK(spec.preemption_policy == "PreemptLowerPriority");
  CHECK(spec.restart_policy == "Never");
  CHECK(spec.host_network);
  CHECK(spec.dns_policy == "ClusterFirstWithHostNet");

  const PodStatus& st = pod.status;
  CHECK(st.phase == pod_phase::kRunning);
  CHECK(st.nominated_node_name == "node-2");
  CHECK(st.start_time.has_value());
  CHECK(pod.Condition("PodScheduled")->status == "True");
  CHECK(pod.Condition("Ready")->reason == "ContainersNotReady");
  CHECK(pod.Condition("Missing") == nullptr);
  CHECK(st.init_container_statuses[0].state.kind == ContainerState::Kind::kTerminated);
  CHECK(st.container_statuses[0].restart_count == 2);
  CHECK(st.container_statuses[0].state.kind == ContainerState::Kind::kRunning);
  CHECK(st.container_statuses[0].last_state.exit_code == 137);
  CHECK(st.container_statuses[0].last_state.reason == "OOMKilled");
  CHECK(st.container_statuses[1].state.kind == ContainerState::Kind::kWaiting);
  CHECK(st.container_statuses[1].state.reason == "ContainerCreating");
}

TEST_CASE("A decoded pod re-encodes to the same JSON, unknown fields included") {
  auto pod = DecodePod(kPod, {.keep_raw = true});
  REQUIRE(pod.ok());
  CHECK(testing::JsonEqual(EncodePod(**pod), kPod));
}

TEST_CASE("Changing modelled pod fields keeps unknown fields at every depth") {
  auto decoded = DecodePod(kPod, {.keep_raw = true});
  REQUIRE(decoded.ok());
  Pod pod = **decoded;
  // Reorder the containers, change one, drop a label, add a toleration, clear a field.
  std::swap(pod.spec.containers[0], pod.spec.containers[1]);
  pod.spec.containers[1].image = "trainer:2";
  pod.spec.containers[1].resources.requests.Set("cpu", *Quantity::Parse("1500m"));
  pod.metadata.labels.clear();
  pod.metadata.annotations["new"] = "yes";
  pod.spec.tolerations.push_back({"k", "Equal", "v", "NoSchedule", std::nullopt});
  pod.spec.node_name.clear();
  pod.status.conditions.pop_back();

  json::Document out;
  REQUIRE(json::Parse(EncodePod(pod), &out).ok());
  const json::Value& spec = out["spec"];
  CHECK(std::string(spec["containers"][0]["name"].GetString()) == "logger");
  const json::Value& main = spec["containers"][1];
  CHECK(std::string(main["name"].GetString()) == "main");
  CHECK(std::string(main["image"].GetString()) == "trainer:2");
  // Unknown fields of the moved container travelled with it.
  CHECK(std::string(main["env"][0]["name"].GetString()) == "A");
  CHECK(std::string(main["volumeMounts"][0]["mountPath"].GetString()) == "/data");
  CHECK(std::string(main["resources"]["requests"]["cpu"].GetString()) == "1500m");
  // Unchanged quantities keep their text.
  CHECK(std::string(main["resources"]["requests"]["memory"].GetString()) == "2Gi");
  CHECK(std::string(spec["initContainers"][0]["command"][0].GetString()) == "sh");
  CHECK(spec["terminationGracePeriodSeconds"].GetInt() == 30);
  CHECK(spec["securityContext"]["runAsUser"].GetInt() == 1000);
  CHECK(spec["volumes"][0]["persistentVolumeClaim"]["readOnly"].GetBool());
  CHECK(std::string(spec["volumes"][1]["configMap"]["name"].GetString()) == "cm");
  CHECK(spec["tolerations"].Size() == 3);
  CHECK_FALSE(spec.HasMember("nodeName"));
  CHECK_FALSE(out["metadata"].HasMember("labels"));
  CHECK(std::string(out["metadata"]["annotations"]["new"].GetString()) == "yes");
  CHECK(out["metadata"]["managedFields"].IsArray());
  CHECK(std::string(out["status"]["qosClass"].GetString()) == "Burstable");
  CHECK(out["status"]["conditions"].Size() == 1);
  CHECK(out["status"]["conditions"][0].HasMember("lastProbeTime"));
  CHECK(std::string(out["status"]["containerStatuses"][0]["image"].GetString()) == "trainer:1");
}

TEST_CASE("Encoding without raw writes only modelled fields") {
  Pod pod;
  pod.api_version = "v1";
  pod.kind = "Pod";
  pod.metadata.name = "p";
  pod.metadata.namespace_ = "ns";
  Container c;
  c.name = "main";
  c.image = "busybox";
  c.resources.requests.Set("cpu", Quantity::FromMilli(250));
  pod.spec.containers.push_back(c);
  pod.spec.scheduler_name = "volcano";
  CHECK(testing::JsonEqual(EncodePod(pod), R"({"apiVersion":"v1","kind":"Pod",
      "metadata":{"name":"p","namespace":"ns"},
      "spec":{"containers":[{"name":"main","image":"busybox",
                             "resources":{"requests":{"cpu":"250m"}}}],
              "schedulerName":"volcano"}})"));
}

TEST_CASE("Decode errors name the object and the field path") {
  auto bad = DecodePod(R"({"metadata":{"name":"p","namespace":"ns"},"spec":{"containers":[
      {"name":"a","resources":{"requests":{"cpu":"2K"}}},
      {"name":"b","ports":[{"containerPort":"80"}]}],"priority":"high","tolerations":{}},
      "status":{"startTime":"yesterday"}})");
  REQUIRE_FALSE(bad.ok());
  const std::string msg = bad.status().message();
  CHECK(msg.rfind("Pod ns/p: ", 0) == 0);
  CHECK(msg.find("spec.containers[0].resources.requests.cpu: invalid quantity \"2K\": unknown "
                 "suffix \"K\"") != std::string::npos);
  CHECK(msg.find("spec.containers[1].ports[0].containerPort: expected integer, got string") !=
        std::string::npos);
  CHECK(msg.find("spec.priority: expected integer, got string") != std::string::npos);
  CHECK(msg.find("spec.tolerations: expected array, got object") != std::string::npos);
  CHECK(msg.find("status.startTime: invalid RFC 3339 time \"yesterday\"") != std::string::npos);

  CHECK(DecodePod("[1,2]").status().message() == "Pod: expected a JSON object");
  CHECK(DecodePod("{").status().message().find("invalid JSON") != std::string::npos);
}

TEST_CASE("Quantities may be JSON numbers and are trimmed like the API server does") {
  auto pod = DecodePod(R"({"spec":{"containers":[{"name":"a","resources":{"requests":
      {"cpu": 2, "memory": " 1Gi ", "example.com/x": 0.5, "example.com/y": null}}}]}})");
  REQUIRE(pod.ok());
  const ResourceList& req = (*pod)->spec.containers[0].resources.requests;
  CHECK(req.Find("cpu")->MilliValue() == 2000);
  CHECK(req.Find("memory")->Value() == 1073741824);
  CHECK(req.Find("example.com/x")->MilliValue() == 500);
  CHECK(req.Find("example.com/y")->IsZero());
}

TEST_CASE("Node, PriorityClass and Namespace decode and round-trip") {
  const char* node_json = R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n1",
      "labels":{"type":"kwok"}},
      "spec":{"unschedulable":true,"taints":[{"key":"gpu","value":"true","effect":"NoSchedule"}],
              "podCIDR":"10.0.0.0/24"},
      "status":{"capacity":{"cpu":"8","memory":"32Gi","pods":"110"},
                "allocatable":{"cpu":"7800m","memory":"31Gi","pods":"110","nvidia.com/gpu":"4"},
                "conditions":[{"type":"MemoryPressure","status":"False"},
                              {"type":"Ready","status":"True","reason":"KubeletReady",
                               "lastHeartbeatTime":"2026-03-01T10:00:00Z"}],
                "addresses":[{"type":"InternalIP","address":"127.0.0.1"}],
                "nodeInfo":{"kubeletVersion":"v1.37.2"}}})";
  auto node = DecodeNode(node_json, {.keep_raw = true});
  REQUIRE(node.ok());
  CHECK((*node)->spec.unschedulable);
  CHECK((*node)->spec.taints[0].effect == "NoSchedule");
  CHECK((*node)->Ready());
  CHECK(Resources::FromList((*node)->status.allocatable).ToString() ==
        "cpu 7800m, memory 31Gi, nvidia.com/gpu 4, pods 110");
  CHECK((*node)->status.addresses[0].address == "127.0.0.1");
  CHECK(testing::JsonEqual(EncodeNode(**node), node_json));
  Node not_ready = **node;
  not_ready.status.conditions[1].status = "False";
  CHECK_FALSE(not_ready.Ready());

  const char* pc_json = R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass",
      "metadata":{"name":"high"},"value":1000000,"globalDefault":false,
      "preemptionPolicy":"Never","description":"important"})";
  auto pc = DecodePriorityClass(pc_json, {.keep_raw = true});
  REQUIRE(pc.ok());
  CHECK((*pc)->value == 1000000);
  CHECK((*pc)->preemption_policy == "Never");
  CHECK(testing::JsonEqual(EncodePriorityClass(**pc), pc_json));

  const char* ns_json = R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team",
      "annotations":{"scheduling.volcano.sh/queue-name":"q1"}},"spec":{"finalizers":["kubernetes"]},
      "status":{"phase":"Active"}})";
  auto ns = DecodeNamespace(ns_json, {.keep_raw = true});
  REQUIRE(ns.ok());
  CHECK((*ns)->phase == "Active");
  CHECK((*ns)->metadata.Annotation("scheduling.volcano.sh/queue-name") == "q1");
  CHECK(testing::JsonEqual(EncodeNamespace(**ns), ns_json));
}

PodSpec SpecFrom(const char* spec_json) {
  auto pod = DecodePod(std::string(R"({"spec":)") + spec_json + "}");
  REQUIRE(pod.ok());
  return (*pod)->spec;
}

TEST_CASE("PodRequest sums containers and sidecars and takes the init-container peak") {
  // Regular phase: main + proxy sidecar = cpu 1500m, memory 1280Mi.
  // Init phase peaks: setup alone (cpu 4), migrate beside the proxy started before it
  // (cpu 2500m, memory 2304Mi). Plus 50m overhead.
  PodSpec spec = SpecFrom(R"({
    "initContainers": [
      {"name": "setup", "resources": {"requests": {"cpu": "4", "memory": "512Mi"}}},
      {"name": "proxy", "restartPolicy": "Always",
       "resources": {"requests": {"cpu": "500m", "memory": "256Mi"}}},
      {"name": "migrate", "resources": {"requests": {"cpu": "2", "memory": "2Gi"}}}],
    "containers": [{"name": "main", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}],
    "overhead": {"cpu": "50m"}})");
  CHECK(PodRequest(spec).ToString() == "cpu 4050m, memory 2304Mi");

  // Sidecars started before a regular init container add to its peak.
  PodSpec sidecar_first = SpecFrom(R"({
    "initContainers": [
      {"name": "a", "restartPolicy": "Always", "resources": {"requests": {"cpu": "1"}}},
      {"name": "b", "restartPolicy": "Always", "resources": {"requests": {"cpu": "1"}}},
      {"name": "c", "resources": {"requests": {"cpu": "3"}}}],
    "containers": [{"name": "main", "resources": {"requests": {"cpu": "1"}}}]})");
  CHECK(PodRequest(sidecar_first).milli_cpu() == 5000);  // c + a + b

  // A sidecar started after the regular init container does not add to it.
  PodSpec sidecar_last = SpecFrom(R"({
    "initContainers": [
      {"name": "c", "resources": {"requests": {"cpu": "3"}}},
      {"name": "a", "restartPolicy": "Always", "resources": {"requests": {"cpu": "1"}}}],
    "containers": [{"name": "main", "resources": {"requests": {"cpu": "1"}}}]})");
  CHECK(PodRequest(sidecar_last).milli_cpu() == 3000);
}

TEST_CASE("PodRequest defaults requests to limits and applies pod-level resources") {
  PodSpec limits_only = SpecFrom(R"({"containers": [
      {"name": "a", "resources": {"limits": {"cpu": "2", "memory": "1Gi", "nvidia.com/gpu": "1"}}},
      {"name": "b", "resources": {"requests": {"cpu": "100m"}, "limits": {"cpu": "1"}}}]})");
  CHECK(PodRequest(limits_only).ToString() == "cpu 2100m, memory 1Gi, nvidia.com/gpu 1");
  CHECK(EffectiveRequests(limits_only.containers[1].resources).Find("cpu")->MilliValue() == 100);

  PodSpec pod_level = SpecFrom(R"({
    "resources": {"requests": {"cpu": "3"}, "limits": {"memory": "4Gi"}},
    "containers": [
      {"name": "a", "resources": {"requests": {"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": "2"}}}],
    "overhead": {"memory": "64Mi"}})");
  CHECK(PodRequest(pod_level).ToString() == "cpu 3, memory 4160Mi, nvidia.com/gpu 2");

  CHECK(PodRequest(SpecFrom(R"({"containers": [{"name": "a"}]})")).IsEmpty());
}

TEST_CASE("PodLimit totals only what is limited, QuotaStyleResources adds the quota keys") {
  PodSpec spec = SpecFrom(R"({
    "initContainers": [{"name": "setup", "resources": {"limits": {"cpu": "3"}}}],
    "containers": [
      {"name": "a", "resources": {"requests": {"cpu": "500m", "memory": "256Mi"},
                                  "limits": {"cpu": "1", "memory": "512Mi", "nvidia.com/gpu": "1"}}},
      {"name": "b", "resources": {"requests": {"cpu": "1"}}}],
    "overhead": {"cpu": "100m", "ephemeral-storage": "1Gi"}})");
  // cpu: max(containers 1, init 3) + overhead; memory unlimited by b counts only a's limit;
  // ephemeral-storage is limited by nobody, so its overhead does not count.
  CHECK(PodLimit(spec).ToString() == "cpu 3100m, memory 512Mi, nvidia.com/gpu 1");

  auto text = [](const ResourceList& list) {
    std::string out;
    for (const auto& [name, q] : list) out += (out.empty() ? "" : ",") + name + "=" + q.String();
    return out;
  };
  Resources requests = PodRequest(spec);
  Resources limits = PodLimit(spec);
  // Requests: cpu max(1500m, the init container's limit 3) + overhead; the overhead's
  // ephemeral-storage is requested, though not limited.
  CHECK(text(QuotaStyleResources(requests.Multiply(2), limits.Multiply(2), 2)) ==
        "count/pods=2,cpu=6200m,ephemeral-storage=2Gi,limits.cpu=6200m,limits.memory=1Gi,"
        "memory=512Mi,nvidia.com/gpu=2,pods=2,requests.cpu=6200m,requests.ephemeral-storage=2Gi,"
        "requests.memory=512Mi,requests.nvidia.com/gpu=2");
  CHECK(text(QuotaStyleResources(Resources(), Resources(), 3)) == "count/pods=3,pods=3");
}

TEST_CASE("Pod templates keep their text and overlay the decoded view") {
  auto tmpl = ParsePodTemplate(R"({"metadata":{"labels":{"app":"x"}},
      "spec":{"hostNetwork":true,"containers":[{"name":"c","image":"i","args":["--x"]}]}})");
  REQUIRE(tmpl.ok());
  CHECK(tmpl->metadata.labels.at("app") == "x");
  CHECK(tmpl->spec.host_network);
  CHECK(tmpl->spec.containers[0].image == "i");
  CHECK_FALSE(ParsePodTemplate(R"({"spec":{"containers":"nope"}})").ok());
  CHECK_FALSE(ParsePodTemplate("[]").ok());
}

}  // namespace
}  // namespace tephra::api

namespace tephra::api {
namespace {

TEST_CASE("topology spread constraints decode and encode") {
  const char* text = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{
    "containers":[{"name":"c","image":"i"}],
    "topologySpreadConstraints":[{"maxSkew":2,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule",
      "labelSelector":{"matchLabels":{"app":"x"}},"minDomains":3,"matchLabelKeys":["pod-template-hash"],
      "nodeTaintsPolicy":"Honor"}]}})";
  auto pod = DecodePod(text);
  REQUIRE(pod.ok());
  REQUIRE((*pod)->spec.topology_spread_constraints.size() == 1);
  const auto& c = (*pod)->spec.topology_spread_constraints[0];
  CHECK(c.max_skew == 2);
  CHECK(c.topology_key == "zone");
  CHECK(c.when_unsatisfiable == "DoNotSchedule");
  REQUIRE(c.label_selector);
  CHECK(c.label_selector->match_labels.at("app") == "x");
  CHECK(c.min_domains == 3);
  CHECK(c.match_label_keys == std::vector<std::string>{"pod-template-hash"});
  CHECK(c.node_taints_policy == "Honor");
  Pod copy = **pod;
  copy.raw.reset();
  auto again = DecodePod(EncodePod(copy));
  REQUIRE(again.ok());
  CHECK((*again)->spec.topology_spread_constraints == (*pod)->spec.topology_spread_constraints);
}

}  // namespace
}  // namespace tephra::api
