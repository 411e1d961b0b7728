// The proportion plugin: deserved shares by weight with water-filling, and the queue hooks built
// on them (docs/scheduler.md, Plugins: proportion). Deserved shares are read from the share
// report the plugin leaves at session close (what explanations show).
#include <catch2/catch.hpp>

#include "tests/unit/scheduler/plugins/plugin_session.h"

namespace tephra::scheduler::testing {
namespace {

const char kProportion[] = "- plugins:\n  - name: proportion\n";

int64_t DeservedMilliCpu(PluginSession& s, const std::string& queue) {
  s.Close();
  return s->queue_shares().at(queue).deserved.milli_cpu();
}

// A pending job in `queue` asking for `pods` pods of 1 CPU.
void Demand(Harness& h, const std::string& queue, int pods) {
  h.Group("ns/" + queue, queue, 1);
  for (int i = 0; i < pods; ++i)
    h.Pod("ns/" + queue + "-" + std::to_string(i), queue).Request("cpu=1").Add();
}

TEST_CASE("proportion: queues deserve the cluster in proportion to weight") {
  Harness h;
  h.Node("n1", "cpu=8").Queue("light", 1).Queue("heavy", 3);
  Demand(h, "light", 8);
  Demand(h, "heavy", 8);
  PluginSession s(h, kProportion);
  CHECK(DeservedMilliCpu(s, "light") == 2000);
  CHECK(s->queue_shares().at("heavy").deserved.milli_cpu() == 6000);
}

TEST_CASE("proportion: what a queue does not ask for is handed to the others") {
  Harness h;
  h.Node("n1", "cpu=8").Queue("light", 1).Queue("heavy", 1);
  Demand(h, "light", 1);
  Demand(h, "heavy", 8);
  PluginSession s(h, kProportion);
  CHECK(DeservedMilliCpu(s, "light") == 1000);
  CHECK(s->queue_shares().at("heavy").deserved.milli_cpu() == 7000);
}

TEST_CASE("proportion: capability caps the deserved share, guarantee floors it") {
  Harness h;
  h.Node("n1", "cpu=8")
      .Queue("capped", 3, "cpu=3")
      .Queue("guaranteed", 1, "", "cpu=5")
      .Queue("plain", 1);
  Demand(h, "capped", 8);
  Demand(h, "guaranteed", 8);
  Demand(h, "plain", 8);
  PluginSession s(h, kProportion);
  s.Close();
  const auto& shares = s->queue_shares();
  CHECK(shares.at("capped").deserved.milli_cpu() == 3000);
  CHECK(shares.at("guaranteed").deserved.milli_cpu() >= 5000);  // weight alone would give it 1.6
}

// light deserves 2 (weight 1 of 4) and holds 1; heavy deserves 6 and holds 6.
void Allocated(Harness& h) {
  h.Node("n1", "cpu=8").Queue("light", 1).Queue("heavy", 3);
  h.Group("ns/light-run", "light", 1, "Running").Group("ns/heavy-run", "heavy", 1, "Running");
  h.Pod("ns/light-r0", "light-run").Request("cpu=1").On("n1").Add();
  for (int i = 0; i < 6; ++i)
    h.Pod("ns/heavy-r" + std::to_string(i), "heavy-run").Request("cpu=1").On("n1").Add();
  Demand(h, "light", 1);
  Demand(h, "heavy", 2);
}

TEST_CASE("proportion: a queue is overused once it holds its deserved share") {
  Harness h;
  Allocated(h);
  PluginSession s(h, kProportion);
  CHECK(s->Overused(s.Queue("heavy")));
  CHECK_FALSE(s->Overused(s.Queue("light")));
  s.Place("ns/light-0", "n1");  // light now holds its 2
  CHECK(s->Overused(s.Queue("light")));
}

TEST_CASE(
    "proportion: a task is allocatable while its queue stays within deserved, and only if Open") {
  Harness h;
  Allocated(h);
  PluginSession s(h, kProportion);
  CHECK(s->Allocatable(s.Queue("light"), s.Task("ns/light-0")));
  CHECK_FALSE(s->Allocatable(s.Queue("heavy"), s.Task("ns/heavy-0")));
  CHECK(s->Preemptive(s.Queue("light"), s.Task("ns/light-0")));
  CHECK_FALSE(s->Preemptive(s.Queue("heavy"), s.Task("ns/heavy-0")));
}

TEST_CASE("proportion: nothing is allocatable in a queue that is not Open") {
  Harness h;
  h.Node("n1", "cpu=8").Queue("closed", 1, "", "", "", "", "Closed");
  Demand(h, "closed", 1);
  PluginSession s(h, kProportion);
  CHECK_FALSE(s->Allocatable(s.Queue("closed"), s.Task("ns/closed-0")));
}

TEST_CASE("proportion: the queue with the lower share goes first") {
  Harness h;
  Allocated(h);
  PluginSession s(h, kProportion);
  CHECK(s->QueueOrder(s.Queue("light"), s.Queue("heavy")));  // 1/2 before 6/6
  CHECK_FALSE(s->QueueOrder(s.Queue("heavy"), s.Queue("light")));
}

TEST_CASE("proportion: reclaim takes only from queues above their deserved share") {
  Harness h;
  h.Node("n1", "cpu=8").Queue("light", 1).Queue("heavy", 1);
  h.Group("ns/light-run", "light", 1, "Running").Group("ns/heavy-run", "heavy", 1, "Running");
  h.Pod("ns/light-r0", "light-run").Request("cpu=1").On("n1").Add();
  for (int i = 0; i < 7; ++i)
    h.Pod("ns/heavy-r" + std::to_string(i), "heavy-run").Request("cpu=1").On("n1").Add();
  Demand(h, "light", 3);
  PluginSession s(h, kProportion);  // both deserve 4; heavy holds 7
  CHECK(s.Reclaimable("ns/light-0", {"ns/light-r0", "ns/heavy-r0", "ns/heavy-r1", "ns/heavy-r2",
                                     "ns/heavy-r3"}) ==
        std::vector<std::string>{"heavy-r0", "heavy-r1", "heavy-r2"});
}

TEST_CASE("proportion: admission counts allocated and admitted jobs against the real capability") {
  Harness h;
  h.Node("n1", "cpu=8").Queue("q", 1, "cpu=4").Queue("closed", 1, "", "", "", "", "Closed");
  h.Group("ns/run", "q", 1, "Running");
  h.Pod("ns/r0", "run").Request("cpu=1").On("n1").Add();
  h.Group("ns/admitted", "q", 1, "Inqueue", "cpu=1");
  h.Group("ns/fits", "q", 1, "Pending", "cpu=2");
  h.Group("ns/too-big", "q", 1, "Pending", "cpu=3");
  h.Group("ns/shut-out", "closed", 1, "Pending");
  PluginSession s(h, kProportion);
  CHECK(s->JobEnqueueable(s.Job("ns/fits")));           // 1 + 1 + 2 <= 4
  CHECK_FALSE(s->JobEnqueueable(s.Job("ns/too-big")));  // 1 + 1 + 3 > 4
  CHECK_FALSE(s->JobEnqueueable(s.Job("ns/shut-out")));
  s->JobEnqueued(s.Job("ns/fits"));
  CHECK_FALSE(s->JobEnqueueable(s.Job("ns/fits")));  // its own 2 are held now: 1 + 1 + 2 + 2 > 4
}

}  // namespace
}  // namespace tephra::scheduler::testing
