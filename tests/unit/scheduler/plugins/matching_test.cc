// The matching rules predicates and nodeorder share (scheduler/plugins/matching.h): label
// selectors, node selector terms, taints and tolerations as Kubernetes defines them; and the
// per-domain pod counts of scheduler/plugins/topology.h.
#include "scheduler/plugins/matching.h"

#include <catch2/catch.hpp>

#include "scheduler/plugins/topology.h"
#include "tests/unit/scheduler/plugins/plugin_session.h"

namespace tephra::scheduler::testing {
namespace {

api::LabelSelector Expr(const std::string& key, const std::string& op,
                        std::vector<std::string> values = {}) {
  api::LabelSelector s;
  s.match_expressions.push_back({key, op, std::move(values)});
  return s;
}

TEST_CASE("matching: label selectors") {
  Labels web{{"app", "web"}, {"tier", "front"}};
  api::LabelSelector labels;
  labels.match_labels = {{"app", "web"}};
  CHECK(MatchesLabelSelector(labels, web));
  CHECK_FALSE(MatchesLabelSelector(labels, {{"app", "db"}}));
  CHECK(MatchesLabelSelector(api::LabelSelector{}, web));  // empty selects everything
  CHECK(MatchesLabelSelector(Expr("tier", "In", {"front", "back"}), web));
  CHECK_FALSE(MatchesLabelSelector(Expr("tier", "NotIn", {"front"}), web));
  CHECK(MatchesLabelSelector(Expr("tier", "NotIn", {"front"}), {{"app", "web"}}));  // absent key
  CHECK(MatchesLabelSelector(Expr("app", "Exists"), web));
  CHECK_FALSE(MatchesLabelSelector(Expr("app", "DoesNotExist"), web));
  CHECK_FALSE(MatchesLabelSelector(Expr("app", "Near", {"web"}), web));  // unknown operator
  labels.match_expressions = Expr("tier", "In", {"back"}).match_expressions;
  CHECK_FALSE(MatchesLabelSelector(labels, web));  // labels AND expressions
}

TEST_CASE("matching: node selector terms, with Gt/Lt and metadata.name fields") {
  Labels node{{"gpus", "4"}, {"zone", "a"}};
  api::NodeSelectorTerm gt;
  gt.match_expressions.push_back({"gpus", "Gt", {"2"}});
  CHECK(MatchesNodeSelectorTerm(gt, node, "n1"));
  api::NodeSelectorTerm lt;
  lt.match_expressions.push_back({"gpus", "Lt", {"4"}});
  CHECK_FALSE(MatchesNodeSelectorTerm(lt, node, "n1"));
  api::NodeSelectorTerm by_name;
  by_name.match_fields.push_back({"metadata.name", "In", {"n2"}});
  CHECK_FALSE(MatchesNodeSelectorTerm(by_name, node, "n1"));
  CHECK(MatchesNodeSelectorTerm(by_name, node, "n2"));
  CHECK_FALSE(MatchesNodeSelectorTerm(api::NodeSelectorTerm{}, node, "n1"));  // empty term: nothing

  api::Affinity affinity;
  affinity.node_affinity.emplace();
  api::NodeSelectorTerm zone_b;
  zone_b.match_expressions.push_back({"zone", "In", {"b"}});
  affinity.node_affinity->required = std::vector<api::NodeSelectorTerm>{zone_b, gt};  // ORed
  CHECK(MatchesNodeSelectorAndAffinity({}, affinity, node, "n1"));
  CHECK_FALSE(
      MatchesNodeSelectorAndAffinity({{"zone", "b"}}, affinity, node, "n1"));  // selector ANDed
}

TEST_CASE("matching: tolerations") {
  api::Taint gpu{"gpu", "true", "NoSchedule", {}};
  CHECK(Tolerates({"gpu", "Exists", "", "", {}}, gpu));
  CHECK(Tolerates({"gpu", "", "true", "NoSchedule", {}}, gpu));  // Equal
  CHECK_FALSE(Tolerates({"gpu", "", "false", "NoSchedule", {}}, gpu));
  CHECK_FALSE(Tolerates({"gpu", "Exists", "", "NoExecute", {}}, gpu));  // other effect
  CHECK(Tolerates({"", "Exists", "", "", {}}, gpu));  // empty key with Exists tolerates all
  std::vector<api::Taint> taints = {{"soft", "", "PreferNoSchedule", {}}, gpu};
  CHECK(UntoleratedTaint(taints, {}, {"NoSchedule", "NoExecute"}) == &taints[1]);
  CHECK(UntoleratedTaint(taints, {{"gpu", "Exists", "", "", {}}}, {"NoSchedule", "NoExecute"}) ==
        nullptr);
}

TEST_CASE("topology: pods counted per domain, kept current as the session places them") {
  Harness h;
  h.Node("n-a1", "cpu=8", {{"zone", "a"}})
      .Node("n-a2", "cpu=8", {{"zone", "a"}})
      .Node("n-b", "cpu=8", {{"zone", "b"}});
  h.Node("n-none", "cpu=8")
      .Queue("default")
      .Group("ns/g", "default", 1)
      .Group("other/g", "default", 1);
  h.Pod("ns/w0", "g").Labels({{"app", "web"}}).Request("cpu=1").On("n-a1").Add();
  h.Pod("ns/w1", "g").Labels({{"app", "web"}}).Request("cpu=1").On("n-a2").Add();
  h.Pod("ns/db", "g").Labels({{"app", "db"}}).Request("cpu=1").On("n-b").Add();
  h.Pod("ns/w-gone", "g").Labels({{"app", "web"}}).Request("cpu=1").On("n-b").Terminating().Add();
  h.Pod("other/w", "g").Labels({{"app", "web"}}).Request("cpu=1").On("n-b").Add();
  h.Pod("ns/w2", "g").Labels({{"app", "web"}}).Request("cpu=1").Add();
  PluginSession s(h, "- plugins:\n  - name: predicates\n");
  api::LabelSelector web;
  web.match_labels = {{"app", "web"}};
  NamespaceScope scope;
  scope.names.insert("ns");
  DomainCounter counter("zone", web, scope);
  counter.Build(s.session());
  CHECK(counter.Count("a") == 2);
  CHECK(counter.Count("b") == 0);  // db does not match, w-gone is leaving, other/w is out of scope
  CHECK(counter.Total() == 2);
  CHECK(counter.domains().size() == 2);  // n-none has no zone
  CHECK(counter.DomainOf(s.Node("n-none")) == nullptr);
  REQUIRE(counter.DomainOf(s.Node("n-b")) != nullptr);
  CHECK(*counter.DomainOf(s.Node("n-b")) == "b");
  counter.Update(s.session(), *s.Task("ns/w2").pod, s.Node("n-b"), +1);
  CHECK(counter.Count("b") == 1);
  CHECK(counter.Total() == 3);
  counter.Update(s.session(), *s.Task("ns/w2").pod, s.Node("n-b"), -1);
  CHECK(counter.Count("b") == 0);
}

}  // namespace
}  // namespace tephra::scheduler::testing
