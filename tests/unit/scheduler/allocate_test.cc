// Table-style tests of enqueue, allocate and backfill with the core plugins.
#include <set>

#include <catch2/catch.hpp>

#include "base/clock.h"
#include "tests/unit/scheduler/harness.h"

namespace tephra::scheduler::testing {
namespace {

int BoundOn(const Harness::Result& r, const std::string& node) {
  int n = 0;
  for (const auto& [pod, where] : r.binds) n += where == node ? 1 : 0;
  return n;
}

TEST_CASE("a gang that fits is bound whole") {
  Harness h;
  h.Node("n1", "cpu=4,memory=8Gi").Queue("default").Group("ns/job", "default", 4);
  for (int i = 0; i < 4; ++i)
    h.Pod("ns/job-w-" + std::to_string(i), "job").Request("cpu=1,memory=1Gi").Add();
  auto r = h.Run();
  CHECK(r.binds.size() == 4);
  CHECK(r.phases["ns/job"] == "Running");
  const auto* scheduled = WrittenCondition(r, "ns/job", "Scheduled");
  REQUIRE(scheduled != nullptr);
  CHECK(scheduled->status == "True");
  REQUIRE(r.outcome.pod_groups.size() == 1);
  CHECK(r.outcome.pod_groups[0].event_reason == "Scheduled");
}

TEST_CASE("a bare pod's group gets no Scheduled event of its own, a Job's group of one does") {
  auto place_one = [](bool owned_by_its_pod) {
    Harness h;
    h.Node("n1", "cpu=4,memory=8Gi").Queue("default").Group("ns/single", "default", 1);
    if (owned_by_its_pod) {
      auto pg = std::make_shared<api::PodGroup>(*h.cache().Job("ns/single")->pod_group);
      kube::OwnerReference pod;
      pod.api_version = "v1";
      pod.kind = "Pod";
      pod.name = "single-0";
      pod.uid = "uid-single-0";
      pod.controller = true;
      pg->metadata.owner_references = {pod};
      h.cache().UpsertPodGroup(pg);
    }
    h.Pod("ns/single-0", "single").Request("cpu=1").Add();
    return h.Run();
  };
  auto bare = place_one(true);
  CHECK(bare.binds.size() == 1);
  CHECK(WrittenCondition(bare, "ns/single", "Scheduled") != nullptr);
  REQUIRE(bare.outcome.pod_groups.size() == 1);
  CHECK(bare.outcome.pod_groups[0].event_reason.empty());  // the pod's Scheduled event says it
  // A Job with minAvailable 1 (any group not made for one bare pod): as in Volcano.
  auto job = place_one(false);
  REQUIRE(job.outcome.pod_groups.size() == 1);
  CHECK(job.outcome.pod_groups[0].event_reason == "Scheduled");
}

TEST_CASE("a young gang still missing pods waits quietly, an old one says why") {
  // created: how long ago its PodGroup was made; admitted: how long ago this scheduler saw it
  // admitted (a Volcano Job's pods are created only then).
  auto missing_pods = [](std::chrono::seconds created, std::chrono::seconds admitted) {
    base::FakeClock clock;
    Harness h(clock);
    h.Node("n1", "cpu=8,memory=8Gi").Queue("default").Group("ns/g", "default", 4);
    auto pg = std::make_shared<api::PodGroup>(*h.cache().Job("ns/g")->pod_group);
    pg->metadata.creation_timestamp = clock.Now() - created + admitted;
    h.cache().UpsertPodGroup(pg);
    clock.Advance(admitted);
    for (int i = 0; i < 2; ++i) h.Pod("ns/g-" + std::to_string(i), "g").Request("cpu=1").Add();
    return h.Run();
  };
  // Its controller is still creating pods: no pod condition, no group condition to rewrite
  // as each one arrives.
  auto young = missing_pods(std::chrono::seconds(2), std::chrono::seconds(2));
  CHECK(young.binds.empty());
  CHECK(young.outcome.pods.empty());
  CHECK(WrittenCondition(young, "ns/g", "Unschedulable") == nullptr);
  // Made long ago but admitted just now: its pods are only now being created.
  auto late = missing_pods(std::chrono::seconds(60), std::chrono::seconds(1));
  CHECK(late.outcome.pods.empty());
  CHECK(WrittenCondition(late, "ns/g", "Unschedulable") == nullptr);
  // Still short of pods well after it was made and admitted: every pending pod and the group
  // say why.
  auto old = missing_pods(std::chrono::seconds(60), std::chrono::seconds(30));
  CHECK(old.binds.empty());
  REQUIRE(old.outcome.pods.size() == 2);
  CHECK(old.outcome.pods[0].condition.message.find("Not enough valid tasks for gang-scheduling") ==
        0);
  CHECK(WrittenCondition(old, "ns/g", "Unschedulable") != nullptr);
}

TEST_CASE("a gang whose pods are arriving waits quietly however long ago it was admitted") {
  // A busy controller-manager gets to a Job's pods long after the Job was admitted: while they
  // arrive, the gang is waiting for them, not failing.
  base::FakeClock clock;
  Harness h(clock);
  h.Node("n1", "cpu=8,memory=8Gi").Queue("default").Group("ns/g", "default", 4);
  // Made a minute ago, admitted half a minute ago.
  auto pg = std::make_shared<api::PodGroup>(*h.cache().Job("ns/g")->pod_group);
  pg->metadata.creation_timestamp = clock.Now() - std::chrono::seconds(30);
  h.cache().UpsertPodGroup(pg);
  clock.Advance(std::chrono::seconds(30));
  for (int i = 0; i < 2; ++i) {
    h.Pod("ns/g-" + std::to_string(i), "g").Request("cpu=1").Created(clock.Now()).Add();
  }
  auto arriving = h.Run();
  CHECK(arriving.binds.empty());
  CHECK(arriving.outcome.pods.empty());
  CHECK(WrittenCondition(arriving, "ns/g", "Unschedulable") == nullptr);
  // The rest never come: once no pod has arrived for a while, the gang says why.
  clock.Advance(std::chrono::seconds(5));
  auto stalled = h.Run();
  REQUIRE(stalled.outcome.pods.size() == 2);
  CHECK(stalled.outcome.pods[0].condition.message.find("Not enough valid tasks") == 0);
  CHECK(WrittenCondition(stalled, "ns/g", "Unschedulable") != nullptr);
}

TEST_CASE("a gang that does not fit gets nothing and says why") {
  Harness h;
  h.Node("n1", "cpu=4,memory=8Gi").Node("n2", "cpu=2,memory=8Gi").Queue("default");
  h.Group("ns/big", "default", 5);
  for (int i = 0; i < 5; ++i) h.Pod("ns/big-w-" + std::to_string(i), "big").Request("cpu=5").Add();
  auto r = h.Run();
  CHECK(r.binds.empty());
  const auto* cond = WrittenCondition(r, "ns/big", "Unschedulable");
  REQUIRE(cond != nullptr);
  CHECK(cond->status == "True");
  CHECK(cond->reason == "NotEnoughResources");
  CHECK(cond->message.rfind("5/5 tasks in gang unschedulable: ", 0) == 0);
  INFO(cond->message);
  CHECK(cond->message.find("Insufficient cpu") != std::string::npos);
  CHECK(r.phases["ns/big"] == "Inqueue");
  // Every pending pod gets PodScheduled=False with the node summary.
  REQUIRE(r.outcome.pods.size() == 5);
  int node_summaries = 0;
  for (const auto& p : r.outcome.pods) {
    node_summaries += p.condition.message == "0/2 nodes are available: 2 Insufficient cpu";
  }
  CHECK(node_summaries >= 1);
  // Nothing changed in the cache: the nodes are still empty.
  CHECK(h.cache().Node("n1")->used.milli_cpu() == 0);
}

TEST_CASE("of two gangs competing for one node only one is bound, and completely") {
  Harness h;
  h.Node("n1", "cpu=4").Queue("default");
  h.Group("ns/a", "default", 3).Group("ns/b", "default", 3);
  for (int i = 0; i < 3; ++i) {
    h.Pod("ns/a-" + std::to_string(i), "a").Request("cpu=1").Add();
    h.Pod("ns/b-" + std::to_string(i), "b").Request("cpu=1").Add();
  }
  auto r = h.Run();
  REQUIRE(r.binds.size() == 3);
  char winner = r.binds.begin()->first[0];
  for (const auto& [pod, node] : r.binds) CHECK(pod[0] == winner);
}

TEST_CASE("the second cycle does not place a gang twice and keeps its condition quiet") {
  Harness h;
  h.Node("n1", "cpu=2").Queue("default").Group("ns/j", "default", 2);
  h.Pod("ns/j-0", "j").Request("cpu=1").Add();
  h.Pod("ns/j-1", "j").Request("cpu=1").Add();
  auto first = h.Run();
  CHECK(first.binds.size() == 2);
  h.ApplyOutcome(first.outcome);
  auto second = h.Run();
  CHECK(second.binds.empty());
  CHECK(second.outcome.pod_groups.empty());  // nothing changed, nothing written
}

TEST_CASE("queues share a saturated cluster by weight") {
  Harness h;
  h.Node("n1", "cpu=8,memory=64Gi").Queue("q1", 1).Queue("q3", 3);
  for (int j = 0; j < 10; ++j) {
    for (const char* q : {"q1", "q3"}) {
      std::string name = std::string(q) + "-j" + std::to_string(j);
      h.Group("ns/" + name, q, 1);
      h.Pod("ns/" + name + "-0", name).Request("cpu=1,memory=1Gi").Add();
    }
  }
  auto r = h.Run();
  int q1 = 0, q3 = 0;
  for (const auto& [pod, node] : r.binds) (pod.rfind("q1", 0) == 0 ? q1 : q3)++;
  CHECK(q1 == 2);
  CHECK(q3 == 6);
}

TEST_CASE("a queue's capability caps what its jobs get") {
  Harness h;
  h.Node("n1", "cpu=8,memory=32Gi").Queue("capped", 1, "cpu=2,memory=32Gi");
  for (int j = 0; j < 4; ++j) {
    std::string name = "j" + std::to_string(j);
    h.Group("ns/" + name, "capped", 1);
    h.Pod("ns/" + name + "-0", name).Request("cpu=1,memory=1Gi").Add();
  }
  auto r = h.Run();
  CHECK(r.binds.size() == 2);
  // Queue status.allocated is written with what the queue holds now.
  bool wrote = false;
  for (const auto& q : r.outcome.queues) {
    if (q.name != "capped") continue;
    wrote = true;
    CHECK(api::Resources::FromList(q.allocated).milli_cpu() == 2000);
  }
  CHECK(wrote);
}

TEST_CASE("enqueue admits a job only when its minResources fit") {
  Harness h;
  h.Node("n1", "cpu=4,memory=8Gi").Queue("default");
  h.Group("ns/small", "default", 1, "Pending", "cpu=2,memory=1Gi");
  h.Group("ns/huge", "default", 1, "Pending", "cpu=40,memory=1Gi");
  auto r = h.Run();
  CHECK(r.phases["ns/small"] == "Inqueue");
  CHECK(r.phases.count("ns/huge") == 1);
  CHECK(r.phases["ns/huge"] == "Pending");
  const auto* why = WrittenCondition(r, "ns/huge", "Unschedulable");
  REQUIRE(why != nullptr);
  CHECK(why->message.find("not admitted") != std::string::npos);
}

TEST_CASE("a job whose group is not admitted gets no pods bound") {
  Harness h;
  h.Node("n1", "cpu=4").Queue("default").Group("ns/p", "default", 1, "Pending", "cpu=100");
  h.Pod("ns/p-0", "p").Request("cpu=1").Add();
  auto r = h.Run();
  CHECK(r.binds.empty());
}

TEST_CASE("gated tasks of an admitted job hold no room against its queue") {
  Harness h;
  h.Node("n1", "cpu=16,memory=64Gi").Queue("capped", 1, "cpu=4");
  // Admitted, but every task waits behind a scheduling gate: its minResources reserve nothing.
  h.Group("ns/gated", "capped", 4, "Inqueue", "cpu=4");
  for (int i = 0; i < 4; ++i)
    h.Pod("ns/gated-" + std::to_string(i), "gated")
        .Request("cpu=1")
        .Gated("example.com/hold")
        .Add();
  h.Group("ns/next", "capped", 2, "Pending", "cpu=2");
  auto r = h.Run();
  CHECK(r.phases["ns/next"] == "Inqueue");
  CHECK(r.binds.empty());  // gated pods are never placed
}

TEST_CASE("a gang held by scheduling gates says so on its PodGroup, not on its pods") {
  Harness h;
  h.Node("n1", "cpu=8").Queue("default").Group("ns/gated", "default", 4, "Inqueue");
  for (int i = 0; i < 4; ++i)
    h.Pod("ns/gated-" + std::to_string(i), "gated")
        .Request("cpu=1")
        .Gated("example.com/hold")
        .Add();
  auto r = h.Run();
  CHECK(r.binds.empty());
  const auto* cond = WrittenCondition(r, "ns/gated", "Unschedulable");
  REQUIRE(cond != nullptr);
  CHECK(cond->reason == "NotEnoughResources");
  CHECK(cond->message ==
        "4/4 tasks in gang unschedulable: 4 tasks: scheduling is blocked due to non-empty "
        "scheduling gates");
  REQUIRE(r.outcome.pod_groups.size() == 1);
  CHECK(r.outcome.pod_groups[0].event_reason == "Unschedulable");
  CHECK(r.outcome.pods
            .empty());  // their PodScheduled condition stays the API server's SchedulingGated
}

// Sixteen one-CPU pods of queue "other" on 16 CPUs, beside a queue "owner" guaranteed `guarantee`.
Harness::Result BesideGuarantee(const std::string& guarantee) {
  Harness h;
  h.Node("n1", "cpu=8,memory=32Gi").Node("n2", "cpu=8,memory=32Gi");
  h.Queue("owner", 1, "", guarantee).Queue("other");
  h.Group("ns/job", "other", 1, "Pending", "cpu=1");
  for (int i = 0; i < 16; ++i) h.Pod("ns/job-" + std::to_string(i), "job").Request("cpu=1").Add();
  return h.Run();
}

TEST_CASE("a guarantee the cluster can hold is reserved for its queue") {
  auto r = BesideGuarantee("cpu=8");
  CHECK(r.binds.size() == 8);
  CHECK(r.outcome.queue_warnings.empty());
}

TEST_CASE("a guarantee beyond the whole cluster is not honoured and other queues are served") {
  auto r = BesideGuarantee("cpu=100");
  CHECK(r.phases["ns/job"] == "Running");
  CHECK(r.binds.size() == 16);
  REQUIRE(r.outcome.queue_warnings.size() == 1);
  CHECK(r.outcome.queue_warnings[0].name == "owner");
  CHECK(r.outcome.queue_warnings[0].message.rfind(
            "guarantee cpu 100 exceeds the whole cluster (cpu 16)", 0) == 0);
}

TEST_CASE("overcommit admits up to 1.2 times the cluster") {
  Harness h;
  h.Node("n1", "cpu=10,memory=100Gi").Queue("default");
  for (int j = 0; j < 3; ++j) {
    h.Group("ns/j" + std::to_string(j), "default", 1, "Pending", "cpu=5,memory=1Gi");
  }
  auto r = h.Run();
  int admitted = 0;
  for (const auto& [job, phase] : r.phases) admitted += phase == "Inqueue" ? 1 : 0;
  CHECK(admitted == 2);  // 5 + 5 <= 12 < 15
}

TEST_CASE("node selectors and taints steer pods") {
  Harness h;
  h.Node("cpu-1", "cpu=8", {{"type", "cpu"}});
  h.Node("gpu-1", "cpu=8", {{"type", "gpu"}}, {{"gpu", "true", "NoSchedule", {}}});
  h.Queue("default").Group("ns/sel", "default", 2).Group("ns/tol", "default", 1);
  h.Pod("ns/sel-0", "sel").Request("cpu=1").NodeSelector({{"type", "cpu"}}).Add();
  h.Pod("ns/sel-1", "sel").Request("cpu=1").NodeSelector({{"type", "cpu"}}).Add();
  h.Pod("ns/tol-0", "tol").Request("cpu=1").NodeSelector({{"type", "gpu"}}).Tolerate("gpu").Add();
  auto r = h.Run();
  CHECK(r.binds["sel-0"] == "cpu-1");
  CHECK(r.binds["sel-1"] == "cpu-1");
  CHECK(r.binds["tol-0"] == "gpu-1");
}

TEST_CASE("an untolerated taint or an unschedulable node is explained") {
  Harness h;
  h.Node("t", "cpu=8", {}, {{"dedicated", "x", "NoSchedule", {}}});
  h.Node("u", "cpu=8", {}, {}, /*unschedulable=*/true);
  h.Queue("default").Group("ns/j", "default", 1);
  h.Pod("ns/j-0", "j").Request("cpu=1").Add();
  auto r = h.Run();
  CHECK(r.binds.empty());
  REQUIRE(r.outcome.pods.size() == 1);
  const std::string& msg = r.outcome.pods[0].condition.message;
  CHECK(msg.find("1 node(s) had untolerated taint") != std::string::npos);
  CHECK(msg.find("1 node(s) were unschedulable") != std::string::npos);
}

TEST_CASE("higher-priority jobs are placed first") {
  Harness h;
  h.PriorityClass("high", 1000).PriorityClass("low", 10);
  h.Node("n1", "cpu=2").Queue("default");
  h.Group("ns/low", "default", 2, "Inqueue", "", "low")
      .Group("ns/high", "default", 2, "Inqueue", "", "high");
  for (int i = 0; i < 2; ++i) {
    h.Pod("ns/low-" + std::to_string(i), "low").Request("cpu=1").Add();
    h.Pod("ns/high-" + std::to_string(i), "high").Request("cpu=1").Add();
  }
  auto r = h.Run();
  CHECK(r.binds.count("high-0") == 1);
  CHECK(r.binds.count("high-1") == 1);
  CHECK(r.binds.count("low-0") == 0);
}

TEST_CASE("drf lets the job with the smaller share go first") {
  Harness h;
  h.Node("n1", "cpu=3,memory=30Gi").Queue("default");
  h.Group("ns/rich", "default", 1).Group("ns/poor", "default", 1);
  h.Pod("ns/rich-run", "rich").Request("cpu=2,memory=1Gi").On("n1").Add();
  h.Pod("ns/rich-new", "rich").Request("cpu=1,memory=1Gi").Add();
  h.Pod("ns/poor-new", "poor").Request("cpu=1,memory=1Gi").Add();
  auto r = h.Run();
  CHECK(r.binds.size() == 1);
  CHECK(r.binds.count("poor-new") == 1);
}

TEST_CASE("drf shares count what jobs already run, in the same terms as what they get") {
  Harness h;
  h.Node("n1", "cpu=5,memory=30Gi").Queue("default");
  h.Group("ns/a", "default", 1).Group("ns/b", "default", 1);
  h.Pod("ns/a-run", "a").Request("cpu=1").On("n1").Add();
  for (int i = 0; i < 4; ++i) {
    h.Pod("ns/a-" + std::to_string(i), "a").Request("cpu=1").Add();
    h.Pod("ns/b-" + std::to_string(i), "b").Request("cpu=1").Add();
  }
  auto r = h.Run();
  // b catches up with a's running pod, then they take turns.
  int a = 0, b = 0;
  for (const auto& [pod, node] : r.binds) (pod[0] == 'a' ? a : b)++;
  CHECK(a == 2);
  CHECK(b == 2);
}

TEST_CASE("pipelining waits for releasing resources instead of binding") {
  Harness h;
  h.Node("n1", "cpu=2").Queue("default");
  h.Group("ns/old", "default", 1).Group("ns/new", "default", 2);
  h.Pod("ns/old-0", "old").Request("cpu=2").On("n1").Terminating().Add();
  h.Pod("ns/new-0", "new").Request("cpu=1").Add();
  h.Pod("ns/new-1", "new").Request("cpu=1").Add();
  auto r = h.Run();
  CHECK(r.binds.empty());  // pipelined, not bound
  CHECK(WrittenCondition(r, "ns/new", "Scheduled") == nullptr);
}

TEST_CASE("backfill places best-effort pods") {
  Harness h;
  h.Node("n1", "cpu=1").Queue("default").Group("ns/be", "default", 1);
  h.Pod("ns/be-0", "be").Add();
  auto r = h.Run();
  CHECK(r.binds["be-0"] == "n1");
}

TEST_CASE("the gang plugin enforces minTaskMember per role") {
  Harness h;
  h.Node("n1", "cpu=4").Queue("default");
  h.Group("ns/mpi", "default", 3, "Inqueue", "", "", {{"master", 1}, {"worker", 2}});
  h.Pod("ns/mpi-master-0", "mpi").Role("master").Request("cpu=1").Add();
  h.Pod("ns/mpi-master-1", "mpi").Role("master").Request("cpu=1").Add();
  h.Pod("ns/mpi-worker-0", "mpi").Role("worker").Request("cpu=2").Add();
  h.Pod("ns/mpi-worker-1", "mpi").Role("worker").Request("cpu=2").Add();
  auto r = h.Run();
  // minMember 3 is reachable with two masters and one worker, but the worker role needs 2 (and
  // minMember is the sum of the role minimums, so they count): nothing binds.
  CHECK(r.binds.empty());
}

// Role minimums below minAvailable's reach are Volcano's elastic jobs: a Job whose tasks'
// minAvailable default to their replicas (so the PodGroup's minTaskMember says "all of them")
// but whose own minAvailable is smaller runs with minAvailable tasks.
TEST_CASE("role minimums whose sum exceeds minMember do not hold an elastic job back") {
  Harness h;
  h.Node("n1", "cpu=3").Queue("default");
  h.Group("ns/mpi", "default", 2, "Inqueue", "", "", {{"master", 1}, {"worker", 2}});
  h.Pod("ns/mpi-master-0", "mpi").Role("master").Request("cpu=1").Add();
  h.Pod("ns/mpi-worker-0", "mpi").Role("worker").Request("cpu=2").Add();
  h.Pod("ns/mpi-worker-1", "mpi").Role("worker").Request("cpu=2").Add();
  auto r = h.Run();
  CHECK(r.binds.size() == 2);  // minMember 2 alone decides: master + one worker
}

TEST_CASE("an elastic job runs as many tasks as its queue's share allows") {
  Harness h;
  h.Node("n1", "cpu=8,memory=32Gi").Node("n2", "cpu=8,memory=32Gi").Queue("a").Queue("b");
  // minAvailable 1, one task of 32 replicas whose minAvailable defaulted to 32.
  h.Group("ns/elastic", "a", 1, "Inqueue", "cpu=1", "", {{"worker", 32}});
  for (int i = 0; i < 32; ++i) {
    h.Pod("ns/elastic-worker-" + std::to_string(i), "elastic")
        .Role("worker")
        .Request("cpu=1")
        .Add();
  }
  h.Group("ns/other", "b", 1, "Inqueue", "cpu=1");
  for (int i = 0; i < 16; ++i)
    h.Pod("ns/other-" + std::to_string(i), "other").Request("cpu=1").Add();
  auto r = h.Run();
  int elastic = 0, other = 0;
  for (const auto& [pod, node] : r.binds) (pod.rfind("elastic-", 0) == 0 ? elastic : other)++;
  CHECK(elastic == 8);  // its queue's deserved half of 16 CPUs
  CHECK(other == 8);
  CHECK(r.phases["ns/elastic"] == "Running");
}

std::map<char, int> BoundPerJob(const std::map<std::string, std::string>& binds) {
  std::map<char, int> n;
  for (const auto& [pod, node] : binds) ++n[pod[0]];
  return n;
}

TEST_CASE("elastic jobs competing for too few slots each get their minimum, then turns") {
  Harness h;
  h.Node("n1", "cpu=8,memory=32Gi").Node("n2", "cpu=8,memory=32Gi").Queue("default");
  for (const char* job : {"a", "b", "c"}) {
    h.Group(std::string("ns/") + job, "default", 2, "Inqueue", "cpu=2", "", {{"w", 16}});
    for (int i = 0; i < 16; ++i)
      h.Pod(std::string("ns/") + job + "-w-" + std::to_string(i), job)
          .Role("w")
          .Request("cpu=1")
          .Add();
  }
  auto r = h.Run();
  CHECK(BoundPerJob(r.binds) == std::map<char, int>{{'a', 6}, {'b', 5}, {'c', 5}});
}

TEST_CASE("jobs at their minimum do not grow while an admitted job is still getting its pods") {
  Harness h;
  h.Node("n1", "cpu=8,memory=32Gi").Node("n2", "cpu=8,memory=32Gi").Queue("default");
  for (const char* job : {"a", "b"}) {
    h.Group(std::string("ns/") + job, "default", 2, "Inqueue", "cpu=2", "", {{"w", 16}});
    for (int i = 0; i < 16; ++i)
      h.Pod(std::string("ns/") + job + "-w-" + std::to_string(i), job)
          .Role("w")
          .Request("cpu=1")
          .Add();
  }
  // c was just admitted; its controller has not created its pods yet.
  h.Group("ns/c", "default", 2, "Inqueue", "cpu=2", "", {{"w", 16}});
  auto pg = std::make_shared<api::PodGroup>(*h.cache().Job("ns/c")->pod_group);
  pg->metadata.creation_timestamp = base::Clock::now();
  h.cache().UpsertPodGroup(pg);
  auto first = h.Run();
  CHECK(BoundPerJob(first.binds) == std::map<char, int>{{'a', 2}, {'b', 2}});
  for (int i = 0; i < 16; ++i)
    h.Pod("ns/c-w-" + std::to_string(i), "c").Role("w").Request("cpu=1").Add();
  auto second = h.Run();
  CHECK(BoundPerJob(second.binds) == std::map<char, int>{{'a', 4}, {'b', 3}, {'c', 5}});
}

TEST_CASE("jobs at their minimum do not grow while another admitted job's pods are arriving") {
  Harness h;
  h.Node("n1", "cpu=8,memory=32Gi").Node("n2", "cpu=8,memory=32Gi").Queue("default");
  h.Group("ns/a", "default", 2, "Inqueue", "cpu=2", "", {{"w", 16}});
  for (int i = 0; i < 16; ++i)
    h.Pod("ns/a-w-" + std::to_string(i), "a").Role("w").Request("cpu=1").Add();
  // b was just admitted and its controller has created two of its pods so far.
  h.Group("ns/b", "default", 2, "Inqueue", "cpu=2", "", {{"w", 16}});
  auto pg = std::make_shared<api::PodGroup>(*h.cache().Job("ns/b")->pod_group);
  pg->metadata.creation_timestamp = base::Clock::now();
  h.cache().UpsertPodGroup(pg);
  for (int i = 0; i < 2; ++i) {
    h.Pod("ns/b-w-" + std::to_string(i), "b")
        .Role("w")
        .Request("cpu=1")
        .Created(base::Clock::now())
        .Add();
  }
  auto r = h.Run();
  CHECK(BoundPerJob(r.binds) == std::map<char, int>{{'a', 2}, {'b', 2}});
}

TEST_CASE("an elastic job under a queue capability runs up to the capability") {
  Harness h;
  h.Node("n1", "cpu=16,memory=64Gi").Queue("capped", 1, "cpu=4");
  h.Group("ns/elastic", "capped", 1, "Pending", "cpu=1", "", {{"worker", 32}});
  for (int i = 0; i < 32; ++i) {
    h.Pod("ns/elastic-worker-" + std::to_string(i), "elastic")
        .Role("worker")
        .Request("cpu=1")
        .Add();
  }
  auto r = h.Run();
  CHECK(r.binds.size() == 4);
}

TEST_CASE("an elastic job of big pods runs the minimum the nodes can hold") {
  Harness h;
  for (int n = 0; n < 4; ++n) h.Node("n" + std::to_string(n), "cpu=4,memory=16Gi");
  h.Queue("default");
  h.Group("ns/wide", "default", 4, "Pending", "cpu=12", "", {{"worker", 8}});
  for (int i = 0; i < 8; ++i)
    h.Pod("ns/wide-worker-" + std::to_string(i), "wide").Role("worker").Request("cpu=3").Add();
  auto r = h.Run();
  CHECK(r.binds.size() == 4);
  for (int n = 0; n < 4; ++n) CHECK(BoundOn(r, "n" + std::to_string(n)) == 1);
}

TEST_CASE("pod anti-affinity spreads replicas over hosts") {
  Harness h;
  h.Node("a", "cpu=8").Node("b", "cpu=8").Node("c", "cpu=8").Queue("default");
  h.Group("ns/web", "default", 3);
  for (int i = 0; i < 3; ++i) {
    h.Pod("ns/web-" + std::to_string(i), "web")
        .Request("cpu=1")
        .Labels({{"app", "web"}})
        .AntiAffinity("kubernetes.io/hostname", {{"app", "web"}})
        .Add();
  }
  auto r = h.Run();
  REQUIRE(r.binds.size() == 3);
  CHECK(BoundOn(r, "a") == 1);
  CHECK(BoundOn(r, "b") == 1);
  CHECK(BoundOn(r, "c") == 1);
}

TEST_CASE("required pod affinity follows the pods it selects") {
  Harness h;
  h.Node("a", "cpu=8", {{"zone", "z1"}}).Node("b", "cpu=8", {{"zone", "z2"}}).Queue("default");
  h.Group("ns/db", "default", 1).Group("ns/app", "default", 2);
  h.Pod("ns/db-0", "db").Request("cpu=1").Labels({{"app", "db"}}).On("b").Add();
  for (int i = 0; i < 2; ++i) {
    h.Pod("ns/app-" + std::to_string(i), "app")
        .Request("cpu=1")
        .Affinity("zone", {{"app", "db"}})
        .Add();
  }
  auto r = h.Run();
  CHECK(r.binds["app-0"] == "b");
  CHECK(r.binds["app-1"] == "b");
}

TEST_CASE("topology spread keeps zones within maxSkew") {
  Harness h;
  h.Node("a", "cpu=16", {{"zone", "z1"}}).Node("b", "cpu=16", {{"zone", "z2"}}).Queue("default");
  h.Group("ns/s", "default", 4);
  for (int i = 0; i < 4; ++i) {
    h.Pod("ns/s-" + std::to_string(i), "s")
        .Request("cpu=1")
        .Labels({{"app", "s"}})
        .Spread("zone", 1, {{"app", "s"}})
        .Add();
  }
  auto r = h.Run();
  REQUIRE(r.binds.size() == 4);
  CHECK(BoundOn(r, "a") == 2);
  CHECK(BoundOn(r, "b") == 2);
}

TEST_CASE("host ports never collide on a node") {
  Harness h;
  h.Node("a", "cpu=8").Node("b", "cpu=8").Queue("default").Group("ns/p", "default", 2);
  h.Pod("ns/p-0", "p").Request("cpu=1").HostPort(8080).Add();
  h.Pod("ns/p-1", "p").Request("cpu=1").HostPort(8080).Add();
  auto r = h.Run();
  REQUIRE(r.binds.size() == 2);
  CHECK(r.binds["p-0"] != r.binds["p-1"]);
}

TEST_CASE("binpack fills one node before the next, nodeorder spreads") {
  const char* binpack = R"(actions: "allocate"
tiers:
- plugins: [{name: gang}, {name: predicates}, {name: binpack}])";
  const char* spread = R"(actions: "allocate"
tiers:
- plugins: [{name: gang}, {name: predicates}, {name: nodeorder}])";
  for (bool pack : {true, false}) {
    Harness h;
    h.Node("a", "cpu=4,memory=16Gi").Node("b", "cpu=4,memory=16Gi").Queue("default");
    h.Pod("ns/seed", "").Request("cpu=1,memory=1Gi").SchedulerName("other").On("a").Add();
    h.Group("ns/j", "default", 2);
    h.Pod("ns/j-0", "j").Request("cpu=1,memory=1Gi").Add();
    h.Pod("ns/j-1", "j").Request("cpu=1,memory=1Gi").Add();
    auto r = h.Run(pack ? binpack : spread);
    REQUIRE(r.binds.size() == 2);
    if (pack) {
      CHECK(BoundOn(r, "a") == 2);
    } else {
      CHECK(BoundOn(r, "b") >= 1);
    }
  }
}

// Volcano's Helm chart configuration, the one users run.
const char* kChartConf = R"(actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
    enablePreemptable: false
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack)";

// Ten gangs of 32 CPUs (a 4-CPU head and four 7-CPU workers) on six 32-CPU nodes, admitted and
// placed in one session; returns the nodes each placed gang got. Only whole nodes hold a gang.
std::map<std::string, std::set<std::string>> PlaceTenGangs(const std::string& conf,
                                                           const std::string& head,
                                                           const std::string& worker) {
  Harness h;
  for (int n = 0; n < 6; ++n) h.Node("n" + std::to_string(n), "cpu=32,memory=128Gi");
  h.Queue("default");
  for (int j = 0; j < 10; ++j) {
    std::string name = "g" + std::to_string(j);
    h.Group("ns/" + name, "default", 5, "Pending", "cpu=32");
    h.Pod("ns/" + name + "-head-0", name).Role("head").Request(head).Add();
    for (int w = 0; w < 4; ++w) {
      h.Pod("ns/" + name + "-worker-" + std::to_string(w), name)
          .Role("worker")
          .Request(worker)
          .Add();
    }
  }
  auto r = h.Run(conf);
  std::map<std::string, std::set<std::string>> nodes_of;
  for (const auto& [pod, node] : r.binds) nodes_of[pod.substr(0, pod.find('-'))].insert(node);
  return nodes_of;
}

// Outcomes measured with Volcano's own scheduler on the same cluster.
TEST_CASE("with the chart's configuration cpu-only gangs are packed a node at a time") {
  auto packed = PlaceTenGangs(kChartConf, "cpu=4", "cpu=7");
  CHECK(packed.size() == 6);
  for (const auto& [gang, nodes] : packed) {
    INFO(gang);
    CHECK(nodes.size() == 1);
  }
  // Without binpack (the built-in configuration) gangs spread and fragment the nodes: 5 fit.
  CHECK(PlaceTenGangs(DefaultSchedulerConfYaml(), "cpu=4", "cpu=7").size() == 5);
  // Pods asking for memory in another proportion than the nodes have are spread by
  // balancedresource whatever binpack says: 5 fit.
  CHECK(PlaceTenGangs(kChartConf, "cpu=4,memory=8Gi", "cpu=7,memory=14Gi").size() == 5);
}

TEST_CASE("balanced allocation cannot tell apart nodes without memory use for a cpu-only pod") {
  // However heavily weighted, balancedresource cannot tell such nodes apart (the pod changes the
  // balance of each by as much): the fullest ties with the emptiest, so binpack decides.
  const char* conf = R"(actions: "allocate"
tiers:
- plugins:
  - name: gang
  - name: predicates
  - name: nodeorder
    arguments: {leastrequested.weight: 0, balancedresource.weight: 3}
  - name: binpack)";
  Harness h;
  h.Node("a", "cpu=8,memory=32Gi").Node("b", "cpu=8,memory=32Gi").Queue("default");
  h.Pod("ns/seed", "").Request("cpu=4").SchedulerName("other").On("a").Add();
  h.Group("ns/j", "default", 1);
  h.Pod("ns/j-0", "j").Request("cpu=1").Add();
  auto r = h.Run(conf);
  CHECK(r.binds["j-0"] == "a");
}

TEST_CASE("balanced allocation scores the change in balance, as Volcano's does") {
  // Scores read from the Volcano baseline's log (vc-scheduler -v=5) for these pods and nodes.
  const char* conf = R"(actions: "enqueue"
tiers:
- plugins:
  - name: nodeorder
    arguments: {leastrequested.weight: 0, balancedresource.weight: 1})";
  Harness h;
  // name -> what already runs there (cpu, memory)
  const std::vector<std::pair<std::string, std::string>> nodes = {{"empty", ""},
                                                                  {"small", "cpu=1,memory=128Mi"},
                                                                  {"mem", "cpu=1,memory=4Gi"},
                                                                  {"cpu", "cpu=3,memory=1Gi"}};
  for (const auto& [name, used] : nodes) {
    h.Node(name, "cpu=4,memory=16Gi,pods=110");
    if (!used.empty())
      h.Pod("ns/seed-" + name, "").Request(used).SchedulerName("other").On(name).Add();
  }
  h.Queue("default");
  const std::vector<std::pair<std::string, std::string>> probes = {{"p1", "cpu=1,memory=128Mi"},
                                                                   {"p2", "cpu=1,memory=4Gi"},
                                                                   {"p3", "cpu=2,memory=1Gi"},
                                                                   {"p5", "memory=1Gi"},
                                                                   {"p6", "cpu=500m,memory=8Gi"}};
  for (const auto& [name, request] : probes) {
    h.Group("ns/" + name, "default", 1);
    h.Pod("ns/" + name + "-0", name).Request(request).Add();
  }
  std::map<std::string, double> score;  // "probe@node"
  h.inspect = [&](const Session& ssn) {
    for (size_t j = 0; j < ssn.job_count(); ++j) {
      for (const auto& [uid, task] : ssn.job(j).tasks) {
        if (task.name().rfind("seed-", 0) == 0) continue;
        for (size_t n = 0; n < ssn.node_count(); ++n) {
          score[task.name().substr(0, 2) + "@" + ssn.node(n).name] =
              ssn.NodeOrderScore(task, ssn.node(n));
        }
      }
    }
  };
  h.Run(conf);
  CHECK(score["p1@empty"] == 68);
  CHECK(score["p1@small"] == 69);
  CHECK(score["p2@empty"] == 75);
  CHECK(score["p2@small"] == 75);
  CHECK(score["p3@empty"] == 64);
  CHECK(score["p3@mem"] == 64);
  CHECK(score["p3@small"] == 64);
  CHECK(score["p5@mem"] == 73);
  CHECK(score["p5@small"] == 77);
  CHECK(score["p6@cpu"] == 84);
  CHECK(score["p6@small"] == 78);
}

TEST_CASE("with the chart's configuration plain pods created one by one share a node") {
  // Volcano puts all three on one node: binpack's preference outweighs least-requested's by
  // less than a point, because balanced allocation barely changes.
  Harness h;
  for (int n = 0; n < 3; ++n) h.Node("n" + std::to_string(n), "cpu=4,memory=16Gi");
  h.Queue("default");
  std::set<std::string> used;
  for (int i = 0; i < 3; ++i) {
    std::string name = "b" + std::to_string(i);
    h.Group("ns/" + name, "default", 1);
    h.Pod("ns/" + name + "-0", name).Request("cpu=1,memory=128Mi").Add();
    auto r = h.Run(kChartConf);
    REQUIRE(r.binds.count(name + "-0") == 1);
    used.insert(r.binds[name + "-0"]);
  }
  CHECK(used.size() == 1);
}

TEST_CASE("preferred node affinity attracts pods") {
  Harness h;
  h.Node("a", "cpu=8", {{"disk", "hdd"}}).Node("b", "cpu=8", {{"disk", "ssd"}}).Queue("default");
  h.Group("ns/j", "default", 1);
  h.Pod("ns/j-0", "j").Request("cpu=1").PreferNode("disk", "ssd", 50).Add();
  auto r = h.Run();
  CHECK(r.binds["j-0"] == "b");
}

TEST_CASE("foreign pods on a node consume its capacity") {
  Harness h;
  h.Node("n1", "cpu=2").Queue("default").Group("ns/j", "default", 1);
  h.Pod("kube-system/dns", "").SchedulerName("default-scheduler").Request("cpu=2").On("n1").Add();
  h.Pod("ns/j-0", "j").Request("cpu=1").Add();
  auto r = h.Run();
  CHECK(r.binds.empty());
}

TEST_CASE("a closed queue gets no new allocations") {
  Harness h;
  h.Node("n1", "cpu=8").Queue("shut", 1, "", "", "", "", "Closed").Group("ns/j", "shut", 1);
  h.Pod("ns/j-0", "j").Request("cpu=1").Add();
  auto r = h.Run();
  CHECK(r.binds.empty());
}

TEST_CASE("completed gangs are reported Completed") {
  Harness h;
  h.Node("n1", "cpu=8").Queue("default").Group("ns/done", "default", 2, "Running");
  h.Pod("ns/done-0", "done").Request("cpu=1").On("n1", "Succeeded").Add();
  h.Pod("ns/done-1", "done").Request("cpu=1").On("n1", "Failed").Add();
  auto r = h.Run();
  CHECK(r.phases["ns/done"] == "Completed");
}

}  // namespace
}  // namespace tephra::scheduler::testing
