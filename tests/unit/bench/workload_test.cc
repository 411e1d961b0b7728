// The benchmark workload generator: the plan has the promised shape, and every object it
// writes decodes with Tephra's own decoders into what the plan says.
#include "bench/workload.h"

#include <algorithm>
#include <map>

#include <catch2/catch.hpp>
#include <rapidjson/document.h>

#include "api/batch.h"
#include "api/core.h"
#include "api/scheduling.h"
#include "json/json.h"
#include "scheduler/model/pod_info.h"

namespace tephra::bench {
namespace {

TEST_CASE("a workload plan has its pods, gangs, plain pods, queues and priorities") {
  WorkloadSpec spec;
  spec.pods = 1000;
  spec.gang_size = 10;
  spec.plain_fraction = 0.2;
  spec.queues = 4;
  auto jobs = PlanJobs(spec);
  int64_t pods = 0, plain = 0;
  std::map<std::string, int> queues, classes;
  for (const auto& j : jobs) {
    pods += j.size;
    plain += j.plain ? 1 : 0;
    CHECK(j.size == (j.plain ? 1 : 10));
    ++queues[j.queue];
    ++classes[j.priority_class];
  }
  CHECK(pods == 1000);
  CHECK(plain == 200);
  CHECK(jobs.size() == 280);
  CHECK(queues.size() == 4);
  CHECK(classes.size() == 3);
  // Plain pods are spread through the stream, not bunched at one end.
  const auto half = static_cast<std::ptrdiff_t>(jobs.size() / 2);
  const auto is_plain = [](const JobPlan& j) { return j.plain; };
  const auto first_half = std::count_if(jobs.begin(), jobs.begin() + half, is_plain);
  const auto second_half = std::count_if(jobs.begin() + half, jobs.end(), is_plain);
  CHECK(first_half == 100);
  CHECK(second_half == 100);
}

TEST_CASE("an all-plain workload has one pod per job") {
  WorkloadSpec spec;
  spec.pods = 37;
  spec.plain_fraction = 1.0;
  auto jobs = PlanJobs(spec);
  CHECK(jobs.size() == 37);
  for (const auto& j : jobs) CHECK(j.plain);
}

TEST_CASE("generated nodes decode with their shape's capacity, labels and taints") {
  ClusterSpec cluster;
  cluster.shape = NodeShape::kMixed;
  auto cpu = api::DecodeNode(NodeJson(cluster, 0));
  auto gpu = api::DecodeNode(NodeJson(cluster, 3));
  REQUIRE(cpu.ok());
  REQUIRE(gpu.ok());
  CHECK((*cpu)->spec.taints.empty());
  REQUIRE((*gpu)->spec.taints.size() == 1);
  CHECK((*gpu)->spec.taints[0].key == "nvidia.com/gpu");
  CHECK((*gpu)->status.allocatable.Contains("nvidia.com/gpu"));
  CHECK((*gpu)->metadata.Annotation("kwok.x-k8s.io/node") == "fake");

  cluster.shape = NodeShape::kTaints;
  auto tainted = api::DecodeNode(NodeJson(cluster, 5));
  REQUIRE(tainted.ok());
  CHECK((*tainted)->metadata.Label("pool") == "pool-c");
  REQUIRE((*tainted)->spec.taints.size() == 1);
  CHECK((*tainted)->spec.taints[0].effect == "NoSchedule");
}

TEST_CASE("generated pods, PodGroups, Jobs, queues and priority classes decode") {
  WorkloadSpec spec;
  spec.pods = 100;
  spec.shape = NodeShape::kTaints;
  auto jobs = PlanJobs(spec);
  scheduler::SpecInterner interner;
  int selectors = 0, tolerations = 0;
  for (const auto& job : jobs) {
    auto pg = api::DecodePodGroup(PodGroupJson(spec, job, "Pending"));
    REQUIRE(pg.ok());
    CHECK((*pg)->spec.min_member == job.size);
    CHECK((*pg)->spec.queue == job.queue);
    CHECK((*pg)->status.phase == "Pending");
    REQUIRE((*pg)->spec.min_resources.has_value());
    auto vj = api::DecodeJob(VolcanoJobJson(spec, job));
    REQUIRE(vj.ok());
    json::Document doc;
    REQUIRE(json::Parse(PodJson(spec, job, 0, true, "volcano"), &doc).ok());
    auto pod = scheduler::DecodePodInfo(doc, interner);
    REQUIRE(pod.ok());
    CHECK((*pod)->group_name == job.name);
    CHECK((*pod)->spec->scheduler_name == "volcano");
    CHECK((*pod)->spec->request.Get("cpu") > 0);
    selectors += (*pod)->spec->node_selector.empty() ? 0 : 1;
    tolerations += (*pod)->spec->tolerations.empty() ? 0 : 1;
    json::Document bare;
    REQUIRE(json::Parse(PodJson(spec, job, 0, false, "default-scheduler"), &bare).ok());
    auto plain = scheduler::DecodePodInfo(bare, interner);
    REQUIRE(plain.ok());
    // No group named: held under the name the PodGroup controller will give its group.
    CHECK((*plain)->implicit_group);
    CHECK((*plain)->group_name == "podgroup-" + (*plain)->metadata.uid);
  }
  CHECK(selectors > 0);
  CHECK(tolerations > 0);
  for (const auto& q : QueueJsons(spec)) CHECK(api::DecodeQueue(q).ok());
  for (const auto& pc : PriorityClassJsons(spec)) CHECK(api::DecodePriorityClass(pc).ok());
}

}  // namespace
}  // namespace tephra::bench
