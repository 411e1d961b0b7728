// Pods with claims through whole sessions (docs/scheduler.md, "Storage"): gangs placed only
// where every member's volumes can be had, one PV never given twice (in a session or across
// sessions, through the cache's assumptions), the reasons pods wait with, and preemption that
// never evicts for a pod its volumes keep off a node.
#include <set>
#include <variant>

#include <catch2/catch.hpp>

#include "scheduler/plugins/plugins.h"
#include "tests/unit/scheduler/harness.h"

namespace tephra::scheduler::testing {
namespace {

std::string VolumeOf(const std::vector<PreBindStep>& steps) {
  REQUIRE(steps.size() == 1);
  const auto* bind = std::get_if<BindVolumeStep>(&steps[0].what);
  REQUIRE(bind != nullptr);
  return bind->volume;
}

// Nodes n1..n6 and a WaitForFirstConsumer class of local PVs, one of 10Gi on each node named.
void LocalVolumes(Harness& h, const std::vector<int>& on) {
  for (int i = 1; i <= 6; ++i) h.Node("n" + std::to_string(i), "cpu=4,memory=16Gi");
  h.Queue("default").StorageClass("local");
  for (int i : on) h.Volume("pv-n" + std::to_string(i), "local", "10Gi", "n" + std::to_string(i));
}

// A gang of `size` pods, each mounting its own claim of `local`.
void Gang(Harness& h, const std::string& name, int size) {
  h.Group("ns/" + name, "default", size);
  for (int i = 0; i < size; ++i) {
    std::string pod = name + "-" + std::to_string(i);
    h.Claim("ns/data-" + pod, "local", "5Gi");
    h.Pod("ns/" + pod, name).Request("cpu=1").Claim("data-" + pod).Add();
  }
}

TEST_CASE("storage: a gang of four goes exactly where its four volumes are") {
  Harness h;
  LocalVolumes(h, {2, 3, 5, 6});
  Gang(h, "gang", 4);
  auto r = h.Run();
  REQUIRE(r.binds.size() == 4);
  std::set<std::string> nodes, volumes;
  for (const auto& [pod, node] : r.binds) {
    nodes.insert(node);
    std::string volume = VolumeOf(h.binder().steps.at(pod));
    CHECK(volume == "pv-" + node);  // each member's PV is on its own node
    volumes.insert(volume);
  }
  CHECK(nodes == std::set<std::string>{"n2", "n3", "n5", "n6"});
  CHECK(volumes.size() == 4);
}

TEST_CASE("storage: a gang one of whose members can have no volume is not placed at all") {
  Harness h;
  LocalVolumes(h, {2, 3, 5});
  Gang(h, "gang", 4);
  auto r = h.Run();
  CHECK(r.binds.empty());
  const auto* cond = WrittenCondition(r, "ns/gang", "Unschedulable");
  REQUIRE(cond != nullptr);
  CHECK_THAT(cond->message, Catch::Contains(reason::kVolumeBindConflict));
}

TEST_CASE("storage: two pods racing for one PV: one takes it, the other waits, also next time") {
  Harness h;
  LocalVolumes(h, {1});
  Gang(h, "first", 1);
  Gang(h, "second", 1);
  auto r = h.Run();
  REQUIRE(r.binds.size() == 1);
  const std::string winner = r.binds.begin()->first;
  CHECK(VolumeOf(h.binder().steps.at(winner)) == "pv-n1");
  // The next session sees the PV taken (assumed in the cache until the informer shows it).
  auto again = h.Run();
  CHECK(again.binds.empty());
  const std::string loser = winner == "first-0" ? "second" : "first";
  const auto* cond = WrittenCondition(again, "ns/" + loser, "Unschedulable");
  REQUIRE(cond != nullptr);
  CHECK_THAT(cond->message, Catch::Contains("6 node(s) didn't find available persistent volumes"));
}

TEST_CASE("storage: a pod waiting for its claim says why, with node counts") {
  Harness h;
  LocalVolumes(h, {});
  h.StorageClass("standard", false).Claim("ns/data", "standard", "1Gi");
  h.Group("ns/waits", "default", 1);
  h.Pod("ns/waits-0", "waits").Request("cpu=1").Claim("data").Add();
  h.Group("ns/missing", "default", 1);
  h.Pod("ns/missing-0", "missing").Request("cpu=1").Claim("nowhere").Add();
  auto r = h.Run();
  CHECK(r.binds.empty());
  const auto* waits = WrittenCondition(r, "ns/waits", "Unschedulable");
  REQUIRE(waits != nullptr);
  CHECK_THAT(waits->message, Catch::Contains("6 pod has unbound immediate PersistentVolumeClaims"));
  const auto* missing = WrittenCondition(r, "ns/missing", "Unschedulable");
  REQUIRE(missing != nullptr);
  CHECK_THAT(missing->message, Catch::Contains("persistentvolumeclaim \"nowhere\" not found"));
}

TEST_CASE("storage: a claim bound meanwhile lets its pod go where its PV is") {
  Harness h;
  LocalVolumes(h, {4});
  h.StorageClass("standard", false).Claim("ns/data", "standard", "1Gi");
  h.Group("ns/job", "default", 1);
  h.Pod("ns/job-0", "job").Request("cpu=1").Claim("data").Add();
  CHECK(h.Run().binds.empty());
  h.ChangeVolume("pv-n4",
                 [](api::PersistentVolume& pv) { pv.spec.storage_class_name = "standard"; });
  h.ChangeClaim("ns/data", [](api::PersistentVolumeClaim& c) {
    c.spec.volume_name = "pv-n4";
    c.bind_completed = true;
  });
  auto r = h.Run();
  REQUIRE(r.binds.size() == 1);
  CHECK(r.binds.at("job-0") == "n4");
  CHECK(h.binder().steps.count("job-0") == 0);
}

const char* kPreemptConf = R"(actions: "enqueue, allocate, preempt, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: drf}, {name: predicates}, {name: proportion}, {name: nodeorder}])";

TEST_CASE("storage: preemption never evicts for a pod whose volume keeps it off the node") {
  Harness h;
  h.PriorityClass("high", 1000).PriorityClass("low", 10);
  h.Node("n1", "cpu=2").Node("n2", "cpu=2", {}, {{"maintenance", "", "NoSchedule", {}}});
  h.Queue("default").StorageClass("local").Volume("pv-n2", "local", "10Gi", "n2");
  h.Claim("ns/data", "local", "1Gi", "pv-n2");
  h.Group("ns/low", "default", 1, "Running", "", "low");
  for (int i = 0; i < 2; ++i)
    h.Pod("ns/low-" + std::to_string(i), "low").Request("cpu=1").Priority(10).On("n1").Add();
  h.Group("ns/high", "default", 1, "Inqueue", "", "high");
  h.Pod("ns/high-0", "high").Request("cpu=1").Priority(1000).Claim("data").Add();
  auto r = h.Run(kPreemptConf);
  CHECK(r.evictions.empty());
  CHECK(r.binds.empty());
  // The same pod without its claim would preempt on n1: the volume is what stops it.
  h.Group("ns/plain", "default", 1, "Inqueue", "", "high");
  h.Pod("ns/plain-0", "plain").Request("cpu=1").Priority(1000).Add();
  CHECK(h.Run(kPreemptConf).evictions.size() == 1);
}

TEST_CASE("storage: a forgotten unit's volume is free for the next session") {
  Harness h;
  LocalVolumes(h, {1});
  Gang(h, "first", 1);
  auto r = h.Run();
  REQUIRE(r.binds.size() == 1);
  const std::vector<PreBindStep> steps = h.binder().steps.at("first-0");
  // The binder gave up: volume and pod are given back.
  h.cache().ForgetVolumeSteps(steps);
  h.cache().ForgetBinding("ns/first", "uid-ns/first-0");
  auto again = h.Run();
  REQUIRE(again.binds.size() == 1);
  CHECK(VolumeOf(h.binder().steps.at("first-0")) == "pv-n1");
}

}  // namespace
}  // namespace tephra::scheduler::testing
