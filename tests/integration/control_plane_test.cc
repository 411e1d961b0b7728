// The ground every other integration test stands on: a real kube-apiserver, kwok playing the
// kubelet of simulated nodes, and binding through the pods/binding subresource.
#include <iostream>
#include <string>

#include <catch2/catch.hpp>
#include <rapidjson/document.h>

#include "tests/support/cluster.h"

namespace tephra::testing {
namespace {

std::string Field(const Kubectl& k, const std::string& kind, const std::string& name,
                  const std::string& jsonpath, const std::string& ns = "") {
  std::vector<std::string> args{"get", kind, name, "-o", "jsonpath=" + jsonpath};
  if (!ns.empty()) args.insert(args.begin(), {"-n", ns});
  CommandResult r = k.Run(args);
  return r.ok() ? r.out : std::string();
}

TEST_CASE("the control plane is a real kube-apiserver v1.37.2") {
  const ClusterEnv& env = ClusterEnv::Get();
  Kubectl kubectl(env.kubeconfig);
  std::string version = kubectl.MustRun({"version", "-o", "json"});
  rapidjson::Document doc;
  doc.Parse(version.c_str());
  REQUIRE_FALSE(doc.HasParseError());
  REQUIRE(doc.HasMember("serverVersion"));
  std::string server = doc["serverVersion"]["gitVersion"].GetString();
  std::cout << "kube-apiserver at " << env.apiserver << " reports " << server << "\n";
  CHECK(server == "v1.37.2");
  CHECK(env.apiserver.rfind("https://127.0.0.1:", 0) == 0);
}

TEST_CASE("a pod bound through pods/binding to a kwok node runs and succeeds") {
  const ClusterEnv& env = ClusterEnv::Get();
  Kubectl kubectl(env.kubeconfig);
  TestNamespace ns(kubectl, "it-bind");
  const std::string node = "kwok-it-" + RandomSuffix();

  kubectl.MustRun({"create", "-f", "-"},
                  R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")" + node +
                      R"(","annotations":{"kwok.x-k8s.io/node":"fake"},"labels":{"type":"kwok-it"}},
      "status":{"capacity":{"cpu":"8","memory":"16Gi","pods":"110"},
                "allocatable":{"cpu":"8","memory":"16Gi","pods":"110"}}})");
  struct NodeCleanup {
    const Kubectl& k;
    std::string name;
    ~NodeCleanup() { k.Run({"delete", "node", name, "--wait=false"}); }
  } cleanup{kubectl, node};

  REQUIRE(Eventually(
      [&] {
        return Field(kubectl, "node", node, R"({.status.conditions[?(@.type=="Ready")].status})") ==
               "True";
      },
      std::chrono::seconds(60)));
  CHECK(Field(kubectl, "node", node, "{.status.allocatable.cpu}") == "8");

  kubectl.MustRun({"-n", ns.name(), "create", "-f", "-"}, R"({"apiVersion":"v1","kind":"Pod",
      "metadata":{"name":"worker","annotations":{"sim.tephra.dev/result":"Succeeded",
                                                  "sim.tephra.dev/duration":"2s"}},
      "spec":{"schedulerName":"tephra-test","containers":[{"name":"main","image":"busybox",
              "resources":{"requests":{"cpu":"2","memory":"1Gi"}}}]}})");

  // No scheduler serves "tephra-test": the pod waits unbound until we bind it.
  CHECK(Field(kubectl, "pod", "worker", "{.status.phase}", ns.name()) == "Pending");
  CHECK(Field(kubectl, "pod", "worker", "{.spec.nodeName}", ns.name()).empty());

  kubectl.MustRun(
      {"create", "--raw", "/api/v1/namespaces/" + ns.name() + "/pods/worker/binding", "-f", "-"},
      R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":"worker"},
                      "target":{"apiVersion":"v1","kind":"Node","name":")" +
          node + R"("}})");
  CHECK(Field(kubectl, "pod", "worker", "{.spec.nodeName}", ns.name()) == node);

  REQUIRE(Eventually(
      [&] { return Field(kubectl, "pod", "worker", "{.status.phase}", ns.name()) == "Running"; },
      std::chrono::seconds(30)));
  CHECK(Field(kubectl, "pod", "worker", "{.status.hostIP}", ns.name()) == "127.0.0.1");
  REQUIRE(Eventually(
      [&] { return Field(kubectl, "pod", "worker", "{.status.phase}", ns.name()) == "Succeeded"; },
      std::chrono::seconds(30)));
  CHECK(Field(kubectl, "pod", "worker", "{.status.containerStatuses[0].state.terminated.exitCode}",
              ns.name()) == "0");
}

TEST_CASE("a pod annotated to fail ends Failed with its exit code") {
  const ClusterEnv& env = ClusterEnv::Get();
  Kubectl kubectl(env.kubeconfig);
  TestNamespace ns(kubectl, "it-fail");
  std::string node = kubectl.MustRun(
      {"get", "nodes", "-l", "type=kwok", "-o", "jsonpath={.items[0].metadata.name}"});
  REQUIRE_FALSE(node.empty());

  kubectl.MustRun({"-n", ns.name(), "create", "-f", "-"}, R"({"apiVersion":"v1","kind":"Pod",
      "metadata":{"name":"crash","annotations":{"sim.tephra.dev/result":"Failed",
          "sim.tephra.dev/duration":"1s","sim.tephra.dev/exit-code":"3"}},
      "spec":{"schedulerName":"tephra-test","nodeName":")" + node +
                                                              R"(",
              "containers":[{"name":"main","image":"busybox"}]}})");
  REQUIRE(Eventually(
      [&] { return Field(kubectl, "pod", "crash", "{.status.phase}", ns.name()) == "Failed"; },
      std::chrono::seconds(30)));
  CHECK(Field(kubectl, "pod", "crash", "{.status.containerStatuses[0].state.terminated.exitCode}",
              ns.name()) == "3");
}

}  // namespace
}  // namespace tephra::testing
