#include "scheduler/plugins/support/matching.h"

#include <algorithm>
#include <cstdlib>

namespace tephra::scheduler {
namespace {

bool Contains(const std::vector<std::string>& values, const std::string& v) {
  return std::find(values.begin(), values.end(), v) != values.end();
}

bool ParseInt(const std::string& s, long long* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  *out = std::strtoll(s.c_str(), &end, 10);
  return end != nullptr && *end == '\0';
}

bool MatchesRequirement(const api::NodeSelectorRequirement& r, const std::string* value) {
  if (r.op == "In") return value != nullptr && Contains(r.values, *value);
  if (r.op == "NotIn") return value == nullptr || !Contains(r.values, *value);
  if (r.op == "Exists") return value != nullptr;
  if (r.op == "DoesNotExist") return value == nullptr;
  if (r.op == "Gt" || r.op == "Lt") {
    long long have = 0, want = 0;
    if (value == nullptr || r.values.size() != 1 || !ParseInt(*value, &have) ||
        !ParseInt(r.values[0], &want)) {
      return false;
    }
    return r.op == "Gt" ? have > want : have < want;
  }
  return false;
}

}  // namespace

bool MatchesNodeSelectorTerm(const api::NodeSelectorTerm& term, const Labels& node_labels,
                             const std::string& node_name) {
  if (term.match_expressions.empty() && term.match_fields.empty()) return false;
  for (const auto& r : term.match_expressions) {
    auto it = node_labels.find(r.key);
    if (!MatchesRequirement(r, it == node_labels.end() ? nullptr : &it->second)) return false;
  }
  for (const auto& r : term.match_fields) {
    if (r.key != "metadata.name") return false;
    if (!MatchesRequirement(r, &node_name)) return false;
  }
  return true;
}

bool MatchesNodeSelectorAndAffinity(const std::map<std::string, std::string>& node_selector,
                                    const std::optional<api::Affinity>& affinity,
                                    const Labels& node_labels, const std::string& node_name) {
  for (const auto& [k, v] : node_selector) {
    auto it = node_labels.find(k);
    if (it == node_labels.end() || it->second != v) return false;
  }
  if (!affinity || !affinity->node_affinity || !affinity->node_affinity->required) return true;
  for (const auto& term : *affinity->node_affinity->required) {
    if (MatchesNodeSelectorTerm(term, node_labels, node_name)) return true;
  }
  return false;
}

bool Tolerates(const api::Toleration& t, const api::Taint& taint) {
  if (!t.effect.empty() && t.effect != taint.effect) return false;
  if (t.op == "Exists") return t.key.empty() || t.key == taint.key;
  // Equal (the default): the key must be given and both key and value match.
  return t.key == taint.key && t.value == taint.value;
}

const api::Taint* UntoleratedTaint(const std::vector<api::Taint>& taints,
                                   const std::vector<api::Toleration>& tolerations,
                                   const std::vector<std::string_view>& effects) {
  for (const auto& taint : taints) {
    if (std::find(effects.begin(), effects.end(), taint.effect) == effects.end()) continue;
    bool tolerated = false;
    for (const auto& t : tolerations) {
      if (Tolerates(t, taint)) {
        tolerated = true;
        break;
      }
    }
    if (!tolerated) return &taint;
  }
  return nullptr;
}

}  // namespace tephra::scheduler
