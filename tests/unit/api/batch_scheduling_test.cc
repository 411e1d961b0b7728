#include <catch2/catch.hpp>
#include <rapidjson/document.h>

#include "api/batch.h"
#include "api/labels.h"
#include "api/scheduling.h"
#include "tests/unit/api/testing.h"

namespace tephra::api {
namespace {

using std::chrono::seconds;

// Every Job field of docs/compatibility.md §1.1 plus fields Tephra does not model, at several
// depths.
constexpr const char* kJob = R"({
  "apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
  "metadata": {"name": "mpi", "namespace": "team", "uid": "j-1", "generation": 2,
               "annotations": {"volcano.sh/preemptable": "false"}},
  "spec": {
    "schedulerName": "volcano", "minAvailable": 3, "queue": "research", "maxRetry": 5,
    "ttlSecondsAfterFinished": 600, "priorityClassName": "high", "minSuccess": 2,
    "runningEstimate": "2h",
    "networkTopology": {"mode": "hard", "highestTierAllowed": 2},
    "volumes": [{"mountPath": "/data", "volumeClaimName": "shared"},
                {"mountPath": "/scratch", "volumeClaim": {"accessModes": ["ReadWriteOnce"],
                  "resources": {"requests": {"storage": "1Gi"}}, "storageClassName": "fast"}}],
    "plugins": {"mpi": ["--master=master", "--worker=worker"], "svc": [], "ssh": null},
    "policies": [{"event": "PodEvicted", "action": "RestartJob"},
                 {"events": ["TaskCompleted"], "action": "CompleteJob", "timeout": "1m30s"}],
    "tasks": [
      {"name": "master", "replicas": 1, "minAvailable": 1, "maxRetry": 3,
       "policies": [{"exitCode": 3, "action": "RestartTask"}],
       "template": {"metadata": {"labels": {"role": "master"}},
         "spec": {"containers": [{"name": "m", "image": "mpi:1", "command": ["mpirun"],
           "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}],
           "restartPolicy": "OnFailure", "imagePullSecrets": [{"name": "reg"}]}}},
      {"name": "worker", "replicas": 4, "topologyPolicy": "best-effort",
       "dependsOn": {"name": ["master"], "iteration": "any"},
       "partitionPolicy": {"totalPartitions": 2, "partitionSize": 2, "minPartitions": 1,
                           "networkTopology": {"mode": "soft", "highestTierName": "spine"}},
       "template": {"spec": {"containers": [{"name": "w", "image": "mpi:1",
         "resources": {"limits": {"cpu": "2", "nvidia.com/gpu": "1"}}}]}},
       "futureTaskField": {"x": 1}}],
    "futureSpecField": true},
  "status": {
    "state": {"phase": "Running", "reason": "", "lastTransitionTime": "2026-03-01T10:00:00Z"},
    "minAvailable": 3, "pending": 1, "running": 4, "succeeded": 0, "failed": 0,
    "terminating": 0, "unknown": 0, "version": 2, "retryCount": 1, "runningDuration": "5m0s",
    "taskStatusCount": {"master": {"phase": {"Running": 1}},
                        "worker": {"phase": {"Running": 3, "Pending": 1}}},
    "controlledResources": {"plugin-svc": "svc", "volume-pvc-shared": "shared"},
    "conditions": [{"status": "Pending", "lastTransitionTime": "2026-03-01T09:59:00Z"},
                   {"status": "Running", "lastTransitionTime": "2026-03-01T10:00:00Z"}]}
})";

TEST_CASE("DecodeJob reads every spec and status field") {
  auto decoded = DecodeJob(kJob);
  REQUIRE(decoded.ok());
  const Job& job = **decoded;
  const JobSpec& spec = job.spec;
  CHECK(spec.scheduler_name == "volcano");
  CHECK(spec.min_available == 3);
  CHECK(spec.queue == "research");
  CHECK(spec.max_retry == 5);
  CHECK(spec.ttl_seconds_after_finished == 600);
  CHECK(spec.priority_class_name == "high");
  CHECK(spec.min_success == 2);
  CHECK(spec.running_estimate == std::chrono::hours(2));
  REQUIRE(spec.network_topology);
  CHECK(spec.network_topology->highest_tier_allowed == 2);
  REQUIRE(spec.volumes.size() == 2);
  CHECK(spec.volumes[0].volume_claim_name == "shared");
  REQUIRE(spec.volumes[1].volume_claim_json);
  CHECK(spec.volumes[1].volume_claim_json->find("\"storageClassName\":\"fast\"") !=
        std::string::npos);
  CHECK(spec.plugins.at("mpi").size() == 2);
  CHECK(spec.plugins.at("svc").empty());
  CHECK(spec.plugins.count("ssh") == 1);
  REQUIRE(spec.policies.size() == 2);
  CHECK(spec.policies[0].event == "PodEvicted");
  CHECK(spec.policies[1].events == std::vector<std::string>{"TaskCompleted"});
  CHECK(spec.policies[1].timeout == seconds(90));
  REQUIRE(spec.tasks.size() == 2);
  const TaskSpec& master = spec.tasks[0];
  CHECK(master.min_available == 1);
  CHECK(master.max_retry == 3);
  CHECK(master.policies[0].exit_code == 3);
  CHECK(master.template_.metadata.labels.at("role") == "master");
  CHECK(master.template_.spec.containers[0].image == "mpi:1");
  CHECK(master.template_.json.find("imagePullSecrets") != std::string::npos);
  const TaskSpec& worker = *job.Task("worker");
  CHECK_FALSE(worker.min_available);
  CHECK(worker.topology_policy == "best-effort");
  CHECK(worker.depends_on->names == std::vector<std::string>{"master"});
  CHECK(worker.depends_on->iteration == "any");
  CHECK(worker.partition_policy->total_partitions == 2);
  CHECK(worker.partition_policy->min_partitions == 1);
  CHECK(worker.partition_policy->network_topology->highest_tier_name == "spine");
  CHECK(PodRequest(worker.template_.spec).ToString() == "cpu 2, nvidia.com/gpu 1");
  CHECK(job.Task("missing") == nullptr);
  CHECK(job.TotalReplicas() == 5);

  const JobStatus& st = job.status;
  CHECK(st.state.phase == job_phase::kRunning);
  CHECK(st.state.last_transition_time.has_value());
  CHECK(st.min_available == 3);
  CHECK(st.running == 4);
  CHECK(st.version == 2);
  CHECK(st.retry_count == 1);
  CHECK(st.running_duration == std::chrono::minutes(5));
  CHECK(st.task_status_count.at("worker").at("Pending") == 1);
  CHECK(st.controlled_resources.at("plugin-svc") == "svc");
  REQUIRE(st.conditions.size() == 2);
  CHECK(st.conditions[1].status == "Running");
}

TEST_CASE("A Job re-encodes to the same JSON and keeps unknown fields when changed") {
  auto decoded = DecodeJob(kJob, {.keep_raw = true});
  REQUIRE(decoded.ok());
  CHECK(testing::JsonEqual(EncodeJob(**decoded), kJob));

  // A status update as the controller would write it.
  Job job = **decoded;
  job.status.state.phase = std::string(job_phase::kCompleting);
  job.status.running = 0;
  job.status.succeeded = 5;
  job.status.task_status_count.erase("master");
  job.status.task_status_count["worker"] = {{"Succeeded", 4}};
  job.status.conditions.push_back({"Completing", std::nullopt});
  job.spec.tasks[1].replicas = 6;
  job.spec.tasks[1].template_.spec.dns_policy = "ClusterFirstWithHostNet";
  std::swap(job.spec.tasks[0], job.spec.tasks[1]);

  json::Document out;
  REQUIRE(json::Parse(EncodeJob(job), &out).ok());
  CHECK(out["spec"]["futureSpecField"].GetBool());
  const json::Value& worker = out["spec"]["tasks"][0];
  CHECK(std::string(worker["name"].GetString()) == "worker");
  CHECK(worker["replicas"].GetInt() == 6);
  CHECK(worker["futureTaskField"]["x"].GetInt() == 1);
  CHECK(std::string(worker["template"]["spec"]["dnsPolicy"].GetString()) ==
        "ClusterFirstWithHostNet");
  CHECK(std::string(out["spec"]["tasks"][1]["template"]["spec"]["imagePullSecrets"][0]["name"]
                        .GetString()) == "reg");
  CHECK(out["spec"]["plugins"]["svc"].IsArray());
  CHECK(out["spec"]["plugins"]["ssh"].IsNull());
  CHECK(std::string(out["spec"]["policies"][1]["timeout"].GetString()) == "1m30s");
  const json::Value& status = out["status"];
  CHECK(std::string(status["state"]["phase"].GetString()) == "Completing");
  CHECK_FALSE(status.HasMember("running"));
  CHECK(status["succeeded"].GetInt() == 5);
  CHECK_FALSE(status["taskStatusCount"].HasMember("master"));
  CHECK(status["taskStatusCount"]["worker"]["phase"]["Succeeded"].GetInt() == 4);
  CHECK_FALSE(status["taskStatusCount"]["worker"]["phase"].HasMember("Pending"));
  CHECK(status["conditions"].Size() == 3);
  CHECK(std::string(out["spec"]["volumes"][1]["volumeClaim"]["storageClassName"].GetString()) ==
        "fast");
}

TEST_CASE("Numbers beyond int64, uint64 and double keep their text in jobs and pod templates") {
  // A value the codec does not interpret comes back exactly as written, in the Job and in the
  // template text pods are created from; modelled integers written as 3.00 keep that text too.
  constexpr std::string_view kNumbers =
      R"({"big":88888888888888888888888888888888888888888,"huge":1e400,"negZero":-0,)"
      R"("precise":1.0000000000000000001,"exp":1E3,"uint":18446744073709551615})";
  std::string text = R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job",)"
                     R"("metadata":{"name":"j","namespace":"n"},"spec":{"minAvailable":1,)"
                     R"("tasks":[{"name":"t","replicas":3.00,"template":{"spec":{"containers":)"
                     R"([{"name":"c","image":"i","x":)" +
                     std::string(kNumbers) + R"(}]}}}],"y":)" + std::string(kNumbers) + "}}";
  auto decoded = DecodeJob(text, {.keep_raw = true});
  REQUIRE(decoded.ok());
  CHECK((*decoded)->spec.tasks[0].replicas == 3);
  CHECK(EncodeJob(**decoded) == text);
  CHECK((*decoded)->spec.tasks[0].template_.json.find(kNumbers) != std::string::npos);

  Job changed = **decoded;
  changed.spec.tasks[0].template_.spec.dns_policy = "None";
  SyncPodTemplateJson(&changed.spec.tasks[0].template_);
  CHECK(changed.spec.tasks[0].template_.json.find(kNumbers) != std::string::npos);
  CHECK(EncodeJob(changed).find(kNumbers) != std::string::npos);
}

TEST_CASE("Job decode errors carry the field path") {
  auto bad = DecodeJob(R"({"metadata":{"name":"j","namespace":"n"},"spec":{
      "minAvailable":"3","tasks":[{"name":"a","replicas":1},{"name":"b","replicas":1.5,
      "template":{"spec":{"containers":[{"name":"c","resources":{"limits":{"cpu":"lots"}}}]}},
      "policies":[{"event":"PodFailed","timeout":"soon"}]}],"plugins":{"svc":"x"}}})");
  REQUIRE_FALSE(bad.ok());
  const std::string msg = bad.status().message();
  CHECK(msg.rfind("Job n/j: ", 0) == 0);
  for (const char* part :
       {"spec.minAvailable: expected integer, got string",
        "spec.tasks[1].replicas: expected integer, got number",
        "spec.tasks[1].template.spec.containers[0].resources.limits.cpu: invalid quantity",
        "spec.tasks[1].policies[0].timeout: invalid duration \"soon\"",
        "spec.plugins.svc: expected array, got string"}) {
    INFO(part);
    CHECK(msg.find(part) != std::string::npos);
  }
}

constexpr const char* kQueue = R"({
  "apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
  "metadata": {"name": "research", "annotations": {"volcano.sh/hierarchy": "root/research"}},
  "spec": {"weight": 4, "capability": {"cpu": 64, "memory": "256Gi", "nvidia.com/gpu": "8"},
           "reclaimable": false, "parent": "root", "priority": 10, "type": "team",
           "deserved": {"cpu": "32"}, "guarantee": {"resource": {"cpu": "8"}},
           "dequeueStrategy": "traverse",
           "affinity": {"nodeGroupAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": ["ng1"]},
                        "nodeGroupAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": ["ng2"]}},
           "extendClusters": [{"name": "east", "weight": 2, "capacity": {"cpu": "100"}}]},
  "status": {"state": "Open", "allocated": {"cpu": "12", "memory": "48Gi"},
             "reservation": {"nodes": ["n1"], "resource": {"cpu": "1"}}, "running": 3}
})";

TEST_CASE("Queue decodes, re-encodes unchanged and writes status updates") {
  auto decoded = DecodeQueue(kQueue, {.keep_raw = true});
  REQUIRE(decoded.ok());
  const Queue& q = **decoded;
  CHECK(q.spec.weight == 4);
  CHECK(q.spec.capability.Find("cpu")->Value() == 64);  // a JSON number is a quantity too
  CHECK(q.spec.reclaimable == false);
  CHECK(q.spec.guarantee->Find("cpu")->Value() == 8);
  CHECK(q.spec.deserved.Find("cpu")->Value() == 32);
  CHECK(q.spec.affinity->node_group_affinity->required == std::vector<std::string>{"ng1"});
  CHECK(q.spec.affinity->node_group_anti_affinity->preferred == std::vector<std::string>{"ng2"});
  CHECK(q.spec.extend_clusters[0].weight == 2);
  CHECK(q.spec.dequeue_strategy == "traverse");
  CHECK(q.status.state == queue_state::kOpen);
  CHECK(q.status.reservation->nodes == std::vector<std::string>{"n1"});
  CHECK(q.ParentName() == "root");
  CHECK(testing::JsonEqual(EncodeQueue(q), kQueue));

  Queue updated = q;
  updated.status.allocated = Resources::FromString("cpu=14,memory=50Gi")->ToList();
  json::Document out;
  REQUIRE(json::Parse(EncodeQueue(updated), &out).ok());
  CHECK(std::string(out["status"]["allocated"]["cpu"].GetString()) == "14");
  CHECK(std::string(out["status"]["allocated"]["memory"].GetString()) == "50Gi");
  CHECK(out["spec"]["capability"]["cpu"].GetInt() == 64);  // untouched, still a number
  CHECK(out["status"]["running"].GetInt() == 3);

  Queue root;
  root.metadata.name = "root";
  CHECK(root.ParentName().empty());
  Queue child;
  child.metadata.name = "a";
  CHECK(child.ParentName() == "root");
}

constexpr const char* kPodGroup = R"({
  "apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
  "metadata": {"name": "mpi-j-1", "namespace": "team",
               "ownerReferences": [{"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
                                    "name": "mpi", "uid": "j-1", "controller": true}]},
  "spec": {"minMember": 3, "minTaskMember": {"master": 1, "worker": 2}, "queue": "research",
           "priorityClassName": "high", "minResources": {"cpu": "5", "memory": "3Gi"},
           "networkTopology": {"mode": "hard", "highestTierAllowed": 1},
           "subGroupPolicy": [{"name": "worker", "subGroupSize": 2, "minSubGroups": 1,
             "labelSelector": {"matchLabels": {"volcano.sh/task-spec": "worker"}},
             "matchLabelKeys": ["volcano.sh/partition-id"],
             "networkTopology": {"mode": "soft"}}]},
  "status": {"phase": "Running", "running": 3, "succeeded": 0, "failed": 0,
             "conditions": [{"type": "Scheduled", "status": "True", "transitionID": "s-1",
                             "lastTransitionTime": "2026-03-01T10:00:00Z",
                             "reason": "tasks in gang are ready to be scheduled", "message": ""}]}
})";

TEST_CASE("PodGroup decodes and round-trips and an empty minResources stays distinct from none") {
  auto decoded = DecodePodGroup(kPodGroup, {.keep_raw = true});
  REQUIRE(decoded.ok());
  const PodGroup& pg = **decoded;
  CHECK(pg.spec.min_member == 3);
  CHECK(pg.spec.min_task_member.at("worker") == 2);
  CHECK(Resources::FromList(*pg.spec.min_resources).ToString() == "cpu 5, memory 3Gi");
  CHECK(pg.spec.network_topology->highest_tier_allowed == 1);
  CHECK(pg.spec.sub_group_policy[0].sub_group_size == 2);
  CHECK(pg.spec.sub_group_policy[0].label_selector->match_labels.at(std::string(kTaskSpecKey)) ==
        "worker");
  CHECK(pg.status.phase == podgroup_phase::kRunning);
  CHECK(pg.status.conditions[0].transition_id == "s-1");
  CHECK(testing::JsonEqual(EncodePodGroup(pg), kPodGroup));

  PodGroup fresh;
  fresh.api_version = std::string(kSchedulingApiVersion);
  fresh.kind = std::string(kPodGroupKind);
  fresh.metadata.name = "pg";
  fresh.metadata.namespace_ = "ns";
  fresh.spec.min_member = 1;
  fresh.spec.queue = "default";
  fresh.spec.min_resources = ResourceList{};
  CHECK(testing::JsonEqual(EncodePodGroup(fresh), R"({"apiVersion":"scheduling.volcano.sh/v1beta1",
      "kind":"PodGroup","metadata":{"name":"pg","namespace":"ns"},
      "spec":{"minMember":1,"queue":"default","minResources":{}}})"));
  auto again = DecodePodGroup(EncodePodGroup(fresh));
  REQUIRE(again.ok());
  CHECK((*again)->spec.min_resources.has_value());
  CHECK((*again)->spec.min_resources->empty());
}

TEST_CASE("PodGroup phases convert to and from their names") {
  for (PodGroupPhase phase :
       {PodGroupPhase::kNone, PodGroupPhase::kPending, PodGroupPhase::kInqueue,
        PodGroupPhase::kRunning, PodGroupPhase::kUnknown, PodGroupPhase::kCompleted}) {
    CHECK(PodGroupPhaseFromString(ToString(phase)) == phase);
  }
  CHECK(ToString(PodGroupPhase::kNone).empty());
  CHECK(ToString(PodGroupPhase::kInqueue) == podgroup_phase::kInqueue);
  CHECK(PodGroupPhaseFromString("Completed") == PodGroupPhase::kCompleted);
  CHECK(PodGroupPhaseFromString("Finished") == PodGroupPhase::kUnknown);
  CHECK(PodGroupPhaseFromString("inqueue") == PodGroupPhase::kUnknown);
}

TEST_CASE("Command decodes its top-level fields and encodes a new command") {
  const char* text = R"({"apiVersion":"bus.volcano.sh/v1alpha1","kind":"Command",
      "metadata":{"generateName":"mpi-abortjob-","namespace":"team"},"action":"AbortJob",
      "target":{"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","name":"mpi","uid":"j-1",
                "controller":true},"reason":"user","message":"stop it"})";
  auto cmd = DecodeCommand(text, {.keep_raw = true});
  REQUIRE(cmd.ok());
  CHECK((*cmd)->action == job_action::kAbortJob);
  CHECK((*cmd)->target->kind == kJobKind);
  CHECK((*cmd)->target->controller);
  CHECK((*cmd)->reason == "user");
  CHECK(testing::JsonEqual(EncodeCommand(**cmd), text));

  Command fresh;
  fresh.api_version = std::string(kBusApiVersion);
  fresh.kind = std::string(kCommandKind);
  fresh.metadata.generate_name = "q-closequeue-";
  fresh.action = std::string(job_action::kCloseQueue);
  fresh.target = kube::OwnerReference{
      std::string(kSchedulingApiVersion), std::string(kQueueKind), "q", "q-uid", false, false};
  CHECK(testing::JsonEqual(EncodeCommand(fresh), R"({"apiVersion":"bus.volcano.sh/v1alpha1",
      "kind":"Command","metadata":{"generateName":"q-closequeue-"},"action":"CloseQueue",
      "target":{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","name":"q",
                "uid":"q-uid"}})"));
}

TEST_CASE("A scheduler-plugins PodGroup maps onto the Volcano model") {
  const char* text = R"({"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"PodGroup",
      "metadata":{"name":"nginx","namespace":"web"},
      "spec":{"minMember":3,"minResources":{"cpu":"3"},"scheduleTimeoutSeconds":10},
      "status":{"phase":"Scheduling","occupiedBy":"rs-uid","running":1,
                "scheduleStartTime":"2026-03-01T10:00:00Z"}})";
  auto decoded = DecodeSchedPluginsPodGroup(text, {.keep_raw = true});
  REQUIRE(decoded.ok());
  const SchedPluginsPodGroup& in = **decoded;
  CHECK(in.spec.schedule_timeout_seconds == 10);
  CHECK(in.status.occupied_by == "rs-uid");
  CHECK(testing::JsonEqual(EncodeSchedPluginsPodGroup(in), text));

  PodGroup pg = ToVolcanoPodGroup(in, "default");
  CHECK(pg.metadata.Key() == "web/nginx");
  CHECK(pg.api_version == kSchedPluginsApiVersion);
  CHECK(pg.spec.min_member == 3);
  CHECK(pg.spec.queue == "default");
  CHECK(pg.spec.min_resources->Find("cpu")->Value() == 3);
  CHECK(pg.status.phase == podgroup_phase::kInqueue);
  CHECK(pg.status.running == 1);
  // Coscheduling's per-group timeout becomes Tephra's gang schedule timeout.
  CHECK(pg.metadata.Annotation(kScheduleTimeoutKey) == "10s");

  struct Case {
    const char* from;
    std::string_view to;
  };
  for (const Case& c :
       {Case{"", podgroup_phase::kPending}, Case{"Pending", podgroup_phase::kPending},
        Case{"Running", podgroup_phase::kRunning}, Case{"Finished", podgroup_phase::kCompleted},
        Case{"Failed", podgroup_phase::kCompleted}, Case{"Unknown", podgroup_phase::kUnknown},
        Case{"Whatever", podgroup_phase::kUnknown}}) {
    SchedPluginsPodGroup p;
    p.status.phase = c.from;
    CHECK(ToVolcanoPodGroup(p, "q").status.phase == c.to);
  }
  SchedPluginsPodGroup no_min;
  CHECK_FALSE(ToVolcanoPodGroup(no_min, "q").spec.min_resources);
  CHECK(SchedPluginsPhaseFor(podgroup_phase::kInqueue) == "Scheduling");
  CHECK(SchedPluginsPhaseFor(podgroup_phase::kCompleted) == "Finished");
  CHECK(SchedPluginsPhaseFor(podgroup_phase::kRunning) == "Running");
  CHECK(SchedPluginsPhaseFor("bogus") == "Unknown");
}

}  // namespace
}  // namespace tephra::api
