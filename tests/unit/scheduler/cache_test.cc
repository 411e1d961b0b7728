// The scheduler cache's own promises about PodGroups: statuses it wrote, and pods whose group
// the PodGroup controller has not made yet; and about volumes it gave claims.
#include "scheduler/cache/cache.h"

#include <catch2/catch.hpp>
#include <rapidjson/document.h>

#include "base/clock.h"
#include "json/json.h"
#include "tests/unit/scheduler/harness.h"

namespace tephra::scheduler {
namespace {

std::shared_ptr<const api::PodGroup> Group(const std::string& phase, int32_t min_member = 1) {
  auto pg = std::make_shared<api::PodGroup>();
  pg->metadata.namespace_ = "ns";
  pg->metadata.name = "g";
  pg->metadata.uid = "pg-uid";
  pg->spec.queue = "default";
  pg->spec.min_member = min_member;
  pg->status.phase = phase;
  return pg;
}

api::PodGroupStatus Status(const std::string& phase, int32_t running = 0) {
  api::PodGroupStatus s;
  s.phase = phase;
  s.running = running;
  return s;
}

TEST_CASE("a written PodGroup status stands until the informer echoes it") {
  base::FakeClock clock;
  SchedulerCache cache(CacheOptions{}, clock);
  auto queue = std::make_shared<api::Queue>();
  queue->metadata.name = "default";
  cache.UpsertQueue(queue);
  cache.UpsertPodGroup(Group("Pending"));
  cache.AssumePodGroupStatus("ns/g", Status("Running"));
  CHECK(cache.Job("ns/g")->phase == api::PodGroupPhase::kRunning);
  auto snapshot = cache.TakeSnapshot();
  REQUIRE(snapshot->jobs.size() == 1);
  CHECK(snapshot->jobs[0]->pod_group->status.phase == "Running");

  SECTION("an update from before the write keeps the written status, but brings its spec") {
    auto stale = std::make_shared<api::PodGroup>(*Group("Inqueue", 3));
    cache.UpsertPodGroup(stale);
    CHECK(cache.Job("ns/g")->phase == api::PodGroupPhase::kRunning);
    CHECK(cache.Job("ns/g")->min_available == 3);
  }
  SECTION("once echoed, the informer's view rules again") {
    auto echo = std::make_shared<api::PodGroup>(*Group("Running"));
    cache.UpsertPodGroup(echo);
    CHECK(cache.Job("ns/g")->phase == api::PodGroupPhase::kRunning);
    cache.UpsertPodGroup(Group("Pending"));  // someone else's later write
    CHECK(cache.Job("ns/g")->phase == api::PodGroupPhase::kPending);
  }
  SECTION("a failed write goes back to what the informer last said") {
    cache.UpsertPodGroup(Group("Inqueue", 2));
    cache.ForgetPodGroupStatus("ns/g");
    CHECK(cache.Job("ns/g")->phase == api::PodGroupPhase::kInqueue);
    CHECK(cache.Job("ns/g")->min_available == 2);
  }
  SECTION("an echo that never comes is not waited for beyond the assume TTL") {
    clock.Advance(CacheOptions{}.assume_ttl + std::chrono::seconds(1));
    cache.UpsertPodGroup(Group("Inqueue"));
    CHECK(cache.Job("ns/g")->phase == api::PodGroupPhase::kInqueue);
  }
  SECTION("a deleted group takes its assumption along") {
    cache.DeletePodGroup("ns", "g");
    cache.UpsertPodGroup(Group("Pending"));
    CHECK(cache.Job("ns/g")->phase == api::PodGroupPhase::kPending);
  }
}

TEST_CASE("a node's status heartbeat starts no session, a change it can use does") {
  SchedulerCache cache(CacheOptions{});
  auto node = std::make_shared<api::Node>();
  node->metadata.name = "n1";
  node->metadata.uid = "n1-uid";
  node->metadata.resource_version = "1";
  node->status.allocatable = {{"cpu", api::Quantity::FromInt(4)}};
  node->status.conditions.push_back({"Ready", "True", "KubeletReady", "ready"});
  cache.UpsertNode(node);
  const auto deadline = std::chrono::steady_clock::now();  // do not wait: just read
  const uint64_t work = cache.WaitForWork(0, deadline);
  const uint64_t generation = cache.generation();

  auto heartbeat = std::make_shared<api::Node>(*node);
  heartbeat->metadata.resource_version = "2";
  cache.UpsertNode(heartbeat);
  CHECK(cache.WaitForWork(0, deadline) == work);  // no early session
  CHECK(cache.generation() == generation);        // nor a periodic one: nothing changed
  CHECK(cache.Node("n1")->node->metadata.resource_version == "2");  // yet the object is kept

  auto grown = std::make_shared<api::Node>(*heartbeat);
  grown->status.allocatable = {{"cpu", api::Quantity::FromInt(8)}};
  cache.UpsertNode(grown);
  CHECK(cache.WaitForWork(0, deadline) > work);
  auto cordoned = std::make_shared<api::Node>(*grown);
  const uint64_t before = cache.WaitForWork(0, deadline);
  cordoned->spec.unschedulable = true;
  cache.UpsertNode(cordoned);
  CHECK(cache.WaitForWork(0, deadline) > before);
}

TEST_CASE("negative minResources of a PodGroup that bypassed admission reserve nothing") {
  SchedulerCache cache(CacheOptions{});
  auto pg = std::make_shared<api::PodGroup>(*Group("Pending"));
  pg->spec.min_resources = api::ResourceList{{"cpu", *api::Quantity::Parse("-10")},
                                             {"memory", *api::Quantity::Parse("2Gi")},
                                             {"nvidia.com/gpu", *api::Quantity::Parse("-1")}};
  cache.UpsertPodGroup(pg);
  const auto job = cache.Job("ns/g");
  REQUIRE(job->min_resources.has_value());
  CHECK(job->min_resources->milli_cpu() == 0);
  CHECK(job->min_resources->memory() == int64_t{2} << 30);
  CHECK(job->min_resources->Get("nvidia.com/gpu") == 0);
}

TEST_CASE("the quota-style minResources keys and the pod count reserve nothing") {
  SchedulerCache cache(CacheOptions{});
  auto pg = std::make_shared<api::PodGroup>(*Group("Pending"));
  // A Job's PodGroup as Volcano (and Tephra) writes it for 3 pods of 1 CPU and 1 GPU.
  pg->spec.min_resources =
      api::ResourceList{{"count/pods", *api::Quantity::Parse("3")},
                        {"cpu", *api::Quantity::Parse("3")},
                        {"limits.cpu", *api::Quantity::Parse("6")},
                        {"nvidia.com/gpu", *api::Quantity::Parse("3")},
                        {"pods", *api::Quantity::Parse("3")},
                        {"requests.cpu", *api::Quantity::Parse("3")},
                        {"requests.nvidia.com/gpu", *api::Quantity::Parse("3")}};
  cache.UpsertPodGroup(pg);
  const auto job = cache.Job("ns/g");
  REQUIRE(job->min_resources.has_value());
  CHECK(job->min_resources->ToString() == "cpu 3, nvidia.com/gpu 3");
}

TEST_CASE("assuming the status a group already has changes nothing") {
  base::FakeClock clock;
  SchedulerCache cache(CacheOptions{}, clock);
  cache.UpsertPodGroup(Group("Running"));
  uint64_t generation = cache.generation();
  cache.AssumePodGroupStatus("ns/g", Status("Running"));
  cache.AssumePodGroupStatus("ns/missing", Status("Running"));
  CHECK(cache.generation() == generation);
}

TEST_CASE("a session that wrote a status does not write it again before the echo") {
  testing::Harness h;
  h.Node("n1", "cpu=4,memory=8Gi").Queue("default").Group("ns/g", "default", 1, "Pending");
  h.Pod("ns/p", "g").Request("cpu=1").Add();
  auto first = h.Run();
  REQUIRE(first.phases["ns/g"] == "Running");
  h.cache().AssumePodGroupStatus("ns/g", first.statuses["ns/g"]);
  auto second = h.Run();
  CHECK(second.outcome.pod_groups.empty());
}

TEST_CASE("a bare pod is placed on the group its controller will make, before the group exists") {
  testing::Harness h;
  h.Node("n1", "cpu=4,memory=8Gi").Queue("default");
  json::Document doc;
  REQUIRE(json::Parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"bare","namespace":"ns",
      "uid":"u-1","resourceVersion":"1","creationTimestamp":"2026-11-30T10:00:00Z"},
      "spec":{"schedulerName":"volcano","containers":[{"name":"c","resources":{"requests":{"cpu":"1"}}}]},
      "status":{"phase":"Pending"}})",
                      &doc)
              .ok());
  auto pod = DecodePodInfo(doc, h.interner());
  REQUIRE(pod.ok());
  CHECK((*pod)->implicit_group);
  CHECK((*pod)->group_name == "podgroup-u-1");
  REQUIRE((*pod)->implicit_pod_group != nullptr);
  CHECK((*pod)->implicit_pod_group->spec.min_member == 1);
  CHECK((*pod)->implicit_pod_group->spec.queue.empty());  // the cache's default queue
  h.cache().UpsertPod(*pod);
  REQUIRE(h.cache().Job("ns/podgroup-u-1") != nullptr);
  CHECK(h.cache().Job("ns/podgroup-u-1")->provisional_group);
  CHECK_FALSE(h.cache().HasPodGroupObject("ns/podgroup-u-1"));
  // One session admits and places it; the status it decides waits for the object.
  auto first = h.Run();
  CHECK(first.binds.count("bare") == 1);
  REQUIRE(first.outcome.pod_groups.size() == 1);
  CHECK(first.outcome.pod_groups[0].status.phase == "Running");
  CHECK(first.outcome.pod_groups[0].awaiting_object);
  // The controller's group arrives Pending: its status is written (no longer awaiting).
  h.Group("ns/podgroup-u-1", "default", 1, "Pending");
  CHECK(h.cache().HasPodGroupObject("ns/podgroup-u-1"));
  auto after = h.Run();
  CHECK(after.binds.empty());
  CHECK(after.phases["ns/podgroup-u-1"] == "Running");
  REQUIRE(after.outcome.pod_groups.size() == 1);
  CHECK_FALSE(after.outcome.pod_groups[0].awaiting_object);
}

TEST_CASE("a bare pod bound before its group is made stays counted under the provisional group") {
  testing::Harness h;
  h.Node("n1", "cpu=4,memory=8Gi").Queue("default");
  auto decode = [&](const std::string& extra_meta, const std::string& node) {
    json::Document doc;
    REQUIRE(json::Parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"bare",)"
                        R"("namespace":"ns","uid":"u-3")" +
                            extra_meta + R"(},"spec":{"schedulerName":"volcano",)" + node +
                            R"("containers":[{"name":"c","resources":{"requests":{"cpu":"1"}}}]}})",
                        &doc)
                .ok());
    auto pod = DecodePodInfo(doc, h.interner());
    REQUIRE(pod.ok());
    return *pod;
  };
  h.cache().UpsertPod(decode("", ""));
  auto first = h.Run();
  REQUIRE(first.binds.count("bare") == 1);
  // The binding's echo: bound, and annotated with the group's name by the binding itself.
  h.cache().UpsertPod(decode(R"(,"annotations":{"scheduling.k8s.io/group-name":"podgroup-u-3"})",
                             R"("nodeName":"n1",)"));
  auto job = h.cache().Job("ns/podgroup-u-3");
  REQUIRE(job != nullptr);
  CHECK(job->provisional_group);
  CHECK(job->tasks.size() == 1);
  CHECK(h.cache().TakeSnapshot()->jobs.size() == 1);  // its queue still counts it
  // Deleted, it takes the provisional group along.
  h.cache().DeletePod(*decode("", R"("nodeName":"n1",)"));
  CHECK(h.cache().JobCount() == 0);
}

TEST_CASE("a pod deleted before its group is made leaves no job behind") {
  testing::Harness h;
  h.Node("n1", "cpu=4").Queue("default");
  json::Document doc;
  REQUIRE(json::Parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"bare","namespace":"ns",
      "uid":"u-9"},"spec":{"schedulerName":"volcano","containers":[{"name":"c"}]}})",
                      &doc)
              .ok());
  auto pod = DecodePodInfo(doc, h.interner());
  REQUIRE(pod.ok());
  h.cache().UpsertPod(*pod);
  CHECK(h.cache().JobCount() == 1);
  h.cache().DeletePod(**pod);
  CHECK(h.cache().JobCount() == 0);
}

TEST_CASE("a pod with a controller is held under its controller's group") {
  testing::Harness h;
  json::Document doc;
  REQUIRE(
      json::Parse(
          R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"rs-1","namespace":"ns","uid":"u-2",
      "ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs","uid":"rs-uid","controller":true}]},
      "spec":{"schedulerName":"volcano","containers":[{"name":"c"}]}})",
          &doc)
          .ok());
  auto pod = DecodePodInfo(doc, h.interner());
  REQUIRE(pod.ok());
  CHECK((*pod)->group_name == "podgroup-rs-uid");
  // Its owner's annotations may set the group's minMember: it waits for the real group.
  CHECK((*pod)->implicit_pod_group == nullptr);
}

// A PV given to a claim, and a claim's provisioning node, as a committed unit's steps say.
std::vector<PreBindStep> VolumeSteps() {
  return {PreBindStep{BindVolumeStep{"ns/a", "uid-a", "5", "pv-1", "7"}},
          PreBindStep{ProvisionVolumeStep{"ns/b", "uid-b", "6", "n2"}}};
}

TEST_CASE("cache: volume steps are assumed until the informer shows them, or are forgotten") {
  testing::Harness h;
  h.StorageClass("local").Volume("pv-1", "local", "10Gi").Claim("ns/a", "local", "1Gi");
  h.StorageClass("csi", true, "example.com/csi").Claim("ns/b", "csi", "1Gi");
  SchedulerCache& cache = h.cache();
  cache.AssumeVolumeSteps(VolumeSteps());
  auto storage = cache.TakeSnapshot()->storage;
  REQUIRE(storage->Volume("pv-1")->spec.claim_ref);
  CHECK(storage->Volume("pv-1")->spec.claim_ref->uid == "uid-a");
  CHECK(storage->volume_by_claim.at("ns/a")->metadata.name == "pv-1");
  CHECK(storage->Claim("ns", "b")->selected_node == "n2");
  // The API server's view has neither yet.
  CHECK_FALSE(cache.ObservedVolume("pv-1")->spec.claim_ref);
  CHECK(cache.ObservedClaim("ns/b")->selected_node.empty());

  SECTION("an informer update without them keeps the assumptions") {
    h.ChangeVolume("pv-1", [](api::PersistentVolume& pv) { pv.metadata.labels["x"] = "y"; });
    CHECK(cache.TakeSnapshot()->storage->Volume("pv-1")->spec.claim_ref);
  }
  SECTION("the informer showing the writes confirms them") {
    h.ChangeVolume("pv-1", [](api::PersistentVolume& pv) {
      pv.spec.claim_ref =
          api::ClaimReference{"v1", "PersistentVolumeClaim", "ns", "a", "uid-a", "5"};
    });
    h.ChangeClaim("ns/b", [](api::PersistentVolumeClaim& c) { c.selected_node = "n2"; });
    cache.ForgetVolumeSteps(VolumeSteps());  // nothing assumed is left to forget
    auto now = cache.TakeSnapshot()->storage;
    CHECK(now->Volume("pv-1")->spec.claim_ref);
    CHECK(now->Claim("ns", "b")->selected_node == "n2");
  }
  SECTION("forgetting gives the PV and the claim back") {
    cache.ForgetVolumeSteps(VolumeSteps());
    auto now = cache.TakeSnapshot()->storage;
    CHECK_FALSE(now->Volume("pv-1")->spec.claim_ref);
    CHECK(now->volume_by_claim.count("ns/a") == 0);
    CHECK(now->Claim("ns", "b")->selected_node.empty());
  }
}

TEST_CASE("cache: a volume assumption the informer never confirms expires") {
  base::FakeClock clock;
  testing::Harness h(clock);
  h.StorageClass("local").Volume("pv-1", "local", "10Gi").Claim("ns/a", "local", "1Gi");
  h.cache().AssumeVolumeSteps({PreBindStep{BindVolumeStep{"ns/a", "uid-a", "5", "pv-1", "7"}}});
  CHECK(h.cache().TakeSnapshot()->storage->Volume("pv-1")->spec.claim_ref);
  clock.Advance(std::chrono::minutes(2));
  CHECK_FALSE(h.cache().TakeSnapshot()->storage->Volume("pv-1")->spec.claim_ref);
}

TEST_CASE("cache: a storage change may let a waiting pod go") {
  testing::Harness h;
  uint64_t before = h.cache().WaitForWork(0, std::chrono::steady_clock::now());
  h.StorageClass("local");
  CHECK(h.cache().WaitForWork(before, std::chrono::steady_clock::now()) > before);
}

}  // namespace
}  // namespace tephra::scheduler
