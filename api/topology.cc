#include "api/topology.h"

#include <algorithm>
#include <re2/re2.h>
#include <unordered_map>

#include "api/regex.h"

namespace tephra::api {
namespace {

void FillHyperNode(const json::Reader& r, HyperNode* hn) {
  json::Reader spec = r["spec"];
  hn->spec.tier = spec["tier"].Int();
  hn->spec.tier_name = spec["tierName"].String();
  spec["members"].ForEach([&](const json::Reader& m) {
    HyperNodeMember& member = hn->spec.members.emplace_back();
    member.type = m["type"].String();
    json::Reader selector = m["selector"];
    if (json::Reader exact = selector["exactMatch"]; exact.present())
      member.selector.exact_name = exact["name"].String();
    if (json::Reader regex = selector["regexMatch"]; regex.present())
      member.selector.regex_pattern = regex["pattern"].String();
    if (json::Reader labels = selector["labelMatch"]; labels.present())
      DecodeLabelSelector(labels, &member.selector.label_match.emplace());
  });
  hn->status.node_count = r["status"]["nodeCount"].Int();
}

void ValidateSelector(const HyperNodeMember& member, const std::string& path, FieldErrors* errors) {
  const MemberSelector& s = member.selector;
  const int kinds = (s.exact_name ? 1 : 0) + (s.regex_pattern ? 1 : 0) + (s.label_match ? 1 : 0);
  if (kinds == 0) {
    errors->push_back({path, "must have one of exactMatch, regexMatch or labelMatch"});
    return;
  }
  if (kinds > 1) {
    errors->push_back({path, "must have only one of exactMatch, regexMatch or labelMatch"});
    return;
  }
  if (s.exact_name) {
    if (s.exact_name->empty()) {
      errors->push_back({path + ".exactMatch.name", "is required"});
    } else if (auto problems = QualifiedNameProblems(*s.exact_name); !problems.empty()) {
      errors->push_back({path + ".exactMatch.name", problems.front()});
    }
  }
  if (s.regex_pattern) {
    if (s.regex_pattern->empty()) {
      errors->push_back({path + ".regexMatch.pattern", "is required"});
    } else if (std::string problem = RegexProblem(*s.regex_pattern); !problem.empty()) {
      errors->push_back(
          {path + ".regexMatch.pattern", "is not a valid regular expression: " + problem});
    }
  }
}

}  // namespace

StatusOr<std::shared_ptr<HyperNode>> DecodeHyperNode(const json::Value& value,
                                                     const DecodeOptions& options) {
  return DecodeTypedObject<HyperNode>(value, options, "HyperNode", FillHyperNode);
}

StatusOr<std::shared_ptr<HyperNode>> DecodeHyperNode(std::string_view text,
                                                     const DecodeOptions& options) {
  return DecodeTypedObjectText<HyperNode>(text, options, "HyperNode", FillHyperNode);
}

std::string EncodeHyperNode(const HyperNode& hn) {
  return EncodeObject(hn, [&](JsonObject& o) {
    o.Edit("spec", [&](JsonObject& s) {
      s.SetInt("tier", hn.spec.tier);
      s.SetString("tierName", hn.spec.tier_name);
      s.EditList("members", hn.spec.members.size(), [&](size_t i, JsonObject& m) {
        const HyperNodeMember& member = hn.spec.members[i];
        m.SetString("type", member.type);
        m.Edit("selector", [&](JsonObject& sel) {
          const MemberSelector& ms = member.selector;
          sel.EditIf("exactMatch", ms.exact_name.has_value(),
                     [&](JsonObject& e) { e.SetString("name", *ms.exact_name); });
          sel.EditIf("regexMatch", ms.regex_pattern.has_value(),
                     [&](JsonObject& e) { e.SetString("pattern", *ms.regex_pattern); });
          sel.EditIf("labelMatch", ms.label_match.has_value(),
                     [&](JsonObject& e) { EncodeLabelSelectorInto(*ms.label_match, e); });
        });
      });
    });
    o.Edit("status", [&](JsonObject& s) { s.SetInt("nodeCount", hn.status.node_count); });
  });
}

FieldErrors ValidateHyperNode(const HyperNode& hn) {
  FieldErrors errors;
  if (hn.spec.tier < 0) errors.push_back({"spec.tier", "must be greater than or equal to 0"});
  if (hn.spec.members.empty()) errors.push_back({"spec.members", "must have at least one member"});
  for (size_t i = 0; i < hn.spec.members.size(); ++i) {
    const HyperNodeMember& member = hn.spec.members[i];
    const std::string path = "spec.members[" + std::to_string(i) + "]";
    if (member.type != kHyperNodeMemberNode && member.type != kHyperNodeMemberHyperNode) {
      errors.push_back({path + ".type", "must be Node or HyperNode, not \"" + member.type + "\""});
    }
    ValidateSelector(member, path + ".selector", &errors);
  }
  return errors;
}

std::vector<std::vector<uint32_t>> NodesUnder(
    const std::vector<std::shared_ptr<const HyperNode>>& hypernodes,
    const std::vector<TopologyNode>& nodes) {
  std::unordered_map<std::string, uint32_t> node_index;
  for (uint32_t i = 0; i < nodes.size(); ++i) node_index.emplace(nodes[i].name, i);
  std::unordered_map<std::string, uint32_t> hn_index;
  for (uint32_t i = 0; i < hypernodes.size(); ++i) {
    hn_index.emplace(hypernodes[i]->metadata.name, i);
  }

  // The direct edges of each HyperNode: node indexes and HyperNode indexes.
  std::vector<std::vector<uint32_t>> direct_nodes(hypernodes.size());
  std::vector<std::vector<uint32_t>> children(hypernodes.size());
  RE2::Options options;
  options.set_log_errors(false);
  static const std::map<std::string, std::string> kNoLabels;
  for (uint32_t h = 0; h < hypernodes.size(); ++h) {
    for (const HyperNodeMember& m : hypernodes[h]->spec.members) {
      const MemberSelector& s = m.selector;
      if (m.type == kHyperNodeMemberHyperNode) {
        if (!s.exact_name) continue;
        if (auto it = hn_index.find(*s.exact_name); it != hn_index.end()) {
          children[h].push_back(it->second);
        }
      } else if (m.type == kHyperNodeMemberNode) {
        if (s.exact_name) {
          if (auto it = node_index.find(*s.exact_name); it != node_index.end()) {
            direct_nodes[h].push_back(it->second);
          }
        } else if (s.regex_pattern) {
          if (!RegexProblem(*s.regex_pattern).empty()) continue;
          RE2 re(*s.regex_pattern, options);
          for (uint32_t i = 0; i < nodes.size(); ++i) {
            if (RE2::PartialMatch(nodes[i].name, re)) direct_nodes[h].push_back(i);
          }
        } else if (s.label_match) {
          for (uint32_t i = 0; i < nodes.size(); ++i) {
            const auto& labels = nodes[i].labels ? *nodes[i].labels : kNoLabels;
            if (MatchesLabelSelector(*s.label_match, labels)) direct_nodes[h].push_back(i);
          }
        }
      }
    }
  }

  // Stamps instead of clearing sets: walk h marks what it has seen with h + 1.
  std::vector<uint32_t> node_seen(nodes.size(), 0), hn_seen(hypernodes.size(), 0);
  std::vector<std::vector<uint32_t>> under(hypernodes.size());
  std::vector<uint32_t> stack;
  for (uint32_t h = 0; h < hypernodes.size(); ++h) {
    const uint32_t stamp = h + 1;
    stack.assign(1, h);
    hn_seen[h] = stamp;
    while (!stack.empty()) {
      const uint32_t cur = stack.back();
      stack.pop_back();
      for (uint32_t n : direct_nodes[cur]) {
        if (node_seen[n] != stamp) {
          node_seen[n] = stamp;
          under[h].push_back(n);
        }
      }
      for (uint32_t c : children[cur]) {
        if (hn_seen[c] != stamp) {
          hn_seen[c] = stamp;
          stack.push_back(c);
        }
      }
    }
    std::sort(under[h].begin(), under[h].end());
  }
  return under;
}

}  // namespace tephra::api
