// HyperNode decoding and admission rules (docs/compatibility.md §1.7, §3.8).
#include "api/topology.h"

#include <catch2/catch.hpp>

namespace tephra::api {
namespace {

HyperNode Decoded(const std::string& members) {
  auto hn = DecodeHyperNode(R"({"apiVersion":"topology.volcano.sh/v1alpha1","kind":"HyperNode",)"
                            R"("metadata":{"name":"rack-1"},"spec":{"tier":1,"tierName":"rack",)"
                            R"("members":)" +
                            members + "}}");
  REQUIRE(hn.ok());
  return **hn;
}

TEST_CASE("a HyperNode decodes with each kind of member selector") {
  HyperNode hn =
      Decoded(R"([{"type":"Node","selector":{"exactMatch":{"name":"node-0"}}},)"
              R"({"type":"Node","selector":{"regexMatch":{"pattern":"^node-[0-9]+$"}}},)"
              R"({"type":"Node","selector":{"labelMatch":{"matchLabels":{"rack":"1"}}}}])");
  CHECK(hn.spec.tier == 1);
  CHECK(hn.spec.tier_name == "rack");
  REQUIRE(hn.spec.members.size() == 3);
  CHECK(hn.spec.members[0].selector.exact_name == "node-0");
  CHECK(hn.spec.members[1].selector.regex_pattern == "^node-[0-9]+$");
  REQUIRE(hn.spec.members[2].selector.label_match);
  CHECK(hn.spec.members[2].selector.label_match->match_labels.at("rack") == "1");
  CHECK(ValidateHyperNode(hn).empty());
}

TEST_CASE("HyperNode admission names the member and the rule") {
  struct Case {
    const char* rule;
    const char* members;
    FieldErrors want;
  };
  const Case cases[] = {
      {"no member", "[]", {{"spec.members", "must have at least one member"}}},
      {"no selector",
       R"([{"type":"Node","selector":{}}])",
       {{"spec.members[0].selector", "must have one of exactMatch, regexMatch or labelMatch"}}},
      {"two selectors",
       R"([{"type":"Node","selector":{"exactMatch":{"name":"a"},"regexMatch":{"pattern":"b"}}}])",
       {{"spec.members[0].selector",
         "must have only one of exactMatch, regexMatch or labelMatch"}}},
      {"a pattern that does not compile (Go syntax: no lookahead)",
       R"j([{"type":"Node","selector":{"regexMatch":{"pattern":"node-(?=1)"}}}])j",
       {{"spec.members[0].selector.regexMatch.pattern",
         "is not a valid regular expression: invalid perl operator: (?="}}},
      {"a HyperNode member named by a pattern (accepted, as in Volcano)",
       R"([{"type":"HyperNode","selector":{"regexMatch":{"pattern":"rack-.*"}}}])",
       {}},
      {"an unknown member type",
       R"([{"type":"Switch","selector":{"exactMatch":{"name":"s1"}}}])",
       {{"spec.members[0].type", "must be Node or HyperNode, not \"Switch\""}}},
      {"an empty exact name",
       R"([{"type":"Node","selector":{"exactMatch":{"name":""}}}])",
       {{"spec.members[0].selector.exactMatch.name", "is required"}}},
  };
  for (const Case& c : cases) {
    INFO(c.rule);
    CHECK(ValidateHyperNode(Decoded(c.members)) == c.want);
  }
}

TEST_CASE("a deeply nested pattern is checked without recursion on its depth") {
  std::string pattern(100000, '(');
  pattern += std::string(100000, ')');
  HyperNode hn =
      Decoded(R"([{"type":"Node","selector":{"regexMatch":{"pattern":")" + pattern + R"("}}}])");
  FieldErrors errors = ValidateHyperNode(hn);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].path == "spec.members[0].selector.regexMatch.pattern");
  CHECK(errors[0].message == "is not a valid regular expression: expression nests too deeply");
  // As in Go, 1,000 levels are allowed; parentheses in a class or escaped do not nest.
  CHECK(ValidateHyperNode(Decoded(R"([{"type":"Node","selector":{"regexMatch":{"pattern":")" +
                                  std::string(1000, '(') + std::string(1000, ')') +
                                  R"([((]\\("}}}])"))
            .empty());
}

}  // namespace
}  // namespace tephra::api
