// The nodegroup plugin: a queue's affinity to node groups (label volcano.sh/nodegroup-name) as
// predicate and score, its inheritance under enableHierarchy and per-group resource limits
// (docs/scheduler.md, Plugins: nodegroup).
#include <catch2/catch.hpp>

#include "api/labels.h"
#include "tests/unit/scheduler/plugins/plugin_session.h"

namespace tephra::scheduler::testing {
namespace {

const char kNodeGroup[] = "- plugins:\n  - name: nodegroup\n";

bool Fails(const Fit& f, const char* reason) {
  return !f.ok() && std::string(f.reason) == reason &&
         f.code == Fit::Code::kUnschedulableUnresolvable;
}

api::NodeGroupAffinity Groups(std::vector<std::string> required,
                              std::vector<std::string> preferred) {
  return {std::move(required), std::move(preferred)};
}

void AddQueue(Harness& h, const std::string& name, std::optional<api::QueueAffinity> affinity,
              const std::string& parent = "", const std::string& limits = "") {
  auto q = std::make_shared<api::Queue>();
  q->metadata.name = name;
  q->spec.weight = 1;
  q->spec.parent = parent;
  q->spec.affinity = std::move(affinity);
  if (!limits.empty())
    q->metadata.annotations[std::string(api::kNodeGroupResourceLimitsAnnotation)] = limits;
  q->status.state = "Open";
  h.cache().UpsertQueue(q);
}

// Nodes of groups ga, gb and gc and one without a group; a pod in each queue.
void Cluster(Harness& h) {
  const std::string key(api::kNodeGroupNameLabel);
  h.Node("a", "cpu=8", {{key, "ga"}})
      .Node("b", "cpu=8", {{key, "gb"}})
      .Node("c", "cpu=8", {{key, "gc"}})
      .Node("plain", "cpu=8");
  AddQueue(h, "pinned", api::QueueAffinity{Groups({"ga"}, {"gb", "gc"}), Groups({"gc"}, {})});
  AddQueue(h, "avoid", api::QueueAffinity{Groups({"gb"}, {}), Groups({"gb"}, {"ga"})});
  AddQueue(h, "none", std::nullopt);
  AddQueue(h, "child", std::nullopt, "pinned");
  for (const char* q : {"pinned", "avoid", "none", "child"}) {
    h.Group(std::string("ns/") + q, q, 1);
    h.Pod(std::string("ns/") + q + "-0", q).Request("cpu=1").Add();
  }
}

TEST_CASE("nodegroup: a node fits a queue whose affinity names its group") {
  Harness h;
  Cluster(h);
  PluginSession s(h, kNodeGroup);
  CHECK(s.Predicate("ns/pinned-0", "a").ok());  // required
  CHECK(s.Predicate("ns/pinned-0", "b").ok());  // preferred
  CHECK(Fails(s.Predicate("ns/pinned-0", "c"), "node does not satisfy the node group affinity"));
  CHECK(Fails(s.Predicate("ns/pinned-0", "plain"), "node group label not found"));
  // Preferred anti-affinity admits a group, required anti-affinity refuses one, over affinity.
  CHECK(s.Predicate("ns/avoid-0", "a").ok());
  CHECK(Fails(s.Predicate("ns/avoid-0", "b"), "node does not satisfy the node group affinity"));
  CHECK(Fails(s.Predicate("ns/avoid-0", "c"), "node does not satisfy the node group affinity"));
  // Without affinity a queue gets no labelled node and, strict, no unlabelled one either.
  CHECK(Fails(s.Predicate("ns/none-0", "a"), "node group affinity not specified"));
  CHECK(Fails(s.Predicate("ns/none-0", "plain"), "node group label not found"));
}

TEST_CASE("nodegroup: strict false opens unlabelled nodes to queues without affinity") {
  Harness h;
  Cluster(h);
  PluginSession s(h, "- plugins:\n  - name: nodegroup\n    arguments: {strict: false}\n");
  CHECK(s.Predicate("ns/none-0", "plain").ok());
  CHECK(Fails(s.Predicate("ns/none-0", "a"), "node group affinity not specified"));
  CHECK(Fails(s.Predicate("ns/pinned-0", "plain"), "node group label not found"));
}

TEST_CASE("nodegroup: required groups score 100, preferred 50, preferred anti-affinity -1") {
  Harness h;
  Cluster(h);
  {
    PluginSession s(h, kNodeGroup);
    CHECK(s.Scores("ns/pinned-0", {"a", "b", "c", "plain"}) == std::vector<double>{100, 50, 50, 0});
    CHECK(s.Scores("ns/avoid-0", {"a", "b"}) == std::vector<double>{-1, 100});
    CHECK(s.Scores("ns/none-0", {"a", "plain"}) == std::vector<double>{0, 0});
  }
  PluginSession s(h,
                  "- plugins:\n  - name: nodegroup\n    arguments: {enablePreferredOrder: true}\n");
  CHECK(s.Scores("ns/pinned-0", {"a", "b", "c"}) == std::vector<double>{100, 50, 25});
}

TEST_CASE("nodegroup: with enableHierarchy a queue without affinity takes its parent's") {
  Harness h;
  Cluster(h);
  {
    PluginSession s(h, kNodeGroup);
    CHECK(Fails(s.Predicate("ns/child-0", "a"), "node group affinity not specified"));
  }
  PluginSession s(h, "- plugins:\n  - name: nodegroup\n    enableHierarchy: true\n");
  CHECK(s.Predicate("ns/child-0", "a").ok());
  CHECK(Fails(s.Predicate("ns/child-0", "c"), "node does not satisfy the node group affinity"));
  CHECK(s.Scores("ns/child-0", {"a", "b"}) == std::vector<double>{100, 50});
}

TEST_CASE("nodegroup: a queue's resource limit per group counts what its tasks hold") {
  Harness h;
  const std::string key(api::kNodeGroupNameLabel);
  h.Node("a", "cpu=8", {{key, "ga"}}).Node("b", "cpu=8", {{key, "gb"}});
  AddQueue(h, "capped", api::QueueAffinity{Groups({"ga", "gb"}, {}), std::nullopt}, "",
           R"({"ga": {"cpu": "2"}})");
  AddQueue(h, "broken", api::QueueAffinity{Groups({"ga"}, {}), std::nullopt}, "", "{\"ga\": 3}");
  h.Group("ns/run", "capped", 1, "Running").Group("ns/new", "capped", 1).Group("ns/b", "broken", 1);
  h.Pod("ns/run-0", "run").Request("cpu=1").On("a").Add();
  h.Pod("ns/new-0", "new").Request("cpu=1").Add();
  h.Pod("ns/new-1", "new").Request("cpu=1").Add();
  h.Pod("ns/b-0", "b").Request("cpu=1").Add();
  PluginSession s(h, kNodeGroup);
  CHECK(s.Predicate("ns/new-0", "a").ok());  // 1 held + 1 <= 2
  s.Place("ns/new-0", "a");
  CHECK(Fails(s.Predicate("ns/new-1", "a"), "node group resource limit exceeded"));
  CHECK(s.Predicate("ns/new-1", "b").ok());  // gb has no limit
  CHECK(Fails(s.Predicate("ns/b-0", "a"), "node group resource limit annotation invalid"));
}

}  // namespace
}  // namespace tephra::scheduler::testing
