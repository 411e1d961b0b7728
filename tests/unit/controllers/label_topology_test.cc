// Label discovery: grouping nodes into tiers, naming, members.
#include "controllers/hypernode/label_topology.h"

#include <catch2/catch.hpp>

#include "api/validation.h"

namespace tephra::controllers::hypernode {
namespace {

using Labels = std::map<std::string, std::string>;

struct Cluster {
  std::vector<std::pair<std::string, Labels>> nodes;
  std::vector<api::TopologyNode> Infos() const {
    std::vector<api::TopologyNode> out;
    for (const auto& [name, labels] : nodes) out.push_back({name, &labels});
    return out;
  }
};

const DesiredHyperNode* Find(const std::vector<DesiredHyperNode>& hns, const std::string& name) {
  for (const auto& hn : hns)
    if (hn.name == name) return &hn;
  return nullptr;
}

Labels Host(const std::string& name, Labels more) {
  more["kubernetes.io/hostname"] = name;
  return more;
}

const LabelTopology kSpineRack{"fabric",
                               {"tephra.dev/spine", "tephra.dev/rack", "kubernetes.io/hostname"}};

TEST_CASE("nodes group into racks (tier 1) and racks into spines (tier 2)") {
  Cluster c;
  c.nodes = {{"n0", Host("n0", {{"tephra.dev/spine", "s0"}, {"tephra.dev/rack", "r0"}})},
             {"n1", Host("n1", {{"tephra.dev/spine", "s0"}, {"tephra.dev/rack", "r0"}})},
             {"n2", Host("n2", {{"tephra.dev/spine", "s0"}, {"tephra.dev/rack", "r1"}})},
             {"n3", Host("n3", {{"tephra.dev/spine", "s1"}, {"tephra.dev/rack", "r2"}})}};
  auto hns = BuildLabelHyperNodes({kSpineRack}, c.Infos());
  REQUIRE(hns.size() == 5);
  const DesiredHyperNode* r0 = Find(hns, "hypernode-fabric-tier1-r0");
  REQUIRE(r0 != nullptr);
  CHECK(r0->tier == 1);
  CHECK(r0->tier_name == "tephra.dev/rack");
  CHECK(r0->member_type == "Node");
  CHECK(r0->members == std::vector<std::string>{"n0", "n1"});
  CHECK(r0->labels ==
        Labels{{"volcano.sh/network-topology-source", "label"}, {"tephra.dev/rack", "r0"}});
  const DesiredHyperNode* s0 = Find(hns, "hypernode-fabric-tier2-s0");
  REQUIRE(s0 != nullptr);
  CHECK(s0->tier == 2);
  CHECK(s0->tier_name == "tephra.dev/spine");
  CHECK(s0->member_type == "HyperNode");
  CHECK(s0->members ==
        std::vector<std::string>{"hypernode-fabric-tier1-r0", "hypernode-fabric-tier1-r1"});
  CHECK(Find(hns, "hypernode-fabric-tier2-s1")->members ==
        std::vector<std::string>{"hypernode-fabric-tier1-r2"});
}

TEST_CASE("a node without a label is left out of that tier and those above") {
  Cluster c;
  c.nodes = {{"n0", Host("n0", {{"tephra.dev/spine", "s0"}, {"tephra.dev/rack", "r0"}})},
             {"n1", Host("n1", {{"tephra.dev/rack", "r0"}})},   // no spine: rack only
             {"n2", Host("n2", {{"tephra.dev/spine", "s0"}})},  // no rack: nowhere
             {"n3", {{"tephra.dev/spine", "s0"}, {"tephra.dev/rack", "r9"}}}};  // no hostname
  auto hns = BuildLabelHyperNodes({kSpineRack}, c.Infos());
  REQUIRE(hns.size() == 2);
  CHECK(Find(hns, "hypernode-fabric-tier1-r0")->members == std::vector<std::string>{"n0", "n1"});
  CHECK(Find(hns, "hypernode-fabric-tier2-s0")->members ==
        std::vector<std::string>{"hypernode-fabric-tier1-r0"});
}

TEST_CASE("a rack whose nodes name two spines is a member of both") {
  Cluster c;
  c.nodes = {{"n0", Host("n0", {{"tephra.dev/spine", "s0"}, {"tephra.dev/rack", "r0"}})},
             {"n1", Host("n1", {{"tephra.dev/spine", "s1"}, {"tephra.dev/rack", "r0"}})}};
  auto hns = BuildLabelHyperNodes({kSpineRack}, c.Infos());
  CHECK(Find(hns, "hypernode-fabric-tier2-s0")->members ==
        std::vector<std::string>{"hypernode-fabric-tier1-r0"});
  CHECK(Find(hns, "hypernode-fabric-tier2-s1")->members ==
        std::vector<std::string>{"hypernode-fabric-tier1-r0"});
}

TEST_CASE("two topologies give separate HyperNodes") {
  Cluster c;
  c.nodes = {{"n0", Host("n0", {{"tephra.dev/rack", "r0"}, {"zone", "z"}})}};
  auto hns = BuildLabelHyperNodes({{"a", {"tephra.dev/rack", "kubernetes.io/hostname"}},
                                   {"b", {"zone", "kubernetes.io/hostname"}}},
                                  c.Infos());
  REQUIRE(hns.size() == 2);
  CHECK(hns[0].name == "hypernode-a-tier1-r0");
  CHECK(hns[1].name == "hypernode-b-tier1-z");
}

TEST_CASE("names are deterministic DNS-1123 labels, with a hash for values that are not") {
  CHECK(HyperNodeName("fabric", 1, "r0") == "hypernode-fabric-tier1-r0");
  // Volcano lowercases the topology name in HyperNode names.
  CHECK(HyperNodeName("topologyA2", 1, "r0") == "hypernode-topologya2-tier1-r0");
  for (const std::string& value : {std::string("Rack_B"), std::string(""), std::string("r.1"),
                                   std::string(60, 'x'), std::string("-r")}) {
    const std::string name = HyperNodeName("fabric", 2, value);
    INFO(value << " -> " << name);
    CHECK(api::DnsLabelProblems(name).empty());
    CHECK(name.rfind("hypernode-fabric-tier2-", 0) == 0);
    CHECK(name == HyperNodeName("fabric", 2, value));
  }
  CHECK(HyperNodeName("fabric", 1, "Rack_B") != HyperNodeName("fabric", 1, "rack_b"));
  CHECK(HyperNodeName("fabric", 1, "Rack_B") != HyperNodeName("fabric", 2, "Rack_B"));
  const std::string odd = HyperNodeName("Topology With Spaces and a very long name indeed", 1, "r");
  CHECK(api::DnsLabelProblems(odd).empty());
  CHECK(odd.rfind("hypernode-t-tier1-", 0) == 0);
}

TEST_CASE("work is linear: 20,000 nodes in 4 levels") {
  Cluster c;
  for (int i = 0; i < 20000; ++i) {
    const std::string n = "n" + std::to_string(i);
    c.nodes.push_back({n, Host(n, {{"z", "z" + std::to_string(i / 5000)},
                                   {"s", "s" + std::to_string(i / 500)},
                                   {"r", "r" + std::to_string(i / 20)}})});
  }
  auto hns = BuildLabelHyperNodes({{"t", {"z", "s", "r", "kubernetes.io/hostname"}}}, c.Infos());
  CHECK(hns.size() == 1000 + 40 + 4);
}

}  // namespace
}  // namespace tephra::controllers::hypernode
