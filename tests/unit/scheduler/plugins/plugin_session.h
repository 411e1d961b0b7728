// One open session over a Harness's cluster with only the plugins under test configured, so a
// plugin test asks the session's combined answers (orders, predicates, scores, votes, victims)
// what those plugins say. It uses only what actions see of a Session, never its internals.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "scheduler/framework/registry.h"
#include "scheduler/framework/session.h"
#include "tests/unit/scheduler/harness.h"

namespace tephra::scheduler::testing {

// A plugin for tests that offers every candidate as a victim, so that the veto rules (gang,
// conformance, pdb), which never decide alone, have something to veto.
inline constexpr char kOfferAllPlugin[] = "offer-all";

class PluginSession {
 public:
  // `tiers_yaml` is the tiers list, e.g. "- plugins:\n  - name: drf\n". Opens the session on a
  // snapshot of the harness's cache taken now.
  PluginSession(Harness& h, const std::string& tiers_yaml);
  ~PluginSession();
  PluginSession(const PluginSession&) = delete;
  PluginSession& operator=(const PluginSession&) = delete;

  Session& session() { return *session_; }
  Session* operator->() { return session_.get(); }

  // Lookups by name. References are valid until the next change to the session (Place, Evict).
  size_t JobAt(const std::string& key) const;
  const JobInfo& Job(const std::string& key) const;
  const QueueInfo& Queue(const std::string& name) const;
  const TaskInfo& Task(const std::string& pod_key) const;  // "ns/name"
  size_t NodeAt(const std::string& name) const;
  const NodeInfo& Node(const std::string& name) const;

  Fit Predicate(const std::string& pod_key, const std::string& node);
  // The session's total score of `pod_key` on each node, in the order given.
  std::vector<double> Scores(const std::string& pod_key, const std::vector<std::string>& nodes);
  // Names of the candidate pods the session lets `preemptor` evict.
  std::vector<std::string> Preemptable(const std::string& preemptor,
                                       const std::vector<std::string>& candidates);
  std::vector<std::string> Reclaimable(const std::string& preemptor,
                                       const std::vector<std::string>& candidates);

  // Places (Allocate) or evicts a pod in this session and keeps the change, as an action's
  // committed statement would: plugins' event handlers see it.
  void Place(const std::string& pod_key, const std::string& node);
  void Pipeline(const std::string& pod_key, const std::string& node);
  void Evict(const std::string& pod_key);
  // Takes a placement back, as a discarded statement would.
  void Unplace(const std::string& pod_key);
  // The plugins' pre-bind steps for a placed pod, as its commit would ask them.
  std::vector<PreBindStep> PreBind(const std::string& pod_key);
  // Runs the plugins' OnSessionClose (once).
  void Close();

 private:
  std::vector<const TaskInfo*> Tasks(const std::vector<std::string>& keys) const;
  static std::vector<std::string> Names(const std::vector<const TaskInfo*>& tasks);

  Registry registry_;
  SchedulerConf conf_;
  std::unique_ptr<Session> session_;
  bool closed_ = false;
};

}  // namespace tephra::scheduler::testing
