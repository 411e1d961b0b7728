#include "scheduler/plugins/support/domain_counts.h"

#include <cstdint>

#include "scheduler/plugins/support/matching.h"

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

DomainCounter& DomainCounters::Get(const Session& session, const void* address,
                                   const std::string& ns, const std::string& extra,
                                   const std::function<std::unique_ptr<DomainCounter>()>& make) {
  std::string key = std::to_string(reinterpret_cast<uintptr_t>(address)) + "|" + ns + "|" + extra;
  auto it = counters_.find(key);
  if (it == counters_.end()) {
    auto counter = make();
    counter->Build(session);
    it = counters_.emplace(std::move(key), std::move(counter)).first;
  }
  return *it->second;
}

DomainCounter& DomainCounters::ForTerm(const Session& session, const api::PodAffinityTerm& term,
                                       const std::string& ns) {
  return Get(session, &term, ns, "", [&] {
    return std::make_unique<DomainCounter>(term.topology_key,
                                           term.label_selector.value_or(api::LabelSelector{}),
                                           NamespaceScope::ForTerm(term, ns));
  });
}

void DomainCounters::Update(const Session& session, const PodInfo& pod, const NodeInfo& node,
                            int sign) {
  for (auto& [key, counter] : counters_) counter->Update(session, pod, node, sign);
}

}  // namespace tephra::scheduler
