// Every rejection through the whole request path (AdmissionReview in, AdmissionReview out),
// each with the full message kubectl would print after "denied the request: ".
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/unit/webhooks/testing.h"

namespace tephra::webhooks {
namespace {

using testing::Review;

const std::string kContainer = R"({"name":"c","image":"busybox"})";
const std::string kTemplate = R"("template":{"spec":{"containers":[)" + kContainer + "]}}";

// A task: name, replicas and extra members (each followed by a comma).
std::string Task(const std::string& name, int replicas, const std::string& extra = "") {
  return R"({"name":")" + name + R"(","replicas":)" + std::to_string(replicas) + "," + extra +
         kTemplate + "}";
}

// A Job in namespace team; `spec` is the spec's members without braces.
std::string Job(const std::string& spec, const std::string& name = "job") {
  return R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{"name":")" + name +
         R"(","namespace":"team"},"spec":{)" + spec + "}}";
}

// A valid job with one task of two replicas, plus `extra` spec members (each followed by a comma).
std::string GoodJob(const std::string& extra = "") {
  return Job(extra + R"("queue":"default","minAvailable":2,"tasks":[)" + Task("worker", 2) + "]");
}

std::string Queue(const std::string& name, const std::string& spec, const std::string& extra = "") {
  return R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","metadata":{"name":")" +
         name + R"("},"spec":{)" + spec + "}" + extra + "}";
}

std::string PodGroup(const std::string& spec) {
  return R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup",
    "metadata":{"name":"pg","namespace":"team"},"spec":{)" +
         spec + "}}";
}

std::string Pod(const std::string& annotations) {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"team",
    "annotations":{)" +
         annotations + R"(}},"spec":{"schedulerName":"volcano","containers":[)" + kContainer +
         "]}}";
}

const std::string kUpdatable =
    "may not be changed; job updates may only change minAvailable, priorityClassName, "
    "tasks[*].replicas and tasks[*].minAvailable";
const std::string kEvents =
    "*, PodFailed, PodEvicted, PodPending, Unknown, TaskCompleted, TaskFailed, JobUpdated";
const std::string kActions =
    "AbortJob, RestartJob, RestartTask, RestartPod, RestartPartition, TerminateJob, CompleteJob, "
    "ResumeJob";

struct Case {
  std::string name;
  std::string path;
  std::string body;
  std::string message;
  int32_t code = 422;
};

std::vector<Case> Cases() {
  const auto C = Operation::kCreate;
  const auto U = Operation::kUpdate;
  const auto D = Operation::kDelete;
  const std::string jv(kJobsValidate), qv(kQueuesValidate), pgv(kPodGroupsValidate),
      podv(kPodsValidate), jm(kJobsMutate);
  return {
      // ---- Job CREATE
      {"job without tasks", jv, Review("Job", C, Job(R"("queue":"default","tasks":[])")),
       "spec.tasks: No task specified in job spec"},
      {"task minAvailable above replicas", jv,
       Review("Job", C,
              Job(R"("queue":"default","tasks":[)" + Task("a", 3, R"("minAvailable":5,)") + "]")),
       "spec.tasks[0].minAvailable: must be less than or equal to replicas (3)"},
      {"duplicate task names", jv,
       Review("Job", C,
              Job(R"("queue":"default","tasks":[)" + Task("a", 1) + "," + Task("a", 1) + "]")),
       "spec.tasks[1].name: duplicate task name \"a\""},
      {"job minAvailable above all replicas", jv,
       Review("Job", C,
              Job(R"("queue":"default","minAvailable":5,"tasks":[)" + Task("a", 2) + "]")),
       "spec.minAvailable: must be less than or equal to the total replicas of all tasks (2)"},
      {"queue that does not exist", jv,
       Review("Job", C, Job(R"("queue":"nope","tasks":[)" + Task("a", 1) + "]")),
       "spec.queue: queue \"nope\" does not exist"},
      {"closed queue", jv,
       Review("Job", C, Job(R"("queue":"closed","tasks":[)" + Task("a", 1) + "]")),
       "spec.queue: can only submit job to queue with state Open; queue \"closed\" is \"Closed\""},
      {"root queue", jv, Review("Job", C, Job(R"("queue":"root","tasks":[)" + Task("a", 1) + "]")),
       "spec.queue: can not submit job to the root queue"},
      {"queue with children", jv,
       Review("Job", C, Job(R"("queue":"research","tasks":[)" + Task("a", 1) + "]")),
       "spec.queue: can only submit job to a leaf queue; queue \"research\" has child queues"},
      {"a request beyond int64 milli-units", jv,
       Review("Job", C,
              Job(R"("queue":"default","tasks":[{"name":"w","replicas":1,"template":{"spec":)"
                  R"({"containers":[{"name":"c","image":"busybox","resources":{"requests":)"
                  R"({"cpu":"1e400"}}}],"initContainers":[{"name":"i","image":"busybox",)"
                  R"("resources":{"limits":{"example.com/gpu":"100Ei"}}}]}}}])")),
       "spec.tasks[0].template.spec.initContainers[0].resources.limits.example.com/gpu: must be at "
       "most 9223372036854775807m (Kubernetes counts example.com/gpu in int64 milli-units), not "
       "9223372036854775807; spec.tasks[0].template.spec.containers[0].resources.requests.cpu: "
       "must be at most 9223372036854775807m (Kubernetes counts cpu in int64 milli-units), not "
       "10e399"},
      {"unknown plugin", jv, Review("Job", C, GoodJob(R"("plugins":{"foo":[]},)")),
       "spec.plugins.foo: unknown job plugin \"foo\"; supported: env, svc, ssh, mpi, pytorch, "
       "tensorflow, ray, hcclrank"},
      {"mpi without its master task", jv, Review("Job", C, GoodJob(R"("plugins":{"mpi":[]},)")),
       "spec.plugins.mpi: the mpi plugin's master task \"master\" is not a task of this job"},
      {"policy with an unknown event", jv,
       Review("Job", C, GoodJob(R"("policies":[{"event":"Boom","action":"AbortJob"}],)")),
       "spec.policies[0].event: invalid event \"Boom\"; valid events: " + kEvents},
      {"policy with an unknown action", jv,
       Review("Job", C, GoodJob(R"("policies":[{"event":"PodFailed","action":"Explode"}],)")),
       "spec.policies[0].action: invalid action \"Explode\"; valid actions: " + kActions},
      {"policy with event and exitCode", jv,
       Review("Job", C,
              GoodJob(R"("policies":[{"event":"PodFailed","exitCode":3,"action":"AbortJob"}],)")),
       "spec.policies[0]: event(s) and exitCode are mutually exclusive"},
      {"policy with exitCode 0", jv,
       Review("Job", C, GoodJob(R"("policies":[{"exitCode":0,"action":"AbortJob"}],)")),
       "spec.policies[0].exitCode: must not be 0 (exit code 0 means success)"},
      {"event handled twice", jv,
       Review("Job", C, GoodJob(R"("policies":[{"event":"PodFailed","action":"AbortJob"},
                                                {"event":"PodFailed","action":"RestartJob"}],)")),
       "spec.policies[1].event: event \"PodFailed\" is already handled by spec.policies[0]"},
      {"wildcard event with others", jv,
       Review("Job", C,
              GoodJob(R"("policies":[{"events":["*","PodEvicted"],"action":"AbortJob"}],)")),
       "spec.policies: when event \"*\" is used it must be the only event"},
      {"policy without event or exitCode", jv,
       Review("Job", C, GoodJob(R"("policies":[{"action":"AbortJob"}],)")),
       "spec.policies[0]: one of event, events or exitCode is required"},
      {"task policy with an unknown event", jv,
       Review("Job", C,
              Job(R"("queue":"default","tasks":[)" +
                  Task("a", 1, R"("policies":[{"event":"Nope","action":"RestartTask"}],)") + "]")),
       "spec.tasks[0].policies[0].event: invalid event \"Nope\"; valid events: " + kEvents},
      {"volume without mountPath", jv,
       Review("Job", C, GoodJob(R"("volumes":[{"volumeClaimName":"data"}],)")),
       "spec.volumes[0].mountPath: is required"},
      {"volume with claim and claim name", jv,
       Review("Job", C, GoodJob(R"("volumes":[{"mountPath":"/data","volumeClaimName":"data",
                                               "volumeClaim":{"accessModes":["ReadWriteOnce"]}}],)")),
       "spec.volumes[0]: exactly one of volumeClaim and volumeClaimName must be set"},
      {"duplicate mountPath", jv,
       Review("Job", C, GoodJob(R"("volumes":[{"mountPath":"/d","volumeClaimName":"a"},
                                               {"mountPath":"/d","volumeClaimName":"b"}],)")),
       "spec.volumes[1].mountPath: duplicate mountPath \"/d\""},
      {"task name that is not a DNS label", jv,
       Review("Job", C, Job(R"("queue":"default","tasks":[)" + Task("Bad_Name", 1) + "]")),
       "spec.tasks[0].name: task name \"Bad_Name\" must consist of lower case alphanumeric "
       "characters or '-', and must start and end with an alphanumeric character"},
      {"pod name too long", jv,
       Review(
           "Job", C,
           Job(R"("queue":"default","tasks":[)" + Task("worker", 1) + "]", std::string(60, 'j'))),
       "spec.tasks[0].name: generated pod name \"" + std::string(60, 'j') +
           "-worker-0\" name part must be no more than 63 characters"},
      {"template without containers", jv,
       Review(
           "Job", C,
           Job(R"("queue":"default","tasks":[{"name":"a","replicas":1,"template":{"spec":{}}}])")),
       "spec.tasks[0].template.spec.containers: must have at least one container"},
      {"container without image", jv,
       Review("Job", C, Job(R"("queue":"default","tasks":[{"name":"a","replicas":1,
                                "template":{"spec":{"containers":[{"name":"c"}]}}}])")),
       "spec.tasks[0].template.spec.containers[0].image: is required"},
      {"dependsOn cycle", jv,
       Review(
           "Job", C,
           Job(R"("queue":"default","tasks":[)" + Task("a", 1, R"("dependsOn":{"name":["b"]},)") +
               "," + Task("b", 1, R"("dependsOn":{"name":["a"]},)") + "]")),
       "spec.tasks: dependsOn forms a cycle: a -> b -> a"},
      {"dependsOn unknown task", jv,
       Review("Job", C,
              Job(R"("queue":"default","tasks":[)" +
                  Task("a", 1, R"("dependsOn":{"name":["zzz"]},)") + "]")),
       "spec.tasks[0].dependsOn.name[0]: unknown task \"zzz\""},
      {"partition that does not add up", jv,
       Review("Job", C,
              Job(R"("queue":"default","tasks":[)" +
                  Task("a", 3, R"("partitionPolicy":{"totalPartitions":2,"partitionSize":2},)") +
                  "]")),
       "spec.tasks[0].replicas: must equal totalPartitions × partitionSize (4) when "
       "partitionPolicy is set"},
      {"both network topology tiers", jv,
       Review(
           "Job", C,
           GoodJob(
               R"("networkTopology":{"mode":"hard","highestTierAllowed":1,"highestTierName":"rack"},)")),
       "spec.networkTopology: highestTierAllowed and highestTierName are mutually exclusive; set "
       "only one"},
      {"NUMA policy with fractional cpu", jv,
       Review(
           "Job", C,
           Job(R"("queue":"default","tasks":[{"name":"a","replicas":1,"topologyPolicy":"restricted",
             "template":{"spec":{"containers":[{"name":"c","image":"busybox",
             "resources":{"requests":{"cpu":"500m"}}}]}}}])")),
       "spec.tasks[0].topologyPolicy: topologyPolicy restricted requires a whole number of cpus "
       "in every container; container \"c\" requests 500m"},
      {"negative maxRetry", jv, Review("Job", C, GoodJob(R"("maxRetry":-1,)")),
       "spec.maxRetry: must be greater than or equal to 0"},
      {"every problem at once", jv,
       Review("Job", C,
              Job(R"("queue":"nope","minAvailable":9,"tasks":[)" +
                  Task("a", 3, R"("minAvailable":5,)") + "]")),
       "spec.tasks[0].minAvailable: must be less than or equal to replicas (3); spec.minAvailable: "
       "must be less than or equal to the total replicas of all tasks (3); spec.queue: queue "
       "\"nope\" does not exist"},
      {"dry run is judged the same", jv,
       Review("Job", C, Job(R"("queue":"nope","tasks":[)" + Task("a", 1) + "]"), {}, true),
       "spec.queue: queue \"nope\" does not exist"},
      {"job with a wrongly typed field", jm,
       Review("Job", C, Job(R"("tasks":[{"name":"a","replicas":"three"}])")),
       "Job team/job: spec.tasks[0].replicas: expected integer, got string", 400},

      // ---- Job UPDATE
      {"task count change", jv,
       Review(
           "Job", U,
           Job(R"("queue":"default","tasks":[)" + Task("worker", 2) + "," + Task("extra", 1) + "]"),
           GoodJob()),
       "spec.tasks: the number of tasks may not change (was 1, now 2)"},
      {"queue change", jv,
       Review("Job", U,
              Job(R"("queue":"research-a","minAvailable":2,"tasks":[)" + Task("worker", 2) + "]"),
              GoodJob()),
       "spec.queue: " + kUpdatable},
      {"template change", jv,
       Review("Job", U,
              Job(R"("queue":"default","minAvailable":2,"tasks":[{"name":"worker","replicas":2,
              "template":{"spec":{"containers":[{"name":"c","image":"nginx"}]}}}])"),
              GoodJob()),
       "spec.tasks[0].template: " + kUpdatable},
      {"minAvailable above replicas on update", jv,
       Review("Job", U,
              Job(R"("queue":"default","minAvailable":3,"tasks":[)" + Task("worker", 2) + "]"),
              GoodJob()),
       "spec.minAvailable: must be less than or equal to the total replicas of all tasks (2)"},

      // ---- Queue CREATE
      {"deserved above capability", qv,
       Review("Queue", C, Queue("q1", R"("capability":{"cpu":"4"},"deserved":{"cpu":"8"})")),
       "spec.deserved.cpu: must be less than or equal to capability (4)"},
      {"guarantee above deserved", qv,
       Review("Queue", C,
              Queue("q1", R"("deserved":{"cpu":"2"},"guarantee":{"resource":{"cpu":"3"}})")),
       "spec.guarantee.resource.cpu: must be less than or equal to deserved (2)"},
      {"negative capability", qv, Review("Queue", C, Queue("q1", R"("capability":{"cpu":"-1"})")),
       "spec.capability.cpu: must be a non-negative quantity, not -1"},
      // Beyond int64 accounting (issue 54.3); Volcano accepts these (docs/admission.md).
      {"capability beyond int64 milli-units", qv,
       Review("Queue", C, Queue("q1", R"("capability":{"cpu":"1e400"})")),
       "spec.capability.cpu: must be at most 9223372036854775807m (Kubernetes counts cpu in int64 "
       "milli-units), not 10e399"},
      {"guarantee beyond int64 units", qv,
       Review("Queue", C,
              Queue("q1", R"("deserved":{"memory":"1e400"},"guarantee":{"resource":)"
                          R"({"memory":"9223372036854775808"}})")),
       "spec.deserved.memory: must be at most 9223372036854775807 (Kubernetes counts memory in "
       "int64 units), not 10e399; spec.guarantee.resource.memory: must be at most "
       "9223372036854775807 (Kubernetes counts memory in int64 units), not 9223372036854775808"},
      {"parent that does not exist", qv, Review("Queue", C, Queue("q1", R"("parent":"ghost")")),
       "spec.parent: parent queue \"ghost\" does not exist"},
      {"too deep", qv, Review("Queue", C, Queue("l6", R"("parent":"l5")")),
       "spec.parent: the queue would be 6 levels below root; at most 5 are allowed"},
      {"capability above the parent's", qv,
       Review("Queue", C, Queue("q1", R"("parent":"capped","capability":{"cpu":"12"})")),
       "spec.capability.cpu: must be less than or equal to the capability of ancestor queue "
       "\"capped\" (10)"},
      {"siblings' deserved above the parent's", qv,
       Review("Queue", C, Queue("research-c", R"("parent":"research","deserved":{"cpu":"2"})")),
       "spec.deserved.cpu: the deserved of queue \"research\"'s children would add up to 11, more "
       "than its own deserved (10)"},
      {"unknown state", qv, Review("Queue", C, Queue("q1", "", R"(,"status":{"state":"Broken"})")),
       "status.state: must be Open or Closed, not \"Broken\""},
      {"hierarchy weights that do not match", qv,
       Review("Queue", C, R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue",
         "metadata":{"name":"h","annotations":{"volcano.sh/hierarchy":"root/a/h",
         "volcano.sh/hierarchy-weights":"1/2"}},"spec":{}})"),
       "metadata.annotations[volcano.sh/hierarchy-weights]: must have as many weights (2) as the "
       "hierarchy has levels (3)"},

      // ---- Queue UPDATE
      {"root capability change", qv,
       Review("Queue", U, Queue("root", R"("capability":{"cpu":"1"})"), Queue("root", "")),
       "spec.capability: the root queue's capability may not be changed"},
      {"queue as its own parent", qv,
       Review("Queue", U, Queue("capped", R"("parent":"capped","capability":{"cpu":"10"})"),
              Queue("capped", R"("capability":{"cpu":"10"})")),
       "spec.parent: a queue cannot be its own parent"},

      // ---- Queue DELETE
      {"delete default", qv, Review("Queue", D, "", Queue("default", "")),
       "metadata.name: queue \"default\" cannot be deleted"},
      {"delete root", qv, Review("Queue", D, "", Queue("root", "")),
       "metadata.name: queue \"root\" cannot be deleted"},
      {"delete a queue with children", qv, Review("Queue", D, "", Queue("research", "")),
       "metadata.name: queue \"research\" has child queues and cannot be deleted"},

      // ---- PodGroup CREATE
      {"podgroup minResources beyond int64 milli-units", pgv,
       Review("PodGroup", C,
              PodGroup(R"("minMember":1,"queue":"default","minResources":{"cpu":"1e400"})")),
       "spec.minResources.cpu: must be at most 9223372036854775807m (Kubernetes counts cpu in "
       "int64 milli-units), not 10e399"},
      {"podgroup in a missing queue", pgv,
       Review("PodGroup", C, PodGroup(R"("minMember":1,"queue":"nope")")),
       "spec.queue: queue \"nope\" does not exist"},
      {"podgroup in a closed queue", pgv,
       Review("PodGroup", C, PodGroup(R"("minMember":1,"queue":"closed")")),
       "spec.queue: can only submit PodGroup to queue with state Open; queue \"closed\" is "
       "\"Closed\""},
      {"sub-group with both tiers", pgv,
       Review("PodGroup", C,
              PodGroup(R"("minMember":1,"queue":"default","subGroupPolicy":[{"name":"a",
              "networkTopology":{"highestTierAllowed":1,"highestTierName":"rack"}}])")),
       "spec.subGroupPolicy[0].networkTopology: highestTierAllowed and highestTierName are "
       "mutually exclusive; set only one"},

      // ---- Pods (opt-in)
      {"disruption budget of zero", podv,
       Review("Pod", C, Pod(R"("volcano.sh/jdb-min-available":"0")")),
       "metadata.annotations[volcano.sh/jdb-min-available]: must be a positive integer or a "
       "percentage from 1% to 99%, not \"0\""},
      {"disruption budget of 100%", podv,
       Review("Pod", C, Pod(R"("volcano.sh/jdb-max-unavailable":"100%")")),
       "metadata.annotations[volcano.sh/jdb-max-unavailable]: must be a positive integer or a "
       "percentage from 1% to 99%, not \"100%\""},
      {"both disruption budgets", podv,
       Review("Pod", C,
              Pod(R"("volcano.sh/jdb-min-available":"2","volcano.sh/jdb-max-unavailable":"10%")")),
       "metadata.annotations: volcano.sh/jdb-min-available and volcano.sh/jdb-max-unavailable are "
       "mutually exclusive; set only one"},
  };
}

TEST_CASE("Each bad input is denied with every problem, each naming its field and rule") {
  api::StaticQueueLookup queues = testing::TestQueues();
  testing::StaticNamespaces namespaces;
  testing::TestRouter router(queues, namespaces);
  std::vector<Case> cases = Cases();
  REQUIRE(cases.size() >= 40);
  for (const Case& c : cases) {
    INFO(c.name);
    AdmissionResponse response = router.Call(c.path, c.body);
    CHECK(response.uid == "uid-1");
    CHECK_FALSE(response.allowed);
    CHECK(response.code == c.code);
    CHECK(response.reason == (c.code == 422 ? "Invalid" : "BadRequest"));
    CHECK(response.message == c.message);
    CHECK(response.patch.empty());
  }
}

TEST_CASE("A Job with thousands of bad tasks is denied with a short message that counts them") {
  api::StaticQueueLookup queues = testing::TestQueues();
  testing::StaticNamespaces namespaces;
  testing::TestRouter router(queues, namespaces);
  std::string tasks;
  for (int i = 0; i < 5000; ++i) {
    tasks +=
        (i > 0 ? R"(,{"name":"t)" : R"({"name":"t)") + std::to_string(i) + R"(","replicas":1})";
  }
  AdmissionResponse response = router.Call(
      kJobsValidate,
      Review("Job", Operation::kCreate, Job(R"("queue":"default","tasks":[)" + tasks + "]")));
  CHECK_FALSE(response.allowed);
  CHECK(response.message.find("spec.tasks[0].template.spec.containers: must have at least one "
                              "container") == 0);
  CHECK(response.message.find("(and 4980 more)") != std::string::npos);
  CHECK(response.message.size() < 4096);
}

TEST_CASE("The good versions of the same objects are allowed") {
  api::StaticQueueLookup queues = testing::TestQueues();
  testing::StaticNamespaces namespaces;
  testing::TestRouter router(queues, namespaces);
  const auto C = Operation::kCreate;
  struct Good {
    std::string path;
    std::string body;
  };
  const std::vector<Good> goods = {
      {std::string(kJobsValidate), Review("Job", C, GoodJob())},
      {std::string(kJobsValidate),
       Review("Job", Operation::kUpdate,
              Job(R"("queue":"default","minAvailable":3,"tasks":[)" + Task("worker", 4) + "]"),
              GoodJob())},
      {std::string(kJobsValidate), Review("Job", Operation::kDelete, "", GoodJob())},
      {std::string(kQueuesValidate),
       Review("Queue", C, Queue("q1", R"("parent":"research","deserved":{"cpu":"1"})"))},
      {std::string(kQueuesValidate), Review("Queue", C, Queue("l5b", R"("parent":"l4")"))},
      {std::string(kQueuesValidate),
       Review("Queue", Operation::kDelete, "", Queue("research-a", ""))},
      {std::string(kPodGroupsValidate),
       Review("PodGroup", C, PodGroup(R"("minMember":1,"queue":"default")"))},
      {std::string(kPodsValidate),
       Review("Pod", C, Pod(R"("volcano.sh/jdb-min-available":"50%")"))},
      // Pods of other schedulers are none of our business.
      {std::string(kPodsValidate),
       Review("Pod", C, R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"t",
              "annotations":{"volcano.sh/jdb-min-available":"0"}},"spec":{"containers":[]}})")},
  };
  for (const Good& g : goods) {
    INFO(g.body);
    AdmissionResponse response = router.Call(g.path, g.body);
    CHECK(response.allowed);
    CHECK(response.message.empty());
  }
}

TEST_CASE("Deleting a queue named only by the review still protects default and root") {
  api::StaticQueueLookup queues = testing::TestQueues();
  testing::StaticNamespaces namespaces;
  testing::TestRouter router(queues, namespaces);
  AdmissionRequest r;
  r.uid = "u";
  r.operation = Operation::kDelete;
  r.kind = {"scheduling.volcano.sh", "v1beta1", "Queue"};
  r.name = "default";
  AdmissionResponse response = router.Call(kQueuesValidate, EncodeAdmissionRequest(r, ""));
  CHECK_FALSE(response.allowed);
  CHECK(response.message == "metadata.name: queue \"default\" cannot be deleted");
  r.name = "unknown-queue";
  CHECK(router.Call(kQueuesValidate, EncodeAdmissionRequest(r, "")).allowed);
}

}  // namespace
}  // namespace tephra::webhooks
