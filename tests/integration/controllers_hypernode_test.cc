// hyperNode-controller against the real control plane: HyperNodes built from kwok nodes'
// labels with the right tiers, members and status.nodeCount; a node added and removed, a node
// relabelled; user-written HyperNodes left alone (their nodeCount kept current); an enabled
// ufm source reported unavailable (docs/controllers.md#hypernode-discovery).
#include <catch2/catch.hpp>

#include "api/kinds.h"
#include "api/topology.h"
#include "tests/integration/controllers/harness.h"

namespace tephra::testing {
namespace {

constexpr auto kTimeout = std::chrono::seconds(60);
const std::string kSpine = "disc.tephra.dev/spine";
const std::string kRack = "disc.tephra.dev/rack";

std::shared_ptr<api::HyperNode> GetHyperNode(kube::Client& client, const std::string& name) {
  StatusOr<std::string> body = client.Get(api::kHyperNodes, "", name);
  if (!body.ok()) return nullptr;
  StatusOr<std::shared_ptr<api::HyperNode>> hn = api::DecodeHyperNode(*body);
  return hn.ok() ? *hn : nullptr;
}

std::vector<std::string> ExactMembers(const api::HyperNode& hn) {
  std::vector<std::string> out;
  for (const auto& m : hn.spec.members) out.push_back(m.selector.exact_name.value_or("?"));
  return out;
}

struct Want {
  int64_t tier;
  std::string tier_name;
  std::vector<std::string> members;
  int64_t node_count;
};

std::string Describe(const api::HyperNode* hn) {
  if (hn == nullptr) return "<missing>";
  std::string s = "tier " + std::to_string(hn->spec.tier) + " " + hn->spec.tier_name + " [";
  for (const auto& m : ExactMembers(*hn)) s += m + " ";
  return s + "] nodeCount " + std::to_string(hn->status.node_count);
}

TEST_CASE("hyperNode-controller builds HyperNodes from node labels and follows the nodes") {
  Kubectl kubectl(ClusterEnv::Get().kubeconfig);
  InstallControllerPrerequisites(kubectl);
  auto client = AdminClient();
  const std::string suffix = RandomSuffix();
  const std::string topo = "disc" + suffix;
  const std::string cm = "disc-config-" + suffix;
  const std::string user_hn = "disc-user-" + suffix;
  const std::string extra_node = "disc-node-" + suffix;
  auto name = [&](int tier, const std::string& value) {
    return "hypernode-" + topo + "-tier" + std::to_string(tier) + "-" + value;
  };

  // kwok-node-0,1 in rack r0, kwok-node-2,3 in rack r1; only 0..2 name a spine.
  kubectl.MustRun({"label", "--overwrite", "node", "kwok-node-0", "kwok-node-1", kRack + "=r0",
                   kSpine + "=s0"});
  kubectl.MustRun({"label", "--overwrite", "node", "kwok-node-2", kRack + "=r1", kSpine + "=s0"});
  kubectl.MustRun({"label", "--overwrite", "node", "kwok-node-3", kRack + "=r1", kSpine + "-"});
  kubectl.MustRun(
      {"apply", "-f", "-"},
      "apiVersion: topology.volcano.sh/v1alpha1\nkind: HyperNode\nmetadata:\n  name: " + user_hn +
          "\nspec:\n  tier: 1\n  members:\n  - type: Node\n    selector:\n"
          "      regexMatch: {pattern: '^kwok-node-[01]$'}\n");
  kubectl.MustRun({"apply", "-n", "tephra-system", "-f", "-"},
                  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + cm +
                      "\ndata:\n  volcano-controller.conf: |\n    networkTopologyDiscovery:\n"
                      "    - source: ufm\n      enabled: true\n      interval: 10m\n"
                      "    - source: label\n      enabled: true\n      config:\n"
                      "        networkTopologyTypes:\n          " +
                      topo + ":\n          - nodeLabel: " + kSpine + "\n          - nodeLabel: " +
                      kRack + "\n          - nodeLabel: kubernetes.io/hostname\n");
  TestNamespace ns(kubectl, "disc");
  ControllerManager manager(ns.name(), {"--controllers=hyperNode-controller",
                                        "--controller-conf-configmap=tephra-system/" + cm});

  auto expect = [&](const std::map<std::string, Want>& want) {
    bool ok = Eventually(
        [&] {
          for (const auto& [n, w] : want) {
            auto hn = GetHyperNode(*client, n);
            if (!hn || hn->spec.tier != w.tier || hn->spec.tier_name != w.tier_name ||
                ExactMembers(*hn) != w.members || hn->status.node_count != w.node_count ||
                hn->metadata.Label("volcano.sh/network-topology-source") != "label") {
              return false;
            }
          }
          return true;
        },
        kTimeout);
    if (!ok) {
      for (const auto& [n, w] : want) INFO(n << ": " << Describe(GetHyperNode(*client, n).get()));
      INFO(manager.LogTail());
      REQUIRE(ok);
    }
  };

  SECTION("tiers, members and node counts") {
    expect({{name(1, "r0"), {1, kRack, {"kwok-node-0", "kwok-node-1"}, 2}},
            {name(1, "r1"), {1, kRack, {"kwok-node-2", "kwok-node-3"}, 2}},
            {name(2, "s0"), {2, kSpine, {name(1, "r0"), name(1, "r1")}, 4}}});
    auto user = GetHyperNode(*client, user_hn);
    REQUIRE(user);
    CHECK(user->metadata.labels.empty());
    CHECK(user->spec.members.size() == 1);
    CHECK(Eventually([&] { return GetHyperNode(*client, user_hn)->status.node_count == 2; },
                     kTimeout));

    // ufm is enabled but not in this build: a warning Event on the ConfigMap.
    CHECK(Eventually(
        [&] {
          return kubectl
                     .Run({"get", "events", "-n", "tephra-system", "--field-selector",
                           "involvedObject.name=" + cm + ",reason=DiscoverySourceUnavailable", "-o",
                           "jsonpath={.items[*].message}"})
                     .out.find("\"ufm\"") != std::string::npos;
        },
        kTimeout));

    // A node joins rack r0, then leaves.
    kubectl.MustRun({"apply", "-f", "-"},
                    "apiVersion: v1\nkind: Node\nmetadata:\n  name: " + extra_node +
                        "\n  labels:\n    kubernetes.io/hostname: " + extra_node + "\n    " +
                        kRack + ": r0\n    " + kSpine + ": s0\n");
    expect({{name(1, "r0"), {1, kRack, {extra_node, "kwok-node-0", "kwok-node-1"}, 3}},
            {name(2, "s0"), {2, kSpine, {name(1, "r0"), name(1, "r1")}, 5}}});
    kubectl.MustRun({"delete", "node", extra_node, "--wait=false"});
    expect({{name(1, "r0"), {1, kRack, {"kwok-node-0", "kwok-node-1"}, 2}},
            {name(2, "s0"), {2, kSpine, {name(1, "r0"), name(1, "r1")}, 4}}});

    // Rack r1's nodes move to rack r2: r1 is deleted, r2 made, the spine follows.
    kubectl.MustRun({"label", "--overwrite", "node", "kwok-node-2", "kwok-node-3", kRack + "=r2"});
    expect({{name(1, "r2"), {1, kRack, {"kwok-node-2", "kwok-node-3"}, 2}},
            {name(2, "s0"), {2, kSpine, {name(1, "r0"), name(1, "r2")}, 4}}});
    CHECK(Eventually([&] { return GetHyperNode(*client, name(1, "r1")) == nullptr; }, kTimeout));

    // The user's HyperNode was never rewritten; its count follows its regex.
    user = GetHyperNode(*client, user_hn);
    REQUIRE(user);
    CHECK(user->metadata.labels.empty());
    CHECK(user->spec.members.at(0).selector.regex_pattern.value_or("") == "^kwok-node-[01]$");
  }

  kubectl.Run({"delete", "configmap", "-n", "tephra-system", cm});
  kubectl.Run({"delete", "node", extra_node, "--ignore-not-found"});
  kubectl.Run({"delete", "hypernode", user_hn, "--ignore-not-found"});
  kubectl.Run({"label", "node", "kwok-node-0", "kwok-node-1", "kwok-node-2", "kwok-node-3",
               kRack + "-", kSpine + "-"});
  kubectl.Run({"delete", "hypernodes", "-l", kRack});
  kubectl.Run({"delete", "hypernodes", "-l", kSpine});
}

}  // namespace
}  // namespace tephra::testing
