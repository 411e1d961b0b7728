// Where allocate may place a job with a network topology: the HyperNodes within its tier
// limit, tier by tier, and what it says when none holds the job (docs/scheduler.md,
// "Network topology").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "api/batch.h"
#include "scheduler/framework/session.h"
#include "scheduler/framework/topology_view.h"

namespace tephra::scheduler {

// A search for part of a job: one sub-gang, placed whole.
struct SearchScope {
  std::string name;                  // for messages: "worker/1"
  std::vector<std::string> pending;  // its tasks to place, in order
  std::vector<size_t> held;          // the nodes its placed tasks hold
};

class TopologySearch {
 public:
  // For the whole job, or for `scope` (then neither the job's other nodes nor its PodGroup's
  // allocated HyperNode bind the search).
  TopologySearch(Session& ssn, const TopologyView& topology, size_t job,
                 const api::NetworkTopologySpec& spec, const SearchScope* scope = nullptr);

  // Why the job cannot be placed at all (a tier name no HyperNode has); empty otherwise.
  const std::string& problem() const { return problem_; }
  // The candidate HyperNodes by tier, lowest first, up to the tier limit. A candidate holds
  // every node the job already occupies, and in hard mode the HyperNode it was given before,
  // so a growing or restarted job stays where it is.
  const std::vector<std::vector<const HyperNodeDomain*>>& Tiers() const { return tiers_; }
  // The HyperNodes of `tier` worth a trial placement, best first: those whose free resources
  // (counting what is being released) cover the least the job still needs, ranked by the
  // HyperNodeOrder plugins' score of what they would have left once it is placed (their free
  // resources less what it needs), ties in name order. The others are added to `passed` with
  // why, for the explanation.
  std::vector<const HyperNodeDomain*> Ranked(const std::vector<const HyperNodeDomain*>& tier,
                                             std::vector<std::string>* passed);
  // The job was placed in `d` (the others of its tier, with why they were not chosen, in
  // `others`): the first time, an explanation.
  void Placed(const HyperNodeDomain& d, const std::vector<std::string>& others);
  // Why no candidate holds the job: "needs cpu 12 within tier 1; the largest tier-1 HyperNode,
  // rack-a, has cpu 8 free".
  std::string Refusal() const;

 private:
  Session& ssn_;
  const TopologyView& topology_;
  size_t job_;
  bool hard_;
  int64_t limit_ = 0;
  std::string problem_;
  std::string who_;          // "sub-group worker/1 " for a scope
  bool was_placed_ = false;  // the job occupied nodes before this turn
  std::vector<std::vector<const HyperNodeDomain*>> tiers_;
  api::Resources least_need_;  // a lower bound of what the job still needs
  api::Resources need_;        // what its next tasks, up to its gang, request
  // The candidate of the limit tier with the most free resources, for the refusal.
  const HyperNodeDomain* roomiest_ = nullptr;
  api::Resources roomiest_free_;
};

}  // namespace tephra::scheduler
