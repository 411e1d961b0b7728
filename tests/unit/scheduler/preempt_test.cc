// Preempt and reclaim: victim rules, tier intersection, gang-aware choice, guarantee floors.
#include <algorithm>
#include <set>

#include <catch2/catch.hpp>

#include "tests/unit/scheduler/harness.h"

namespace tephra::scheduler::testing {
namespace {

const char* kPreemptConf = R"(actions: "enqueue, allocate, preempt, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}, {name: pdb}]
- plugins: [{name: drf}, {name: predicates}, {name: proportion}, {name: nodeorder}])";

const char* kReclaimConf = R"(actions: "enqueue, allocate, reclaim"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: overcommit}, {name: drf}, {name: predicates}, {name: proportion}, {name: nodeorder}])";

const char* kCapacityConf = R"(actions: "enqueue, allocate, reclaim"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: predicates}, {name: capacity}, {name: nodeorder}])";

// A cluster of one 4-CPU node filled by four 1-CPU pods of `low` (priority 10).
void FillWithLowPriority(Harness& h, int low_min_member = 1) {
  h.PriorityClass("high", 1000).PriorityClass("low", 10);
  h.Node("n1", "cpu=4,memory=16Gi").Queue("default");
  h.Group("ns/low", "default", low_min_member, "Running", "", "low");
  for (int i = 0; i < 4; ++i) {
    h.Pod("ns/low-" + std::to_string(i), "low").Request("cpu=1").Priority(10).On("n1").Add();
  }
}

TEST_CASE("a high-priority gang preempts lower-priority pods in its queue") {
  Harness h;
  FillWithLowPriority(h);
  h.Group("ns/high", "default", 2, "Inqueue", "", "high");
  h.Pod("ns/high-0", "high").Request("cpu=1").Priority(1000).Add();
  h.Pod("ns/high-1", "high").Request("cpu=1").Priority(1000).Add();
  auto r = h.Run(kPreemptConf);
  CHECK(r.evictions.size() == 2);
  CHECK(r.binds.empty());  // pipelined: bound once the victims are gone
  // The preemptor says what it waits for.
  const auto* cond = WrittenCondition(r, "ns/high", "Unschedulable");
  REQUIRE(cond != nullptr);
  CHECK(cond->message.find("waiting for 2 preempted pod(s) to terminate") != std::string::npos);
  // Each preemptor pod names the node it waits for (NOMINATED NODE in kubectl -o wide).
  int nominated = 0;
  for (const auto& p : r.outcome.pods) {
    if (p.name.rfind("high-", 0) != 0) continue;
    CHECK(p.nominated_node == "n1");
    CHECK(p.condition.message.find("waiting for 2 preempted pod(s) to terminate") !=
          std::string::npos);
    ++nominated;
  }
  CHECK(nominated == 2);
  // The victims go; the next cycle binds the gang.
  for (const auto& pod : r.evictions) {
    PodInfo gone;
    gone.metadata.uid = "uid-ns/" + pod;
    h.cache().DeletePod(gone);
  }
  auto next = h.Run(kPreemptConf);
  CHECK(next.binds.size() == 2);
  CHECK(next.evictions.empty());
}

TEST_CASE("equal priority never preempts, nor does preemptionPolicy Never") {
  Harness h;
  FillWithLowPriority(h);
  h.Group("ns/peer", "default", 1, "Inqueue", "", "low");
  h.Pod("ns/peer-0", "peer").Request("cpu=1").Priority(10).Add();
  h.Group("ns/polite", "default", 1, "Inqueue", "", "high");
  h.Pod("ns/polite-0", "polite").Request("cpu=1").Priority(1000).PreemptionNever().Add();
  auto r = h.Run(kPreemptConf);
  CHECK(r.evictions.empty());
}

TEST_CASE("pods marked volcano.sh/preemptable=false are never victims") {
  Harness h;
  h.PriorityClass("high", 1000);
  h.Node("n1", "cpu=2").Queue("default").Group("ns/low", "default", 1, "Running");
  h.Pod("ns/low-0", "low").Request("cpu=1").On("n1").Preemptable(false).Add();
  h.Pod("ns/low-1", "low").Request("cpu=1").On("n1").Preemptable(false).Add();
  h.Group("ns/high", "default", 1, "Inqueue", "", "high");
  h.Pod("ns/high-0", "high").Request("cpu=1").Priority(1000).Add();
  auto r = h.Run(kPreemptConf);
  CHECK(r.evictions.empty());
}

TEST_CASE("preempt stays within the preemptor's queue") {
  Harness h;
  h.PriorityClass("high", 1000);
  h.Node("n1", "cpu=2").Queue("other").Queue("mine");
  h.Group("ns/theirs", "other", 1, "Running");
  h.Pod("ns/theirs-0", "theirs").Request("cpu=2").On("n1").Add();
  h.Group("ns/high", "mine", 1, "Inqueue", "", "high");
  h.Pod("ns/high-0", "high").Request("cpu=1").Priority(1000).Add();
  auto r = h.Run(kPreemptConf);
  CHECK(r.evictions.empty());
}

TEST_CASE("victims come from a gang's surplus before any gang is broken") {
  Harness h;
  h.PriorityClass("high", 1000);
  h.Node("n1", "cpu=5").Queue("default");
  // A tight gang (min 3 of 3) and an elastic one (min 1, 2 running).
  h.Group("ns/tight", "default", 3, "Running");
  for (int i = 0; i < 3; ++i)
    h.Pod("ns/tight-" + std::to_string(i), "tight").Request("cpu=1").On("n1").Add();
  h.Group("ns/elastic", "default", 1, "Running");
  for (int i = 0; i < 2; ++i)
    h.Pod("ns/elastic-" + std::to_string(i), "elastic").Request("cpu=1").On("n1").Add();
  h.Group("ns/high", "default", 1, "Inqueue", "", "high");
  h.Pod("ns/high-0", "high").Request("cpu=1").Priority(1000).Add();
  auto r = h.Run(kPreemptConf);
  REQUIRE(r.evictions.size() == 1);
  CHECK(r.evictions[0].rfind("elastic-", 0) == 0);
}

TEST_CASE("a gang whose role minimums count keeps each role at its minimum") {
  Harness h;
  h.PriorityClass("high", 1000);
  h.Node("n1", "cpu=6").Queue("default");
  // minMember 3 = ps 1 + worker 2: the roles count. One 2-CPU ps and four workers run.
  h.Group("ns/tf", "default", 3, "Running", "", "", {{"ps", 1}, {"worker", 2}});
  h.Pod("ns/tf-ps-0", "tf").Role("ps").Request("cpu=2").On("n1").Add();
  for (int i = 0; i < 4; ++i)
    h.Pod("ns/tf-worker-" + std::to_string(i), "tf").Role("worker").Request("cpu=1").On("n1").Add();
  h.Group("ns/high", "default", 1, "Inqueue", "", "high");
  h.Pod("ns/high-0", "high").Request("cpu=2").Priority(1000).Add();
  auto r = h.Run(kPreemptConf);
  // Evicting the ps alone would free the room with one victim, but leave no ps: two workers go.
  REQUIRE(r.evictions.size() == 2);
  for (const auto& pod : r.evictions) CHECK(pod.rfind("tf-worker-", 0) == 0);
}

// Volcano's preemption end-to-end cases, with its "allocate, backfill, reclaim, preempt"
// configuration: a cluster filled by a low-priority job whose pods carry the preemptable label.
const char* kPreemptNoEnqueueConf = R"(actions: "allocate, backfill, reclaim, preempt"
tiers:
- plugins: [{name: priority}, {name: gang, enablePreemptable: false}, {name: conformance}]
- plugins: [{name: overcommit}, {name: drf, enablePreemptable: false}, {name: predicates}, {name: proportion},
            {name: nodeorder}, {name: binpack}])";

void FillFourNodes(Harness& h) {
  h.PriorityClass("high", 1000).PriorityClass("low", 10);
  for (int n = 0; n < 4; ++n) h.Node("n" + std::to_string(n), "cpu=4,memory=16Gi");
  h.Queue("default");
  h.Group("ns/low", "default", 1, "Running", "", "low", {{"w", 16}});
  for (int i = 0; i < 16; ++i) {
    h.Pod("ns/low-w-" + std::to_string(i), "low")
        .Role("w")
        .Request("cpu=1")
        .Priority(10)
        .Labels({{"volcano.sh/preemptable", "true"}})
        .On("n" + std::to_string(i / 4))
        .Add();
  }
}

TEST_CASE("without enqueue, a high-priority elastic job preempts down to its minimum") {
  Harness h;
  FillFourNodes(h);
  // Not admitted yet: without enqueue, allocate admits it; 8 of its 16 tasks are its gang.
  h.Group("ns/high", "default", 8, "Pending", "cpu=8", "high", {{"w", 16}});
  for (int i = 0; i < 16; ++i)
    h.Pod("ns/high-w-" + std::to_string(i), "high").Role("w").Request("cpu=1").Priority(1000).Add();
  auto r = h.Run(kPreemptNoEnqueueConf);
  CHECK(r.evictions.size() == 8);
  CHECK(r.phases["ns/high"] == "Inqueue");
}

TEST_CASE("a preemptor held by scheduling gates preempts nothing") {
  Harness h;
  FillFourNodes(h);
  h.Group("ns/high", "default", 8, "Inqueue", "cpu=8", "high");
  for (int i = 0; i < 8; ++i) {
    h.Pod("ns/high-w-" + std::to_string(i), "high")
        .Request("cpu=1")
        .Priority(1000)
        .Gated("example.com/hold")
        .Add();
  }
  auto r = h.Run(kPreemptNoEnqueueConf);
  CHECK(r.evictions.empty());
  const auto* cond = WrittenCondition(r, "ns/high", "Unschedulable");
  REQUIRE(cond != nullptr);
  CHECK(cond->message.find("scheduling gates") != std::string::npos);
}

TEST_CASE("a preemptor with required pod anti-affinity takes one victim per node") {
  Harness h;
  FillFourNodes(h);
  h.Group("ns/high", "default", 4, "Inqueue", "", "high", {{"w", 4}});
  for (int i = 0; i < 4; ++i) {
    h.Pod("ns/high-w-" + std::to_string(i), "high")
        .Role("w")
        .Request("cpu=1")
        .Priority(1000)
        .Labels({{"app", "high"}})
        .AntiAffinity("kubernetes.io/hostname", {{"app", "high"}})
        .Add();
  }
  auto r = h.Run(kPreemptNoEnqueueConf);
  REQUIRE(r.evictions.size() == 4);
  std::set<int> nodes;  // low-w-<i> runs on node i / 4
  for (const auto& pod : r.evictions) nodes.insert(std::stoi(pod.substr(pod.rfind('-') + 1)) / 4);
  CHECK(nodes.size() == 4);
  std::set<std::string> nominated;
  for (const auto& p : r.outcome.pods) {
    if (p.name.rfind("high-", 0) == 0) nominated.insert(p.nominated_node);
  }
  CHECK(nominated.size() == 4);
}

TEST_CASE("when only a whole gang can make room, the whole gang goes") {
  Harness h;
  h.PriorityClass("high", 1000);
  h.Node("n1", "cpu=2").Node("n2", "cpu=2").Queue("default");
  h.Group("ns/gang", "default", 4, "Running");
  for (int i = 0; i < 4; ++i) {
    h.Pod("ns/gang-" + std::to_string(i), "gang").Request("cpu=1").On(i < 2 ? "n1" : "n2").Add();
  }
  h.Group("ns/high", "default", 1, "Inqueue", "", "high");
  h.Pod("ns/high-0", "high").Request("cpu=2").Priority(1000).Add();
  auto r = h.Run(kPreemptConf);
  CHECK(r.evictions.size() == 4);  // never half a gang
}

TEST_CASE("the node needing the fewest victims is chosen") {
  Harness h;
  h.PriorityClass("high", 1000);
  h.Node("small-pods", "cpu=2").Node("one-big", "cpu=2").Queue("default");
  h.Group("ns/smalls", "default", 1, "Running");
  for (int i = 0; i < 4; ++i) {
    h.Pod("ns/smalls-" + std::to_string(i), "smalls").Request("cpu=500m").On("small-pods").Add();
  }
  h.Group("ns/big", "default", 1, "Running");
  h.Pod("ns/big-0", "big").Request("cpu=2").On("one-big").Add();
  h.Group("ns/high", "default", 1, "Inqueue", "", "high");
  h.Pod("ns/high-0", "high").Request("cpu=2").Priority(1000).Add();
  auto r = h.Run(kPreemptConf);
  REQUIRE(r.evictions.size() == 1);
  CHECK(r.evictions[0] == "big-0");
}

TEST_CASE("system-critical pods and kube-system are never evicted") {
  Harness h;
  h.PriorityClass("high", 1000);
  h.Node("n1", "cpu=2").Queue("default");
  h.Group("kube-system/dns", "default", 1, "Running");
  h.Pod("kube-system/dns-0", "dns").Request("cpu=1").On("n1").Add();
  h.Group("ns/crit", "default", 1, "Running");
  h.Pod("ns/crit-0", "crit")
      .Request("cpu=1")
      .On("n1")
      .PriorityClassName("system-cluster-critical")
      .Add();
  h.Group("ns/high", "default", 1, "Inqueue", "", "high");
  h.Pod("ns/high-0", "high").Request("cpu=1").Priority(1000).Add();
  auto r = h.Run(kPreemptConf);
  CHECK(r.evictions.empty());
}

TEST_CASE("without preempt in the configuration nothing is evicted") {
  Harness h;
  FillWithLowPriority(h);
  h.Group("ns/high", "default", 1, "Inqueue", "", "high");
  h.Pod("ns/high-0", "high").Request("cpu=1").Priority(1000).Add();
  auto r = h.Run();  // Volcano's default: enqueue, allocate, backfill
  CHECK(r.evictions.empty());
}

// Enqueue with overcommit and proportion: the cluster is full, so plain admission refuses.
const char* kAdmitConf = R"(actions: "enqueue, allocate, preempt"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: overcommit}, {name: drf}, {name: predicates}, {name: proportion}, {name: nodeorder}])";

TEST_CASE("a high-priority job is admitted into room it may preempt, a peer is not") {
  Harness h;
  FillWithLowPriority(h, 4);  // one gang of four: preemptable only as a whole
  h.Group("ns/high", "default", 2, "Pending", "cpu=2", "high");
  h.Group("ns/peer", "default", 2, "Pending", "cpu=2", "low");
  auto r = h.Run(kAdmitConf);
  CHECK(r.phases["ns/high"] == "Inqueue");
  CHECK(r.phases["ns/peer"] == "Pending");
  CHECK(r.evictions.empty());  // no pods yet: preempt decides once they exist

  SECTION("without preempt configured, admission waits for idle room as in Volcano") {
    auto plain = h.Run(R"(actions: "enqueue, allocate"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: overcommit}, {name: drf}, {name: predicates}, {name: proportion}, {name: nodeorder}])");
    CHECK(plain.phases["ns/high"] == "Pending");
  }
}

TEST_CASE("room promised to one admitted job is not promised again") {
  Harness h;
  FillWithLowPriority(h);  // 4 CPUs of preemptable pods
  h.Group("ns/a", "default", 3, "Pending", "cpu=3", "high");
  h.Group("ns/b", "default", 3, "Pending", "cpu=3", "high");
  auto r = h.Run(kAdmitConf);
  int admitted = (r.phases["ns/a"] == "Inqueue") + (r.phases["ns/b"] == "Inqueue");
  CHECK(admitted == 1);
}

TEST_CASE("system-critical pods are no admission credit") {
  Harness h;
  h.PriorityClass("high", 1000);
  h.Node("n1", "cpu=4,memory=16Gi").Queue("default");
  h.Group("ns/crit", "default", 1, "Running");
  for (int i = 0; i < 4; ++i) {
    h.Pod("ns/crit-" + std::to_string(i), "crit")
        .Request("cpu=1")
        .PriorityClassName("system-node-critical")
        .On("n1")
        .Add();
  }
  h.Group("ns/high", "default", 2, "Pending", "cpu=2", "high");
  auto r = h.Run(kAdmitConf);
  CHECK(r.phases["ns/high"] == "Pending");
}

TEST_CASE("a starved queue reclaims down to its deserved share and no further") {
  Harness h;
  h.Node("n1", "cpu=8,memory=64Gi").Queue("a", 1).Queue("b", 1);
  // Queue a borrowed the whole cluster.
  for (int i = 0; i < 8; ++i) {
    std::string g = "a" + std::to_string(i);
    h.Group("ns/" + g, "a", 1, "Running");
    h.Pod("ns/" + g + "-0", g).Request("cpu=1,memory=1Gi").On("n1").Add();
  }
  for (int i = 0; i < 8; ++i) {
    std::string g = "b" + std::to_string(i);
    h.Group("ns/" + g, "b", 1, "Inqueue");
    h.Pod("ns/" + g + "-0", g).Request("cpu=1,memory=1Gi").Add();
  }
  auto r = h.Run(kReclaimConf);
  CHECK(r.evictions.size() == 4);  // a keeps its 4 of 8
  for (const auto& v : r.evictions) CHECK(v[0] == 'a');
}

TEST_CASE("a new queue reclaims when more than one other queue holds the cluster") {
  const char* conf = R"(actions: "enqueue, allocate, backfill, reclaim, preempt"
tiers:
- plugins: [{name: priority}, {name: gang, enablePreemptable: false}, {name: conformance}]
- plugins: [{name: overcommit}, {name: drf, enablePreemptable: false}, {name: predicates}, {name: proportion},
            {name: nodeorder}, {name: binpack}])";
  Harness h;
  for (int n = 0; n < 4; ++n) h.Node("n" + std::to_string(n), "cpu=4,memory=16Gi");
  h.Queue("r1").Queue("r2").Queue("r3");
  // Volcano Jobs of minAvailable 1 whose task minAvailable defaulted to the replicas.
  for (const char* j : {"j1", "j2"}) {
    h.Group(std::string("ns/") + j, j[1] == '1' ? "r1" : "r2", 1, "Running", "cpu=1", "",
            {{"w", 8}});
  }
  for (int i = 0; i < 8; ++i) {
    h.Pod("ns/j1-w-" + std::to_string(i), "j1")
        .Role("w")
        .Request("cpu=1")
        .On("n" + std::to_string(i / 4))
        .Add();
    h.Pod("ns/j2-w-" + std::to_string(i), "j2")
        .Role("w")
        .Request("cpu=1")
        .On("n" + std::to_string(2 + i / 4))
        .Add();
  }
  h.Group("ns/j3", "r3", 1, "Inqueue", "cpu=1", "", {{"w", 6}});
  for (int i = 0; i < 6; ++i)
    h.Pod("ns/j3-w-" + std::to_string(i), "j3").Role("w").Request("cpu=1").Add();
  auto r = h.Run(conf);
  // As Volcano: one task is the job's minimum; reclaim serves it, and stops there.
  CHECK(r.evictions.size() == 1);
}

TEST_CASE("reclaim takes turns between the jobs it takes from, as job order ranks them") {
  const char* conf = R"(actions: "enqueue, allocate, reclaim, backfill"
tiers:
- plugins: [{name: priority}, {name: gang, enablePreemptable: false}, {name: conformance}]
- plugins: [{name: overcommit}, {name: drf, enablePreemptable: false}, {name: predicates}, {name: proportion},
            {name: nodeorder}, {name: binpack}])";
  // Pods of a per node (b has the rest of each 4-CPU node): the outcome must not depend on it.
  for (std::vector<int> a_per_node : {std::vector<int>{2, 2, 2}, {3, 1, 2}, {1, 3, 2}, {2, 1, 3}}) {
    Harness h;
    for (int n = 0; n < 3; ++n) h.Node("n" + std::to_string(n), "cpu=4,memory=16Gi");
    h.Queue("q1").Queue("q2").Queue("q3");
    // Volcano Jobs of minAvailable 1 whose task minAvailable defaulted to the replicas (6).
    h.Group("ns/a", "q1", 1, "Running", "cpu=1", "", {{"w", 6}});
    h.Group("ns/b", "q2", 1, "Running", "cpu=1", "", {{"w", 6}});
    int a = 0, b = 0;
    for (size_t n = 0; n < 3; ++n) {
      for (int k = 0; k < 4; ++k) {
        bool of_a = k < a_per_node[n];
        std::string name = of_a ? "ns/a-w-" + std::to_string(a++) : "ns/b-w-" + std::to_string(b++);
        h.Pod(name, of_a ? "a" : "b")
            .Role("w")
            .Request("cpu=1,memory=128Mi")
            .On("n" + std::to_string(n))
            .Add();
      }
    }
    h.Group("ns/c", "q3", 2, "Inqueue", "cpu=2", "", {{"w", 4}});
    for (int i = 0; i < 4; ++i)
      h.Pod("ns/c-w-" + std::to_string(i), "c").Role("w").Request("cpu=1,memory=128Mi").Add();
    auto r = h.Run(conf);
    // As Volcano: c reclaims its minimum of two, and the second victim comes from the job that
    // drf then ranks last (the one that has not lost a pod yet): one pod of each queue.
    INFO("a per node " << a_per_node[0] << a_per_node[1] << a_per_node[2]);
    REQUIRE(r.evictions.size() == 2);
    CHECK(r.evictions[0].substr(0, 2) != r.evictions[1].substr(0, 2));
  }
}

TEST_CASE("capacity never reclaims a queue below its guarantee") {
  Harness h;
  h.Node("n1", "cpu=8,memory=64Gi");
  h.Queue("guarded", 1, "", "cpu=6,memory=6Gi", "cpu=4,memory=4Gi");
  h.Queue("hungry", 1, "", "", "cpu=4,memory=4Gi");
  for (int i = 0; i < 8; ++i) {
    std::string g = "g" + std::to_string(i);
    h.Group("ns/" + g, "guarded", 1, "Running");
    h.Pod("ns/" + g + "-0", g).Request("cpu=1,memory=1Gi").On("n1").Add();
  }
  for (int i = 0; i < 4; ++i) {
    std::string g = "h" + std::to_string(i);
    h.Group("ns/" + g, "hungry", 1, "Inqueue");
    h.Pod("ns/" + g + "-0", g).Request("cpu=1,memory=1Gi").Add();
  }
  auto r = h.Run(kCapacityConf);
  CHECK(r.evictions.size() == 2);  // 8 -> 6: deserved is 4, but the guarantee is 6
}

TEST_CASE("a pending job of a starved queue reclaims so it can be admitted") {
  Harness h;
  h.Node("n1", "cpu=8,memory=64Gi").Queue("a", 1).Queue("b", 1);
  for (int i = 0; i < 8; ++i) {
    std::string g = "a" + std::to_string(i);
    h.Group("ns/" + g, "a", 1, "Running");
    h.Pod("ns/" + g + "-0", g).Request("cpu=1,memory=1Gi").On("n1").Add();
  }
  // Not admitted yet: no pods, only minResources.
  h.Group("ns/waiting", "b", 3, "Pending", "cpu=3,memory=3Gi");
  auto r = h.Run(kReclaimConf);
  CHECK(r.evictions.size() == 3);
  const auto* cond = WrittenCondition(r, "ns/waiting", "Unschedulable");
  REQUIRE(cond != nullptr);
  CHECK(cond->message.find("before admission") != std::string::npos);
}

}  // namespace
}  // namespace tephra::scheduler::testing
