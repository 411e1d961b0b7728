#include "scheduler/actions/topology_search.h"

#include <algorithm>
#include <map>

#include "api/labels.h"
#include "scheduler/actions/actions.h"

namespace tephra::scheduler {
namespace {

bool Covers(const HyperNodeDomain& outer, const std::vector<size_t>& nodes) {
  for (size_t n : nodes) {
    if (!outer.member[n]) return false;
  }
  return true;
}

// How many times `free` covers `need` on its scarcest resource.
double Coverage(const api::Resources& free, const api::Resources& need) {
  double least = -1;
  for (const std::string& name : need.Names()) {
    int64_t want = need.Get(name);
    if (want <= 0) continue;
    double ratio = static_cast<double>(free.Get(name)) / static_cast<double>(want);
    if (least < 0 || ratio < least) least = ratio;
  }
  return least < 0 ? 0 : least;
}

// `r` on `names` only, for messages that speak of what the job asks for.
api::Resources On(const api::Resources& r, const std::vector<std::string>& names) {
  api::Resources out;
  for (const std::string& name : names) out.Set(name, r.Get(name));
  return out;
}

// `free` less `need` on the resources `need` names, never below zero.
api::Resources Less(const api::Resources& free, const api::Resources& need) {
  api::Resources out = free;
  for (const std::string& name : need.Names()) {
    out.Set(name, std::max<int64_t>(0, free.Get(name) - need.Get(name)));
  }
  return out;
}

}  // namespace

TopologySearch::TopologySearch(Session& ssn, const TopologyView& topology, size_t job,
                               const api::NetworkTopologySpec& spec, const SearchScope* scope)
    : ssn_(ssn), topology_(topology), job_(job), hard_(spec.mode != "soft") {
  const JobInfo& info = ssn.job(job);
  limit_ = topology.tree()->top_tier();
  if (hard_) {
    if (spec.highest_tier_allowed) {
      limit_ = *spec.highest_tier_allowed;
    } else if (!spec.highest_tier_name.empty()) {
      std::optional<int64_t> tier = topology.tree()->TierNamed(spec.highest_tier_name);
      if (!tier) {
        problem_ = "networkTopology.highestTierName " + spec.highest_tier_name +
                   ": no HyperNode has this tierName";
        return;
      }
      limit_ = *tier;
    }
  }

  if (scope != nullptr) who_ = "sub-group " + scope->name + " ";
  std::vector<size_t> occupied = scope ? scope->held : ssn.NodesHeldBy(job);
  was_placed_ = !occupied.empty();
  const HyperNodeDomain* anchor = nullptr;
  if (hard_ && info.pod_group && scope == nullptr) {
    anchor =
        topology.Find(info.pod_group->metadata.Annotation(api::kJobAllocatedHyperNodeAnnotation));
  }
  for (const HyperNodeDomain& d : topology.domains()) {
    if (d.info->tier > limit_ || d.nodes.empty() || !Covers(d, occupied)) continue;
    if (anchor != nullptr && !Covers(d, anchor->nodes)) continue;
    if (tiers_.empty() || tiers_.back().front()->info->tier != d.info->tier) tiers_.emplace_back();
    tiers_.back().push_back(&d);
  }

  // What the job still needs: its next tasks in TaskOrder up to its gang (at least one), or all
  // of a sub-gang's, and a lower bound of that on each resource (the smallest requests), for
  // Ranked.
  std::vector<const TaskInfo*> pending;
  if (scope != nullptr) {
    for (const std::string& uid : scope->pending) pending.push_back(&info.tasks.at(uid));
  } else {
    for (const auto& [uid, t] : info.tasks) {
      if (Schedulable(t)) pending.push_back(&t);
    }
    std::sort(pending.begin(), pending.end(),
              [&ssn](const TaskInfo* a, const TaskInfo* b) { return ssn.TaskOrder(*a, *b); });
  }
  size_t count = scope ? pending.size()
                       : static_cast<size_t>(std::max<int32_t>(
                             1, info.min_available - info.ReadyCount() - info.WaitingCount()));
  count = std::min(count, pending.size());
  if (count == 0) return;
  std::map<std::string, std::vector<int64_t>> requests;
  for (size_t k = 0; k < pending.size(); ++k) {
    api::Resources r = WithoutPods(pending[k]->request());
    if (k < count) need_.Add(r);
    for (const std::string& name : r.Names()) requests[name].push_back(r.Get(name));
  }
  for (auto& [name, values] : requests) {
    if (values.size() < count) continue;  // some tasks do not ask for it
    std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(count - 1),
                     values.end());
    int64_t sum = 0;
    for (size_t k = 0; k < count; ++k) sum += values[k];
    least_need_.Set(name, sum);
  }
}

std::vector<const HyperNodeDomain*> TopologySearch::Ranked(
    const std::vector<const HyperNodeDomain*>& tier, std::vector<std::string>* passed) {
  struct Candidate {
    const HyperNodeDomain* domain;
    double score;
  };
  std::vector<Candidate> candidates;
  const bool limit_tier =
      !tier.empty() && tier.front()->info->tier == tiers_.back().front()->info->tier;
  for (const HyperNodeDomain* d : tier) {
    const api::Resources& free = topology_.Free(*d);
    if (limit_tier &&
        (roomiest_ == nullptr || Coverage(free, need_) > Coverage(roomiest_free_, need_))) {
      roomiest_ = d;
      roomiest_free_ = free;
    }
    if (!least_need_.FitsIn(free)) {
      passed->push_back(d->info->name + " lacks room");
      continue;
    }
    HyperNodeTrial estimate;
    estimate.hypernode = d->info;
    estimate.allocatable = topology_.Allocatable(*d);
    estimate.idle_after = Less(free, need_);
    if (d->parent != nullptr) {
      estimate.parent = d->parent->info;
      estimate.parent_allocatable = topology_.Allocatable(*d->parent);
      estimate.parent_idle_after = Less(topology_.Free(*d->parent), need_);
    }
    candidates.push_back({d, ssn_.HyperNodeScore(ssn_.job(job_), estimate)});
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate& a, const Candidate& b) { return a.score > b.score; });
  std::vector<const HyperNodeDomain*> out;
  out.reserve(candidates.size());
  for (const Candidate& c : candidates) out.push_back(c.domain);
  return out;
}

void TopologySearch::Placed(const HyperNodeDomain& d, const std::vector<std::string>& others) {
  if (was_placed_) return;
  std::string note =
      who_ + "placed within " +
      (d.info->virtual_top ? std::string("the whole cluster") : "HyperNode " + d.info->name) +
      " (tier " + std::to_string(d.info->tier) + ")";
  if (!others.empty()) {
    note += "; not chosen: ";
    for (size_t k = 0; k < others.size(); ++k) note += (k ? ", " : "") + others[k];
  }
  ssn_.AddJobNote(job_, {"network-topology-aware", note, ""});
}

std::string TopologySearch::Refusal() const {
  const std::vector<std::string> names = need_.Names();
  std::string out = who_ + "needs " + need_.ToString() + " within tier " + std::to_string(limit_) +
                    (hard_ ? " (network topology, hard)" : "");
  if (tiers_.empty()) {
    return out + "; no HyperNode within that tier" +
           (was_placed_ ? " holds the nodes its running tasks are on" : " has nodes");
  }
  int64_t tier = tiers_.back().front()->info->tier;
  if (roomiest_ == nullptr) return out;
  std::string free = On(roomiest_free_, names).ToString();
  if (Coverage(roomiest_free_, need_) >= 1) {
    return out + "; no tier-" + std::to_string(tier) + " HyperNode holds the gang on its nodes" +
           " (the largest, " + roomiest_->info->name + ", has " + free + " free in all)";
  }
  return out + "; the largest tier-" + std::to_string(tier) + " HyperNode, " +
         roomiest_->info->name + ", has " + free + " free";
}

}  // namespace tephra::scheduler
