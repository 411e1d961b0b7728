// The mutating endpoints: each default as the JSON Patch the API server receives, and the patch
// applied to the request giving an object the validating endpoint accepts.
#include <cstdio>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

#include <catch2/catch.hpp>

#include "api/json_patch.h"
#include "tests/support/hostile_inputs.h"
#include "tests/unit/webhooks/testing.h"
#include "webhooks/admission/resource_groups.h"

namespace tephra::webhooks {
namespace {

using testing::JsonEqual;
using testing::Review;

const std::string kTemplate =
    R"("template":{"spec":{"containers":[{"name":"c","image":"busybox"}]}})";

std::string Job(const std::string& spec) {
  return R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{"name":"job","namespace":"team"},"spec":{)" +
         spec + "}}";
}

std::string Queue(const std::string& metadata_extra, const std::string& spec) {
  return R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","metadata":{"name":"q")" +
         metadata_extra + R"(},"spec":{)" + spec + "}}";
}

std::string PodGroup(const std::string& ns, const std::string& spec) {
  return R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":{"name":"pg","namespace":")" +
         ns + R"("},"spec":{)" + spec + "}}";
}

struct Case {
  std::string name;
  std::string path;
  std::string kind;
  std::string object;
  std::string patch;  // expected JSON Patch; "" for none
};

std::vector<Case> Cases() {
  const std::string jm(kJobsMutate), qm(kQueuesMutate), pgm(kPodGroupsMutate);
  return {
      {"a bare job gets queue, scheduler, retries, task name and minAvailable", jm, "Job",
       Job(R"("tasks":[{"replicas":3,)" + kTemplate + "}]"),
       R"([{"op":"add","path":"/spec/tasks/0/name","value":"default0"},
           {"op":"add","path":"/spec/tasks/0/minAvailable","value":3},
           {"op":"add","path":"/spec/tasks/0/maxRetry","value":3},
           {"op":"add","path":"/spec/schedulerName","value":"volcano"},
           {"op":"add","path":"/spec/minAvailable","value":3},
           {"op":"add","path":"/spec/queue","value":"default"},
           {"op":"add","path":"/spec/maxRetry","value":3}])"},
      {"job minAvailable is the sum of the tasks'", jm, "Job",
       Job(R"("queue":"q","schedulerName":"volcano","maxRetry":5,"tasks":[
             {"name":"ps","replicas":2,"minAvailable":1,"maxRetry":1,)" +
           kTemplate + R"(},
             {"name":"worker","replicas":4,"maxRetry":1,)" +
           kTemplate + "}]"),
       R"([{"op":"add","path":"/spec/tasks/1/minAvailable","value":4},
           {"op":"add","path":"/spec/minAvailable","value":5}])"},
      {"an explicit minAvailable 0 is replaced like an absent one", jm, "Job",
       Job(R"("queue":"q","schedulerName":"volcano","maxRetry":1,"minAvailable":0,"tasks":[
             {"name":"a","replicas":2,"minAvailable":2,"maxRetry":1,)" +
           kTemplate + "}]"),
       R"([{"op":"replace","path":"/spec/minAvailable","value":2}])"},
      {"partitions set the task minimum", jm, "Job",
       Job(R"("queue":"q","schedulerName":"volcano","maxRetry":1,"minAvailable":4,"tasks":[
             {"name":"a","replicas":8,"maxRetry":1,
              "partitionPolicy":{"totalPartitions":4,"partitionSize":2,"minPartitions":2},)" +
           kTemplate + "}]"),
       R"([{"op":"add","path":"/spec/tasks/0/minAvailable","value":4}])"},
      {"host-network pods get ClusterFirstWithHostNet", jm, "Job",
       Job(R"("queue":"q","schedulerName":"volcano","maxRetry":1,"minAvailable":1,"tasks":[
             {"name":"a","replicas":1,"minAvailable":1,"maxRetry":1,
              "template":{"spec":{"hostNetwork":true,"containers":[{"name":"c","image":"i"}]}}}])"),
       R"([{"op":"add","path":"/spec/tasks/0/template/spec/dnsPolicy","value":"ClusterFirstWithHostNet"}])"},
      {"pytorch brings svc", jm, "Job",
       Job(R"("queue":"q","schedulerName":"volcano","maxRetry":1,"minAvailable":1,"plugins":{"pytorch":["--master=m"]},
             "tasks":[{"name":"m","replicas":1,"minAvailable":1,"maxRetry":1,)" +
           kTemplate + "}]"),
       R"([{"op":"add","path":"/spec/plugins/svc","value":[]}])"},
      {"mpi brings svc and ssh", jm, "Job",
       Job(R"("queue":"q","schedulerName":"volcano","maxRetry":1,"minAvailable":1,"plugins":{"mpi":[]},
             "tasks":[{"name":"master","replicas":1,"minAvailable":1,"maxRetry":1,)" +
           kTemplate + "}]"),
       R"([{"op":"add","path":"/spec/plugins/ssh","value":[]},
           {"op":"add","path":"/spec/plugins/svc","value":[]}])"},
      {"a fully specified job is left alone", jm, "Job",
       Job(R"("queue":"q","schedulerName":"other","maxRetry":1,"minAvailable":1,
             "tasks":[{"name":"a","replicas":1,"minAvailable":1,"maxRetry":1,)" +
           kTemplate + "}]"),
       ""},
      {"unknown fields stay untouched", jm, "Job",
       Job(R"("queue":"q","schedulerName":"volcano","maxRetry":1,"minAvailable":1,"futureField":{"x":1},
             "tasks":[{"name":"a","replicas":1,"maxRetry":1,"futureTaskField":true,)" +
           kTemplate + "}]"),
       R"([{"op":"add","path":"/spec/tasks/0/minAvailable","value":1}])"},
      {"a queue gets reclaimable and weight", qm, "Queue", Queue("", ""),
       R"([{"op":"add","path":"/spec/weight","value":1},
           {"op":"add","path":"/spec/reclaimable","value":true}])"},
      {"a queue keeps an explicit reclaimable false", qm, "Queue",
       Queue("", R"("weight":4,"reclaimable":false)"), ""},
      {"legacy hierarchy annotations move under root", qm, "Queue",
       Queue(
           R"(,"annotations":{"volcano.sh/hierarchy":"a/q","volcano.sh/hierarchy-weights":"2/3"})",
           R"("weight":1,"reclaimable":true)"),
       R"([{"op":"replace","path":"/metadata/annotations/volcano.sh~1hierarchy","value":"root/a/q"},
           {"op":"replace","path":"/metadata/annotations/volcano.sh~1hierarchy-weights","value":"1/2/3"}])"},
      {"a podgroup in the default queue takes its namespace's queue", pgm, "PodGroup",
       PodGroup("science", R"("minMember":1,"queue":"default")"),
       R"([{"op":"replace","path":"/spec/queue","value":"physics"}])"},
      {"a podgroup without a queue takes its namespace's queue", pgm, "PodGroup",
       PodGroup("science", R"("minMember":1)"),
       R"([{"op":"add","path":"/spec/queue","value":"physics"}])"},
      {"a podgroup with its own queue keeps it", pgm, "PodGroup",
       PodGroup("science", R"("minMember":1,"queue":"chemistry")"), ""},
      {"a namespace without the annotation changes nothing", pgm, "PodGroup",
       PodGroup("team", R"("minMember":1,"queue":"default")"), ""},
  };
}

TEST_CASE("Each default comes back as the expected JSON Patch") {
  api::StaticQueueLookup queues = testing::TestQueues();
  queues.Put(testing::MakeQueue("q", "Open"));
  testing::StaticNamespaces namespaces;
  namespaces.Put("science", {{"scheduling.volcano.sh/queue-name", "physics"}});
  namespaces.Put("team", {});
  testing::TestRouter router(queues, namespaces);
  for (const Case& c : Cases()) {
    INFO(c.name);
    AdmissionResponse response = router.Call(c.path, Review(c.kind, Operation::kCreate, c.object));
    CHECK(response.allowed);
    if (c.patch.empty()) {
      CHECK(response.patch.empty());
      continue;
    }
    CHECK(JsonEqual(response.patch, c.patch));
  }
}

TEST_CASE("A defaulted job passes validation and defaulting it again changes nothing") {
  api::StaticQueueLookup queues = testing::TestQueues();
  testing::StaticNamespaces namespaces;
  testing::TestRouter router(queues, namespaces);
  std::string job =
      Job(R"("tasks":[{"replicas":2,)" + kTemplate + R"(},{"replicas":1,)" + kTemplate + "}]");
  AdmissionResponse mutated = router.Call(kJobsMutate, Review("Job", Operation::kCreate, job));
  REQUIRE(mutated.allowed);
  // The patch is a JSON array; apply it through api/ as the API server would.
  std::string defaulted = testing::Patched(job, mutated);
  CHECK(router.Call(kJobsValidate, Review("Job", Operation::kCreate, defaulted)).allowed);
  CHECK(router.Call(kJobsMutate, Review("Job", Operation::kCreate, defaulted)).patch.empty());
}

TEST_CASE("Mutations apply on CREATE only, and the first --scheduler-name is the default") {
  api::StaticQueueLookup queues = testing::TestQueues();
  testing::StaticNamespaces namespaces;
  HandlerOptions options;
  options.job_defaults.scheduler_name = "tephra";
  testing::TestRouter router(queues, namespaces, options);
  std::string job = Job(R"("queue":"q","maxRetry":1,"minAvailable":1,"tasks":[
      {"name":"a","replicas":1,"minAvailable":1,"maxRetry":1,)" +
                        kTemplate + "}]");
  CHECK(JsonEqual(router.Call(kJobsMutate, Review("Job", Operation::kCreate, job)).patch,
                  R"([{"op":"add","path":"/spec/schedulerName","value":"tephra"}])"));
  AdmissionResponse update = router.Call(kJobsMutate, Review("Job", Operation::kUpdate, job, job));
  CHECK(update.allowed);
  CHECK(update.patch.empty());
  AdmissionResponse queue_update =
      router.Call(kQueuesMutate, Review("Queue", Operation::kUpdate, Queue("", ""), Queue("", "")));
  CHECK(queue_update.allowed);
  CHECK(queue_update.patch.empty());
}

TEST_CASE("Pod resource groups patch nodeSelector, affinity, tolerations and scheduler") {
  auto groups = ParseResourceGroups(R"(
resourceGroups:
- resourceGroup: management
  object:
    key: namespace
    value: [mng]
  schedulerName: default-scheduler
  tolerations:
  - {key: dedicated, operator: Equal, value: "mng", effect: NoSchedule, tolerationSeconds: 30}
  labels:
    volcano.sh/nodetype: management
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions: [{key: zone, operator: In, values: ["a"]}]
- resourceGroup: gpu
  labels: {volcano.sh/nodetype: gpu}
)");
  REQUIRE(groups.ok());
  api::StaticQueueLookup queues;
  testing::StaticNamespaces namespaces;
  HandlerOptions options;
  options.resource_groups = std::make_shared<StaticResourceGroups>(*groups);
  testing::TestRouter router(queues, namespaces, options);

  // A pod in the namespace of the first group, with a nodeSelector and tolerations of its own.
  std::string pod = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"mng"},
      "spec":{"schedulerName":"volcano","nodeSelector":{"disk":"ssd"},
      "tolerations":[{"key":"x","operator":"Exists"}],"containers":[{"name":"c","image":"i"}]}})";
  AdmissionResponse mng = router.Call(kPodsMutate, Review("Pod", Operation::kCreate, pod));
  CHECK(JsonEqual(mng.patch, R"([
      {"op":"add","path":"/spec/nodeSelector/volcano.sh~1nodetype","value":"management"},
      {"op":"add","path":"/spec/affinity","value":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":
        {"nodeSelectorTerms":[{"matchExpressions":[{"key":"zone","operator":"In","values":["a"]}]}]}}}},
      {"op":"add","path":"/spec/tolerations/-","value":{"key":"dedicated","operator":"Equal",
        "value":"mng","effect":"NoSchedule","tolerationSeconds":30}},
      {"op":"add","path":"/spec/schedulerName","value":"default-scheduler"}])"));

  // The second group has no object: it matches the volcano.sh/resource-group annotation.
  std::string gpu = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"x",
      "annotations":{"volcano.sh/resource-group":"gpu"}},"spec":{"containers":[{"name":"c","image":"i"}]}})";
  CHECK(JsonEqual(
      router.Call(kPodsMutate, Review("Pod", Operation::kCreate, gpu)).patch,
      R"([{"op":"add","path":"/spec/nodeSelector","value":{"volcano.sh/nodetype":"gpu"}}])"));

  // No group matches: no patch.
  std::string plain = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"x"},
      "spec":{"containers":[{"name":"c","image":"i"}]}})";
  AdmissionResponse none = router.Call(kPodsMutate, Review("Pod", Operation::kCreate, plain));
  CHECK(none.allowed);
  CHECK(none.patch.empty());
}

TEST_CASE("Resource group configuration errors name the group and field") {
  CHECK(ParseResourceGroups("resourceGroups:\n- object: {key: namespace}\n").status().message() ==
        "resourceGroups[0].resourceGroup: is required");
  CHECK(ParseResourceGroups("resourceGroups:\n- resourceGroup: a\n  object: {key: label}\n")
            .status()
            .message() ==
        "resourceGroups[0].object.key: must be namespace or annotation, not \"label\"");
  CHECK(ParseResourceGroups(
            "resourceGroups:\n- resourceGroup: a\n  object: {key: annotation, value: [nocolon]}\n")
            .status()
            .message() ==
        "resourceGroups[0].object.value: annotation \"nocolon\" must be written \"key: value\"");
  CHECK(ParseResourceGroups("resourceGroups: [").status().message().rfind("invalid YAML", 0) == 0);
  auto empty = ParseResourceGroups("");
  REQUIRE(empty.ok());
  CHECK(empty->groups.empty());
}

TEST_CASE("Resource groups refuse YAML aliases that expand beyond the file") {
  std::string yaml = tephra::testing::YamlAliasBomb(40) +
                     "resourceGroups:\n- resourceGroup: g\n  affinity: *a40\n";
  CHECK(ParseResourceGroups(yaml).status().message() ==
        "resourceGroups[0].affinity: too many values once aliases are expanded");
  // A small expansion is fine, and nested values come out as JSON.
  auto fine = ParseResourceGroups(
      "x: &t [{key: a, operator: Exists}]\nresourceGroups:\n- resourceGroup: g\n  tolerations: *t\n"
      "  affinity: {nodeAffinity: {weight: 3, on: true, none: ~}}\n");
  REQUIRE(fine.ok());
  CHECK(fine->groups[0].tolerations_json == R"([{"key":"a","operator":"Exists"}])");
  CHECK(fine->groups[0].affinity_json == R"({"nodeAffinity":{"weight":3,"on":true,"none":null}})");
}

TEST_CASE("The resource group file is re-read when it changes and a broken one is kept out") {
  std::string path = "/tmp/tephra-resource-groups-" + std::to_string(::getpid()) + ".yaml";
  auto write = [&](const std::string& text) {
    std::ofstream(path + ".new") << text;
    REQUIRE(std::rename((path + ".new").c_str(), path.c_str()) == 0);  // as a volume swaps files
  };
  write("resourceGroups:\n- resourceGroup: a\n");
  auto file = ResourceGroupFile::Open(path);
  REQUIRE(file.ok());
  CHECK((*file)->Current()->groups.at(0).name == "a");
  CHECK_FALSE(*(*file)->ReloadIfChanged());

  write("resourceGroups:\n- resourceGroup: b\n- resourceGroup: c\n");
  CHECK(*(*file)->ReloadIfChanged());
  CHECK((*file)->Current()->groups.size() == 2);

  write("resourceGroups:\n- object: {key: namespace}\n");
  auto broken = (*file)->ReloadIfChanged();
  CHECK(broken.status().message() == path + ": resourceGroups[0].resourceGroup: is required");
  CHECK((*file)->Current()->groups.size() == 2);  // the last good groups stay

  ::unlink(path.c_str());
  CHECK_FALSE((*file)->ReloadIfChanged().ok());
  CHECK(ResourceGroupFile::Open(path).status().code() == StatusCode::kNotFound);
}

}  // namespace
}  // namespace tephra::webhooks
