// The matching rules predicates and nodeorder share (scheduler/plugins/support/matching.h):
// label selectors, node selector terms, taints and tolerations as Kubernetes defines them.
#include "scheduler/plugins/support/matching.h"

#include <string>
#include <vector>

#include <catch2/catch.hpp>

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

}  // namespace
}  // namespace tephra::scheduler::testing
