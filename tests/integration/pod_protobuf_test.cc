// Pods listed as protobuf from the real kube-apiserver decode to the PodInfo their JSON decodes
// to, page by page, and an informer that lists in protobuf keeps following JSON watch events.
#include <map>

#include <catch2/catch.hpp>
#include <rapidjson/document.h>

#include "kube/client.h"
#include "kube/informer.h"
#include "scheduler/app/pod_decoders.h"
#include "scheduler/model/pod_info.h"
#include "tests/support/cluster.h"
#include "tests/support/kube_client.h"
#include "tests/support/pod_info_diff.h"

namespace tephra::scheduler {
namespace {

using testing::ClusterEnv;
using testing::Kubectl;
using testing::TestNamespace;

std::shared_ptr<kube::Client> AdminClient() {
  StatusOr<std::shared_ptr<kube::Client>> client =
      testing::KubeClientFor(ClusterEnv::Get().kubeconfig, 200);
  REQUIRE(client.ok());
  return *client;
}

// Pods using every field the decoders read, and plain ones.
const char* kPods[] = {
    R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"rich","labels":{"app":"train"},
      "annotations":{"scheduling.k8s.io/group-name":"job-a","volcano.sh/task-spec":"worker",
        "volcano.sh/task-priority":"7","volcano.sh/preemptable":"false","other":"dropped"},
      "finalizers":["example.com/hold"]},
    "spec":{"schedulerName":"tephra-protobuf-test",
      "initContainers":[{"name":"proxy","image":"x","restartPolicy":"Always",
        "resources":{"requests":{"cpu":"100m"}}}],
      "containers":[{"name":"main","image":"x",
        "resources":{"requests":{"cpu":"1500m","memory":"2Gi"},"limits":{"cpu":"2","memory":"2Gi","example.com/gpu":"2"}},
        "ports":[{"containerPort":8080,"hostPort":18080,"protocol":"UDP"}]}],
      "nodeSelector":{"zone":"z1"},
      "affinity":{"nodeAffinity":{
          "requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
            {"matchExpressions":[{"key":"gpu","operator":"In","values":["a100","h100"]}]}]},
          "preferredDuringSchedulingIgnoredDuringExecution":[
            {"weight":5,"preference":{"matchFields":[{"key":"metadata.name","operator":"In","values":["n1"]}]}}]},
        "podAntiAffinity":{
          "requiredDuringSchedulingIgnoredDuringExecution":[{"labelSelector":{"matchLabels":{"app":"train"}},
            "topologyKey":"kubernetes.io/hostname"}],
          "preferredDuringSchedulingIgnoredDuringExecution":[{"weight":10,
            "podAffinityTerm":{"topologyKey":"zone","namespaceSelector":{}}}]}},
      "tolerations":[{"key":"dedicated","operator":"Equal","value":"gpu","effect":"NoExecute",
        "tolerationSeconds":30}],
      "topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule",
        "labelSelector":{"matchExpressions":[{"key":"app","operator":"Exists"}]},"minDomains":2}],
      "schedulingGates":[{"name":"wait"}],
      "volumes":[{"name":"data","persistentVolumeClaim":{"claimName":"data-0"}},{"name":"scratch","emptyDir":{}}],
      "restartPolicy":"OnFailure"}})",
    R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"bare"},
    "spec":{"schedulerName":"tephra-protobuf-test","containers":[{"name":"c","image":"x",
      "resources":{"requests":{"cpu":"1"}}}]}})",
    R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"best-effort","labels":{"scheduling.x-k8s.io/pod-group":"pg"}},
    "spec":{"schedulerName":"tephra-protobuf-test","containers":[{"name":"c","image":"x"}]}})",
};

// Every pod of `ns` decoded from a LIST in pages of 2, in the encoding asked for.
std::map<std::string, std::shared_ptr<PodInfo>> ListDecoded(kube::Client& client,
                                                            const std::string& ns, bool protobuf,
                                                            SpecInterner& interner,
                                                            int* protobuf_items) {
  std::map<std::string, std::shared_ptr<PodInfo>> out;
  kube::ListOptions options;
  options.limit = 2;
  options.accept_protobuf = protobuf;
  auto rv =
      client.ListAllItems(kube::resources::kPods, ns, options, [&](const kube::ListItem& item) {
        StatusOr<std::shared_ptr<PodInfo>> pod =
            item.json != nullptr ? DecodePodInfo(*item.json, interner)
                                 : DecodePodInfoProtobuf(item.protobuf, interner);
        if (item.json == nullptr) ++*protobuf_items;
        if (!pod.ok()) return pod.status();
        out[(*pod)->metadata.Key()] = *pod;
        return Status::Ok();
      });
  REQUIRE(rv.ok());
  CHECK_FALSE(rv->empty());
  return out;
}

TEST_CASE("pods listed as protobuf decode to what their JSON decodes to") {
  Kubectl kubectl(ClusterEnv::Get().kubeconfig);
  TestNamespace ns(kubectl, "pod-protobuf");
  auto client = AdminClient();
  for (const char* pod : kPods) {
    StatusOr<std::string> created = client->Create(kube::resources::kPods, ns.name(), pod);
    INFO(created.status().ToString());
    REQUIRE(created.ok());
  }
  // One pod is terminating: held by its finalizer after the delete.
  REQUIRE(client->Delete(kube::resources::kPods, ns.name(), "rich").ok());

  SpecInterner interner;
  int protobuf_items = 0;
  auto from_json = ListDecoded(*client, ns.name(), false, interner, &protobuf_items);
  CHECK(protobuf_items == 0);
  auto from_protobuf = ListDecoded(*client, ns.name(), true, interner, &protobuf_items);
  CHECK(protobuf_items == 3);  // the server did answer protobuf, over two pages
  REQUIRE(from_json.size() == 3);
  REQUIRE(from_protobuf.size() == 3);
  for (const auto& [key, pod] : from_json) {
    INFO(key);
    REQUIRE(from_protobuf.count(key) == 1);
    CHECK(testing::PodInfoDifferences(*pod, *from_protobuf[key]) == std::vector<std::string>{});
  }
  const PodInfo& rich = *from_protobuf[ns.name() + "/rich"];
  CHECK(rich.terminating);
  CHECK(rich.metadata.deletion_grace_period_seconds.has_value());
  CHECK(rich.task_priority == 7);
  // Ours, and the two the DefaultTolerationSeconds admission plugin adds.
  REQUIRE(rich.spec->tolerations.size() == 3);
  CHECK(rich.spec->tolerations[0].toleration_seconds == 30);
  CHECK(rich.spec->request.milli_cpu() == 1600);
  CHECK(from_protobuf[ns.name() + "/best-effort"]->sched_plugins_group);
  CHECK(from_protobuf[ns.name() + "/bare"]->implicit_pod_group != nullptr);

  // Let the namespace go.
  REQUIRE(client
              ->Patch(kube::resources::kPods, ns.name(), "rich", kube::PatchType::kMerge,
                      R"({"metadata":{"finalizers":null}})")
              .ok());
}

TEST_CASE("an informer listing pods as protobuf follows later changes by watch") {
  Kubectl kubectl(ClusterEnv::Get().kubeconfig);
  TestNamespace ns(kubectl, "pod-protobuf-informer");
  auto client = AdminClient();
  REQUIRE(client->Create(kube::resources::kPods, ns.name(), kPods[1]).ok());
  auto interner = std::make_shared<SpecInterner>();
  kube::InformerOptions options;
  options.resource = kube::resources::kPods;
  options.namespace_ = ns.name();
  options.decoder = PodInfoDecoder(interner);
  options.protobuf_decoder = PodInfoProtobufDecoder(interner);
  kube::Informer informer(client, options);
  informer.Start();
  REQUIRE(informer.WaitForSync(std::chrono::seconds(30)));
  CHECK(informer.decode_errors() == 0);
  auto listed = informer.store().Get(ns.name() + "/bare");
  REQUIRE(listed != nullptr);
  CHECK(kube::As<PodInfo>(listed)->spec->request.milli_cpu() == 1000);
  REQUIRE(client->Create(kube::resources::kPods, ns.name(), kPods[2]).ok());
  bool seen = testing::Eventually(
      [&] { return informer.store().Get(ns.name() + "/best-effort") != nullptr; },
      std::chrono::seconds(30));
  CHECK(seen);
  CHECK(informer.decode_errors() == 0);
  informer.Stop();
}

}  // namespace
}  // namespace tephra::scheduler
