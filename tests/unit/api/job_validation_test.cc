// Job admission rules of docs/compatibility.md §3.3: one case per rule, each with the exact errors
// expected.
#include <functional>
#include <pthread.h>
#include <string>

#include <catch2/catch.hpp>

#include "api/validation.h"
#include "tests/unit/api/testing.h"

namespace tephra::api {
namespace {

constexpr const char* kValidJob = R"({
  "apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
  "metadata": {"name": "train", "namespace": "team"},
  "spec": {"schedulerName": "volcano", "minAvailable": 3, "queue": "research", "maxRetry": 3,
    "policies": [{"event": "PodEvicted", "action": "RestartJob"}],
    "plugins": {"svc": [], "env": []},
    "tasks": [
      {"name": "ps", "replicas": 1, "minAvailable": 1, "maxRetry": 3,
       "template": {"spec": {"restartPolicy": "Never", "containers": [
         {"name": "c", "image": "img", "resources": {"requests": {"cpu": "1"}}}]}}},
      {"name": "worker", "replicas": 2, "minAvailable": 2, "maxRetry": 3,
       "template": {"spec": {"restartPolicy": "Never", "containers": [
         {"name": "c", "image": "img", "resources": {"requests": {"cpu": "2"}}}]}}}]}})";

Job ValidJob() {
  auto job = DecodeJob(kValidJob);
  REQUIRE(job.ok());
  return **job;
}

std::shared_ptr<Queue> MakeQueue(const std::string& name, const std::string& state,
                                 const std::string& parent = "") {
  auto q = std::make_shared<Queue>();
  q->metadata.name = name;
  q->status.state = state;
  q->spec.parent = parent;
  return q;
}

StaticQueueLookup Queues() {
  return StaticQueueLookup({MakeQueue("root", "Open"), MakeQueue("default", "Open"),
                            MakeQueue("research", "Open"), MakeQueue("frozen", "Closed"),
                            MakeQueue("org", "Open"), MakeQueue("org-team", "Open", "org")});
}

const std::string kUpdatable =
    "may not be changed; job updates may only change minAvailable, priorityClassName, "
    "tasks[*].replicas and tasks[*].minAvailable";

TEST_CASE("The base job is valid") {
  StaticQueueLookup queues = Queues();
  CHECK(ValidateJobCreate(ValidJob(), &queues) == FieldErrors{});
  CHECK(ValidateJobUpdate(ValidJob(), ValidJob()) == FieldErrors{});
}

struct CreateCase {
  const char* rule;
  std::function<void(Job&)> mutate;
  FieldErrors expected;
};

TEST_CASE("Job CREATE rules") {
  StaticQueueLookup queues = Queues();
  const CreateCase cases[] = {
      {"a job needs tasks",
       [](Job& j) {
         j.spec.tasks.clear();
         j.spec.min_available = 0;
       },
       {{"spec.tasks", "No task specified in job spec"}}},
      {"the mpi plugin's master task must exist",
       [](Job& j) {
         j.spec.plugins["mpi"] = {"--master=launcher", "--worker=worker"};
       },
       {{"spec.plugins.mpi",
         "the mpi plugin's master task \"launcher\" is not a task of this job"}}},
      {"the mpi master defaults to \"master\"",
       [](Job& j) { j.spec.plugins["mpi"] = {}; },
       {{"spec.plugins.mpi", "the mpi plugin's master task \"master\" is not a task of this job"}}},
      {"network topology tiers are exclusive",
       [](Job& j) {
         j.spec.network_topology = NetworkTopologySpec{"hard", 1, "spine"};
       },
       {{"spec.networkTopology",
         "highestTierAllowed and highestTierName are mutually exclusive; set only one"}}},
      {"network topology mode is hard or soft",
       [](Job& j) {
         j.spec.network_topology = NetworkTopologySpec{"strict", 1, ""};
       },
       {{"spec.networkTopology.mode", "must be hard or soft, not \"strict\""}}},
      {"task minAvailable <= replicas",
       [](Job& j) { j.spec.tasks[1].min_available = 3; },
       {{"spec.tasks[1].minAvailable", "must be less than or equal to replicas (2)"}}},
      {"task minAvailable >= 0",
       [](Job& j) { j.spec.tasks[1].min_available = -1; },
       {{"spec.tasks[1].minAvailable", "must be greater than or equal to 0"}}},
      {"task names are unique",
       [](Job& j) { j.spec.tasks[1].name = "ps"; },
       {{"spec.tasks[1].name", "duplicate task name \"ps\""}}},
      {"task names are DNS labels",
       [](Job& j) { j.spec.tasks[1].name = "Worker"; },
       {{"spec.tasks[1].name",
         "task name \"Worker\" must consist of lower case alphanumeric characters or '-', and "
         "must start and end with an alphanumeric character"}}},
      {"task policies follow the policy rules",
       [](Job& j) {
         j.spec.tasks[0].policies = {{"RestartTask", "PodBoom", {}, {}, {}}};
       },
       {{"spec.tasks[0].policies[0].event",
         "invalid event \"PodBoom\"; valid events: *, PodFailed, PodEvicted, PodPending, "
         "Unknown, TaskCompleted, TaskFailed, JobUpdated"}}},
      {"generated pod names are qualified names",
       [](Job& j) { j.metadata.name = std::string(55, 'a'); },
       {{"spec.tasks[1].name", "generated pod name \"" + std::string(55, 'a') +
                                   "-worker-1\" name part must be no more than 63 characters"}}},
      {"pod templates are validated",
       [](Job& j) { j.spec.tasks[0].template_.spec.containers[0].image.clear(); },
       {{"spec.tasks[0].template.spec.containers[0].image", "is required"}}},
      {"a NUMA topology policy needs whole cpus",
       [](Job& j) {
         j.spec.tasks[0].topology_policy = "single-numa-node";
         j.spec.tasks[0].template_.spec.containers[0].resources.requests.Set(
             "cpu", *Quantity::Parse("1500m"));
       },
       {{"spec.tasks[0].topologyPolicy",
         "topologyPolicy single-numa-node requires a whole number of cpus in every container; "
         "container \"c\" requests 1500m"}}},
      {"a NUMA topology policy reads limits when requests are missing",
       [](Job& j) {
         j.spec.tasks[0].topology_policy = "restricted";
         auto& res = j.spec.tasks[0].template_.spec.containers[0].resources;
         res.requests = {};
         res.limits.Set("cpu", *Quantity::Parse("2"));
       },
       {}},
      {"topologyPolicy values are known",
       [](Job& j) { j.spec.tasks[0].topology_policy = "numa"; },
       {{"spec.tasks[0].topologyPolicy",
         "must be one of none, best-effort, restricted, single-numa-node, not \"numa\""}}},
      {"partitioned tasks have replicas = totalPartitions × partitionSize",
       [](Job& j) {
         j.spec.tasks[1].partition_policy = PartitionPolicy{2, 2, 1, {}};
       },
       {{"spec.tasks[1].replicas",
         "must equal totalPartitions × partitionSize (4) when partitionPolicy is set"}}},
      {"partition sizes are positive",
       [](Job& j) {
         j.spec.tasks[1].partition_policy = PartitionPolicy{0, 0, 0, {}};
       },
       {{"spec.tasks[1].partitionPolicy.totalPartitions", "must be greater than 0"},
        {"spec.tasks[1].partitionPolicy.partitionSize", "must be greater than 0"}}},
      {"with minPartitions, minAvailable = minPartitions × partitionSize",
       [](Job& j) {
         j.spec.tasks[1].partition_policy = PartitionPolicy{2, 1, 1, {}};
         j.spec.tasks[1].min_available = 2;
       },
       {{"spec.tasks[1].minAvailable",
         "must equal minPartitions × partitionSize (1) when minPartitions is set"}}},
      {"minPartitions <= totalPartitions",
       [](Job& j) {
         j.spec.tasks[1].partition_policy = PartitionPolicy{2, 1, 3, {}};
       },
       {{"spec.tasks[1].partitionPolicy.minPartitions",
         "must be less than or equal to totalPartitions (2)"},
        {"spec.tasks[1].minAvailable",
         "must equal minPartitions × partitionSize (3) when minPartitions is set"}}},
      {"partition network topology tiers are exclusive",
       [](Job& j) {
         j.spec.tasks[1].partition_policy =
             PartitionPolicy{2, 1, 0, NetworkTopologySpec{"", 1, "leaf"}};
       },
       {{"spec.tasks[1].partitionPolicy.networkTopology",
         "highestTierAllowed and highestTierName are mutually exclusive; set only one"}}},
      {"job names are qualified names",
       [](Job& j) { j.metadata.name = "train_"; },
       {{"metadata.name",
         "job name \"train_\" name part must consist of alphanumeric characters, '-', '_' or "
         "'.', and must start and end with an alphanumeric character"}}},
      {"minAvailable <= Σ replicas",
       [](Job& j) { j.spec.min_available = 4; },
       {{"spec.minAvailable",
         "must be less than or equal to the total replicas of all tasks (3)"}}},
      {"job policies follow the policy rules",
       [](Job& j) { j.spec.policies[0].action = "Explode"; },
       {{"spec.policies[0].action",
         "invalid action \"Explode\"; valid actions: AbortJob, RestartJob, RestartTask, "
         "RestartPod, RestartPartition, TerminateJob, CompleteJob, ResumeJob"}}},
      {"job plugins are known",
       [](Job& j) { j.spec.plugins["gpu-share"] = {}; },
       {{"spec.plugins.gpu-share",
         "unknown job plugin \"gpu-share\"; supported: env, svc, ssh, mpi, pytorch, tensorflow, "
         "ray, hcclrank"}}},
      {"volumes need a mountPath and one claim source",
       [](Job& j) {
         j.spec.volumes = {VolumeSpec{"", "", std::nullopt}};
       },
       {{"spec.volumes[0].mountPath", "is required"},
        {"spec.volumes[0]", "exactly one of volumeClaim and volumeClaimName must be set"}}},
      {"volume mountPaths are unique and have no ':'",
       [](Job& j) {
         j.spec.volumes = {VolumeSpec{"/data", "a", std::nullopt},
                           VolumeSpec{"/data", "b", std::nullopt},
                           VolumeSpec{"/x:y", "c", std::nullopt}};
       },
       {{"spec.volumes[1].mountPath", "duplicate mountPath \"/data\""},
        {"spec.volumes[2].mountPath", "must not contain ':'"}}},
      {"volumeClaim and volumeClaimName are exclusive; claim names are valid",
       [](Job& j) {
         j.spec.volumes = {VolumeSpec{"/a", "pvc", std::string("{}")},
                           VolumeSpec{"/b", "Bad_Name", std::nullopt}};
       },
       {{"spec.volumes[0]", "exactly one of volumeClaim and volumeClaimName must be set"},
        {"spec.volumes[1].volumeClaimName",
         "claim name \"Bad_Name\" must consist of lower case alphanumeric characters, '-' or '.', "
         "and must start and end with an alphanumeric character"}}},
      {"the queue must exist",
       [](Job& j) { j.spec.queue = "nowhere"; },
       {{"spec.queue", "queue \"nowhere\" does not exist"}}},
      {"the queue must be Open",
       [](Job& j) { j.spec.queue = "frozen"; },
       {{"spec.queue",
         "can only submit job to queue with state Open; queue \"frozen\" is \"Closed\""}}},
      {"the queue must not be root",
       [](Job& j) { j.spec.queue = "root"; },
       {{"spec.queue", "can not submit job to the root queue"}}},
      {"the queue must be a leaf",
       [](Job& j) { j.spec.queue = "org"; },
       {{"spec.queue", "can only submit job to a leaf queue; queue \"org\" has child queues"}}},
      {"an empty queue means default", [](Job& j) { j.spec.queue.clear(); }, {}},
      {"dependsOn names existing tasks",
       [](Job& j) {
         j.spec.tasks[1].depends_on = DependsOn{{"ps", "chief"}, "all"};
       },
       {{"spec.tasks[1].dependsOn.name[1]", "unknown task \"chief\""}}},
      {"a task cannot depend on itself",
       [](Job& j) {
         j.spec.tasks[1].depends_on = DependsOn{{"worker"}, ""};
       },
       {{"spec.tasks[1].dependsOn.name[0]", "a task cannot depend on itself"}}},
      {"dependsOn forms a DAG",
       [](Job& j) {
         j.spec.tasks[0].depends_on = DependsOn{{"worker"}, ""};
         j.spec.tasks[1].depends_on = DependsOn{{"ps"}, "any"};
       },
       {{"spec.tasks", "dependsOn forms a cycle: ps -> worker -> ps"}}},
      // Volcano reads every iteration other than "any" as "all" and refuses none.
      {"dependsOn iteration is free text",
       [](Job& j) {
         j.spec.tasks[1].depends_on = DependsOn{{"ps"}, "some"};
       },
       {}},
      {"ranges of the top-level counters",
       [](Job& j) {
         j.spec.max_retry = -1;
         j.spec.ttl_seconds_after_finished = -5;
         j.spec.min_success = 0;
         j.spec.tasks[0].max_retry = -2;
       },
       {{"spec.tasks[0].maxRetry", "must be greater than or equal to 0"},
        {"spec.maxRetry", "must be greater than or equal to 0"},
        {"spec.ttlSecondsAfterFinished", "must be greater than or equal to 0"},
        {"spec.minSuccess", "must be greater than or equal to 1"}}},
      {"a deadline that is no RFC 3339 time (Tephra's own annotation)",
       [](Job& j) { j.metadata.annotations["tephra.dev/deadline"] = "friday"; },
       {{"metadata.annotations[tephra.dev/deadline]",
         "must be an RFC 3339 time such as 2026-12-31T18:00:00Z"}}},
      {"a restart back-off that is no positive duration",
       [](Job& j) {
         j.metadata.annotations["tephra.dev/restart-backoff"] = "10";
         j.metadata.annotations["tephra.dev/restart-backoff-max"] = "-1m";
       },
       {{"metadata.annotations[tephra.dev/restart-backoff]",
         "must be a positive duration such as 10s or 2m30s"},
        {"metadata.annotations[tephra.dev/restart-backoff-max]",
         "must be a positive duration such as 10s or 2m30s"}}},
      {"a schedule timeout and back-off that are no positive durations",
       [](Job& j) {
         j.metadata.annotations["tephra.dev/schedule-timeout"] = "0s";
         j.metadata.annotations["tephra.dev/schedule-backoff"] = "soon";
       },
       {{"metadata.annotations[tephra.dev/schedule-timeout]",
         "must be a positive duration such as 10s or 2m30s"},
        {"metadata.annotations[tephra.dev/schedule-backoff]",
         "must be a positive duration such as 10s or 2m30s"}}},
      {"a deadline that is one",
       [](Job& j) { j.metadata.annotations["tephra.dev/deadline"] = "2026-12-31T18:00:00Z"; },
       {}},
  };
  for (const CreateCase& c : cases) {
    INFO("rule: " << c.rule);
    Job job = ValidJob();
    c.mutate(job);
    CHECK(ValidateJobCreate(job, &queues) == c.expected);
  }
}

// Runs fn on a thread whose stack is only `bytes` large, as a crash test of stack use.
void OnSmallStack(size_t bytes, const std::function<void()>& fn) {
  pthread_attr_t attr;
  REQUIRE(pthread_attr_init(&attr) == 0);
  REQUIRE(pthread_attr_setstacksize(&attr, bytes) == 0);
  pthread_t thread;
  auto run = [](void* arg) -> void* {
    (*static_cast<const std::function<void()>*>(arg))();
    return nullptr;
  };
  REQUIRE(pthread_create(&thread, &attr, run, const_cast<std::function<void()>*>(&fn)) == 0);
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
}

TEST_CASE("A dependsOn chain of any length needs no stack in proportion to it") {
  // Issue 17: a chain of ~42,000 tasks overflowed the stack of the recursive cycle check.
  constexpr size_t kTasks = 42'000;
  Job job = ValidJob();
  TaskSpec task = job.spec.tasks[0];
  job.spec.tasks.clear();
  for (size_t i = 0; i < kTasks; ++i) {
    task.name = "t" + std::to_string(i);
    task.depends_on = DependsOn{{"t" + std::to_string((i + 1) % kTasks)}, ""};
    job.spec.tasks.push_back(task);
  }
  job.spec.tasks.back().depends_on.reset();  // a chain...
  FieldErrors chain;
  OnSmallStack(256 * 1024, [&] { chain = ValidateJobCreate(job, nullptr); });
  CHECK(chain.empty());
  job.spec.tasks.back().depends_on = DependsOn{{"t0"}, ""};  // ...and a cycle
  FieldErrors cycle;
  OnSmallStack(256 * 1024, [&] { cycle = ValidateJobCreate(job, nullptr); });
  CHECK(cycle == FieldErrors{{"spec.tasks",
                              "dependsOn forms a cycle: t0 -> t1 -> t2 -> t3 -> ... -> "
                              "t41997 -> t41998 -> t41999 -> t0 (42000 tasks)"}});
}

TEST_CASE("Queue rules are skipped without queue state") {
  Job job = ValidJob();
  job.spec.queue = "nowhere";
  CHECK(ValidateJobCreate(job, nullptr) == FieldErrors{});
}

struct PolicyCase {
  const char* rule;
  std::vector<LifecyclePolicy> policies;
  FieldErrors expected;
};

TEST_CASE("Lifecycle policy rules") {
  const PolicyCase cases[] = {
      {"valid policies",
       {{"RestartJob", "PodEvicted", {}, {}, {}},
        {"AbortJob", "", {"PodFailed", "TaskFailed"}, {}, std::chrono::seconds(30)},
        {"RestartTask", "", {}, 3, {}},
        {"TerminateJob", "", {}, 137, {}}},
       {}},
      {"event and exitCode are exclusive",
       {{"RestartJob", "PodFailed", {}, 1, {}}},
       {{"p[0]", "event(s) and exitCode are mutually exclusive"}}},
      {"one of event, events or exitCode is required",
       {{"RestartJob", "", {}, {}, {}}},
       {{"p[0]", "one of event, events or exitCode is required"}}},
      {"events come from the allowed list",
       {{"RestartJob", "", {"PodFailed", "PodRunning"}, {}, {}}},
       {{"p[0].events[1]",
         "invalid event \"PodRunning\"; valid events: *, PodFailed, PodEvicted, PodPending, "
         "Unknown, TaskCompleted, TaskFailed, JobUpdated"}}},
      {"actions come from the allowed list",
       {{"SyncJob", "PodFailed", {}, {}, {}}},
       {{"p[0].action",
         "invalid action \"SyncJob\"; valid actions: AbortJob, RestartJob, RestartTask, "
         "RestartPod, RestartPartition, TerminateJob, CompleteJob, ResumeJob"}}},
      {"an event belongs to one policy",
       {{"RestartJob", "PodFailed", {}, {}, {}}, {"AbortJob", "", {"PodFailed"}, {}, {}}},
       {{"p[1].events[0]", "event \"PodFailed\" is already handled by p[0]"}}},
      {"exit code 0 is not a failure",
       {{"RestartJob", "", {}, 0, {}}},
       {{"p[0].exitCode", "must not be 0 (exit code 0 means success)"}}},
      {"exit codes are unique",
       {{"RestartJob", "", {}, 2, {}}, {"AbortJob", "", {}, 2, {}}},
       {{"p[1].exitCode", "duplicate exitCode 2"}}},
      {"* must be the only event",
       {{"RestartJob", "*", {}, {}, {}}, {"AbortJob", "PodFailed", {}, {}, {}}},
       {{"p", "when event \"*\" is used it must be the only event"}}},
      {"* alone is fine", {{"RestartJob", "*", {}, {}, {}}, {"AbortJob", "", {}, 9, {}}}, {}},
      // Volcano reads one policy's events as a set (tests/compat webhook-repeated-lifecycle-event).
      {"a policy may name an event twice",
       {{"RestartJob", "", {"PodEvicted", "PodFailed", "PodEvicted"}, {}, {}}},
       {}},
      {"event and events may name the same event",
       {{"RestartJob", "PodFailed", {"PodFailed"}, {}, {}}},
       {}},
      {"* named twice is still alone", {{"RestartJob", "", {"*", "*"}, {}, {}}}, {}},
  };
  for (const PolicyCase& c : cases) {
    INFO("rule: " << c.rule);
    CHECK(ValidateLifecyclePolicies(c.policies, "p") == c.expected);
  }
}

struct UpdateCase {
  const char* rule;
  std::function<void(Job&)> mutate;
  FieldErrors expected;
};

TEST_CASE("Job UPDATE rules") {
  const UpdateCase cases[] = {
      {"scaling and gang size may change",
       [](Job& j) {
         j.spec.tasks[1].replicas = 4;
         j.spec.tasks[1].min_available = 3;
         j.spec.min_available = 5;
         j.spec.priority_class_name = "urgent";
       },
       {}},
      {"replicas >= 0",
       [](Job& j) {
         j.spec.tasks[1].replicas = -1;
         j.spec.tasks[1].min_available = 0;
         j.spec.min_available = 1;
       },
       {{"spec.tasks[1].replicas", "must be greater than or equal to 0"}}},
      {"task minAvailable within [0, replicas]",
       [](Job& j) { j.spec.tasks[0].min_available = 2; },
       {{"spec.tasks[0].minAvailable", "must be less than or equal to replicas (1)"}}},
      {"job minAvailable within [0, Σ replicas]",
       [](Job& j) { j.spec.min_available = 9; },
       {{"spec.minAvailable",
         "must be less than or equal to the total replicas of all tasks (3)"}}},
      {"negative job minAvailable",
       [](Job& j) { j.spec.min_available = -1; },
       {{"spec.minAvailable", "must be greater than or equal to 0"}}},
      {"partition rules still hold",
       [](Job& j) {
         j.spec.tasks[1].partition_policy = PartitionPolicy{2, 1, 0, {}};
       },
       {{"spec.tasks[1].partitionPolicy", kUpdatable}}},
      {"topology tiers stay exclusive",
       [](Job& j) {
         j.spec.network_topology = NetworkTopologySpec{"hard", 1, "x"};
       },
       {{"spec.networkTopology",
         "highestTierAllowed and highestTierName are mutually exclusive; set only one"},
        {"spec.networkTopology", kUpdatable}}},
      {"the task count is fixed",
       [](Job& j) {
         j.spec.tasks.push_back(j.spec.tasks[1]);
         j.spec.tasks.back().name = "extra";
       },
       {{"spec.tasks", "the number of tasks may not change (was 2, now 3)"}}},
      {"the queue is fixed", [](Job& j) { j.spec.queue = "other"; }, {{"spec.queue", kUpdatable}}},
      {"task templates are fixed",
       [](Job& j) {
         j.spec.tasks[0].template_.json = R"({"spec":{"containers":[{"name":"c","image":"v2"}]}})";
       },
       {{"spec.tasks[0].template", kUpdatable}}},
      {"other fields are fixed",
       [](Job& j) {
         j.spec.scheduler_name = "other";
         j.spec.max_retry = 7;
         j.spec.plugins["ssh"] = {};
         j.spec.policies.clear();
         j.spec.tasks[1].name = "workers";
         j.spec.tasks[1].max_retry = 1;
         j.spec.ttl_seconds_after_finished = 60;
       },
       {{"spec.tasks[1].name", kUpdatable},
        {"spec.tasks[1].maxRetry", kUpdatable},
        {"spec.schedulerName", kUpdatable},
        {"spec.policies", kUpdatable},
        {"spec.plugins", kUpdatable},
        {"spec.maxRetry", kUpdatable},
        {"spec.ttlSecondsAfterFinished", kUpdatable}}},
  };
  for (const UpdateCase& c : cases) {
    INFO("rule: " << c.rule);
    Job updated = ValidJob();
    c.mutate(updated);
    CHECK(ValidateJobUpdate(ValidJob(), updated) == c.expected);
  }
}

TEST_CASE("A generated PVC name filled in by the controller is not a user change") {
  Job old_job = ValidJob();
  old_job.spec.volumes = {VolumeSpec{"/scratch", "", std::string(R"({"accessModes":["RWO"]})")}};
  Job new_job = old_job;
  new_job.spec.volumes[0].volume_claim_name = "train-pvc-abcdef123456";
  new_job.spec.volumes[0].volume_claim_json = R"({ "accessModes" : [ "RWO" ] })";
  CHECK(ValidateJobUpdate(old_job, new_job) == FieldErrors{});
  new_job.spec.volumes[0].mount_path = "/other";
  CHECK(ValidateJobUpdate(old_job, new_job) == FieldErrors{{"spec.volumes", kUpdatable}});
}

TEST_CASE("Pod template subset of Kubernetes validation") {
  auto check = [](const char* spec_json, FieldErrors expected) {
    INFO(spec_json);
    auto tmpl = ParsePodTemplate(std::string(R"({"spec":)") + spec_json + "}");
    REQUIRE(tmpl.ok());
    CHECK(ValidatePodTemplate(*tmpl, "t") == expected);
  };
  check(R"({"containers":[{"name":"a","image":"i"}],"restartPolicy":"OnFailure"})", {});
  check(R"({"containers":[]})", {{"t.spec.containers", "must have at least one container"}});
  check(R"({"containers":[{"image":"i"},{"name":"a","image":"i"},{"name":"a","image":"i"}]})",
        {{"t.spec.containers[0].name", "is required"},
         {"t.spec.containers[2].name", "duplicate container name \"a\""}});
  check(R"({"initContainers":[{"name":"a","image":"i"}],"containers":[{"name":"a","image":"i"}]})",
        {{"t.spec.containers[0].name", "duplicate container name \"a\""}});
  check(R"({"containers":[{"name":"My_C","image":"i"}]})",
        {{"t.spec.containers[0].name",
          "container name \"My_C\" must consist of lower case alphanumeric characters or '-', "
          "and must start and end with an alphanumeric character"}});
  check(R"({"containers":[{"name":"a","resources":{"requests":{"cpu":"2","memory":"-1Gi"},
            "limits":{"cpu":"1"}}}]})",
        {{"t.spec.containers[0].image", "is required"},
         {"t.spec.containers[0].resources.requests.memory",
          "must be a non-negative quantity, not -1Gi"},
         {"t.spec.containers[0].resources.requests.cpu",
          "must be less than or equal to cpu limit of 1"}});
  check(R"({"containers":[{"name":"a","image":"i"}],"restartPolicy":"Sometimes"})",
        {{"t.spec.restartPolicy", "must be Always, OnFailure or Never, not \"Sometimes\""}});
  check(R"({"initContainers":[{"name":"s","image":"i","restartPolicy":"Never"}],
            "containers":[{"name":"a","image":"i","restartPolicy":"Always"}]})",
        {{"t.spec.initContainers[0].restartPolicy",
          "must be Always (a sidecar) when set, not \"Never\""},
         {"t.spec.containers[0].restartPolicy", "may only be set on init containers (sidecars)"}});
  check(
      R"({"containers":[{"name":"a","image":"i","ports":[{"containerPort":0,"hostPort":70000}]}]})",
      {{"t.spec.containers[0].ports[0].containerPort", "must be between 1 and 65535"},
       {"t.spec.containers[0].ports[0].hostPort", "must be between 0 and 65535"}});
}

TEST_CASE("Name rules match Kubernetes") {
  CHECK(DnsLabelProblems("abc-1").empty());
  CHECK(DnsLabelProblems(std::string(64, 'a')) ==
        std::vector<std::string>{"must be no more than 63 characters"});
  CHECK(DnsLabelProblems("-a").size() == 1);
  CHECK(DnsLabelProblems("").size() == 1);
  CHECK(DnsSubdomainProblems("a.b-c.d").empty());
  CHECK(DnsSubdomainProblems("a..b").size() == 1);
  CHECK(DnsSubdomainProblems("a.").size() == 1);
  CHECK(DnsSubdomainProblems(std::string(254, 'a')) ==
        std::vector<std::string>{"must be no more than 253 characters"});
  CHECK(QualifiedNameProblems("example.com/My_Name-1").empty());
  CHECK(QualifiedNameProblems("/x") == std::vector<std::string>{"prefix part must be non-empty"});
  CHECK(QualifiedNameProblems("x/") == std::vector<std::string>{"name part must be non-empty"});
  CHECK(QualifiedNameProblems("Bad.Prefix/x").size() == 1);
}

TEST_CASE("FormatFieldErrors renders one admission message") {
  CHECK(FormatFieldErrors({{"spec.tasks", "No task specified in job spec"},
                           {"spec.queue", "queue \"x\" does not exist"},
                           {"", "general"}}) ==
        "spec.tasks: No task specified in job spec; spec.queue: queue \"x\" does not exist; "
        "general");
  CHECK(FormatFieldErrors({}).empty());
  // A cap lists the first errors and counts the rest.
  FieldErrors many(5, {"spec.tasks[0].name", "bad"});
  CHECK(FormatFieldErrors(many, 2) ==
        "spec.tasks[0].name: bad; spec.tasks[0].name: bad (and 3 more)");
  CHECK(FormatFieldErrors(many, 5) == FormatFieldErrors(many));
  CHECK(MoreErrorsNote(5, 5).empty());
}

}  // namespace
}  // namespace tephra::api
