// predicates: whether a node can take a pod, as kube-scheduler's filters decide.
//   static (cached per spec and node): node unschedulable, nodeSelector and required node
//     affinity, NoSchedule/NoExecute taints, bound claims' volumes (node affinity, zone)
//   dynamic: host ports, required inter-pod affinity and anti-affinity (including existing
//     pods' anti-affinity), topology spread constraints with DoNotSchedule, ReadWriteOncePod
//     claims, CSI volume limits, volumes for unbound claims (support/volumes.h)
// Arguments: predicate.NodeAffinityEnable, predicate.NodePortsEnable,
// predicate.TaintTolerationEnable, predicate.PodAffinityEnable,
// predicate.PodTopologySpreadEnable, predicate.VolumeBindingEnable, predicate.VolumeZoneEnable,
// predicate.NodeVolumeLimitsEnable (all default true); volumebinding.bindTimeoutSeconds (600),
// volumebinding.weight (0: no volume score) and volumebinding.shape ("0:10,100:0", utilisation
// percent:score pairs).
// Resource fit and the pod count are checked by the actions against idle resources. The claims'
// volume binding leaves the session as pre-bind steps (PreBind) the binder writes.
#include <algorithm>
#include <cstdio>
#include <deque>
#include <limits>
#include <memory>
#include <unordered_map>

#include "scheduler/framework/session.h"
#include "scheduler/plugins/plugins.h"
#include "scheduler/plugins/support/domain_counts.h"
#include "scheduler/plugins/support/matching.h"
#include "scheduler/plugins/support/volumes.h"

namespace tephra::scheduler {
namespace {

const api::Toleration* UnschedulableToleration(const std::vector<api::Toleration>& tolerations) {
  static const api::Taint kUnschedulable{"node.kubernetes.io/unschedulable", "", "NoSchedule", {}};
  for (const auto& t : tolerations) {
    if (Tolerates(t, kUnschedulable)) return &t;
  }
  return nullptr;
}

bool PortsConflict(const HostPort& a, const HostPort& b) {
  if (a.port != b.port || a.protocol != b.protocol) return false;
  auto wildcard = [](const std::string& ip) { return ip.empty() || ip == "0.0.0.0"; };
  return wildcard(a.ip) || wildcard(b.ip) || a.ip == b.ip;
}

// The selector a spread constraint uses for one pod: its labelSelector plus, for every
// matchLabelKeys key the pod has, key == the pod's value.
api::LabelSelector SpreadSelector(const api::TopologySpreadConstraint& c, const PodInfo& pod) {
  api::LabelSelector s = c.label_selector.value_or(api::LabelSelector{});
  for (const auto& key : c.match_label_keys) {
    auto it = pod.metadata.labels.find(key);
    if (it != pod.metadata.labels.end()) s.match_labels[key] = it->second;
  }
  return s;
}

// "0:10,100:0": utilisation percent (0..100, ascending) and score (0..10) pairs.
std::optional<std::vector<std::pair<int, int>>> ParseShape(std::string_view text) {
  std::vector<std::pair<int, int>> shape;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find(',', at);
    if (end == std::string_view::npos) end = text.size();
    std::string point(text.substr(at, end - at));
    int utilisation = -1, score = -1;
    char rest = 0;
    if (std::sscanf(point.c_str(), " %d : %d %c", &utilisation, &score, &rest) != 2 ||
        utilisation < 0 || utilisation > 100 || score < 0 || score > 10 ||
        (!shape.empty() && utilisation <= shape.back().first))
      return std::nullopt;
    shape.emplace_back(utilisation, score);
    at = end + 1;
  }
  if (shape.empty()) return std::nullopt;
  return shape;
}

VolumeOptions ReadVolumeOptions(const Arguments& args) {
  VolumeOptions o;
  o.binding = args.GetBool("predicate.VolumeBindingEnable", true);
  o.zone = args.GetBool("predicate.VolumeZoneEnable", true);
  o.limits = args.GetBool("predicate.NodeVolumeLimitsEnable", true);
  int64_t timeout = args.GetInt("volumebinding.bindTimeoutSeconds", o.bind_timeout.count());
  if (timeout > 0) o.bind_timeout = std::chrono::seconds(timeout);
  o.weight = std::max(0.0, args.GetDouble("volumebinding.weight", 0));
  std::string shape = args.GetValid(
      "volumebinding.shape", [](std::string_view v) { return ParseShape(v).has_value(); },
      "utilisation:score pairs such as \"0:10,100:0\" (utilisation 0..100 ascending, score "
      "0..10)",
      "");
  if (!shape.empty()) o.shape = *ParseShape(shape);
  return o;
}

class PredicatesPlugin : public Plugin {
 public:
  explicit PredicatesPlugin(const Arguments& args)
      : node_affinity_(args.GetBool("predicate.NodeAffinityEnable", true)),
        node_ports_(args.GetBool("predicate.NodePortsEnable", true)),
        taints_(args.GetBool("predicate.TaintTolerationEnable", true)),
        pod_affinity_(args.GetBool("predicate.PodAffinityEnable", true)),
        spread_(args.GetBool("predicate.PodTopologySpreadEnable", true)),
        volume_options_(ReadVolumeOptions(args)) {}

  std::string_view name() const override { return "predicates"; }
  // Volcano's device and cache switches and its proportional predicate: Tephra has no device
  // allocation and no predicate cache.
  std::vector<std::string_view> RecognisedArguments() const override {
    return {"predicate.DynamicResourceAllocationEnable",
            "predicate.GPUSharingEnable",
            "predicate.GPUNumberEnable",
            "predicate.CacheEnable",
            "predicate.ProportionalEnable",
            "predicate.resources",
            "predicate.resources."};
  }

  void OnSessionOpen(Session& ssn) override {
    session_ = &ssn;
    volumes_ = std::make_unique<VolumePlacement>(ssn, volume_options_);
    ssn.AddStaticPredicateFn(
        name(), [this](const TaskInfo& task, const NodeInfo& node) { return Static(task, node); });
    ssn.AddPredicateFn(
        name(), [this](const TaskInfo& task, const NodeInfo& node) { return Dynamic(task, node); });
    if (volume_options_.weight > 0) {
      ssn.AddNodeOrderFn(name(), [this](const TaskInfo& task, const NodeInfo& node) {
        return volumes_->Score(task, node);
      });
    }
    ssn.AddPreBindFn(name(), [this](const TaskInfo& task, const std::string& node) {
      return volumes_->PreBind(task, node);
    });
    if (pod_affinity_) CollectExistingAntiAffinity();
    EventHandler h;
    h.allocate = [this](const TaskEvent& e) {
      OnMove(e.task, e.node, +1);
      volumes_->Allocated(e.task, e.node);
    };
    h.deallocate = [this](const TaskEvent& e) {
      OnMove(e.task, e.node, -1);
      volumes_->Deallocated(e.task, e.node);
    };
    ssn.AddEventHandler(name(), h);
  }

 private:
  struct AntiAffinityEntry {
    PodInfoPtr pod;
    const api::PodAffinityTerm* term;
    std::string node;
  };

  Fit Static(const TaskInfo& task, const NodeInfo& node) const {
    const SchedulingSpec& spec = *task.pod->spec;
    if (node.unschedulable && UnschedulableToleration(spec.tolerations) == nullptr) {
      return Fit::Unresolvable(reason::kNodeUnschedulable);
    }
    if (node_affinity_ && !MatchesNodeSelectorAndAffinity(spec.node_selector, spec.affinity,
                                                          node.labels(), node.name)) {
      return Fit::Unresolvable(reason::kNodeSelector);
    }
    if (taints_) {
      if (const api::Taint* t =
              UntoleratedTaint(node.taints(), spec.tolerations, {"NoSchedule", "NoExecute"})) {
        return Fit::Unresolvable(TaintReason(*t));
      }
    }
    return volumes_->Static(task, node);
  }

  // "node(s) had untolerated taint gpu=true:NoSchedule": the taint as `kubectl taint` writes it,
  // so an explanation says which toleration is missing. Reasons are interned by text for the
  // session (fit results hold `const char*`); past kMaxTaintReasons distinct taints the generic
  // reason is used.
  const char* TaintReason(const api::Taint& taint) const {
    auto known = taint_reasons_.find(&taint);
    if (known != taint_reasons_.end()) return known->second;
    std::string text = std::string(reason::kTaint) + " " + taint.key +
                       (taint.value.empty() ? "" : "=" + taint.value) + ":" + taint.effect;
    const char* interned = reason::kTaint;
    auto same = std::find(taint_texts_.begin(), taint_texts_.end(), text);
    if (same != taint_texts_.end()) {
      interned = same->c_str();
    } else if (taint_texts_.size() < kMaxTaintReasons) {
      taint_texts_.push_back(std::move(text));
      interned = taint_texts_.back().c_str();
    }
    taint_reasons_.emplace(&taint, interned);
    return interned;
  }

  Fit Dynamic(const TaskInfo& task, const NodeInfo& node) {
    const SchedulingSpec& spec = *task.pod->spec;
    if (node_ports_ && !spec.host_ports.empty()) {
      for (const auto& [uid, t] : node.tasks) {
        if (uid == task.uid()) continue;
        for (const auto& theirs : t.pod->spec->host_ports) {
          for (const auto& mine : spec.host_ports) {
            if (PortsConflict(mine, theirs)) return Fit::Fail(reason::kHostPorts);
          }
        }
      }
    }
    if (pod_affinity_) {
      if (spec.has_pod_affinity) {
        Fit f = PodAffinity(task, node);
        if (!f.ok()) return f;
      }
      if (!existing_anti_.empty()) {
        Fit f = ExistingAntiAffinity(task, node);
        if (!f.ok()) return f;
      }
    }
    if (spread_ && !spec.spread.empty()) {
      Fit f = Spread(task, node);
      if (!f.ok()) return f;
    }
    return volumes_->Dynamic(task, node);
  }

  Fit PodAffinity(const TaskInfo& task, const NodeInfo& node) {
    const api::Affinity& a = *task.pod->spec->affinity;
    const std::string& ns = task.namespace_();
    if (a.pod_affinity) {
      for (const auto& term : a.pod_affinity->required) {
        DomainCounter& c = counters_.ForTerm(*session_, term, ns);
        const std::string* domain = c.DomainOf(node);
        if (domain == nullptr) return Fit::Unresolvable(reason::kPodAffinity);
        if (c.Count(*domain) > 0) continue;
        // Nothing matches anywhere yet: the first pod of a group that selects itself may go.
        if (c.Total() == 0 && c.Matches(*session_, *task.pod)) continue;
        return Fit::Unresolvable(reason::kPodAffinity);
      }
    }
    if (a.pod_anti_affinity) {
      for (const auto& term : a.pod_anti_affinity->required) {
        DomainCounter& c = counters_.ForTerm(*session_, term, ns);
        const std::string* domain = c.DomainOf(node);
        if (domain != nullptr && c.Count(*domain) > 0) return Fit::Fail(reason::kPodAntiAffinity);
      }
    }
    return Fit::Ok();
  }

  Fit ExistingAntiAffinity(const TaskInfo& task, const NodeInfo& node) const {
    const auto& labels = node.labels();
    for (const auto& e : existing_anti_) {
      auto key = labels.find(e.term->topology_key);
      if (key == labels.end()) continue;
      auto owner = session_->NodeIndex(e.node);
      if (!owner) continue;
      const auto& owner_labels = session_->node(*owner).labels();
      auto owner_value = owner_labels.find(e.term->topology_key);
      if (owner_value == owner_labels.end() || owner_value->second != key->second) continue;
      NamespaceScope scope = NamespaceScope::ForTerm(*e.term, e.pod->metadata.namespace_);
      if (!scope.Matches(*session_, task.namespace_())) continue;
      if (MatchesLabelSelector(e.term->label_selector.value_or(api::LabelSelector{}),
                               task.pod->metadata.labels)) {
        return Fit::Fail(reason::kExistingAntiAffinity);
      }
    }
    return Fit::Ok();
  }

  Fit Spread(const TaskInfo& task, const NodeInfo& node) {
    const SchedulingSpec& spec = *task.pod->spec;
    for (const auto& c : spec.spread) {
      if (c.when_unsatisfiable == "ScheduleAnyway") continue;
      api::LabelSelector selector = SpreadSelector(c, *task.pod);
      std::string extra;
      for (const auto& key : c.match_label_keys) extra += task.pod->metadata.Label(key) + ",";
      const SchedulingSpec* sp = &spec;
      DomainCounter& counter = counters_.Get(*session_, &c, task.namespace_(), extra, [&] {
        NamespaceScope scope;
        scope.names.insert(task.namespace_());
        // nodeAffinityPolicy Honor (the default): only nodes the pod could go to count.
        DomainCounter::NodeFilter filter;
        if (c.node_affinity_policy != "Ignore") {
          filter = [sp](const NodeInfo& n) {
            return MatchesNodeSelectorAndAffinity(sp->node_selector, sp->affinity, n.labels(),
                                                  n.name);
          };
        }
        return std::make_unique<DomainCounter>(c.topology_key, selector, scope, filter);
      });
      const std::string* domain = counter.DomainOf(node);
      if (domain == nullptr) return Fit::Unresolvable(reason::kTopologySpreadMissing);
      int min = std::numeric_limits<int>::max();
      for (const auto& [d, n] : counter.domains()) min = std::min(min, n);
      if (counter.domains().empty()) min = 0;
      if (c.min_domains && static_cast<int>(counter.domains().size()) < *c.min_domains) min = 0;
      int self = counter.Matches(*session_, *task.pod) ? 1 : 0;
      if (counter.Count(*domain) + self - min > c.max_skew)
        return Fit::Fail(reason::kTopologySpread);
    }
    return Fit::Ok();
  }

  void CollectExistingAntiAffinity() {
    for (size_t i = 0; i < session_->node_count(); ++i) {
      const NodeInfo& node = session_->node(i);
      if (node.anti_affinity_pods == 0) continue;
      for (const auto& [uid, t] : node.tasks) {
        if (t.status == TaskStatus::kReleasing) continue;
        AddAntiAffinity(t.pod, node.name);
      }
    }
  }

  void AddAntiAffinity(const PodInfoPtr& pod, const std::string& node) {
    const auto& a = pod->spec->affinity;
    if (!a || !a->pod_anti_affinity) return;
    for (const auto& term : a->pod_anti_affinity->required)
      existing_anti_.push_back({pod, &term, node});
  }

  void OnMove(const TaskInfo& task, const std::string& node_name, int sign) {
    auto idx = session_->NodeIndex(node_name);
    if (!idx) return;
    const NodeInfo& node = session_->node(*idx);
    counters_.Update(*session_, *task.pod, node, sign);
    if (!pod_affinity_) return;
    if (sign > 0) {
      AddAntiAffinity(task.pod, node_name);
    } else {
      existing_anti_.erase(std::remove_if(existing_anti_.begin(), existing_anti_.end(),
                                          [&](const AntiAffinityEntry& e) {
                                            return e.pod->metadata.uid == task.uid();
                                          }),
                           existing_anti_.end());
    }
  }

  static constexpr size_t kMaxTaintReasons = 64;
  const bool node_affinity_, node_ports_, taints_, pod_affinity_, spread_;
  const VolumeOptions volume_options_;
  Session* session_ = nullptr;
  std::unique_ptr<VolumePlacement> volumes_;
  // Interned taint reasons (TaintReason); the deque never moves its strings.
  mutable std::unordered_map<const api::Taint*, const char*> taint_reasons_;
  mutable std::deque<std::string> taint_texts_;
  DomainCounters counters_;
  std::vector<AntiAffinityEntry> existing_anti_;
};

}  // namespace

std::unique_ptr<Plugin> NewPredicatesPlugin(const PluginOption& option) {
  return std::make_unique<PredicatesPlugin>(option.arguments);
}

}  // namespace tephra::scheduler
