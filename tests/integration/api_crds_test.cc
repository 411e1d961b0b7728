// Tephra's CRDs and examples against a real kube-apiserver: the CRDs establish, every example
// applies, printer columns and short names work, the schemas reject bad objects naming the
// field, and Tephra's decoders read (and losslessly re-encode) what the server returns.
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <rapidjson/document.h>

#include "api/batch.h"
#include "api/core.h"
#include "api/labels.h"
#include "api/scheduling.h"
#include "api/validation.h"
#include "json/json.h"
#include "tests/support/cluster.h"

namespace tephra::testing {
namespace {

const std::string kSource = TEPHRA_SOURCE_DIR;

// A file that must exist and not be empty.
std::string MustReadFile(const std::string& path) {
  std::string text = ReadFile(path);
  REQUIRE(!text.empty());
  return text;
}

bool Established(const Kubectl& k, const std::string& crd) {
  CommandResult r = k.Run({"get", "crd", crd, "-o",
                           R"(jsonpath={.status.conditions[?(@.type=="Established")].status})"});
  return r.ok() && r.out == "True";
}

const std::vector<std::string> kCrds = {
    "jobs.batch.volcano.sh", "queues.scheduling.volcano.sh", "podgroups.scheduling.volcano.sh",
    "commands.bus.volcano.sh", "hypernodes.topology.volcano.sh"};
const std::string kOptionalCrd = "podgroups.scheduling.x-k8s.io";

// Applies crds/ (and crds/optional/) and waits until every CRD serves. Idempotent, so each test
// can call it whatever the order the tests run in.
void InstallCrds(const Kubectl& k) {
  k.ApplyShared({"-f", kSource + "/crds/"});
  k.ApplyShared({"-f", kSource + "/crds/optional/"});
  for (const std::string& crd : kCrds) {
    INFO(crd);
    REQUIRE(Eventually([&] { return Established(k, crd); }, std::chrono::seconds(30)));
  }
  REQUIRE(Eventually([&] { return Established(k, kOptionalCrd); }, std::chrono::seconds(30)));
  // Discovery may lag the Established condition by a moment.
  REQUIRE(Eventually(
      [&] {
        return k.Run({"get", "vcjob,queue,pg,command", "-A"}).ok();
      },
      std::chrono::seconds(30)));
}

// The example queues with names unique to this test, so parallel tests do not collide.
std::string UniqueQueues(const std::string& suffix) {
  return ReplaceAll(MustReadFile(kSource + "/examples/queues.yaml"), "name: example-",
                    "name: example-" + suffix + "-");
}

struct QueueCleanup {
  const Kubectl& k;
  std::vector<std::string> names;
  ~QueueCleanup() {
    for (const auto& n : names) k.Run({"delete", "queue", n, "--wait=false", "--ignore-not-found"});
  }
};

TEST_CASE("kubectl apply -f crds/ establishes every CRD with its names and category") {
  Kubectl k(ClusterEnv::Get().kubeconfig);
  InstallCrds(k);
  for (const std::string& crd : kCrds) {
    INFO(crd);
    CHECK(k.MustRun({"get", "crd", crd, "-o", "jsonpath={.spec.names.categories}"}) ==
          R"(["tephra"])");
    CHECK(k.MustRun({"get", "crd", crd, "-o",
                     "jsonpath={.metadata.annotations.helm\\.sh/resource-policy}"}) == "keep");
  }
  CHECK(k.MustRun({"get", "crd", "jobs.batch.volcano.sh", "-o",
                   "jsonpath={.spec.names.shortNames}"}) == R"(["vcjob","vj"])");
  CHECK(k.MustRun({"get", "crd", "queues.scheduling.volcano.sh", "-o", "jsonpath={.spec.scope}"}) ==
        "Cluster");
  // Status subresources where Volcano has them: Job and Queue, not PodGroup.
  CHECK(k.MustRun({"get", "crd", "jobs.batch.volcano.sh", "-o",
                   "jsonpath={.spec.versions[0].subresources}"}) == R"({"status":{}})");
  CHECK(k.MustRun({"get", "crd", "podgroups.scheduling.volcano.sh", "-o",
                   "jsonpath={.spec.versions[0].subresources}"})
            .empty());
}

TEST_CASE("every example applies cleanly") {
  Kubectl k(ClusterEnv::Get().kubeconfig);
  InstallCrds(k);
  std::string suffix = RandomSuffix();
  QueueCleanup cleanup{k, {"example-" + suffix + "-research", "example-" + suffix + "-production"}};
  std::string out = k.MustRun({"apply", "-f", "-"}, UniqueQueues(suffix));
  CHECK(out.find("queue.scheduling.volcano.sh/example-" + suffix + "-research created") !=
        std::string::npos);
  for (const char* file : {"job-single-task.yaml", "job-mpi.yaml", "job-pytorch.yaml",
                           "job-tensorflow.yaml", "podgroup-plain-pods.yaml", "hypernodes.yaml",
                           "job-topology.yaml", "optional/scheduler-plugins-podgroup.yaml"}) {
    INFO(file);
    TestNamespace ns(k, "it-api-ex");
    CommandResult r = k.Run({"apply", "-n", ns.name(), "-f", kSource + "/examples/" + file});
    CHECK(r.ok());
    CHECK(r.err.empty());
  }
}

TEST_CASE("kubectl get vcjob,queue,pg shows the printer columns") {
  Kubectl k(ClusterEnv::Get().kubeconfig);
  InstallCrds(k);
  TestNamespace ns(k, "it-api-cols");
  k.MustRun({"apply", "-n", ns.name(), "-f", kSource + "/examples/job-single-task.yaml"});
  k.MustRun({"apply", "-n", ns.name(), "-f", kSource + "/examples/podgroup-plain-pods.yaml"});
  std::string suffix = RandomSuffix();
  QueueCleanup cleanup{k, {"example-" + suffix + "-research", "example-" + suffix + "-production"}};
  k.MustRun({"apply", "-f", "-"}, UniqueQueues(suffix));

  // Columns read the status the controllers write: set it through the status subresource.
  k.MustRun({"patch", "-n", ns.name(), "vcjob", "hello", "--subresource=status", "--type=merge",
             "-p", R"({"status":{"state":{"phase":"Running"},"minAvailable":2,"running":2}})"});
  k.MustRun({"patch", "-n", ns.name(), "pg", "spark-pi", "--type=merge", "-p",
             R"({"status":{"phase":"Inqueue","running":1}})"});

  std::string jobs = k.MustRun({"get", "-n", ns.name(), "vcjob"});
  INFO(jobs);
  CHECK(jobs.rfind("NAME    STATUS    MINAVAILABLE   RUNNINGS   AGE", 0) == 0);
  CHECK(jobs.find("hello   Running   2              2") != std::string::npos);
  std::string wide = k.MustRun({"get", "-n", ns.name(), "vj", "-o", "wide"});
  INFO(wide);
  CHECK(wide.find("QUEUE") != std::string::npos);
  CHECK(wide.find("default") != std::string::npos);

  std::string pgs = k.MustRun({"get", "-n", ns.name(), "pg", "-o", "wide"});
  INFO(pgs);
  CHECK(pgs.rfind("NAME       STATUS    MINMEMBER   RUNNINGS   AGE", 0) == 0);
  CHECK(pgs.find("spark-pi   Inqueue   3           1") != std::string::npos);
  CHECK(pgs.find("QUEUE") != std::string::npos);

  std::string queues = k.MustRun({"get", "q", "example-" + suffix + "-research",
                                  "example-" + suffix + "-production", "-o", "wide"});
  INFO(queues);
  CHECK(queues.find("STATE") != std::string::npos);
  CHECK(queues.find("PARENT") != std::string::npos);
  CHECK(queues.find("WEIGHT") != std::string::npos);

  // One command lists all three kinds, and the category finds the namespaced ones.
  std::string all = k.MustRun({"get", "-n", ns.name(), "vcjob,queue,pg"});
  CHECK(all.find("job.batch.volcano.sh/hello") != std::string::npos);
  CHECK(all.find("podgroup.scheduling.volcano.sh/spark-pi") != std::string::npos);
  CHECK(all.find("queue.scheduling.volcano.sh/example-" + suffix + "-research") !=
        std::string::npos);
  std::string category = k.MustRun({"get", "-n", ns.name(), "tephra"});
  CHECK(category.find("job.batch.volcano.sh/hello") != std::string::npos);
  CHECK(category.find("podgroup.scheduling.volcano.sh/spark-pi") != std::string::npos);
}

TEST_CASE("the API server rejects schema-invalid objects and names the field") {
  Kubectl k(ClusterEnv::Get().kubeconfig);
  InstallCrds(k);
  TestNamespace ns(k, "it-api-bad");
  struct Case {
    const char* what;
    std::string manifest;
    const char* field;
  };
  std::string suffix = RandomSuffix();
  const Case cases[] = {
      {"negative minAvailable",
       R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{"name":"neg"},
          "spec":{"minAvailable":-1,"tasks":[{"replicas":1,"template":{"spec":{"containers":[
          {"name":"c","image":"busybox"}]}}}]}})",
       "spec.minAvailable"},
      {"negative task minAvailable",
       R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{"name":"neg2"},
          "spec":{"tasks":[{"replicas":1,"minAvailable":-2,"template":{}}]}})",
       "spec.tasks[0].minAvailable"},
      {"unknown phase",
       R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":{"name":"p"},
          "spec":{"minMember":1},"status":{"phase":"Exploded"}})",
       "status.phase"},
      {"unknown policy event",
       R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{"name":"ev"},
          "spec":{"policies":[{"event":"PodExploded","action":"AbortJob"}],
          "tasks":[{"replicas":1,"template":{}}]}})",
       "spec.policies[0].event"},
      {"queue weight above 65535",
       R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","metadata":{"name":"heavy-)" +
           suffix + R"("},"spec":{"weight":70000}})",
       "spec.weight"},
      {"a string where an integer belongs",
       R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{"name":"str"},
          "spec":{"tasks":[{"replicas":"three","template":{}}]}})",
       "spec.tasks[0].replicas"},
      {"a malformed quantity",
       R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","metadata":{"name":"q-)" +
           suffix + R"("},"spec":{"capability":{"cpu":"lots"}}})",
       "spec.capability.cpu"},
      {"no tasks",
       R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{"name":"empty"},
          "spec":{"tasks":[]}})",
       "spec.tasks"},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    CommandResult r = k.Run({"create", "-n", ns.name(), "-f", "-"}, c.manifest);
    INFO(r.err);
    CHECK_FALSE(r.ok());
    CHECK(r.err.find("is invalid") != std::string::npos);
    CHECK(r.err.find(c.field) != std::string::npos);
  }
  // Nothing was created.
  CHECK(k.MustRun({"get", "-n", ns.name(), "vcjob,pg", "-o", "name"}).empty());
}

// Lists `resource` in `ns` and returns the items' JSON texts.
std::vector<std::string> ListItems(const Kubectl& k, const std::string& resource,
                                   const std::string& ns) {
  std::vector<std::string> args{"get", resource, "-o", "json"};
  if (!ns.empty()) args.insert(args.end(), {"-n", ns});
  std::string text = k.MustRun(args);
  json::Document doc;
  REQUIRE(json::Parse(text, &doc).ok());
  std::vector<std::string> items;
  for (const auto& item : doc["items"].GetArray()) items.push_back(json::Write(item));
  return items;
}

bool SameJson(const std::string& a, const std::string& b) {
  json::Document da;
  json::Document db;
  return json::Parse(a, &da).ok() && json::Parse(b, &db).ok() && da == db;
}

TEST_CASE("Tephra's decoders read what the API server returns for the examples") {
  Kubectl k(ClusterEnv::Get().kubeconfig);
  InstallCrds(k);
  TestNamespace ns(k, "it-api-decode");
  for (const char* file :
       {"job-mpi.yaml", "job-pytorch.yaml", "job-tensorflow.yaml", "podgroup-plain-pods.yaml",
        "optional/scheduler-plugins-podgroup.yaml"}) {
    k.MustRun({"apply", "-n", ns.name(), "-f", kSource + "/examples/" + file});
  }
  std::string suffix = RandomSuffix();
  QueueCleanup cleanup{k, {"example-" + suffix + "-research", "example-" + suffix + "-production"}};
  k.MustRun({"apply", "-f", "-"}, UniqueQueues(suffix));

  std::map<std::string, std::shared_ptr<api::Job>> jobs;
  for (const std::string& text : ListItems(k, "vcjob", ns.name())) {
    auto job = api::DecodeJob(text, {.keep_raw = true});
    REQUIRE(job.ok());
    // Lossless: re-encoding gives the server's object back.
    CHECK(SameJson(api::EncodeJob(**job), text));
    jobs[(*job)->metadata.name] = *job;
  }
  REQUIRE(jobs.size() == 3);
  const api::Job& mpi = *jobs.at("mpi-pi");
  CHECK(mpi.metadata.namespace_ == ns.name());
  CHECK(mpi.spec.min_available == 4);
  CHECK(mpi.spec.max_retry == 3);  // the CRD default
  CHECK(mpi.spec.plugins.at("mpi").size() == 3);
  CHECK(mpi.TotalReplicas() == 4);
  CHECK(mpi.Task("master")->policies[0].event == api::job_event::kTaskCompleted);
  CHECK(api::PodRequest(mpi.Task("worker")->template_.spec).ToString() == "cpu 1, memory 1Gi");
  CHECK(mpi.Task("master")->template_.metadata.Annotation("sim.tephra.dev/result") == "Succeeded");
  const api::Job& pytorch = *jobs.at("pytorch-mnist");
  CHECK(pytorch.spec.ttl_seconds_after_finished == 3600);
  CHECK(pytorch.spec.policies.size() == 2);
  const api::Job& tf = *jobs.at("tf-dist-mnist");
  CHECK(tf.spec.queue == "example-research");
  CHECK(tf.Task("ps")->template_.spec.containers[0].ports[0].container_port == 2222);
  for (const auto& [name, job] : jobs) {
    INFO(name);
    CHECK(api::ValidateJobCreate(*job, nullptr).empty());
  }

  // Updating the status through the encoder: the server accepts it and keeps the spec.
  api::Job updated = mpi;
  updated.status.state.phase = std::string(api::job_phase::kRunning);
  updated.status.running = 4;
  updated.status.min_available = 4;
  updated.status.task_status_count["worker"] = {{"Running", 3}};
  k.MustRun({"replace", "-n", ns.name(), "--subresource=status", "-f", "-"},
            api::EncodeJob(updated));
  auto reread =
      api::DecodeJob(k.MustRun({"get", "-n", ns.name(), "vcjob", "mpi-pi", "-o", "json"}));
  REQUIRE(reread.ok());
  CHECK((*reread)->status.state.phase == "Running");
  CHECK((*reread)->status.task_status_count.at("worker").at("Running") == 3);
  CHECK((*reread)->spec.tasks.size() == 2);

  auto pgs = ListItems(k, "podgroups.scheduling.volcano.sh", ns.name());
  REQUIRE(pgs.size() == 1);
  auto pg = api::DecodePodGroup(pgs[0], {.keep_raw = true});
  REQUIRE(pg.ok());
  CHECK((*pg)->spec.min_member == 3);
  CHECK(api::Resources::FromList(*(*pg)->spec.min_resources).ToString() == "cpu 3, memory 3Gi");
  CHECK(SameJson(api::EncodePodGroup(**pg), pgs[0]));

  auto pods = ListItems(k, "pods", ns.name());
  int grouped = 0;
  for (const std::string& text : pods) {
    auto pod = api::DecodePod(text, {.keep_raw = true});
    REQUIRE(pod.ok());
    CHECK(SameJson(api::EncodePod(**pod), text));
    if ((*pod)->metadata.Annotation(api::kGroupNameAnnotation) == "spark-pi") {
      ++grouped;
      CHECK((*pod)->spec.scheduler_name == "volcano");
      CHECK(api::PodRequest((*pod)->spec).ToString() == "cpu 1, memory 1Gi");
    }
  }
  CHECK(grouped == 3);

  auto coscheduling = ListItems(k, "podgroups.scheduling.x-k8s.io", ns.name());
  REQUIRE(coscheduling.size() == 1);
  auto spg = api::DecodeSchedPluginsPodGroup(coscheduling[0], {.keep_raw = true});
  REQUIRE(spg.ok());
  CHECK(SameJson(api::EncodeSchedPluginsPodGroup(**spg), coscheduling[0]));
  api::PodGroup converted = api::ToVolcanoPodGroup(**spg, "default");
  CHECK(converted.spec.min_member == 2);
  CHECK(converted.status.phase == api::podgroup_phase::kPending);

  std::string production = "example-" + suffix + "-production";
  auto queue =
      api::DecodeQueue(k.MustRun({"get", "queue", production, "-o", "json"}), {.keep_raw = true});
  REQUIRE(queue.ok());
  CHECK((*queue)->spec.weight == 1);
  CHECK((*queue)->spec.reclaimable == false);
  CHECK((*queue)->spec.dequeue_strategy == "traverse");  // the CRD default
  CHECK(api::Resources::FromList((*queue)->spec.capability).ToString() ==
        "cpu 16, memory 64Gi, nvidia.com/gpu 4");
  // The scheduler's status write: allocated through the status subresource.
  api::Queue with_status = **queue;
  with_status.status.state = std::string(api::queue_state::kOpen);
  with_status.status.allocated = api::Resources::FromString("cpu=2500m,memory=3Gi")->ToList();
  k.MustRun({"replace", "--subresource=status", "-f", "-"}, api::EncodeQueue(with_status));
  CHECK(k.MustRun({"get", "queue", production, "-o", "jsonpath={.status.allocated.cpu}"}) ==
        "2500m");
  CHECK(k.MustRun({"get", "queue", production}).find("Open") != std::string::npos);
}

TEST_CASE("a Command encoded by Tephra is accepted and decodes back") {
  Kubectl k(ClusterEnv::Get().kubeconfig);
  InstallCrds(k);
  TestNamespace ns(k, "it-api-cmd");
  api::Command cmd;
  cmd.api_version = std::string(api::kBusApiVersion);
  cmd.kind = std::string(api::kCommandKind);
  cmd.metadata.generate_name = "hello-abortjob-";
  cmd.metadata.namespace_ = ns.name();
  cmd.action = std::string(api::job_action::kAbortJob);
  cmd.target = kube::OwnerReference{std::string(api::kBatchApiVersion),
                                    std::string(api::kJobKind),
                                    "hello",
                                    "0b1c2d3e-0000-4000-8000-000000000001",
                                    true,
                                    false};
  cmd.reason = "integration test";
  std::string created = k.MustRun({"create", "-f", "-", "-o", "json"}, api::EncodeCommand(cmd));
  auto back = api::DecodeCommand(created);
  REQUIRE(back.ok());
  CHECK((*back)->metadata.name.rfind("hello-abortjob-", 0) == 0);
  CHECK((*back)->action == "AbortJob");
  CHECK((*back)->target->name == "hello");
  CHECK((*back)->target->controller);
  CHECK((*back)->reason == "integration test");
}

}  // namespace
}  // namespace tephra::testing
