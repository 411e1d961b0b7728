#include "scheduler/actions/sub_groups.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "scheduler/actions/actions.h"

namespace tephra::scheduler {
std::vector<SubGroup> SubGroupsOf(const Session& ssn, size_t j) {
  const JobInfo& job = ssn.job(j);
  if (!job.pod_group || job.pod_group->spec.sub_group_policy.empty()) return {};
  const auto& policies = job.pod_group->spec.sub_group_policy;
  static const api::LabelSelector kEverything;
  // By (policy index, label values; shorter values first so "10" follows "9").
  using Key = std::tuple<size_t, std::vector<std::pair<size_t, std::string>>>;
  std::map<Key, SubGroup> groups;
  std::vector<const TaskInfo*> pending;
  for (const auto& [uid, t] : job.tasks) {
    const auto& labels = t.pod->metadata.labels;
    for (size_t p = 0; p < policies.size(); ++p) {
      const api::SubGroupPolicy& policy = policies[p];
      if (!MatchesLabelSelector(policy.label_selector.value_or(kEverything), labels)) continue;
      Key key{p, {}};
      std::string name = policy.name;
      for (const std::string& k : policy.match_label_keys) {
        auto it = labels.find(k);
        std::string value = it == labels.end() ? "" : it->second;
        std::get<1>(key).emplace_back(value.size(), value);
        name += "/" + value;
      }
      SubGroup& g = groups[key];
      g.policy = &policy;
      g.name = name;
      if (Schedulable(t)) g.pending.push_back(t.uid());
      if (HoldsPlace(t.status)) {
        if (auto n = ssn.NodeIndex(t.node)) g.held.push_back(*n);
      }
      break;
    }
  }
  std::vector<SubGroup> out;
  out.reserve(groups.size());
  for (auto& [key, g] : groups) {
    std::sort(g.pending.begin(), g.pending.end(), [&](const std::string& a, const std::string& b) {
      return ssn.TaskOrder(job.tasks.at(a), job.tasks.at(b));
    });
    std::sort(g.held.begin(), g.held.end());
    g.held.erase(std::unique(g.held.begin(), g.held.end()), g.held.end());
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace tephra::scheduler
