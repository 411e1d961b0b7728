// status.nodeCount: distinct nodes under a HyperNode, through every kind of member.
#include "controllers/hypernode/node_count.h"

#include <catch2/catch.hpp>

namespace tephra::controllers::hypernode {
namespace {

using Labels = std::map<std::string, std::string>;

std::shared_ptr<const api::HyperNode> Hn(const std::string& name,
                                         std::vector<api::HyperNodeMember> members) {
  auto hn = std::make_shared<api::HyperNode>();
  hn->metadata.name = name;
  hn->spec.members = std::move(members);
  return hn;
}

api::HyperNodeMember Exact(const std::string& type, const std::string& name) {
  api::HyperNodeMember m;
  m.type = type;
  m.selector.exact_name = name;
  return m;
}

api::HyperNodeMember Regex(const std::string& pattern) {
  api::HyperNodeMember m;
  m.type = "Node";
  m.selector.regex_pattern = pattern;
  return m;
}

TEST_CASE("node counts follow exact, regex and label members down the tree") {
  std::vector<std::pair<std::string, Labels>> raw = {
      {"a0", {{"rack", "a"}}}, {"a1", {{"rack", "a"}}}, {"b0", {{"rack", "b"}}}, {"c0", {}}};
  std::vector<api::TopologyNode> nodes;
  for (const auto& [n, l] : raw) nodes.push_back({n, &l});
  api::HyperNodeMember by_label;
  by_label.type = "Node";
  by_label.selector.label_match.emplace().match_labels = {{"rack", "b"}};
  auto counts =
      CountNodes({Hn("ra", {Regex("^a")}), Hn("rb", {by_label}),
                  Hn("exact", {Exact("Node", "a0"), Exact("Node", "a0"), Exact("Node", "gone")}),
                  Hn("top", {Exact("HyperNode", "ra"), Exact("HyperNode", "rb"),
                             Exact("HyperNode", "exact"), Exact("HyperNode", "missing")}),
                  Hn("bad", {Regex("(")}), Hn("anywhere", {Regex("0")})},
                 nodes);
  CHECK(counts.at("ra") == 2);
  CHECK(counts.at("rb") == 1);
  CHECK(counts.at("exact") == 1);
  CHECK(counts.at("top") == 3);  // a0 counted once
  CHECK(counts.at("bad") == 0);
  CHECK(counts.at("anywhere") == 3);  // Go's MatchString: anywhere in the name
}

TEST_CASE("cycles between HyperNodes end") {
  Labels none;
  std::vector<api::TopologyNode> nodes = {{"n0", &none}, {"n1", &none}};
  auto counts = CountNodes({Hn("x", {Exact("HyperNode", "y"), Exact("Node", "n0")}),
                            Hn("y", {Exact("HyperNode", "x"), Exact("Node", "n1")}),
                            Hn("self", {Exact("HyperNode", "self")})},
                           nodes);
  CHECK(counts.at("x") == 2);
  CHECK(counts.at("y") == 2);
  CHECK(counts.at("self") == 0);
}

}  // namespace
}  // namespace tephra::controllers::hypernode
