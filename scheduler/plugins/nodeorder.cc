// nodeorder: kube-scheduler's scoring, each score 0..100 times its weight.
//   leastrequested.weight (1)    free cpu and memory after placing the pod
//   mostrequested.weight (0)     used cpu and memory after placing the pod
//   balancedresource.weight (1)  how much placing the pod evens out the node's cpu and memory
//                                use (75: no change; less when it unbalances them), as the
//                                Volcano baseline scores it (docs/scheduler.md, nodeorder)
// The three resource scores are whole numbers, computed as Volcano computes them, so that
// near-ties between nodes (binpack's score against these) fall the same way.
//   nodeaffinity.weight (2)      preferred node affinity terms matched (normalised)
//   tainttoleration.weight (3)   fewer untolerated PreferNoSchedule taints (normalised)
//   podaffinity.weight (2)       preferred pod (anti-)affinity (normalised)
//   podtopologyspread.weight (2) ScheduleAnyway spread constraints, emptier domains first
// imagelocality.weight is accepted; simulated nodes report no images, so it scores nothing.
#include <algorithm>
#include <cmath>
#include <memory>
#include <unordered_map>

#include "scheduler/framework/session.h"
#include "scheduler/plugins/plugins.h"
#include "scheduler/plugins/support/domain_counts.h"
#include "scheduler/plugins/support/matching.h"

namespace tephra::scheduler {
namespace {

constexpr double kMaxScore = 100;

double Fraction(int64_t used, int64_t capacity) {
  if (capacity <= 0) return 1;
  return std::min(1.0, static_cast<double>(used) / static_cast<double>(capacity));
}

int64_t LeastRequested(int64_t requested, int64_t capacity) {
  if (capacity <= 0 || requested > capacity) return 0;
  return (capacity - requested) * 100 / capacity;
}

int64_t MostRequested(int64_t requested, int64_t capacity) {
  if (capacity <= 0) return 0;
  return std::min(requested, capacity) * 100 / capacity;
}

// 100 when cpu and memory are used in equal proportion: the standard deviation of the two
// fractions used, taken off (a resource the node has none of does not count).
int64_t Balance(int64_t cpu_used, int64_t cpu_cap, int64_t mem_used, int64_t mem_cap) {
  if (cpu_cap <= 0 || mem_cap <= 0) return 100;
  return static_cast<int64_t>(
      (1 - std::fabs(Fraction(cpu_used, cpu_cap) - Fraction(mem_used, mem_cap)) / 2) * kMaxScore);
}

// The change in balance the pod brings, mapped onto 0..100 with 75 for none: measured on the
// Volcano baseline, whose balanced-allocation score is this rather than the balance after
// placement alone (docs/scheduler.md, nodeorder).
int64_t BalanceChange(int64_t before, int64_t after) {
  return (150 + after - before) / 2;
}

// Scales raw scores to 0..100 by the largest (reverse: fewer is better).
void Normalize(std::vector<double>* raw, bool reverse) {
  double max = 0;
  for (double v : *raw) max = std::max(max, v);
  for (double& v : *raw) {
    double s = max > 0 ? v * kMaxScore / max : 0;
    v = reverse ? kMaxScore - s : s;
  }
}

class NodeOrderPlugin : public Plugin {
 public:
  explicit NodeOrderPlugin(const Arguments& a)
      : least_(static_cast<double>(a.GetInt("leastrequested.weight", 1))),
        most_(static_cast<double>(a.GetInt("mostrequested.weight", 0))),
        balanced_(static_cast<double>(a.GetInt("balancedresource.weight", 1))),
        node_affinity_(static_cast<double>(a.GetInt("nodeaffinity.weight", 2))),
        taints_(static_cast<double>(a.GetInt("tainttoleration.weight", 3))),
        pod_affinity_(static_cast<double>(a.GetInt("podaffinity.weight", 2))),
        spread_(static_cast<double>(a.GetInt("podtopologyspread.weight", 2))) {}

  std::string_view name() const override { return "nodeorder"; }
  // Scores Tephra does not compute: image locality, and selector spread of older Volcanos.
  std::vector<std::string_view> RecognisedArguments() const override {
    return {"imagelocality.weight", "selectorspread.weight"};
  }

  void OnSessionOpen(Session& ssn) override {
    session_ = &ssn;
    if (least_ != 0 || most_ != 0 || balanced_ != 0) {
      ssn.AddNodeOrderFn(name(), [this](const TaskInfo& task, const NodeInfo& node) {
        return ResourceScore(task, node);
      });
    }
    ssn.AddBatchNodeOrderFn(
        name(), [this](const TaskInfo& task, const std::vector<const NodeInfo*>& nodes,
                       std::vector<double>* scores) { BatchScore(task, nodes, scores); });
    EventHandler h;
    h.allocate = [this](const TaskEvent& e) { OnMove(e.task, e.node, +1); };
    h.deallocate = [this](const TaskEvent& e) { OnMove(e.task, e.node, -1); };
    ssn.AddEventHandler(name(), h);
  }

 private:
  double ResourceScore(const TaskInfo& task, const NodeInfo& node) const {
    const api::Resources& req = task.request();
    const int64_t cpu_used = node.used.milli_cpu() + req.milli_cpu();
    const int64_t mem_used = node.used.memory() + req.memory();
    const int64_t cpu_cap = node.allocatable.milli_cpu(), mem_cap = node.allocatable.memory();
    double score = 0;
    if (least_ != 0) {
      score +=
          least_ * static_cast<double>(
                       (LeastRequested(cpu_used, cpu_cap) + LeastRequested(mem_used, mem_cap)) / 2);
    }
    if (most_ != 0) {
      score +=
          most_ * static_cast<double>(
                      (MostRequested(cpu_used, cpu_cap) + MostRequested(mem_used, mem_cap)) / 2);
    }
    if (balanced_ != 0) {
      int64_t before = Balance(node.used.milli_cpu(), cpu_cap, node.used.memory(), mem_cap);
      int64_t after = Balance(cpu_used, cpu_cap, mem_used, mem_cap);
      score += balanced_ * static_cast<double>(BalanceChange(before, after));
    }
    return score;
  }

  void BatchScore(const TaskInfo& task, const std::vector<const NodeInfo*>& nodes,
                  std::vector<double>* scores) {
    const SchedulingSpec& spec = *task.pod->spec;
    std::vector<double> raw(nodes.size());
    const auto& affinity = spec.affinity;
    if (node_affinity_ != 0 && affinity && affinity->node_affinity &&
        !affinity->node_affinity->preferred.empty()) {
      for (size_t i = 0; i < nodes.size(); ++i) {
        raw[i] = 0;
        for (const auto& p : affinity->node_affinity->preferred) {
          if (MatchesNodeSelectorTerm(p.preference, nodes[i]->labels(), nodes[i]->name))
            raw[i] += p.weight;
        }
      }
      Add(raw, false, node_affinity_, scores);
    }
    if (taints_ != 0) {
      bool any = false;
      for (size_t i = 0; i < nodes.size(); ++i) {
        raw[i] = 0;
        for (const auto& taint : nodes[i]->taints()) {
          if (taint.effect != "PreferNoSchedule") continue;
          bool tolerated =
              std::any_of(spec.tolerations.begin(), spec.tolerations.end(),
                          [&](const api::Toleration& t) { return Tolerates(t, taint); });
          if (!tolerated) raw[i] += 1;
        }
        any = any || raw[i] > 0;
      }
      // No taints anywhere: every node gets the full score, as kube-scheduler does.
      if (any) {
        Add(raw, true, taints_, scores);
      } else {
        for (double& s : *scores) s += taints_ * kMaxScore;
      }
    }
    if (pod_affinity_ != 0 && affinity && (affinity->pod_affinity || affinity->pod_anti_affinity)) {
      bool any = false;
      for (size_t i = 0; i < nodes.size(); ++i) {
        raw[i] = 0;
        if (affinity->pod_affinity) {
          for (const auto& w : affinity->pod_affinity->preferred) {
            raw[i] += w.weight * DomainCount(w.term, task, *nodes[i]);
          }
        }
        if (affinity->pod_anti_affinity) {
          for (const auto& w : affinity->pod_anti_affinity->preferred) {
            raw[i] -= w.weight * DomainCount(w.term, task, *nodes[i]);
          }
        }
        any = any || raw[i] != 0;
      }
      if (any) {
        double min = *std::min_element(raw.begin(), raw.end());
        for (double& v : raw) v -= min;  // shift so the least preferred node scores 0
        Add(raw, false, pod_affinity_, scores);
      }
    }
    if (spread_ != 0 && !spec.spread.empty()) {
      bool any_soft = false;
      for (size_t i = 0; i < nodes.size(); ++i) {
        raw[i] = 0;
        for (const auto& c : spec.spread) {
          if (c.when_unsatisfiable != "ScheduleAnyway") continue;
          any_soft = true;
          DomainCounter& counter = SpreadCounter(c, task);
          const std::string* domain = counter.DomainOf(*nodes[i]);
          raw[i] += domain == nullptr ? counter.Total() + 1 : counter.Count(*domain);
        }
      }
      if (any_soft) Add(raw, true, spread_, scores);
    }
  }

  static void Add(std::vector<double>& raw, bool reverse, double weight,
                  std::vector<double>* scores) {
    Normalize(&raw, reverse);
    for (size_t i = 0; i < raw.size(); ++i) (*scores)[i] += weight * raw[i];
  }

  double DomainCount(const api::PodAffinityTerm& term, const TaskInfo& task, const NodeInfo& node) {
    DomainCounter& c = counters_.ForTerm(*session_, term, task.namespace_());
    const std::string* domain = c.DomainOf(node);
    return domain == nullptr ? 0 : c.Count(*domain);
  }

  DomainCounter& SpreadCounter(const api::TopologySpreadConstraint& c, const TaskInfo& task) {
    return counters_.Get(*session_, &c, task.namespace_(), "", [&] {
      NamespaceScope scope;
      scope.names.insert(task.namespace_());
      return std::make_unique<DomainCounter>(
          c.topology_key, c.label_selector.value_or(api::LabelSelector{}), scope);
    });
  }

  void OnMove(const TaskInfo& task, const std::string& node_name, int sign) {
    if (counters_.empty()) return;
    auto idx = session_->NodeIndex(node_name);
    if (!idx) return;
    counters_.Update(*session_, *task.pod, session_->node(*idx), sign);
  }

  const double least_, most_, balanced_, node_affinity_, taints_, pod_affinity_, spread_;
  Session* session_ = nullptr;
  DomainCounters counters_;
};

}  // namespace

std::unique_ptr<Plugin> NewNodeOrderPlugin(const PluginOption& option) {
  return std::make_unique<NodeOrderPlugin>(option.arguments);
}

}  // namespace tephra::scheduler
