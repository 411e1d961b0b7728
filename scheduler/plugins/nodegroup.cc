// nodegroup: queues own groups of nodes (Volcano's nodegroup plugin). A node's group is its
// label volcano.sh/nodegroup-name; a queue's spec.affinity names the groups its jobs may use.
//   Predicate  a node fits a job of queue Q when it has a group that Q's affinity (required or
//              preferred) names or Q's preferred anti-affinity names, and Q's required
//              anti-affinity does not name it (preferred anti-affinity wins over required);
//              a node without the label fits nobody, and a labelled node fits no queue without
//              affinity — unless the argument strict is false, when unlabelled nodes are open
//              to queues without affinity. With enableHierarchy a queue without affinity takes
//              its nearest ancestor's. The Queue annotation volcano.sh/nodegroup-resource-limits
//              ({"group": {"cpu": "8"}}) caps what the queue's tasks may hold in each group.
//   NodeOrder  +100 for a required group, +50 for a preferred one (with enablePreferredOrder
//              50·(n−i)/n for the i-th of n), −1 for a preferred anti-affinity group.
// (docs/scheduler.md, Plugins: nodegroup)
#include <unordered_map>
#include <unordered_set>

#include <rapidjson/document.h>

#include "api/codec.h"
#include "api/labels.h"
#include "json/json.h"
#include "scheduler/framework/session.h"
#include "scheduler/plugins/plugins.h"

namespace tephra::scheduler {
namespace {

constexpr char kLabelMissing[] = "node group label not found";
constexpr char kAffinityMissing[] = "node group affinity not specified";
constexpr char kUnsatisfied[] = "node does not satisfy the node group affinity";
constexpr char kLimitInvalid[] = "node group resource limit annotation invalid";
constexpr char kLimitExceeded[] = "node group resource limit exceeded";
constexpr double kBaseScore = 100;

struct GroupAffinity {
  std::unordered_set<std::string> required, preferred, anti_required, anti_preferred;
  std::unordered_map<std::string, size_t> preferred_rank;  // first mention

  explicit GroupAffinity(const api::QueueAffinity& a) {
    if (a.node_group_affinity) {
      required.insert(a.node_group_affinity->required.begin(),
                      a.node_group_affinity->required.end());
      for (const auto& g : a.node_group_affinity->preferred) {
        preferred.insert(g);
        preferred_rank.try_emplace(g, preferred_rank.size());
      }
    }
    if (a.node_group_anti_affinity) {
      anti_required.insert(a.node_group_anti_affinity->required.begin(),
                           a.node_group_anti_affinity->required.end());
      anti_preferred.insert(a.node_group_anti_affinity->preferred.begin(),
                            a.node_group_anti_affinity->preferred.end());
    }
  }
  bool empty() const {
    return required.empty() && preferred.empty() && anti_required.empty() && anti_preferred.empty();
  }
  bool Admits(const std::string& group) const {
    if (anti_preferred.count(group) != 0) return true;
    if (anti_required.count(group) != 0) return false;
    return required.count(group) != 0 || preferred.count(group) != 0;
  }
  double Score(const std::string& group, bool ordered) const {
    if (anti_preferred.count(group) != 0) return -1;
    double score = required.count(group) != 0 ? kBaseScore : 0;
    if (auto it = preferred_rank.find(group); it != preferred_rank.end()) {
      double n = static_cast<double>(preferred_rank.size());
      score +=
          ordered ? 0.5 * kBaseScore * (n - static_cast<double>(it->second)) / n : 0.5 * kBaseScore;
    }
    return score;
  }
};

// What one queue's jobs are held to in this session.
struct QueueRules {
  const GroupAffinity* affinity = nullptr;  // own or inherited; null: none
  bool limits_invalid = false;
  std::unordered_map<std::string, api::Resources> limits;     // group -> cap (its dimensions)
  std::unordered_map<std::string, api::Resources> allocated;  // group -> held by the queue
};

// The annotation's JSON ({"group": ResourceList}); false when it cannot be read.
bool ParseLimits(const std::string& text, QueueRules* rules) {
  json::Document doc;
  if (!json::Parse(text, &doc).ok() || !doc.IsObject()) return false;
  json::Errors errors;
  json::Reader root(&doc, &errors);
  root.ForEachMember([&](std::string_view group, const json::Reader& list) {
    if (!list.is_object()) {
      list.Fail("expected a resource list");
      return;
    }
    rules->limits[std::string(group)] = api::Resources::FromList(api::DecodeResourceList(list));
  });
  return errors.empty();
}

class NodeGroupPlugin : public Plugin {
 public:
  NodeGroupPlugin(bool strict, bool ordered, bool hierarchy)
      : strict_(strict), ordered_(ordered), hierarchy_(hierarchy) {}
  std::string_view name() const override { return "nodegroup"; }

  void OnSessionOpen(Session& ssn) override {
    BuildQueueRules(ssn);
    by_job_.assign(ssn.job_count(), nullptr);
    for (size_t j = 0; j < ssn.job_count(); ++j) {
      auto it = rules_.find(ssn.job(j).queue);
      if (it != rules_.end()) by_job_[j] = &it->second;
    }
    for (size_t j = 0; j < ssn.job_count(); ++j) {
      QueueRules* rules = by_job_[j];
      if (rules == nullptr || rules->limits.empty()) continue;
      for (const auto& [uid, task] : ssn.job(j).tasks) {
        if (IsAllocatedStatus(task.status)) Hold(ssn, *rules, task, task.node, +1);
      }
    }
    Session* s = &ssn;
    ssn.AddPredicateFn(name(), [this, s](const TaskInfo& task, const NodeInfo& node) {
      return Predicate(*s, task, node);
    });
    ssn.AddNodeOrderFn(name(), [this, s](const TaskInfo& task, const NodeInfo& node) {
      const std::string* group = GroupOf(node);
      const QueueRules* rules = RulesOf(*s, task);
      if (group == nullptr || rules == nullptr || rules->affinity == nullptr) return 0.0;
      return rules->affinity->Score(*group, ordered_);
    });
    EventHandler h;
    h.allocate = [this, s](const TaskEvent& e) { Track(*s, e, +1); };
    h.deallocate = [this, s](const TaskEvent& e) { Track(*s, e, -1); };
    ssn.AddEventHandler(name(), h);
  }

  void OnSessionClose(Session&) override {
    rules_.clear();
    affinities_.clear();
    by_job_.clear();
  }

 private:
  void BuildQueueRules(const Session& ssn) {
    rules_.clear();
    affinities_.clear();
    for (const auto& [name, q] : ssn.queues()) {
      QueueRules& rules = rules_[name];
      if (q->queue == nullptr) continue;
      if (q->queue->spec.affinity) {
        rules.affinity =
            &affinities_.emplace(name, GroupAffinity(*q->queue->spec.affinity)).first->second;
      }
      std::string limits = q->queue->metadata.Annotation(api::kNodeGroupResourceLimitsAnnotation);
      if (!limits.empty()) rules.limits_invalid = !ParseLimits(limits, &rules);
    }
    if (!hierarchy_) return;
    // The nearest ancestor with affinity of its own; a missing parent or a cycle ends the walk.
    for (auto& [name, rules] : rules_) {
      if (rules.affinity != nullptr) continue;
      std::unordered_set<std::string> seen{name};
      const QueueInfo* q = ssn.queue(name);
      while (q != nullptr && !q->parent.empty() && seen.insert(q->parent).second) {
        auto own = affinities_.find(q->parent);
        if (own != affinities_.end()) {
          rules.affinity = &own->second;
          break;
        }
        q = ssn.queue(q->parent);
      }
    }
  }

  Fit Predicate(const Session& ssn, const TaskInfo& task, const NodeInfo& node) const {
    const QueueRules* rules = RulesOf(ssn, task);
    if (rules != nullptr && rules->limits_invalid) return Fit::Unresolvable(kLimitInvalid);
    const bool unset = rules == nullptr || rules->affinity == nullptr || rules->affinity->empty();
    const std::string* group = GroupOf(node);
    if (group == nullptr) {
      return !strict_ && unset ? Fit::Ok() : Fit::Unresolvable(kLabelMissing);
    }
    if (unset) return Fit::Unresolvable(kAffinityMissing);
    if (!rules->affinity->Admits(*group)) return Fit::Unresolvable(kUnsatisfied);
    if (!WithinLimit(*rules, *group, task.request())) return Fit::Unresolvable(kLimitExceeded);
    return Fit::Ok();
  }

  static bool WithinLimit(const QueueRules& rules, const std::string& group,
                          const api::Resources& request) {
    auto limit = rules.limits.find(group);
    if (limit == rules.limits.end()) return true;
    api::Resources after = request;
    if (auto held = rules.allocated.find(group); held != rules.allocated.end())
      after.Add(held->second);
    for (const auto& name : limit->second.Names()) {
      if (after.Get(name) > limit->second.Get(name)) return false;
    }
    return true;
  }

  void Track(const Session& ssn, const TaskEvent& e, int sign) {
    QueueRules* rules = RulesOf(ssn, e.task);
    if (rules != nullptr && !rules->limits.empty()) Hold(ssn, *rules, e.task, e.node, sign);
  }

  static void Hold(const Session& ssn, QueueRules& rules, const TaskInfo& task,
                   const std::string& node, int sign) {
    std::optional<size_t> n = ssn.NodeIndex(node);
    if (!n) return;
    const std::string* group = GroupOf(ssn.node(*n));
    if (group == nullptr) return;
    api::Resources& held = rules.allocated[*group];
    if (sign > 0) {
      held.Add(task.request());
    } else {
      held.SubAllowNegative(task.request());
    }
  }

  QueueRules* RulesOf(const Session& ssn, const TaskInfo& task) const {
    std::optional<size_t> j = ssn.JobIndex(task.job());
    return j && *j < by_job_.size() ? by_job_[*j] : nullptr;
  }

  static const std::string* GroupOf(const NodeInfo& node) {
    const auto& labels = node.labels();
    auto it = labels.find(std::string(api::kNodeGroupNameLabel));
    return it == labels.end() ? nullptr : &it->second;
  }

  const bool strict_, ordered_, hierarchy_;
  std::unordered_map<std::string, GroupAffinity> affinities_;  // queues' own
  std::unordered_map<std::string, QueueRules> rules_;          // by queue
  std::vector<QueueRules*> by_job_;                            // by session job index
};

}  // namespace

std::unique_ptr<Plugin> NewNodeGroupPlugin(const PluginOption& option) {
  return std::make_unique<NodeGroupPlugin>(option.arguments.GetBool("strict", true),
                                           option.arguments.GetBool("enablePreferredOrder", false),
                                           option.enable_hierarchy.value_or(false));
}

}  // namespace tephra::scheduler
