// Defaulting of docs/compatibility.md §3.2, §3.4, §3.5 and the JSON patches that express it.
#include "api/defaulting.h"

#include <catch2/catch.hpp>
#include <rapidjson/document.h>

#include "api/labels.h"
#include "tests/unit/api/testing.h"

namespace tephra::api {
namespace {

// A job as a user writes it: no queue, scheduler, retries, task names or minAvailable.
constexpr const char* kBareJob = R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job",
  "metadata":{"name":"mpi","namespace":"team"},
  "spec":{"plugins":{"mpi":["--master=master"]},
    "tasks":[
      {"name":"master","replicas":1,
       "template":{"spec":{"hostNetwork":true,"containers":[{"name":"m","image":"mpi"}]}}},
      {"replicas":4,"partitionPolicy":{"totalPartitions":2,"partitionSize":2,"minPartitions":1},
       "template":{"spec":{"containers":[{"name":"w","image":"mpi"}]}}},
      {"name":"extra","replicas":3,"minAvailable":0,"maxRetry":5,
       "template":{"spec":{"containers":[{"name":"e","image":"mpi"}]}}}]}})";

TEST_CASE("Job defaulting follows Volcano's order and emits the equivalent patch") {
  auto decoded = DecodeJob(kBareJob, {.keep_raw = true});
  REQUIRE(decoded.ok());
  Job job = **decoded;
  JsonPatch patch = DefaultJob(&job);

  const JobSpec& spec = job.spec;
  CHECK(spec.queue == "default");
  CHECK(spec.scheduler_name == "volcano");
  CHECK(spec.max_retry == 3);
  CHECK(spec.tasks[0].template_.spec.dns_policy == "ClusterFirstWithHostNet");
  // The template text changed too: pods created from it get the dnsPolicy.
  CHECK(spec.tasks[0].template_.json.find("\"dnsPolicy\":\"ClusterFirstWithHostNet\"") !=
        std::string::npos);
  CHECK(spec.tasks[0].min_available == 1);
  CHECK(spec.tasks[0].max_retry == 3);
  CHECK(spec.tasks[1].name == "default1");
  CHECK(spec.tasks[1].min_available == 2);  // minPartitions × partitionSize
  CHECK(spec.tasks[2].min_available == 0);  // explicitly set task minAvailable is kept
  CHECK(spec.tasks[2].max_retry == 5);
  CHECK(spec.min_available == 3);  // 1 + 2 + 0
  CHECK(spec.plugins.count("svc") == 1);
  CHECK(spec.plugins.count("ssh") == 1);

  // Operations follow the document: existing members in their order, new ones after them.
  JsonPatch expected = {
      {"add", "/spec/plugins/ssh", "[]"},
      {"add", "/spec/plugins/svc", "[]"},
      {"add", "/spec/tasks/0/template/spec/dnsPolicy", "\"ClusterFirstWithHostNet\""},
      {"add", "/spec/tasks/0/minAvailable", "1"},
      {"add", "/spec/tasks/0/maxRetry", "3"},
      {"add", "/spec/tasks/1/name", "\"default1\""},
      {"add", "/spec/tasks/1/minAvailable", "2"},
      {"add", "/spec/tasks/1/maxRetry", "3"},
      {"add", "/spec/schedulerName", "\"volcano\""},
      {"add", "/spec/minAvailable", "3"},
      {"add", "/spec/queue", "\"default\""},
      {"add", "/spec/maxRetry", "3"},
  };
  CHECK(patch == expected);

  // Applying the patch to the request gives exactly the defaulted object.
  auto patched = ApplyJsonPatch(kBareJob, patch);
  REQUIRE(patched.ok());
  auto again = DecodeJob(*patched, {.keep_raw = true});
  REQUIRE(again.ok());
  CHECK(testing::JsonEqual(EncodeJob(**again), EncodeJob(job)));
  // Defaulting twice changes nothing more.
  Job twice = job;
  ApplyJobDefaults(&twice);
  CHECK(EncodeJob(twice) == EncodeJob(job));
  // The patch is relative to the request the object was decoded from.
  auto defaulted = DecodeJob(*patched, {.keep_raw = true});
  REQUIRE(defaulted.ok());
  CHECK(DefaultJob(&**defaulted).empty());
}

TEST_CASE("Naming an unnamed task keeps the task's fields Tephra does not model") {
  constexpr const char* kJob = R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job",
    "metadata":{"name":"j","namespace":"team"},"spec":{"queue":"q","schedulerName":"volcano",
    "maxRetry":1,"minAvailable":1,"tasks":[{"replicas":1,"minAvailable":1,"maxRetry":1,
    "futureTaskField":{"x":1},"template":{"spec":{"containers":[{"name":"c","image":"i"}]}}}]}})";
  auto decoded = DecodeJob(kJob, {.keep_raw = true});
  REQUIRE(decoded.ok());
  Job job = **decoded;
  CHECK(DefaultJob(&job) == JsonPatch{{"add", "/spec/tasks/0/name", "\"default0\""}});
}

TEST_CASE("An explicit job minAvailable of 0 is treated as unset, like Volcano") {
  auto decoded = DecodeJob(R"({"spec":{"minAvailable":0,"queue":"q","schedulerName":"s",
      "maxRetry":1,"tasks":[{"name":"a","replicas":2,"maxRetry":1,"template":{}}]}})",
                           {.keep_raw = true});
  REQUIRE(decoded.ok());
  Job job = **decoded;
  JsonPatch patch = DefaultJob(&job);
  CHECK(job.spec.min_available == 2);
  CHECK(patch == JsonPatch{{"replace", "/spec/minAvailable", "2"},
                           {"add", "/spec/tasks/0/minAvailable", "2"}});
}

TEST_CASE("Job defaulting options and plugin rules") {
  Job job;
  job.spec.plugins["pytorch"] = {"--master=master"};
  job.spec.tasks.push_back({});
  job.spec.tasks.back().replicas = 2;
  JobDefaultingOptions options;
  options.scheduler_name = "tephra";
  options.default_queue = "batch";
  ApplyJobDefaults(&job, options);
  CHECK(job.spec.scheduler_name == "tephra");
  CHECK(job.spec.queue == "batch");
  CHECK(job.spec.tasks[0].name == "default0");
  CHECK(job.spec.plugins.count("svc") == 1);
  CHECK(job.spec.plugins.count("ssh") == 0);  // only mpi brings ssh
  // Existing plugin arguments are not touched.
  Job with_svc;
  with_svc.spec.plugins["tensorflow"] = {};
  with_svc.spec.plugins["svc"] = {"--publish-not-ready-addresses"};
  ApplyJobDefaults(&with_svc);
  CHECK(with_svc.spec.plugins.at("svc") ==
        std::vector<std::string>{"--publish-not-ready-addresses"});
}

TEST_CASE("Job defaulting without raw still yields a patch that applies to the request") {
  // A controller or webhook that decoded without keep_raw: paths come from the model.
  auto decoded = DecodeJob(kBareJob);
  REQUIRE(decoded.ok());
  Job job = **decoded;
  JsonPatch patch = DefaultJob(&job);
  auto patched = ApplyJsonPatch(kBareJob, patch);
  REQUIRE(patched.ok());
  auto again = DecodeJob(*patched);
  REQUIRE(again.ok());
  CHECK((*again)->spec.min_available == 3);
  CHECK((*again)->spec.tasks[1].name == "default1");
  CHECK((*again)->spec.tasks[0].template_.spec.dns_policy == "ClusterFirstWithHostNet");
}

TEST_CASE("Queue defaulting") {
  const char* text = R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue",
      "metadata":{"name":"q","annotations":{"volcano.sh/hierarchy":"eng/q",
                                            "volcano.sh/hierarchy-weights":"2/3"}},
      "spec":{"capability":{"cpu":"4"}}})";
  auto decoded = DecodeQueue(text, {.keep_raw = true});
  REQUIRE(decoded.ok());
  Queue q = **decoded;
  JsonPatch patch = DefaultQueue(&q);
  CHECK(q.spec.reclaimable == true);
  CHECK(q.spec.weight == 1);
  CHECK(q.metadata.Annotation(kQueueHierarchyAnnotation) == "root/eng/q");
  CHECK(q.metadata.Annotation(kQueueHierarchyWeightsAnnotation) == "1/2/3");
  CHECK(patch ==
        JsonPatch{
            {"replace", "/metadata/annotations/volcano.sh~1hierarchy", "\"root/eng/q\""},
            {"replace", "/metadata/annotations/volcano.sh~1hierarchy-weights", "\"1/2/3\""},
            {"add", "/spec/weight", "1"},
            {"add", "/spec/reclaimable", "true"},
        });
  auto patched = ApplyJsonPatch(text, patch);
  REQUIRE(patched.ok());
  CHECK(testing::JsonEqual(*patched, EncodeQueue(q)));

  // Already defaulted: nothing to do; an explicit reclaimable=false is kept.
  Queue set;
  set.spec.weight = 5;
  set.spec.reclaimable = false;
  set.metadata.annotations[std::string(kQueueHierarchyAnnotation)] = "root/a";
  CHECK(DefaultQueue(&set).empty());
  CHECK(set.spec.reclaimable == false);
  // A queue without a spec gets one.
  auto bare = DecodeQueue(R"({"metadata":{"name":"b"}})", {.keep_raw = true});
  REQUIRE(bare.ok());
  Queue b = **bare;
  CHECK(RenderJsonPatch(DefaultQueue(&b)) ==
        R"([{"op":"add","path":"/spec","value":{"weight":1,"reclaimable":true}}])");
  // "rootless" is not under root.
  Queue rootless;
  rootless.metadata.annotations[std::string(kQueueHierarchyAnnotation)] = "rootless";
  ApplyQueueDefaults(&rootless);
  CHECK(rootless.metadata.Annotation(kQueueHierarchyAnnotation) == "root/rootless");
}

class FakeNamespaces : public NamespaceLookup {
 public:
  std::shared_ptr<const Namespace> Get(std::string_view name) const override {
    if (name != "team") return nullptr;
    auto ns = std::make_shared<Namespace>();
    ns->metadata.name = "team";
    ns->metadata.annotations[std::string(kSchedulingQueueNameAnnotation)] = "team-queue";
    return ns;
  }
};

TEST_CASE("PodGroup defaulting moves default-queue PodGroups to the namespace's queue") {
  FakeNamespaces namespaces;
  const char* text = R"({"metadata":{"name":"pg","namespace":"team"},
                         "spec":{"minMember":2,"queue":"default"}})";
  auto decoded = DecodePodGroup(text, {.keep_raw = true});
  REQUIRE(decoded.ok());
  PodGroup pg = **decoded;
  JsonPatch patch = DefaultPodGroup(&pg, &namespaces);
  CHECK(pg.spec.queue == "team-queue");
  CHECK(patch == JsonPatch{{"replace", "/spec/queue", "\"team-queue\""}});

  auto unchanged = [&](const char* json, const NamespaceLookup* lookup) {
    auto other = DecodePodGroup(json, {.keep_raw = true});
    REQUIRE(other.ok());
    PodGroup copy = **other;
    return DefaultPodGroup(&copy, lookup).empty() && copy.spec.queue == (*other)->spec.queue;
  };
  CHECK(
      unchanged(R"({"metadata":{"name":"pg","namespace":"elsewhere"},"spec":{"queue":"default"}})",
                &namespaces));
  CHECK(unchanged(R"({"metadata":{"name":"pg","namespace":"team"},"spec":{"queue":"mine"}})",
                  &namespaces));
  CHECK(unchanged(text, nullptr));
}

TEST_CASE("JSON patches render, diff and apply") {
  JsonPatch patch = {{"add", "/a/b~1c", "{\"x\":1}"}, {"remove", "/d", ""}};
  CHECK(RenderJsonPatch(patch) ==
        R"([{"op":"add","path":"/a/b~1c","value":{"x":1}},{"op":"remove","path":"/d"}])");
  CHECK(EscapeJsonPointer("a/b~c") == "a~1b~0c");

  auto diff = DiffJson(R"({"a":1,"b":{"c":[1,2],"d":"x"},"e":[1]})",
                       R"({"a":2,"b":{"c":[1,3]},"e":[1,2],"f":null})");
  REQUIRE(diff.ok());
  CHECK(*diff == JsonPatch{{"replace", "/a", "2"},
                           {"remove", "/b/d", ""},
                           {"replace", "/b/c/1", "3"},
                           {"replace", "/e", "[1,2]"},
                           {"add", "/f", "null"}});

  const char* doc = R"({"a":{"b~c":1,"l":[1,2,3]}})";
  auto applied = ApplyJsonPatch(doc, {{"add", "/a/l/1", "9"},
                                      {"add", "/a/l/-", "4"},
                                      {"remove", "/a/l/0", ""},
                                      {"replace", "/a/b~0c", "2"},
                                      {"test", "/a/b~0c", "2"},
                                      {"add", "/a/new", "{\"k\":[]}"}});
  REQUIRE(applied.ok());
  CHECK(testing::JsonEqual(*applied, R"({"a":{"b~c":2,"l":[9,2,3,4],"new":{"k":[]}}})"));

  CHECK(ApplyJsonPatch(doc, {{"replace", "/a/missing", "1"}}).status().message() ==
        "json patch replace /a/missing: \"missing\" not found");
  CHECK(ApplyJsonPatch(doc, {{"add", "/x/y", "1"}}).status().message() ==
        "json patch add /x/y: \"x\" not found");
  CHECK(ApplyJsonPatch(doc, {{"remove", "/a/l/3", ""}}).status().message() ==
        "json patch remove /a/l/3: bad array index \"3\"");
  CHECK(ApplyJsonPatch(doc, {{"test", "/a/l/0", "5"}}).status().message() ==
        "json patch test /a/l/0: test failed");
  CHECK(ApplyJsonPatch(doc, {{"move", "/a", ""}}).status().message() ==
        "json patch move /a: unsupported operation");
  CHECK(ApplyJsonPatch(doc, {{"add", "a", "1"}}).status().message() ==
        "json patch add a: a JSON pointer starts with '/'");
  CHECK(ApplyJsonPatch(doc, {{"add", "", "[1]"}}).value() == "[1]");
}

}  // namespace
}  // namespace tephra::api
