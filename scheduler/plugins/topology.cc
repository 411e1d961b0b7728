#include "scheduler/plugins/topology.h"

#include "scheduler/plugins/matching.h"

namespace tephra::scheduler {

NamespaceScope NamespaceScope::ForTerm(const api::PodAffinityTerm& term,
                                       const std::string& own_namespace) {
  NamespaceScope s;
  s.names.insert(term.namespaces.begin(), term.namespaces.end());
  if (term.namespace_selector) {
    // An empty namespaceSelector ({}) selects every namespace.
    if (term.namespace_selector->match_labels.empty() &&
        term.namespace_selector->match_expressions.empty()) {
      s.all = true;
    } else {
      s.selector = term.namespace_selector;
    }
  } else if (s.names.empty()) {
    s.names.insert(own_namespace);
  }
  return s;
}

bool NamespaceScope::Matches(const Session& session, const std::string& ns) const {
  if (all || names.count(ns) != 0) return true;
  if (!selector) return false;
  const auto* labels = session.NamespaceLabels(ns);
  static const Labels kNone;
  return MatchesLabelSelector(*selector, labels != nullptr ? *labels : kNone);
}

DomainCounter::DomainCounter(std::string topology_key, api::LabelSelector selector,
                             NamespaceScope scope, NodeFilter node_filter)
    : key_(std::move(topology_key)),
      selector_(std::move(selector)),
      scope_(std::move(scope)),
      node_filter_(std::move(node_filter)) {}

const std::string* DomainCounter::DomainOf(const NodeInfo& node) const {
  const auto& labels = node.labels();
  auto it = labels.find(key_);
  return it == labels.end() ? nullptr : &it->second;
}

bool DomainCounter::Matches(const Session& session, const PodInfo& pod) const {
  return scope_.Matches(session, pod.metadata.namespace_) &&
         MatchesLabelSelector(selector_, pod.metadata.labels);
}

void DomainCounter::Build(const Session& session) {
  counts_.clear();
  total_ = 0;
  for (size_t i = 0; i < session.node_count(); ++i) {
    const NodeInfo& node = session.node(i);
    const std::string* domain = DomainOf(node);
    if (domain == nullptr) continue;
    if (node_filter_ && !node_filter_(node)) continue;
    int& count = counts_[*domain];
    for (const auto& [uid, t] : node.tasks) {
      if (t.status == TaskStatus::kReleasing || !Matches(session, *t.pod)) continue;
      ++count;
      ++total_;
    }
  }
}

void DomainCounter::Update(const Session& session, const PodInfo& pod, const NodeInfo& node,
                           int sign) {
  const std::string* domain = DomainOf(node);
  if (domain == nullptr) return;
  if (node_filter_ && !node_filter_(node)) return;
  if (!Matches(session, pod)) return;
  counts_[*domain] += sign;
  total_ += sign;
}

int DomainCounter::Count(const std::string& domain) const {
  auto it = counts_.find(domain);
  return it == counts_.end() ? 0 : it->second;
}

}  // namespace tephra::scheduler
