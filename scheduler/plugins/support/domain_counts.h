// Pod counts per label domain (the value a node label such as zone or hostname takes: a
// "topology domain" in Kubernetes' words), for inter-pod affinity and topology spread; not the
// HyperNodes of network topology (framework/topology_view.h). Built once per session from the
// nodes' pods and kept current as the session places and removes tasks.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>

#include "api/core.h"
#include "scheduler/framework/session.h"

namespace tephra::scheduler {

// Which namespaces a pod-affinity term (or spread constraint) looks at.
struct NamespaceScope {
  bool all = false;
  std::set<std::string> names;
  std::optional<api::LabelSelector> selector;  // namespaces whose labels match

  // A term's scope, relative to the namespace of the pod that carries the term.
  static NamespaceScope ForTerm(const api::PodAffinityTerm& term, const std::string& own_namespace);
  bool Matches(const Session& session, const std::string& ns) const;
};

class DomainCounter {
 public:
  using NodeFilter = std::function<bool(const NodeInfo& node)>;

  DomainCounter(std::string topology_key, api::LabelSelector selector, NamespaceScope scope,
                NodeFilter node_filter = nullptr);

  // Counts every (non-releasing) pod on the session's nodes.
  void Build(const Session& session);
  // A task arrived on (sign +1) or left (-1) `node`.
  void Update(const Session& session, const PodInfo& pod, const NodeInfo& node, int sign);

  const std::string& topology_key() const { return key_; }
  // nullptr when the node lacks the topology label.
  const std::string* DomainOf(const NodeInfo& node) const;
  int Count(const std::string& domain) const;
  int Total() const { return total_; }
  // Domains that exist on eligible nodes (even with 0 pods).
  const std::unordered_map<std::string, int>& domains() const { return counts_; }
  bool Matches(const Session& session, const PodInfo& pod) const;

 private:
  std::string key_;
  api::LabelSelector selector_;
  NamespaceScope scope_;
  NodeFilter node_filter_;
  std::unordered_map<std::string, int> counts_;
  int total_ = 0;
};

// The DomainCounters one plugin uses in a session: each built on first use and kept current as
// the session moves tasks. A counter belongs to a term or constraint (by address), the
// namespace it is seen from, and `extra`, whatever else its selector depends on.
class DomainCounters {
 public:
  DomainCounter& Get(const Session& session, const void* address, const std::string& ns,
                     const std::string& extra,
                     const std::function<std::unique_ptr<DomainCounter>()>& make);
  // The counter of a pod-affinity term, seen from namespace `ns`.
  DomainCounter& ForTerm(const Session& session, const api::PodAffinityTerm& term,
                         const std::string& ns);
  // A task arrived on (sign +1) or left (-1) `node`.
  void Update(const Session& session, const PodInfo& pod, const NodeInfo& node, int sign);
  bool empty() const { return counters_.empty(); }

 private:
  std::unordered_map<std::string, std::unique_ptr<DomainCounter>> counters_;
};

}  // namespace tephra::scheduler
