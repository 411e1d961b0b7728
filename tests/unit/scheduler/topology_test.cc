// Network-topology-aware placement (docs/scheduler.md, "Network topology"): the HyperNode tree
// the cache builds, and allocate's tier search with the network-topology-aware plugin.
#include "api/topology.h"

#include <catch2/catch.hpp>

#include "api/labels.h"
#include "tests/unit/scheduler/harness.h"

namespace tephra::scheduler::testing {
namespace {

constexpr char kTopologyConf[] = R"(actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
  - name: network-topology-aware
)";

std::string FirstFeasibleConf() {
  return std::string(kTopologyConf) + "    arguments: {hypernode.choice: first-feasible}\n";
}

// Two racks of two 4-CPU nodes under one spine.
void Racks(Harness& h) {
  h.Node("n1", "cpu=4").Node("n2", "cpu=4").Node("n3", "cpu=4").Node("n4", "cpu=4");
  h.Queue("default");
  h.HyperNode("r1", 1, {"n1", "n2"}).HyperNode("r2", 1, {"n3", "n4"});
  h.HyperNode("spine", 2, {"r1", "r2"});
}

// Gang `name` of `pods` pods of 4 CPU (a whole node each).
void Gang(Harness& h, const std::string& name, int pods, const std::string& mode, int tier) {
  h.Group("ns/" + name, "default", pods);
  h.GroupTopology("ns/" + name, mode, tier);
  for (int i = 0; i < pods; ++i) {
    h.Pod("ns/" + name + "-" + std::to_string(i), name).Request("cpu=4").Add();
  }
}

std::set<std::string> NodesOf(const Harness::Result& r, const std::string& prefix) {
  std::set<std::string> nodes;
  for (const auto& [pod, node] : r.binds) {
    if (pod.rfind(prefix, 0) == 0) nodes.insert(node);
  }
  return nodes;
}

std::string AllocatedHyperNode(const Harness::Result& r, const JobId& job) {
  for (const auto& u : r.outcome.pod_groups) {
    if (u.job == job) return u.allocated_hypernode;
  }
  return "";
}

TEST_CASE("topology: the tree resolves members by name, pattern and labels, cycles cut") {
  std::map<std::string, std::string> gpu{{"accel", "gpu"}}, none;
  std::vector<api::TopologyNode> nodes{{"a-1", &gpu}, {"a-2", &none}, {"b-1", &gpu}};
  auto member = [](const std::string& type, api::MemberSelector s) {
    return api::HyperNodeMember{type, std::move(s)};
  };
  auto hn = [](const std::string& name, int tier, std::vector<api::HyperNodeMember> members) {
    auto h = std::make_shared<api::HyperNode>();
    h->metadata.name = name;
    h->spec.tier = tier;
    h->spec.members = std::move(members);
    return std::shared_ptr<const api::HyperNode>(h);
  };
  api::MemberSelector by_regex, by_labels, by_name, upper, back, ghost;
  by_regex.regex_pattern = "^a-";
  by_labels.label_match = api::LabelSelector{{{"accel", "gpu"}}, {}};
  by_name.exact_name = "rack-a";
  upper.exact_name = "top";
  back.exact_name = "loop";
  ghost.exact_name = "ghost";
  std::vector<std::string> problems;
  auto tree = HyperNodeTree::Build(
      {hn("rack-a", 1, {member("Node", by_regex)}), hn("gpus", 1, {member("Node", by_labels)}),
       hn("top", 2, {member("HyperNode", by_name), member("HyperNode", back)}),
       hn("loop", 2, {member("HyperNode", upper), member("HyperNode", ghost)})},
      nodes, &problems);
  REQUIRE(tree->Find("rack-a") != nullptr);
  CHECK(tree->Find("rack-a")->nodes == std::vector<std::string>{"a-1", "a-2"});
  CHECK(tree->Find("gpus")->nodes == std::vector<std::string>{"a-1", "b-1"});
  CHECK(tree->Find("top")->nodes == std::vector<std::string>{"a-1", "a-2"});
  CHECK(tree->Find("loop")->nodes == std::vector<std::string>{"a-1", "a-2"});  // through top
  REQUIRE(problems.size() == 1);
  CHECK(problems[0] == "HyperNode loop member 1: no HyperNode is named ghost");
  CHECK(tree->top_tier() == 3);
  const HyperNodeInfo& cluster = tree->hypernodes().back();
  CHECK(cluster.virtual_top);
  CHECK(cluster.tier == 3);
  CHECK(cluster.nodes.size() == 3);
}

TEST_CASE("topology: a hard gang is placed inside one tier-1 HyperNode and records it") {
  Harness h;
  Racks(h);
  Gang(h, "pair", 2, "hard", 1);
  Harness::Result r = h.Run(kTopologyConf);
  REQUIRE(r.binds.size() == 2);
  std::set<std::string> nodes = NodesOf(r, "pair-");
  CHECK((nodes == std::set<std::string>{"n1", "n2"} || nodes == std::set<std::string>{"n3", "n4"}));
  std::string hn = AllocatedHyperNode(r, "ns/pair");
  CHECK((hn == "r1" || hn == "r2"));
}

TEST_CASE("topology: a hard gang larger than any allowed HyperNode waits and says why") {
  Harness h;
  Racks(h);
  Gang(h, "three", 3, "hard", 1);
  Harness::Result r = h.Run(kTopologyConf);
  CHECK(r.binds.empty());
  const api::PodGroupCondition* c = WrittenCondition(r, "ns/three", "Unschedulable");
  REQUIRE(c != nullptr);
  INFO(c->message);
  CHECK(c->message.find("needs cpu 12 within tier 1 (network topology, hard); the largest "
                        "tier-1 HyperNode, r1, has cpu 8 free") != std::string::npos);
}

TEST_CASE("topology: with tier 2 allowed the same gang spans the spine") {
  Harness h;
  Racks(h);
  Gang(h, "three", 3, "hard", 2);
  Harness::Result r = h.Run(kTopologyConf);
  CHECK(r.binds.size() == 3);
  CHECK(AllocatedHyperNode(r, "ns/three") == "spine");
}

TEST_CASE("topology: soft mode prefers one rack and falls back to the whole cluster") {
  Harness h;
  Racks(h);
  Gang(h, "soft", 3, "soft", -1);
  Harness::Result r = h.Run(kTopologyConf);
  CHECK(r.binds.size() == 3);
}

TEST_CASE("topology: the tightest HyperNode is chosen, first-feasible takes the first") {
  for (bool tightest : {true, false}) {
    INFO(tightest);
    Harness h;
    Racks(h);
    h.Group("ns/busy", "default", 1);
    h.Pod("ns/busy-0", "busy").Request("cpu=4").On("n3").Add();  // r2 has one node left
    Gang(h, "one", 1, "hard", 1);
    std::string note;
    h.inspect = [&](const Session& ssn) {
      auto j = ssn.JobIndex("ns/one");
      if (j && ssn.JobNotes(*j) != nullptr) note = ssn.JobNotes(*j)->front().message;
    };
    Harness::Result r = h.Run(tightest ? std::string(kTopologyConf) : FirstFeasibleConf());
    CHECK(note == (tightest ? "placed within HyperNode r2 (tier 1); not chosen: r1 ranked lower"
                            : "placed within HyperNode r1 (tier 1); not chosen: r2 ranked lower"));
    REQUIRE(r.binds.size() == 1);
    CHECK(r.binds.at("one-0") == (tightest ? "n4" : "n1"));
    CHECK(AllocatedHyperNode(r, "ns/one") == (tightest ? "r2" : "r1"));
  }
}

TEST_CASE("topology: a restarted hard job goes back to the HyperNode it was given") {
  Harness h;
  Racks(h);
  Gang(h, "back", 2, "hard", 2);
  h.AnnotateGroup("ns/back", std::string(api::kJobAllocatedHyperNodeAnnotation), "r2");
  Harness::Result r = h.Run(kTopologyConf);
  CHECK(NodesOf(r, "back-") == std::set<std::string>{"n3", "n4"});
}

TEST_CASE("topology: a growing job stays in the HyperNode its running tasks are in") {
  Harness h;
  Racks(h);
  h.Group("ns/grow", "default", 1);
  h.GroupTopology("ns/grow", "hard", 2);
  h.Pod("ns/grow-0", "grow").Request("cpu=4").On("n3").Add();
  h.Pod("ns/grow-1", "grow").Request("cpu=4").Add();
  Harness::Result r = h.Run(kTopologyConf);
  REQUIRE(r.binds.size() == 1);
  CHECK(r.binds.at("grow-1") == "n4");
  CHECK(AllocatedHyperNode(r, "ns/grow") == "r2");
}

TEST_CASE("topology: a hard gang preempts inside one HyperNode, never across") {
  Harness h;
  Racks(h);
  h.PriorityClass("high", 1000).PriorityClass("low", 10);
  for (const char* node : {"n1", "n3"}) {  // one busy node per rack: n2 and n4 are free
    std::string name = std::string("low-") + node;
    h.Group("ns/" + name, "default", 1, "Running", "", "low");
    h.Pod("ns/" + name + "-0", name).Request("cpu=4").Priority(10).On(node).Add();
  }
  h.Group("ns/high", "default", 2, "Inqueue", "", "high");
  h.GroupTopology("ns/high", "hard", 1);
  for (int i = 0; i < 2; ++i) {
    h.Pod("ns/high-" + std::to_string(i), "high").Request("cpu=4").Priority(1000).Add();
  }
  std::string conf = std::string(kTopologyConf);
  conf.replace(conf.find("allocate, backfill"), 18, "allocate, preempt, backfill");
  Harness::Result r = h.Run(conf);
  CHECK(r.binds.empty());  // n2 and n4 would hold it, but in two racks
  REQUIRE(r.evictions.size() == 1);
  std::set<std::string> nominated;
  for (const auto& p : r.outcome.pods) {
    if (p.name.rfind("high-", 0) == 0) nominated.insert(p.nominated_node);
  }
  // The victim and both pods in one rack: r1 (n1 freed, n2 free), the first of two equal ones.
  CHECK(r.evictions[0] == "low-n1-0");
  CHECK(nominated == std::set<std::string>{"n1", "n2"});
}

TEST_CASE("topology: each sub-gang is placed whole inside its own HyperNode") {
  Harness h;
  Racks(h);
  h.Group("ns/filler", "default", 1);
  h.Pod("ns/filler-0", "filler").Request("cpu=4").On("n3").Add();  // rack r2 has one node left
  h.Group("ns/parts", "default", 2);  // minPartitions 1 × partitionSize 2
  h.ChangeGroup("ns/parts", [](api::PodGroup& pg) {
    api::SubGroupPolicy policy;
    policy.name = "worker";
    policy.sub_group_size = 2;
    policy.min_sub_groups = 1;
    policy.label_selector = api::LabelSelector{{{"volcano.sh/task-spec", "worker"}}, {}};
    policy.match_label_keys = {"volcano.sh/partition-id"};
    policy.network_topology = api::NetworkTopologySpec{"hard", 1, ""};
    pg.spec.sub_group_policy = {policy};
  });
  for (int i = 0; i < 4; ++i) {
    h.Pod("ns/parts-" + std::to_string(i), "parts")
        .Request("cpu=4")
        .Labels({{"volcano.sh/task-spec", "worker"},
                 {"volcano.sh/partition-id", std::to_string(i / 2)}})
        .Add();
  }
  Harness::Result r = h.Run(kTopologyConf);
  // Partition 0 fills rack r1; partition 1 would need two nodes of one rack: n4 alone is not it.
  CHECK(NodesOf(r, "parts-") == std::set<std::string>{"n1", "n2"});
  CHECK(r.binds.count("parts-0") == 1);
  CHECK(r.binds.count("parts-1") == 1);
  bool explained = false;
  for (const auto& p : r.outcome.pods) {
    if (p.name != "parts-2") continue;
    INFO(p.condition.message);
    explained = p.condition.message.find("sub-group worker/1 needs cpu 8 within tier 1") !=
                std::string::npos;
  }
  CHECK(explained);
}

TEST_CASE("topology: a PodGroup labelled as KubeRay labels it is placed by its topology") {
  Harness h;
  Racks(h);
  h.Group("ns/ray", "default", 3);
  h.ChangeGroup("ns/ray", [](api::PodGroup& pg) {
    pg.metadata.labels[std::string(api::kNetworkTopologyModeAnnotation)] = "hard";
    pg.metadata.labels[std::string(api::kNetworkTopologyHighestTierAnnotation)] = "1";
  });
  for (int i = 0; i < 3; ++i) h.Pod("ns/ray-" + std::to_string(i), "ray").Request("cpu=4").Add();
  Harness::Result r = h.Run(kTopologyConf);
  CHECK(r.binds.empty());  // three whole nodes: no rack has them
  REQUIRE(WrittenCondition(r, "ns/ray", "Unschedulable") != nullptr);
}

TEST_CASE("topology: without the plugin a job's networkTopology is not enforced") {
  Harness h;
  Racks(h);
  Gang(h, "three", 3, "hard", 1);
  Harness::Result r = h.Run();
  CHECK(r.binds.size() == 3);
}

}  // namespace
}  // namespace tephra::scheduler::testing
