// The capacity plugin: queues get spec.deserved, borrow up to their capability (what others'
// guarantees leave) and give back down to their guarantee; with enableHierarchy every ancestor
// counts (docs/scheduler.md, Plugins: capacity).
#include <catch2/catch.hpp>

#include "tests/unit/scheduler/plugins/plugin_session.h"

namespace tephra::scheduler::testing {
namespace {

const char kCapacity[] = "- plugins:\n  - name: capacity\n";

void Running(Harness& h, const std::string& queue, int pods) {
  h.Group("ns/" + queue + "-run", queue, 1, "Running");
  for (int i = 0; i < pods; ++i) {
    h.Pod("ns/" + queue + "-r" + std::to_string(i), queue + "-run").Request("cpu=1").On("n1").Add();
  }
}

// 8 CPU. a: deserved 4, capability 6, holds 5. b: deserved 4, guarantee 2, holds 2.
// a's real capability: min(8 - b's guarantee 2, 6) = 6.
void Cluster(Harness& h) {
  h.Node("n1", "cpu=8").Node("n2", "cpu=8");
  h.Queue("a", 1, "cpu=6", "", "cpu=4").Queue("b", 1, "", "cpu=2", "cpu=4").Queue("no-deserved", 1);
  h.Queue("closed", 1, "", "", "cpu=1", "", "Closed");
  Running(h, "a", 5);
  Running(h, "b", 2);
  h.Group("ns/a-new", "a", 1, "Inqueue");
  h.Pod("ns/a-one", "a-new").Request("cpu=1").Add();
  h.Pod("ns/a-two", "a-new").Request("cpu=2").Add();
  h.Group("ns/b-new", "b", 1, "Inqueue");
  h.Pod("ns/b-one", "b-new").Request("cpu=1").Add();
  h.Group("ns/closed-new", "closed", 1, "Inqueue");
  h.Pod("ns/closed-one", "closed-new").Request("cpu=1").Add();
}

TEST_CASE("capacity: allocatable up to the real capability, only in an Open queue") {
  Harness h;
  Cluster(h);
  PluginSession s(h, kCapacity);
  CHECK(s->Allocatable(s.Queue("a"), s.Task("ns/a-one")));        // 5 + 1 <= 6
  CHECK_FALSE(s->Allocatable(s.Queue("a"), s.Task("ns/a-two")));  // 5 + 2 > 6
  CHECK_FALSE(s->Allocatable(s.Queue("closed"), s.Task("ns/closed-one")));
  s.Place("ns/a-one", "n2");  // a holds 6 now
  CHECK_FALSE(s->Allocatable(s.Queue("a"), s.Task("ns/b-one")));
  s.Close();
  CHECK(s->queue_shares().at("a").real_capability.milli_cpu() == 6000);
}

TEST_CASE("capacity: a queue may reclaim only up to its deserved share") {
  Harness h;
  Cluster(h);
  PluginSession s(h, kCapacity);
  CHECK_FALSE(s->Preemptive(s.Queue("a"), s.Task("ns/a-one")));  // 5 + 1 > 4
  CHECK(s->Preemptive(s.Queue("b"), s.Task("ns/b-one")));        // 2 + 1 <= 4
}

TEST_CASE("capacity: the queue with the lower allocated / deserved share goes first") {
  Harness h;
  Cluster(h);
  PluginSession s(h, kCapacity);
  CHECK(s->QueueOrder(s.Queue("b"), s.Queue("a")));  // 0.5 before 1.25
  CHECK_FALSE(s->QueueOrder(s.Queue("a"), s.Queue("b")));
  CHECK(s->QueueOrder(s.Queue("b"), s.Queue("no-deserved")));  // no deserved: share 1
}

TEST_CASE("capacity: victims only from queues above deserved, down to it") {
  Harness h;
  Cluster(h);
  PluginSession s(h, kCapacity);
  CHECK(s.Reclaimable("ns/b-one", {"ns/b-r0", "ns/a-r0", "ns/a-r1"}) ==
        std::vector<std::string>{"a-r0"});
}

TEST_CASE("capacity: victims never take a queue below its guarantee") {
  Harness h;
  h.Node("n1", "cpu=8").Queue("g", 1, "", "cpu=2", "cpu=1").Queue("other", 1, "", "", "cpu=4");
  Running(h, "g", 3);
  h.Group("ns/other-new", "other", 1, "Inqueue");
  h.Pod("ns/other-one", "other-new").Request("cpu=1").Add();
  PluginSession s(h, kCapacity);
  // 3 above deserved 1: the first victim leaves 2 (the guarantee), the second would leave 1.
  CHECK(s.Reclaimable("ns/other-one", {"ns/g-r0", "ns/g-r1"}) == std::vector<std::string>{"g-r0"});
}

TEST_CASE("capacity: admission counts allocated and admitted jobs against the real capability") {
  Harness h;
  Cluster(h);
  h.Group("ns/fits", "a", 1, "Pending", "cpu=1").Group("ns/too-big", "a", 1, "Pending", "cpu=2");
  h.Group("ns/shut-out", "closed", 1, "Pending");
  PluginSession s(h, kCapacity);
  CHECK(s->JobEnqueueable(s.Job("ns/fits")));           // 5 + 1 <= 6
  CHECK_FALSE(s->JobEnqueueable(s.Job("ns/too-big")));  // 5 + 2 > 6
  CHECK_FALSE(s->JobEnqueueable(s.Job("ns/shut-out")));
  s->JobEnqueued(s.Job("ns/fits"));
  CHECK_FALSE(s->JobEnqueueable(s.Job("ns/fits")));  // 5 + 1 held + 1 > 6
  const std::vector<JobNote>* notes = s->JobNotes(s.JobAt("ns/too-big"));
  REQUIRE(notes != nullptr);
  CHECK(notes->front().plugin == "capacity");
}

TEST_CASE("capacity: with enableHierarchy a parent's capability limits its children") {
  Harness h;
  h.Node("n1", "cpu=8")
      .Queue("eng", 1, "cpu=4")
      .Queue("eng-a", 1, "", "", "", "eng")
      .Queue("eng-b", 1, "", "", "", "eng");
  Running(h, "eng-b", 3);
  h.Group("ns/a-new", "eng-a", 1, "Inqueue");
  h.Pod("ns/a-two", "a-new").Request("cpu=2").Add();
  h.Pod("ns/a-one", "a-new").Request("cpu=1").Add();
  h.Group("ns/a-pending", "eng-a", 1, "Pending", "cpu=2");
  {
    PluginSession flat(h, kCapacity);
    CHECK(flat->Allocatable(flat.Queue("eng-a"), flat.Task("ns/a-two")));
  }
  PluginSession s(h, "- plugins:\n  - name: capacity\n    enableHierarchy: true\n");
  CHECK_FALSE(s->Allocatable(s.Queue("eng-a"), s.Task("ns/a-two")));  // eng: 3 + 2 > 4
  CHECK(s->Allocatable(s.Queue("eng-a"), s.Task("ns/a-one")));        // eng: 3 + 1 <= 4
  CHECK_FALSE(s->JobEnqueueable(s.Job("ns/a-pending")));
}

}  // namespace
}  // namespace tephra::scheduler::testing
