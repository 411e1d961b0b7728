#include "scheduler/replay/snapshot_io.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include <rapidjson/document.h>

#include "api/codec.h"
#include "api/core.h"
#include "api/labels.h"
#include "api/scheduling.h"
#include "api/storage.h"
#include "json/json.h"

namespace tephra::scheduler {
namespace {

std::optional<TaskStatus> ParseStatus(std::string_view name) {
  for (size_t i = 0; i < kTaskStatusCount; ++i) {
    auto s = static_cast<TaskStatus>(i);
    if (TaskStatusName(s) == name) return s;
  }
  return std::nullopt;
}

void WriteResources(json::Writer& w, std::string_view key, const api::Resources& r) {
  w.Key(key).StartObject();
  for (const auto& [name, q] : r.ToList()) w.Field(name, q.String());
  w.EndObject();
}

api::Resources ReadResources(const json::Reader& r) {
  return api::Resources::FromList(api::DecodeResourceList(r));
}

// The Pod the scheduler's decoder turns back into `pod`: its request folded into one container.
std::string EncodePodInfo(const PodInfo& pod) {
  api::Pod p;
  p.api_version = "v1";
  p.kind = "Pod";
  p.metadata = pod.metadata;
  // What the decoder derives from annotations, written where it looks first, so that pods built
  // in code (tests, benchmarks) read back the same too.
  auto& annotations = p.metadata.annotations;
  if (!pod.group_name.empty() && !pod.sched_plugins_group && !pod.implicit_group)
    annotations[std::string(api::kGroupNameAnnotation)] = pod.group_name;
  if (!pod.task_role.empty()) annotations[std::string(api::kTaskSpecKey)] = pod.task_role;
  if (pod.task_priority)
    annotations[std::string(api::kTaskPriorityAnnotation)] = std::to_string(*pod.task_priority);
  annotations[std::string(api::kPreemptableKey)] = pod.preemptable ? "true" : "false";
  const SchedulingSpec& s = *pod.spec;
  api::Container c;
  c.name = "c";
  api::Resources request = s.request;
  for (const auto& [name, q] : request.ToList()) {
    if (name != api::kResourcePods) c.resources.requests.Set(name, q);
  }
  for (const auto& hp : s.host_ports) {
    api::ContainerPort port;
    port.container_port = hp.port;
    port.host_port = hp.port;
    port.protocol = hp.protocol;
    port.host_ip = hp.ip;
    c.ports.push_back(port);
  }
  p.spec.containers.push_back(std::move(c));
  p.spec.node_selector = s.node_selector;
  p.spec.affinity = s.affinity;
  p.spec.tolerations = s.tolerations;
  p.spec.topology_spread_constraints = s.spread;
  p.spec.priority = s.priority;
  p.spec.priority_class_name = s.priority_class_name;
  p.spec.scheduler_name = s.scheduler_name;
  p.spec.node_name = pod.node_name;
  p.spec.scheduling_gates = s.scheduling_gates;
  for (size_t i = 0; i < s.claims.size(); ++i) {
    const PodClaim& claim = s.claims[i];
    api::Volume v;
    if (claim.ephemeral) {
      // Its claim is "<pod>-<volume>": the volume's name is what follows the pod's.
      v.name = claim.name.substr(std::min(claim.name.size(), pod.metadata.name.size() + 1));
      v.ephemeral = true;
    } else {
      v.name = "pvc-" + std::to_string(i);
      v.pvc_claim_name = claim.name;
    }
    p.spec.volumes.push_back(std::move(v));
  }
  if (s.preempt_never) p.spec.preemption_policy = "Never";
  p.spec.host_network = s.host_network;
  p.status.phase = pod.phase;
  p.status.nominated_node_name = pod.nominated_node;
  if (pod.scheduled) {
    p.status.conditions.push_back({"PodScheduled", pod.scheduled->status, pod.scheduled->reason,
                                   pod.scheduled->message, std::nullopt});
  }
  if (pod.restarts > 0) {
    api::ContainerStatus cs;
    cs.name = "c";
    cs.restart_count = pod.restarts;
    p.status.container_statuses.push_back(cs);
  }
  return api::EncodePod(p);
}

void EncodeDecisions(json::Writer& w, const Decisions& d) {
  w.Key("decisions").StartObject();
  w.Key("binds").StartArray();
  for (const auto& b : d.binds) {
    w.StartObject().Field("pod", b.pod).Field("node", b.node);
    if (!b.steps.empty()) w.StringList("steps", b.steps);
    w.EndObject();
  }
  w.EndArray();
  w.Key("evictions").StartArray();
  for (const auto& e : d.evictions)
    w.StartObject().Field("pod", e.pod).Field("reason", e.reason).EndObject();
  w.EndArray();
  w.Key("phases").StartArray();
  for (const auto& p : d.phases)
    w.StartObject().Field("job", p.job).Field("phase", p.phase).EndObject();
  w.EndArray();
  w.EndObject();
}

Decisions DecodeDecisions(const json::Reader& r) {
  Decisions d;
  r["binds"].ForEach([&](const json::Reader& b) {
    d.binds.push_back({b["pod"].String(), b["node"].String(), b["steps"].StringList()});
  });
  r["evictions"].ForEach([&](const json::Reader& e) {
    d.evictions.push_back({e["pod"].String(), e["reason"].String()});
  });
  r["phases"].ForEach([&](const json::Reader& p) {
    d.phases.push_back({p["job"].String(), p["phase"].String()});
  });
  return d;
}

}  // namespace

std::string EncodeSnapshot(const SnapshotDocument& doc) {
  const Snapshot& snap = *doc.snapshot;
  json::Writer w;
  w.StartObject();
  w.Field("apiVersion", kSnapshotApiVersion).Field("kind", kSnapshotKind);
  if (!doc.session.empty()) w.Field("session", doc.session);
  if (doc.time) w.Field("time", base::FormatTime(*doc.time));
  w.Field("generation", static_cast<int64_t>(snap.generation));
  w.Key("sampling").StartObject();
  w.Field("minimumFeasibleNodes", doc.sampling.minimum_feasible_nodes);
  w.Field("minimumPercentageNodesToFind", doc.sampling.minimum_percentage_nodes_to_find);
  w.Field("percentageNodesToFind", doc.sampling.percentage_nodes_to_find);
  w.EndObject();

  // Every pod once, by uid, in a stable order.
  std::map<std::string, const PodInfo*> pods;
  for (const auto& n : snap.nodes) {
    for (const auto& [uid, t] : n->tasks) pods.emplace(uid, t.pod.get());
  }
  for (const auto& j : snap.jobs) {
    for (const auto& [uid, t] : j->tasks) pods.emplace(uid, t.pod.get());
  }
  w.Key("pods").StartArray();
  for (const auto& [uid, pod] : pods) w.Raw(EncodePodInfo(*pod));
  w.EndArray();

  w.Key("nodes").StartArray();
  for (const auto& n : snap.nodes) {
    w.StartObject().Field("name", n->name);
    if (n->node) w.Key("node").Raw(api::EncodeNode(*n->node));
    WriteResources(w, "allocatable", n->allocatable);
    w.Field("ready", n->ready).Field("unschedulable", n->unschedulable);
    std::vector<std::pair<std::string, TaskStatus>> tasks;
    for (const auto& [uid, t] : n->tasks) tasks.emplace_back(uid, t.status);
    std::sort(tasks.begin(), tasks.end());
    w.Key("tasks").StartArray();
    for (const auto& [uid, status] : tasks) {
      w.StartObject().Field("uid", uid).Field("status", TaskStatusName(status)).EndObject();
    }
    w.EndArray().EndObject();
  }
  w.EndArray();

  w.Key("queues").StartArray();
  for (const auto& [name, q] : snap.queues) {
    w.StartObject().Field("name", q->name);
    if (q->queue) w.Key("queue").Raw(api::EncodeQueue(*q->queue));
    w.Field("weight", q->weight);
    WriteResources(w, "capability", q->capability);
    WriteResources(w, "deserved", q->deserved);
    WriteResources(w, "guarantee", q->guarantee);
    w.Field("parent", q->parent).Field("state", q->state).Field("reclaimable", q->reclaimable);
    w.Field("priority", q->priority).EndObject();
  }
  w.EndArray();

  std::vector<const JobInfo*> jobs;
  for (const auto& j : snap.jobs) jobs.push_back(j.get());
  std::sort(jobs.begin(), jobs.end(),
            [](const JobInfo* a, const JobInfo* b) { return a->id < b->id; });
  w.Key("jobs").StartArray();
  for (const JobInfo* j : jobs) {
    w.StartObject().Field("id", j->id).Field("namespace", j->namespace_).Field("name", j->name);
    w.Field("uid", j->uid);
    if (j->pod_group) w.Key("podGroup").Raw(api::EncodePodGroup(*j->pod_group));
    w.Field("queue", j->queue)
        .Field("priority", j->priority)
        .Field("minAvailable", j->min_available);
    w.Key("minTaskMember").StartObject();
    for (const auto& [role, n] : j->min_task_member) w.Field(role, n);
    w.EndObject();
    if (j->min_resources) WriteResources(w, "minResources", *j->min_resources);
    w.Field("phase", api::ToString(j->phase)).Field("preemptable", j->preemptable);
    if (j->creation) w.Field("creation", base::FormatTime(*j->creation));
    std::vector<const TaskInfo*> tasks;
    for (const auto& [uid, t] : j->tasks) tasks.push_back(&t);
    std::sort(tasks.begin(), tasks.end(),
              [](const TaskInfo* a, const TaskInfo* b) { return a->uid() < b->uid(); });
    w.Key("tasks").StartArray();
    for (const TaskInfo* t : tasks) {
      w.StartObject().Field("uid", t->uid()).Field("status", TaskStatusName(t->status));
      w.Field("node", t->node).Field("priority", t->priority).EndObject();
    }
    w.EndArray().EndObject();
  }
  w.EndArray();

  w.Key("namespaces").StartObject();
  for (const auto& [ns, labels] : snap.namespace_labels) w.StringMap(ns, labels);
  w.EndObject();

  w.Key("pdbs").StartArray();
  for (const auto& pdb : snap.pdbs) {
    w.StartObject().Field("namespace", pdb->metadata.namespace_).Field("name", pdb->metadata.name);
    w.Key("selector").StartObject();
    w.StringMap("matchLabels", pdb->selector.match_labels);
    w.Key("matchExpressions").StartArray();
    for (const auto& e : pdb->selector.match_expressions) {
      w.StartObject()
          .Field("key", e.key)
          .Field("operator", e.op)
          .StringList("values", e.values)
          .EndObject();
    }
    w.EndArray().EndObject();
    w.Field("disruptionsAllowed", pdb->disruptions_allowed).EndObject();
  }
  w.EndArray();

  // Storage as the session saw it (assumptions included), in the API's own form.
  if (snap.storage) {
    const StorageState& s = *snap.storage;
    auto list = [&](std::string_view key, const auto& map, auto encode) {
      w.Key(key).StartArray();
      for (const auto& [name, object] : map) w.Raw(encode(*object));
      w.EndArray();
    };
    w.Key("storage").StartObject();
    list("claims", s.claims, api::EncodePersistentVolumeClaim);
    list("volumes", s.volumes, api::EncodePersistentVolume);
    list("classes", s.classes, api::EncodeStorageClass);
    list("csiNodes", s.csi_nodes, api::EncodeCSINode);
    list("csiDrivers", s.csi_drivers, api::EncodeCSIDriver);
    w.EndObject();
  }

  if (doc.decisions) EncodeDecisions(w, *doc.decisions);
  w.EndObject();
  return w.Take();
}

StatusOr<SnapshotDocument> DecodeSnapshot(std::string_view text, SpecInterner& interner) {
  json::Document doc;
  TEPHRA_RETURN_IF_ERROR(json::Parse(text, &doc));
  json::Errors errors;
  json::Reader root(&doc, &errors);
  if (!root.is_object()) return InvalidArgument("snapshot: expected a JSON object");
  if (root["kind"].String() != kSnapshotKind ||
      root["apiVersion"].String() != kSnapshotApiVersion) {
    return InvalidArgument("snapshot: expected apiVersion " + std::string(kSnapshotApiVersion) +
                           " kind " + std::string(kSnapshotKind) + ", got " +
                           root["apiVersion"].String() + " " + root["kind"].String());
  }
  SnapshotDocument out;
  out.session = root["session"].String();
  if (root["time"].present()) out.time = kube::DecodeTime(root["time"]);
  auto snap = std::make_shared<Snapshot>();
  snap->generation = static_cast<uint64_t>(root["generation"].Int());
  json::Reader sampling = root["sampling"];
  const NodeSampling defaults;  // for a document written without them
  out.sampling.minimum_feasible_nodes =
      sampling["minimumFeasibleNodes"].Int32(defaults.minimum_feasible_nodes);
  out.sampling.minimum_percentage_nodes_to_find =
      sampling["minimumPercentageNodesToFind"].Int32(defaults.minimum_percentage_nodes_to_find);
  out.sampling.percentage_nodes_to_find =
      sampling["percentageNodesToFind"].Int32(defaults.percentage_nodes_to_find);

  std::unordered_map<std::string, PodInfoPtr> pods;
  root["pods"].ForEach([&](const json::Reader& p) {
    StatusOr<std::shared_ptr<PodInfo>> pod = DecodePodInfo(*p.value(), interner);
    if (!pod.ok()) {
      p.Fail(pod.status().message());
      return;
    }
    if (!pods.emplace((*pod)->metadata.uid, *pod).second)
      p.Fail("duplicate pod uid " + (*pod)->metadata.uid);
  });
  auto pod_of = [&](const json::Reader& uid_at) -> PodInfoPtr {
    std::string uid = uid_at.String();
    auto it = pods.find(uid);
    if (it == pods.end()) {
      uid_at.Fail("pod " + uid + " is not in pods");
      return nullptr;
    }
    return it->second;
  };
  auto status_of = [&](const json::Reader& at) -> TaskStatus {
    auto s = ParseStatus(at.String());
    if (!s) {
      at.Fail("unknown task status \"" + at.String() + "\"");
      return TaskStatus::kUnknown;
    }
    return *s;
  };

  std::set<std::string> node_names;
  root["nodes"].ForEach([&](const json::Reader& n) {
    auto node = std::make_shared<NodeInfo>();
    node->name = n["name"].String();
    if (node->name.empty() || !node_names.insert(node->name).second) {
      n["name"].Fail("missing or duplicate node name");
      return;
    }
    if (n["node"].present()) {
      StatusOr<std::shared_ptr<api::Node>> decoded = api::DecodeNode(*n["node"].value());
      if (!decoded.ok()) {
        n["node"].Fail(decoded.status().message());
        return;
      }
      node->node = *decoded;
    }
    node->allocatable = ReadResources(n["allocatable"]);
    node->ready = n["ready"].Bool();
    node->unschedulable = n["unschedulable"].Bool();
    n["tasks"].ForEach([&](const json::Reader& t) {
      PodInfoPtr pod = pod_of(t["uid"]);
      if (!pod) return;
      TaskInfo task;
      task.pod = pod;
      task.status = status_of(t["status"]);
      task.node = node->name;
      node->AddTask(task);
    });
    snap->total.Add(node->allocatable);
    snap->nodes.push_back(std::move(node));
  });
  std::sort(snap->nodes.begin(), snap->nodes.end(),
            [](const auto& a, const auto& b) { return a->name < b->name; });

  root["queues"].ForEach([&](const json::Reader& q) {
    auto info = std::make_shared<QueueInfo>();
    if (q["queue"].present()) {
      StatusOr<std::shared_ptr<api::Queue>> decoded = api::DecodeQueue(*q["queue"].value());
      if (!decoded.ok()) {
        q["queue"].Fail(decoded.status().message());
        return;
      }
      info->queue = *decoded;
    }
    info->name = q["name"].String();
    info->weight = q["weight"].Int32(1);
    info->capability = ReadResources(q["capability"]);
    info->deserved = ReadResources(q["deserved"]);
    info->guarantee = ReadResources(q["guarantee"]);
    info->parent = q["parent"].String();
    info->state = q["state"].String();
    info->reclaimable = q["reclaimable"].Bool(true);
    info->priority = q["priority"].Int32();
    if (info->name.empty()) {
      q["name"].Fail("missing queue name");
      return;
    }
    snap->queues.emplace(info->name, std::move(info));
  });

  root["jobs"].ForEach([&](const json::Reader& j) {
    auto job = std::make_shared<JobInfo>();
    job->id = j["id"].String();
    job->namespace_ = j["namespace"].String();
    job->name = j["name"].String();
    job->uid = j["uid"].String();
    if (job->id.empty()) {
      j["id"].Fail("missing job id");
      return;
    }
    if (j["podGroup"].present()) {
      StatusOr<std::shared_ptr<api::PodGroup>> pg = api::DecodePodGroup(*j["podGroup"].value());
      if (!pg.ok()) {
        j["podGroup"].Fail(pg.status().message());
        return;
      }
      job->pod_group = *pg;
    }
    job->queue = j["queue"].String();
    job->priority = j["priority"].Int32();
    job->min_available = j["minAvailable"].Int32();
    j["minTaskMember"].ForEachMember([&](std::string_view role, const json::Reader& n) {
      job->min_task_member[std::string(role)] = n.Int32();
    });
    if (j["minResources"].present()) job->min_resources = ReadResources(j["minResources"]);
    job->phase = api::PodGroupPhaseFromString(j["phase"].String());
    job->preemptable = j["preemptable"].Bool();
    if (j["creation"].present()) job->creation = kube::DecodeTime(j["creation"]);
    j["tasks"].ForEach([&](const json::Reader& t) {
      PodInfoPtr pod = pod_of(t["uid"]);
      if (!pod) return;
      TaskInfo task;
      task.pod = pod;
      task.status = status_of(t["status"]);
      task.node = t["node"].String();
      task.priority = t["priority"].Int32();
      job->AddTask(std::move(task));
    });
    snap->jobs.push_back(std::move(job));
  });

  root["namespaces"].ForEachMember([&](std::string_view ns, const json::Reader& labels) {
    snap->namespace_labels[std::string(ns)] = labels.StringMap();
  });
  root["pdbs"].ForEach([&](const json::Reader& p) {
    auto pdb = std::make_shared<PdbInfo>();
    pdb->metadata.namespace_ = p["namespace"].String();
    pdb->metadata.name = p["name"].String();
    api::DecodeLabelSelector(p["selector"], &pdb->selector);
    pdb->disruptions_allowed = p["disruptionsAllowed"].Int32();
    snap->pdbs.push_back(std::move(pdb));
  });
  auto storage = std::make_shared<StorageState>();
  auto read = [&](const json::Reader& list, auto& into, auto decode, auto key_of) {
    list.ForEach([&](const json::Reader& item) {
      auto decoded = decode(*item.value(), api::DecodeOptions{});
      if (!decoded.ok()) {
        item.Fail(decoded.status().message());
        return;
      }
      std::string key = key_of(**decoded);
      if (!into.emplace(key, *decoded).second) item.Fail("duplicate " + key);
    });
  };
  json::Reader stored = root["storage"];
  auto by_key = [](const kube::Object& o) { return o.metadata.Key(); };
  read(
      stored["claims"], storage->claims,
      [](const json::Value& v, const api::DecodeOptions& o) {
        return api::DecodePersistentVolumeClaim(v, o);
      },
      by_key);
  read(
      stored["volumes"], storage->volumes,
      [](const json::Value& v, const api::DecodeOptions& o) {
        return api::DecodePersistentVolume(v, o);
      },
      by_key);
  read(stored["classes"], storage->classes, api::DecodeStorageClass, by_key);
  read(stored["csiNodes"], storage->csi_nodes, api::DecodeCSINode, by_key);
  read(stored["csiDrivers"], storage->csi_drivers, api::DecodeCSIDriver, by_key);
  storage->Index();
  snap->storage = std::move(storage);
  if (root["decisions"].present()) out.decisions = DecodeDecisions(root["decisions"]);
  TEPHRA_RETURN_IF_ERROR(errors.ToStatus("snapshot"));
  out.snapshot = std::move(snap);
  return out;
}

}  // namespace tephra::scheduler
