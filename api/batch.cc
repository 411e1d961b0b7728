#include "api/batch.h"

#include <algorithm>
#include <limits>

namespace tephra::api {
namespace {

std::vector<LifecyclePolicy> DecodePolicies(const json::Reader& r) {
  std::vector<LifecyclePolicy> out;
  r.ForEach([&](const json::Reader& p) {
    LifecyclePolicy& policy = out.emplace_back();
    policy.action = p["action"].String();
    policy.event = p["event"].String();
    policy.events = p["events"].StringList();
    policy.exit_code = p["exitCode"].OptInt32();
    policy.timeout = DecodeDuration(p["timeout"]);
  });
  return out;
}

void EncodePoliciesInto(JsonObject& o, const std::vector<LifecyclePolicy>& policies) {
  o.EditList("policies", policies.size(), [&](size_t i, JsonObject& p) {
    const LifecyclePolicy& policy = policies[i];
    p.SetString("action", policy.action);
    p.SetString("event", policy.event);
    p.SetStringList("events", policy.events);
    p.SetOptInt("exitCode", policy.exit_code);
    p.SetDuration("timeout", policy.timeout);
  });
}

void DecodeTask(const json::Reader& r, TaskSpec* task) {
  task->name = r["name"].String();
  task->replicas = r["replicas"].Int32();
  task->min_available = r["minAvailable"].OptInt32();
  DecodePodTemplate(r["template"], &task->template_);
  task->policies = DecodePolicies(r["policies"]);
  task->topology_policy = r["topologyPolicy"].String();
  task->max_retry = r["maxRetry"].Int32();
  if (json::Reader d = r["dependsOn"]; d.present()) {
    DependsOn& depends = task->depends_on.emplace();
    depends.names = d["name"].StringList();
    depends.iteration = d["iteration"].String();
  }
  if (json::Reader p = r["partitionPolicy"]; p.present()) {
    PartitionPolicy& partition = task->partition_policy.emplace();
    partition.total_partitions = p["totalPartitions"].Int32();
    partition.partition_size = p["partitionSize"].Int32();
    partition.min_partitions = p["minPartitions"].Int32();
    DecodeNetworkTopology(p["networkTopology"], &partition.network_topology);
  }
}

void EncodeTaskInto(const TaskSpec& task, JsonObject& t) {
  t.SetString("name", task.name);
  t.SetInt("replicas", task.replicas);
  t.SetOptInt("minAvailable", task.min_available);
  t.Edit("template", [&](JsonObject& tmpl) { EncodePodTemplateInto(task.template_, tmpl); });
  EncodePoliciesInto(t, task.policies);
  t.SetString("topologyPolicy", task.topology_policy);
  t.SetInt("maxRetry", task.max_retry);
  t.EditIf("dependsOn", task.depends_on.has_value(), [&](JsonObject& d) {
    d.SetStringList("name", task.depends_on->names);
    d.SetString("iteration", task.depends_on->iteration);
  });
  t.EditIf("partitionPolicy", task.partition_policy.has_value(), [&](JsonObject& p) {
    const PartitionPolicy& partition = *task.partition_policy;
    // totalPartitions and partitionSize are required in the schema: always written.
    p.SetOptInt("totalPartitions", partition.total_partitions);
    p.SetOptInt("partitionSize", partition.partition_size);
    p.SetInt("minPartitions", partition.min_partitions);
    EncodeNetworkTopologyInto(p, "networkTopology", partition.network_topology);
  });
}

void DecodeJobSpec(const json::Reader& r, JobSpec* spec) {
  spec->scheduler_name = r["schedulerName"].String();
  spec->min_available = r["minAvailable"].Int32();
  r["volumes"].ForEach([&](const json::Reader& v) {
    VolumeSpec& volume = spec->volumes.emplace_back();
    volume.mount_path = v["mountPath"].String();
    volume.volume_claim_name = v["volumeClaimName"].String();
    if (json::Reader claim = v["volumeClaim"]; claim.present()) {
      if (claim.is_object()) {
        volume.volume_claim_json = json::Write(*claim.value());
      } else {
        claim.Fail("expected a PersistentVolumeClaimSpec object");
      }
    }
  });
  r["tasks"].ForEach([&](const json::Reader& t) { DecodeTask(t, &spec->tasks.emplace_back()); });
  spec->policies = DecodePolicies(r["policies"]);
  r["plugins"].ForEachMember([&](std::string_view name, const json::Reader& args) {
    spec->plugins[std::string(name)] = args.StringList();
  });
  spec->running_estimate = DecodeDuration(r["runningEstimate"]);
  spec->queue = r["queue"].String();
  spec->max_retry = r["maxRetry"].Int32();
  spec->ttl_seconds_after_finished = r["ttlSecondsAfterFinished"].OptInt32();
  spec->priority_class_name = r["priorityClassName"].String();
  spec->min_success = r["minSuccess"].OptInt32();
  DecodeNetworkTopology(r["networkTopology"], &spec->network_topology);
}

void EncodeJobSpecInto(const JobSpec& spec, JsonObject& o) {
  o.SetString("schedulerName", spec.scheduler_name);
  o.SetInt("minAvailable", spec.min_available);
  o.EditList("volumes", spec.volumes.size(), [&](size_t i, JsonObject& v) {
    const VolumeSpec& volume = spec.volumes[i];
    v.SetString("mountPath", volume.mount_path);
    v.SetString("volumeClaimName", volume.volume_claim_name);
    if (volume.volume_claim_json) {
      v.SetRawJson("volumeClaim", *volume.volume_claim_json);
    } else {
      v.Remove("volumeClaim");
    }
  });
  o.EditList(
      "tasks", spec.tasks.size(),
      [&](size_t i, JsonObject& t) { EncodeTaskInto(spec.tasks[i], t); },
      [&](size_t i) { return spec.tasks[i].name; });
  EncodePoliciesInto(o, spec.policies);
  o.SetStringListMap("plugins", spec.plugins);
  o.SetDuration("runningEstimate", spec.running_estimate);
  o.SetString("queue", spec.queue);
  o.SetInt("maxRetry", spec.max_retry);
  o.SetOptInt("ttlSecondsAfterFinished", spec.ttl_seconds_after_finished);
  o.SetString("priorityClassName", spec.priority_class_name);
  o.SetOptInt("minSuccess", spec.min_success);
  EncodeNetworkTopologyInto(o, "networkTopology", spec.network_topology);
}

void DecodeJobStatus(const json::Reader& r, JobStatus* status) {
  json::Reader state = r["state"];
  status->state.phase = state["phase"].String();
  status->state.reason = state["reason"].String();
  status->state.message = state["message"].String();
  status->state.last_transition_time = DecodeTime(state["lastTransitionTime"]);
  status->min_available = r["minAvailable"].Int32();
  r["taskStatusCount"].ForEachMember([&](std::string_view task, const json::Reader& counts) {
    auto& phases = status->task_status_count[std::string(task)];
    counts["phase"].ForEachMember([&](std::string_view phase, const json::Reader& n) {
      phases[std::string(phase)] = n.Int32();
    });
  });
  status->pending = r["pending"].Int32();
  status->running = r["running"].Int32();
  status->succeeded = r["succeeded"].Int32();
  status->failed = r["failed"].Int32();
  status->terminating = r["terminating"].Int32();
  status->unknown = r["unknown"].Int32();
  status->version = r["version"].Int32();
  status->retry_count = r["retryCount"].Int32();
  status->running_duration = DecodeDuration(r["runningDuration"]);
  status->controlled_resources = r["controlledResources"].StringMap();
  r["conditions"].ForEach([&](const json::Reader& c) {
    status->conditions.push_back({c["status"].String(), DecodeTime(c["lastTransitionTime"])});
  });
}

void EncodeJobStatusInto(const JobStatus& status, JsonObject& o) {
  o.Edit("state", [&](JsonObject& s) {
    s.SetString("phase", status.state.phase);
    s.SetString("reason", status.state.reason);
    s.SetString("message", status.state.message);
    s.SetTime("lastTransitionTime", status.state.last_transition_time);
  });
  o.SetInt("minAvailable", status.min_available);
  std::vector<std::string> tasks;
  for (const auto& [task, counts] : status.task_status_count) tasks.push_back(task);
  o.EditMap("taskStatusCount", tasks, [&](const std::string& task, JsonObject& t) {
    t.SetIntMap("phase", status.task_status_count.at(task));
  });
  o.SetInt("pending", status.pending);
  o.SetInt("running", status.running);
  o.SetInt("succeeded", status.succeeded);
  o.SetInt("failed", status.failed);
  o.SetInt("terminating", status.terminating);
  o.SetInt("unknown", status.unknown);
  o.SetInt("version", status.version);
  o.SetInt("retryCount", status.retry_count);
  o.SetDuration("runningDuration", status.running_duration);
  o.SetStringMap("controlledResources", status.controlled_resources);
  o.EditList("conditions", status.conditions.size(), [&](size_t i, JsonObject& c) {
    c.SetString("status", status.conditions[i].status);
    c.SetTime("lastTransitionTime", status.conditions[i].last_transition_time);
  });
}

void FillJob(const json::Reader& r, Job* job) {
  DecodeJobSpec(r["spec"], &job->spec);
  DecodeJobStatus(r["status"], &job->status);
}

void FillCommand(const json::Reader& r, Command* cmd) {
  cmd->action = r["action"].String();
  if (json::Reader t = r["target"]; t.present()) cmd->target = DecodeOwnerReference(t);
  cmd->reason = r["reason"].String();
  cmd->message = r["message"].String();
}

}  // namespace

void DecodeNetworkTopology(const json::Reader& r, std::optional<NetworkTopologySpec>* out) {
  if (!r.present()) return;
  NetworkTopologySpec& nt = out->emplace();
  nt.mode = r["mode"].String();
  nt.highest_tier_allowed = r["highestTierAllowed"].OptInt32();
  nt.highest_tier_name = r["highestTierName"].String();
}

void EncodeNetworkTopologyInto(JsonObject& o, std::string_view key,
                               const std::optional<NetworkTopologySpec>& nt) {
  o.EditIf(key, nt.has_value(), [&](JsonObject& n) {
    n.SetString("mode", nt->mode);
    n.SetOptInt("highestTierAllowed", nt->highest_tier_allowed);
    n.SetString("highestTierName", nt->highest_tier_name);
  });
}

const TaskSpec* Job::Task(std::string_view name) const {
  for (const TaskSpec& t : spec.tasks) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

int32_t Job::TotalReplicas() const {
  int64_t total = 0;
  for (const TaskSpec& t : spec.tasks) total += t.replicas;
  return static_cast<int32_t>(std::min<int64_t>(total, std::numeric_limits<int32_t>::max()));
}

StatusOr<std::shared_ptr<Job>> DecodeJob(const json::Value& value, const DecodeOptions& options) {
  return DecodeTypedObject<Job>(value, options, "Job", FillJob);
}

StatusOr<std::shared_ptr<Job>> DecodeJob(std::string_view text, const DecodeOptions& options) {
  return DecodeTypedObjectText<Job>(text, options, "Job", FillJob);
}

StatusOr<std::shared_ptr<Command>> DecodeCommand(const json::Value& value,
                                                 const DecodeOptions& options) {
  return DecodeTypedObject<Command>(value, options, "Command", FillCommand);
}

StatusOr<std::shared_ptr<Command>> DecodeCommand(std::string_view text,
                                                 const DecodeOptions& options) {
  return DecodeTypedObjectText<Command>(text, options, "Command", FillCommand);
}

std::string EncodeJob(const Job& job) {
  return EncodeObject(job, [&](JsonObject& o) {
    o.Edit("spec", [&](JsonObject& s) { EncodeJobSpecInto(job.spec, s); });
    o.Edit("status", [&](JsonObject& s) { EncodeJobStatusInto(job.status, s); });
  });
}

std::string EncodeCommand(const Command& command) {
  return EncodeObject(command, [&](JsonObject& o) {
    o.SetString("action", command.action);
    o.EditIf("target", command.target.has_value(),
             [&](JsonObject& t) { EncodeOwnerReferenceInto(*command.target, t); });
    o.SetString("reason", command.reason);
    o.SetString("message", command.message);
  });
}

}  // namespace tephra::api
