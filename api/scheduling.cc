#include "api/scheduling.h"

#include <charconv>

#include "api/labels.h"

namespace tephra::api {
namespace {

// ---------------------------------------------------------------------------------------------
// Queue

std::optional<NodeGroupAffinity> DecodeNodeGroupAffinity(const json::Reader& r) {
  if (!r.present()) return std::nullopt;
  NodeGroupAffinity a;
  a.required = r["requiredDuringSchedulingIgnoredDuringExecution"].StringList();
  a.preferred = r["preferredDuringSchedulingIgnoredDuringExecution"].StringList();
  return a;
}

void EncodeNodeGroupAffinityInto(JsonObject& o, std::string_view key,
                                 const std::optional<NodeGroupAffinity>& a) {
  o.EditIf(key, a.has_value(), [&](JsonObject& n) {
    n.SetStringList("requiredDuringSchedulingIgnoredDuringExecution", a->required);
    n.SetStringList("preferredDuringSchedulingIgnoredDuringExecution", a->preferred);
  });
}

void FillQueue(const json::Reader& r, Queue* q) {
  json::Reader spec = r["spec"];
  q->spec.weight = spec["weight"].Int32();
  q->spec.capability = DecodeResourceList(spec["capability"]);
  q->spec.reclaimable = spec["reclaimable"].OptBool();
  spec["extendClusters"].ForEach([&](const json::Reader& c) {
    ExtendCluster& cluster = q->spec.extend_clusters.emplace_back();
    cluster.name = c["name"].String();
    cluster.weight = c["weight"].Int32();
    cluster.capacity = DecodeResourceList(c["capacity"]);
  });
  if (json::Reader g = spec["guarantee"]; g.present()) {
    q->spec.guarantee = DecodeResourceList(g["resource"]);
  }
  if (json::Reader a = spec["affinity"]; a.present()) {
    QueueAffinity& affinity = q->spec.affinity.emplace();
    affinity.node_group_affinity = DecodeNodeGroupAffinity(a["nodeGroupAffinity"]);
    affinity.node_group_anti_affinity = DecodeNodeGroupAffinity(a["nodeGroupAntiAffinity"]);
  }
  q->spec.type = spec["type"].String();
  q->spec.parent = spec["parent"].String();
  q->spec.deserved = DecodeResourceList(spec["deserved"]);
  q->spec.priority = spec["priority"].Int32();
  q->spec.dequeue_strategy = spec["dequeueStrategy"].String();

  json::Reader status = r["status"];
  q->status.state = status["state"].String();
  q->status.unknown = status["unknown"].Int32();
  q->status.pending = status["pending"].Int32();
  q->status.running = status["running"].Int32();
  q->status.inqueue = status["inqueue"].Int32();
  q->status.completed = status["completed"].Int32();
  q->status.allocated = DecodeResourceList(status["allocated"]);
  if (json::Reader res = status["reservation"]; res.present()) {
    QueueReservation& reservation = q->status.reservation.emplace();
    reservation.nodes = res["nodes"].StringList();
    reservation.resource = DecodeResourceList(res["resource"]);
  }
}

// ---------------------------------------------------------------------------------------------
// PodGroup

std::map<std::string, int32_t> DecodeIntMap(const json::Reader& r) {
  std::map<std::string, int32_t> out;
  r.ForEachMember(
      [&](std::string_view key, const json::Reader& v) { out[std::string(key)] = v.Int32(); });
  return out;
}

void FillPodGroup(const json::Reader& r, PodGroup* pg) {
  json::Reader spec = r["spec"];
  pg->spec.min_member = spec["minMember"].Int32();
  pg->spec.min_task_member = DecodeIntMap(spec["minTaskMember"]);
  pg->spec.queue = spec["queue"].String();
  pg->spec.priority_class_name = spec["priorityClassName"].String();
  if (json::Reader min = spec["minResources"]; min.present()) {
    pg->spec.min_resources = DecodeResourceList(min);
  }
  DecodeNetworkTopology(spec["networkTopology"], &pg->spec.network_topology);
  spec["subGroupPolicy"].ForEach([&](const json::Reader& s) {
    SubGroupPolicy& policy = pg->spec.sub_group_policy.emplace_back();
    policy.name = s["name"].String();
    DecodeNetworkTopology(s["networkTopology"], &policy.network_topology);
    policy.sub_group_size = s["subGroupSize"].OptInt32();
    policy.min_sub_groups = s["minSubGroups"].OptInt32();
    if (json::Reader sel = s["labelSelector"]; sel.present()) {
      DecodeLabelSelector(sel, &policy.label_selector.emplace());
    }
    policy.match_label_keys = s["matchLabelKeys"].StringList();
  });

  json::Reader status = r["status"];
  pg->status.phase = status["phase"].String();
  status["conditions"].ForEach([&](const json::Reader& c) {
    PodGroupCondition& cond = pg->status.conditions.emplace_back();
    cond.type = c["type"].String();
    cond.status = c["status"].String();
    cond.transition_id = c["transitionID"].String();
    cond.last_transition_time = DecodeTime(c["lastTransitionTime"]);
    cond.reason = c["reason"].String();
    cond.message = c["message"].String();
  });
  pg->status.running = status["running"].Int32();
  pg->status.succeeded = status["succeeded"].Int32();
  pg->status.failed = status["failed"].Int32();
}

void FillSchedPluginsPodGroup(const json::Reader& r, SchedPluginsPodGroup* pg) {
  json::Reader spec = r["spec"];
  pg->spec.min_member = spec["minMember"].Int32();
  pg->spec.min_resources = DecodeResourceList(spec["minResources"]);
  pg->spec.schedule_timeout_seconds = spec["scheduleTimeoutSeconds"].OptInt32();
  json::Reader status = r["status"];
  pg->status.phase = status["phase"].String();
  pg->status.occupied_by = status["occupiedBy"].String();
  pg->status.running = status["running"].Int32();
  pg->status.succeeded = status["succeeded"].Int32();
  pg->status.failed = status["failed"].Int32();
  pg->status.schedule_start_time = DecodeTime(status["scheduleStartTime"]);
}

}  // namespace

std::string Queue::ParentName() const {
  if (!spec.parent.empty()) return spec.parent;
  return metadata.name == kRootQueue ? std::string() : std::string(kRootQueue);
}

PodGroup ToVolcanoPodGroup(const SchedPluginsPodGroup& in, std::string_view queue) {
  PodGroup pg;
  pg.api_version = in.api_version;
  pg.kind = in.kind;
  pg.metadata = in.metadata;
  pg.spec.min_member = in.spec.min_member;
  if (!in.spec.min_resources.empty()) pg.spec.min_resources = in.spec.min_resources;
  pg.spec.queue = std::string(queue);
  // Coscheduling's per-group Permit timeout is Tephra's gang schedule timeout.
  if (in.spec.schedule_timeout_seconds && *in.spec.schedule_timeout_seconds > 0) {
    pg.metadata.annotations.try_emplace(std::string(kScheduleTimeoutKey),
                                        std::to_string(*in.spec.schedule_timeout_seconds) + "s");
  }
  const std::string& phase = in.status.phase;
  if (phase.empty() || phase == sched_plugins_phase::kPending) {
    pg.status.phase = podgroup_phase::kPending;
  } else if (phase == sched_plugins_phase::kScheduling) {
    pg.status.phase = podgroup_phase::kInqueue;
  } else if (phase == sched_plugins_phase::kRunning) {
    pg.status.phase = podgroup_phase::kRunning;
  } else if (phase == sched_plugins_phase::kFinished || phase == sched_plugins_phase::kFailed) {
    pg.status.phase = podgroup_phase::kCompleted;
  } else {
    pg.status.phase = podgroup_phase::kUnknown;
  }
  pg.status.running = in.status.running;
  pg.status.succeeded = in.status.succeeded;
  pg.status.failed = in.status.failed;
  return pg;
}

std::optional<NetworkTopologySpec> NetworkTopologyFromMetadata(const kube::ObjectMeta& meta) {
  auto value = [&meta](std::string_view key) {
    std::string a = meta.Annotation(key);
    return a.empty() ? meta.Label(key) : a;
  };
  std::string mode = value(kNetworkTopologyModeAnnotation);
  if (mode.empty()) return std::nullopt;
  NetworkTopologySpec nt;
  nt.mode = mode;
  std::string tier = value(kNetworkTopologyHighestTierAnnotation);
  int32_t t = 0;
  auto [end, ec] = std::from_chars(tier.data(), tier.data() + tier.size(), t);
  if (!tier.empty() && ec == std::errc() && end == tier.data() + tier.size()) {
    nt.highest_tier_allowed = t;
  }
  return nt;
}

std::optional<NetworkTopologySpec> NetworkTopologyOf(const PodGroup& pg) {
  if (pg.spec.network_topology) return pg.spec.network_topology;
  return NetworkTopologyFromMetadata(pg.metadata);
}

std::string ImplicitPodGroupName(const kube::ObjectMeta& pod) {
  if (const kube::OwnerReference* owner = pod.ControllerRef()) {
    return ImplicitPodGroupNameOf(owner->uid);
  }
  return ImplicitPodGroupNameOf(pod.uid);
}

std::string ImplicitPodGroupNameOf(std::string_view owner_uid) {
  return "podgroup-" + std::string(owner_uid);
}

// Keys a plain pod passes on to its PodGroup.
constexpr std::string_view kImplicitGroupCopiedKeys[] = {kPreemptableKey, kCooldownTimeKey,
                                                         kRevocableZoneKey, kJdbMinAvailableKey,
                                                         kJdbMaxUnavailableKey};

PodGroup ImplicitPodGroup(const Pod& pod,
                          const std::map<std::string, std::string>& owner_annotations,
                          const std::string& default_queue) {
  PodGroup pg;
  pg.api_version = std::string(kSchedulingApiVersion);
  pg.kind = std::string(kPodGroupKind);
  pg.metadata.name = ImplicitPodGroupName(pod.metadata);
  pg.metadata.namespace_ = pod.metadata.namespace_;
  if (pod.metadata.ControllerRef() != nullptr) {
    pg.metadata.owner_references = pod.metadata.owner_references;
  } else {
    kube::OwnerReference self;
    self.api_version = "v1";
    self.kind = "Pod";
    self.name = pod.metadata.name;
    self.uid = pod.metadata.uid;
    self.controller = true;
    pg.metadata.owner_references.push_back(self);
  }
  int32_t min_member = 1;
  auto it = owner_annotations.find(std::string(kGroupMinMemberAnnotation));
  if (it != owner_annotations.end()) {
    int32_t v = 0;
    auto [end, ec] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), v);
    if (ec == std::errc() && end == it->second.data() + it->second.size() && v > 0) min_member = v;
  }
  for (const auto& [key, value] : owner_annotations) {
    if (key.rfind("volcano.sh/", 0) == 0) pg.metadata.annotations[key] = value;
  }
  for (std::string_view key : kImplicitGroupCopiedKeys) {
    std::string a = pod.metadata.Annotation(key);
    if (!a.empty()) pg.metadata.annotations[std::string(key)] = a;
    std::string l = pod.metadata.Label(key);
    if (!l.empty()) pg.metadata.labels[std::string(key)] = l;
  }
  for (std::string_view key :
       {kNetworkTopologyModeAnnotation, kNetworkTopologyHighestTierAnnotation}) {
    std::string a = pod.metadata.Annotation(key);
    if (!a.empty()) pg.metadata.annotations[std::string(key)] = a;
  }
  pg.spec.network_topology = NetworkTopologyFromMetadata(pod.metadata);
  pg.spec.min_member = min_member;
  std::string queue = pod.metadata.Annotation(kSchedulingQueueNameAnnotation);
  pg.spec.queue = queue.empty() ? default_queue : queue;
  pg.spec.priority_class_name = pod.spec.priority_class_name;
  Resources request = PodRequest(pod.spec), limit = PodLimit(pod.spec);
  pg.spec.min_resources =
      QuotaStyleResources(request.Multiply(min_member), limit.Multiply(min_member), min_member);
  pg.status.phase = std::string(podgroup_phase::kPending);
  return pg;
}

std::string_view ToString(PodGroupPhase phase) {
  switch (phase) {
    case PodGroupPhase::kNone:
      return "";
    case PodGroupPhase::kPending:
      return podgroup_phase::kPending;
    case PodGroupPhase::kInqueue:
      return podgroup_phase::kInqueue;
    case PodGroupPhase::kRunning:
      return podgroup_phase::kRunning;
    case PodGroupPhase::kUnknown:
      return podgroup_phase::kUnknown;
    case PodGroupPhase::kCompleted:
      return podgroup_phase::kCompleted;
  }
  return podgroup_phase::kUnknown;
}

PodGroupPhase PodGroupPhaseFromString(std::string_view text) {
  for (PodGroupPhase phase :
       {PodGroupPhase::kNone, PodGroupPhase::kPending, PodGroupPhase::kInqueue,
        PodGroupPhase::kRunning, PodGroupPhase::kCompleted}) {
    if (text == ToString(phase)) return phase;
  }
  return PodGroupPhase::kUnknown;
}

std::string SchedPluginsPhaseFor(std::string_view phase) {
  if (phase == podgroup_phase::kInqueue) return std::string(sched_plugins_phase::kScheduling);
  if (phase == podgroup_phase::kCompleted) return std::string(sched_plugins_phase::kFinished);
  if (phase == podgroup_phase::kPending || phase == podgroup_phase::kRunning ||
      phase == podgroup_phase::kUnknown) {
    return std::string(phase);
  }
  return std::string(sched_plugins_phase::kUnknown);
}

StatusOr<std::shared_ptr<Queue>> DecodeQueue(const json::Value& value,
                                             const DecodeOptions& options) {
  return DecodeTypedObject<Queue>(value, options, "Queue", FillQueue);
}

StatusOr<std::shared_ptr<Queue>> DecodeQueue(std::string_view text, const DecodeOptions& options) {
  return DecodeTypedObjectText<Queue>(text, options, "Queue", FillQueue);
}

StatusOr<std::shared_ptr<PodGroup>> DecodePodGroup(const json::Value& value,
                                                   const DecodeOptions& options) {
  return DecodeTypedObject<PodGroup>(value, options, "PodGroup", FillPodGroup);
}

StatusOr<std::shared_ptr<PodGroup>> DecodePodGroup(std::string_view text,
                                                   const DecodeOptions& options) {
  return DecodeTypedObjectText<PodGroup>(text, options, "PodGroup", FillPodGroup);
}

StatusOr<std::shared_ptr<SchedPluginsPodGroup>> DecodeSchedPluginsPodGroup(
    const json::Value& value, const DecodeOptions& options) {
  return DecodeTypedObject<SchedPluginsPodGroup>(value, options, "PodGroup",
                                                 FillSchedPluginsPodGroup);
}

StatusOr<std::shared_ptr<SchedPluginsPodGroup>> DecodeSchedPluginsPodGroup(
    std::string_view text, const DecodeOptions& options) {
  return DecodeTypedObjectText<SchedPluginsPodGroup>(text, options, "PodGroup",
                                                     FillSchedPluginsPodGroup);
}

std::string EncodeQueue(const Queue& q) {
  return EncodeObject(q, [&](JsonObject& o) {
    o.Edit("spec", [&](JsonObject& s) {
      s.SetInt("weight", q.spec.weight);
      s.SetQuantities("capability", q.spec.capability);
      s.SetOptBool("reclaimable", q.spec.reclaimable);
      s.EditList(
          "extendClusters", q.spec.extend_clusters.size(),
          [&](size_t i, JsonObject& c) {
            const ExtendCluster& cluster = q.spec.extend_clusters[i];
            c.SetString("name", cluster.name);
            c.SetInt("weight", cluster.weight);
            c.SetQuantities("capacity", cluster.capacity);
          },
          [&](size_t i) { return q.spec.extend_clusters[i].name; });
      s.EditIf("guarantee", q.spec.guarantee.has_value(),
               [&](JsonObject& g) { g.SetQuantities("resource", *q.spec.guarantee); });
      s.EditIf("affinity", q.spec.affinity.has_value(), [&](JsonObject& a) {
        EncodeNodeGroupAffinityInto(a, "nodeGroupAffinity", q.spec.affinity->node_group_affinity);
        EncodeNodeGroupAffinityInto(a, "nodeGroupAntiAffinity",
                                    q.spec.affinity->node_group_anti_affinity);
      });
      s.SetString("type", q.spec.type);
      s.SetString("parent", q.spec.parent);
      s.SetQuantities("deserved", q.spec.deserved);
      s.SetInt("priority", q.spec.priority);
      s.SetString("dequeueStrategy", q.spec.dequeue_strategy);
    });
    o.Edit("status", [&](JsonObject& s) {
      s.SetString("state", q.status.state);
      s.SetInt("unknown", q.status.unknown);
      s.SetInt("pending", q.status.pending);
      s.SetInt("running", q.status.running);
      s.SetInt("inqueue", q.status.inqueue);
      s.SetInt("completed", q.status.completed);
      s.SetQuantities("allocated", q.status.allocated);
      s.EditIf("reservation", q.status.reservation.has_value(), [&](JsonObject& r) {
        r.SetStringList("nodes", q.status.reservation->nodes);
        r.SetQuantities("resource", q.status.reservation->resource);
      });
    });
  });
}

std::string EncodePodGroup(const PodGroup& pg) {
  return EncodeObject(pg, [&](JsonObject& o) {
    o.Edit("spec", [&](JsonObject& s) {
      s.SetInt("minMember", pg.spec.min_member);
      s.SetIntMap("minTaskMember", pg.spec.min_task_member);
      s.SetString("queue", pg.spec.queue);
      s.SetString("priorityClassName", pg.spec.priority_class_name);
      s.SetOptQuantities("minResources", pg.spec.min_resources);
      EncodeNetworkTopologyInto(s, "networkTopology", pg.spec.network_topology);
      s.EditList(
          "subGroupPolicy", pg.spec.sub_group_policy.size(),
          [&](size_t i, JsonObject& p) {
            const SubGroupPolicy& policy = pg.spec.sub_group_policy[i];
            p.SetString("name", policy.name);
            EncodeNetworkTopologyInto(p, "networkTopology", policy.network_topology);
            p.SetOptInt("subGroupSize", policy.sub_group_size);
            p.SetOptInt("minSubGroups", policy.min_sub_groups);
            p.EditIf("labelSelector", policy.label_selector.has_value(), [&](JsonObject& sel) {
              EncodeLabelSelectorInto(*policy.label_selector, sel);
            });
            p.SetStringList("matchLabelKeys", policy.match_label_keys);
          },
          [&](size_t i) { return pg.spec.sub_group_policy[i].name; });
    });
    o.Edit("status", [&](JsonObject& s) {
      s.SetString("phase", pg.status.phase);
      s.EditList("conditions", pg.status.conditions.size(), [&](size_t i, JsonObject& c) {
        const PodGroupCondition& cond = pg.status.conditions[i];
        c.SetString("type", cond.type);
        c.SetString("status", cond.status);
        c.SetString("transitionID", cond.transition_id);
        c.SetTime("lastTransitionTime", cond.last_transition_time);
        c.SetString("reason", cond.reason);
        c.SetString("message", cond.message);
      });
      s.SetInt("running", pg.status.running);
      s.SetInt("succeeded", pg.status.succeeded);
      s.SetInt("failed", pg.status.failed);
    });
  });
}

std::string EncodeSchedPluginsPodGroup(const SchedPluginsPodGroup& pg) {
  return EncodeObject(pg, [&](JsonObject& o) {
    o.Edit("spec", [&](JsonObject& s) {
      s.SetInt("minMember", pg.spec.min_member);
      s.SetQuantities("minResources", pg.spec.min_resources);
      s.SetOptInt("scheduleTimeoutSeconds", pg.spec.schedule_timeout_seconds);
    });
    o.Edit("status", [&](JsonObject& s) {
      s.SetString("phase", pg.status.phase);
      s.SetString("occupiedBy", pg.status.occupied_by);
      s.SetInt("running", pg.status.running);
      s.SetInt("succeeded", pg.status.succeeded);
      s.SetInt("failed", pg.status.failed);
      s.SetTime("scheduleStartTime", pg.status.schedule_start_time);
    });
  });
}

}  // namespace tephra::api
