// Explanations: per-task fit errors aggregated by reason and node count, the gang, the queue,
// plugin notes and hints, as the recorder keeps them at the close of a session.
#include "scheduler/explain/explain.h"

#include <catch2/catch.hpp>

#include "scheduler/explain/recorder.h"
#include "tests/unit/scheduler/harness.h"

namespace tephra::scheduler::testing {
namespace {

const api::Taint kGpuTaint{"gpu", "true", "NoSchedule", {}};

// Runs one session and returns what the recorder kept about `job`.
std::shared_ptr<const JobExplanation> ExplainAfterRun(
    Harness& h, const JobId& job, const std::string& conf = DefaultSchedulerConfYaml()) {
  SessionRecorder recorder({100, false});
  h.inspect = [&](const Session& ssn) { recorder.Record(ssn, Decisions{}, ssn.Now()); };
  h.Run(conf);
  h.inspect = nullptr;
  return recorder.Explanation(job);
}

bool HasHint(const JobExplanation& e, const std::string& needle) {
  for (const auto& h : Hints(e)) {
    if (h.find(needle) != std::string::npos) return true;
  }
  return false;
}

TEST_CASE("numbers are written with thousands separators") {
  CHECK(FormatCount(0) == "0");
  CHECK(FormatCount(999) == "999");
  CHECK(FormatCount(1000) == "1,000");
  CHECK(FormatCount(3200) == "3,200");
  CHECK(FormatCount(1234567) == "1,234,567");
  CHECK(FormatCount(-4500) == "-4,500");
}

TEST_CASE("requests are described cpu first, in quantity notation") {
  CHECK(DescribeRequest(*api::Resources::FromString("cpu=8")) == "8 CPU");
  CHECK(DescribeRequest(*api::Resources::FromString("cpu=500m,memory=16Gi,nvidia.com/gpu=1")) ==
        "500m CPU, 16Gi memory, 1 nvidia.com/gpu");
  CHECK(DescribeRequest(*api::Resources::FromString("cpu=2,pods=1")) == "2 CPU");
  CHECK(DescribeRequest(api::Resources{}) == "no resources");
  CHECK(ShortReason("node(s) had untolerated taint gpu=true:NoSchedule") ==
        "had untolerated taint gpu=true:NoSchedule");
  CHECK(ShortReason("Insufficient cpu") == "Insufficient cpu");
}

TEST_CASE("failed tasks are grouped by request and reasons, with node counts") {
  Harness h;
  // Six small nodes (4 CPU) and four big ones (16 CPU) that carry a taint.
  for (int i = 0; i < 6; ++i) h.Node("small-" + std::to_string(i), "cpu=4,memory=16Gi");
  for (int i = 0; i < 4; ++i)
    h.Node("gpu-" + std::to_string(i), "cpu=16,memory=64Gi", {}, {kGpuTaint});
  h.Queue("default").Group("ns/train", "default", 10);
  // Six 1-CPU tasks fit anywhere untainted; four 8-CPU tasks fit only the tainted nodes.
  for (int i = 0; i < 6; ++i)
    h.Pod("ns/train-a-" + std::to_string(i), "train").Request("cpu=1").Role("a").Add();
  for (int i = 6; i < 10; ++i)
    h.Pod("ns/train-b-" + std::to_string(i), "train").Request("cpu=8").Role("b").Add();

  auto e = ExplainAfterRun(h, "ns/train");
  REQUIRE(e != nullptr);
  CHECK(e->admitted);
  CHECK_FALSE(e->scheduled);
  CHECK(e->tasks == 10);
  CHECK(e->fit == 6);  // placed, then withdrawn with the gang
  CHECK(e->unplaced == 4);
  CHECK(e->not_tried == 0);
  REQUIRE(e->groups.size() == 1);
  const UnplacedGroup& g = e->groups[0];
  CHECK(g.tasks == 4);
  CHECK(g.role == "b");
  CHECK(g.nodes_examined == 10);
  REQUIRE(g.reasons.size() == 2);
  CHECK(g.reasons[0] == ReasonNodes{"Insufficient cpu", 6});
  CHECK(g.reasons[1] == ReasonNodes{"node(s) had untolerated taint gpu=true:NoSchedule", 4});
  CHECK(g.example_pods == std::vector<std::string>{"train-b-6", "train-b-7", "train-b-8"});
  CHECK(Summarize(*e) ==
        "6/10 tasks fit; 4 need 8 CPU: 6 nodes Insufficient cpu, 4 nodes had untolerated taint "
        "gpu=true:NoSchedule");
  CHECK(HasHint(*e, "add a toleration for taint gpu=true:NoSchedule (4 nodes)"));
  CHECK(HasHint(*e, "each task needs 8 cpu free on one node"));
  // The PodGroup condition the same session wrote tells the same story.
  REQUIRE(e->condition);
  CHECK(e->condition->type == "Unschedulable");
}

TEST_CASE("tasks the gang never got to try count with the failed task of the same spec") {
  Harness h;
  h.Node("n1", "cpu=2").Node("n2", "cpu=2").Queue("default").Group("ns/big", "default", 4);
  for (int i = 0; i < 4; ++i) h.Pod("ns/big-w-" + std::to_string(i), "big").Request("cpu=3").Add();
  auto e = ExplainAfterRun(h, "ns/big");
  REQUIRE(e != nullptr);
  CHECK(e->fit == 0);
  CHECK(e->unplaced == 4);
  CHECK(e->not_tried == 0);
  CHECK(Summarize(*e) == "0/4 tasks fit; 4 need 3 CPU: 2 nodes Insufficient cpu");
  // Every node lacks cpu, so the hint can say how much the best one has.
  CHECK(HasHint(*e, "the most free on any node is 2 cpu"));
}

TEST_CASE("a gang short of nodes, not of node size, is told so") {
  Harness h;
  h.Node("n1", "cpu=4").Node("n2", "cpu=4").Queue("default").Group("ns/wide", "default", 3);
  for (int i = 0; i < 3; ++i)
    h.Pod("ns/wide-w-" + std::to_string(i), "wide").Request("cpu=3").Add();
  auto e = ExplainAfterRun(h, "ns/wide");
  REQUIRE(e != nullptr);
  CHECK(e->unplaced == 1);
  CHECK(HasHint(
      *e,
      "each task needs 3 cpu free on one node; nodes have that much (up to 4 cpu free) but too few "
      "of them for the whole gang"));
  CHECK_FALSE(HasHint(*e, "the most free on any node"));
}

TEST_CASE("one task reads in the singular") {
  Harness h;
  h.Node("n1", "cpu=2").Queue("default").Group("ns/one", "default", 1);
  h.Pod("ns/one-0", "one").Request("cpu=3").Add();
  auto e = ExplainAfterRun(h, "ns/one");
  REQUIRE(e != nullptr);
  CHECK(Summarize(*e) == "0/1 tasks fit; 1 needs 3 CPU: 1 node Insufficient cpu");
}

TEST_CASE("a job over its queue's capability is not admitted, and the plugin says by how much") {
  Harness h;
  h.Node("n1", "cpu=8,memory=32Gi").Queue("capped", 1, "cpu=2");
  h.Group("ns/wide", "capped", 4, "Pending", "cpu=4");
  auto e = ExplainAfterRun(h, "ns/wide");
  REQUIRE(e != nullptr);
  CHECK_FALSE(e->admitted);
  CHECK(e->phase == "Pending");
  REQUIRE_FALSE(e->notes.empty());
  CHECK(e->notes[0].plugin == "proportion");
  std::string summary = Summarize(*e);
  INFO(summary);
  CHECK(summary.rfind("not admitted: ", 0) == 0);
  CHECK(summary.find("capability") != std::string::npos);
  CHECK(summary.find("cpu 2") != std::string::npos);
  CHECK(HasHint(*e, "raise queue capped's capability"));
  REQUIRE(e->queue_view);
  CHECK(e->queue_view->pending_jobs == 1);
  CHECK(e->queue_view->pending.Get("cpu") == 4000);
}

TEST_CASE("a job in a closed queue says so and how to open it") {
  Harness h;
  h.Node("n1", "cpu=8")
      .Queue("shut", 1, "", "", "", "", "Closed")
      .Group("ns/late", "shut", 1, "Pending", "cpu=1");
  auto e = ExplainAfterRun(h, "ns/late");
  REQUIRE(e != nullptr);
  CHECK_FALSE(e->admitted);
  CHECK(Summarize(*e).find("queue shut is Closed") != std::string::npos);
  CHECK(HasHint(*e, "tephractl queue open shut"));
}

TEST_CASE("admission by preemption credit leaves no refusal note, a refused peer keeps one") {
  Harness h;
  h.PriorityClass("high", 1000).PriorityClass("low", 10);
  h.Node("n1", "cpu=4,memory=16Gi").Queue("default");
  h.Group("ns/low", "default", 4, "Running", "", "low");
  for (int i = 0; i < 4; ++i)
    h.Pod("ns/low-" + std::to_string(i), "low").Request("cpu=1").Priority(10).On("n1").Add();
  h.Group("ns/high", "default", 2, "Pending", "cpu=2", "high");
  h.Group("ns/peer", "default", 2, "Pending", "cpu=2", "low");
  SessionRecorder recorder({100, false});
  h.inspect = [&](const Session& ssn) { recorder.Record(ssn, Decisions{}, ssn.Now()); };
  h.Run(R"(actions: "enqueue, allocate, preempt"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: overcommit}, {name: drf}, {name: predicates}, {name: proportion}, {name: nodeorder}])");
  auto high = recorder.Explanation("ns/high");
  REQUIRE(high != nullptr);
  CHECK(high->admitted);
  CHECK(high->notes.empty());  // overcommit refused it first; the credit overturned that
  auto peer = recorder.Explanation("ns/peer");
  REQUIRE(peer != nullptr);
  CHECK_FALSE(peer->admitted);
  REQUIRE(peer->notes.size() == 1);  // the plain refusal only, not a second one with the credit
  CHECK(peer->notes[0].plugin == "overcommit");
  CHECK(Summarize(*peer).find("the cluster has no room to admit it") != std::string::npos);
  INFO(Summarize(*peer));
  CHECK(Summarize(*peer).find("memory ~19.2Gi") !=
        std::string::npos);                                   // 16Gi x 1.2, not 20615843021
  CHECK(Summarize(*peer).find("pods") == std::string::npos);  // not a count of pods, not "pods 0"
}

TEST_CASE("a placed gang is recorded as scheduled, with nothing left to explain") {
  Harness h;
  h.Node("n1", "cpu=4").Queue("default").Group("ns/ok", "default", 2);
  h.Pod("ns/ok-0", "ok").Request("cpu=1").Add();
  h.Pod("ns/ok-1", "ok").Request("cpu=1").Add();
  auto e = ExplainAfterRun(h, "ns/ok");
  REQUIRE(e != nullptr);
  CHECK(e->scheduled);
  CHECK(e->groups.empty());
  CHECK(Summarize(*e) == "2/2 tasks fit; gang of 2 is placed");
}

TEST_CASE("a queue at its deserved share holds its jobs back, and the explanation names it") {
  Harness h;
  h.Node("n1", "cpu=4").Queue("a").Queue("b");
  // Queue a already runs 2 CPU and b wants the other 2: a's new job must wait for its share.
  h.Group("ns/run", "a", 2, "Running");
  h.Pod("ns/run-0", "run").Request("cpu=1").On("n1").Add();
  h.Pod("ns/run-1", "run").Request("cpu=1").On("n1").Add();
  h.Group("ns/more", "a", 1);
  h.Pod("ns/more-0", "more").Request("cpu=1").Add();
  h.Group("ns/bjob", "b", 2);
  h.Pod("ns/bjob-0", "bjob").Request("cpu=1").Add();
  h.Pod("ns/bjob-1", "bjob").Request("cpu=1").Add();
  auto e = ExplainAfterRun(h, "ns/more");
  REQUIRE(e != nullptr);
  std::string summary = Summarize(*e);
  INFO(summary);
  CHECK(summary.find("deserved share") != std::string::npos);
  CHECK(HasHint(*e, "queue a is at its deserved share"));
}

TEST_CASE("the explanation store keeps the most recently updated jobs") {
  ExplanationStore store(2);
  auto make = [](const std::string& id) {
    auto e = std::make_shared<JobExplanation>();
    e->id = id;
    return std::shared_ptr<const JobExplanation>(e);
  };
  store.PutAll({make("ns/a"), make("ns/b")});
  store.PutAll({make("ns/c")});
  CHECK(store.Get("ns/a") == nullptr);
  CHECK(store.Get("ns/b") != nullptr);
  store.PutAll({make("ns/b")});  // b is fresh again
  store.PutAll({make("ns/d")});  // so c goes
  CHECK(store.Get("ns/c") == nullptr);
  CHECK(store.Get("ns/b") != nullptr);
  CHECK(store.Get("ns/d") != nullptr);
  CHECK(store.size() == 2);
  CHECK(store.capacity() == 2);
}

TEST_CASE("a refused job with a deadline is told the refusal, not its deadline") {
  Harness h;
  h.Node("n1", "cpu=8").Queue("capped", 1, "cpu=2");
  h.Group("ns/wide", "capped", 4, "Pending", "cpu=4")
      .AnnotateGroup("ns/wide", "tephra.dev/deadline", "2030-01-01T00:00:00Z");
  Harness::Result r;
  SessionRecorder recorder({100, false});
  h.inspect = [&](const Session& ssn) { recorder.Record(ssn, Decisions{}, ssn.Now()); };
  r = h.Run();
  const api::PodGroupCondition* c = WrittenCondition(r, "ns/wide", "Unschedulable");
  REQUIRE(c != nullptr);
  CHECK(c->message.rfind("not admitted: queue capped capability", 0) == 0);
  auto e = recorder.Explanation("ns/wide");
  REQUIRE(e != nullptr);
  REQUIRE(e->notes.size() == 2);  // the deadline's and the refusal's
  CHECK(Summarize(*e).rfind("not admitted: queue capped capability", 0) == 0);
}

TEST_CASE("a waiting job's expected start: its place in its queue's order, after whom") {
  Harness h;
  h.Node("n1", "cpu=2").Queue("default").Queue("q", 1, "cpu=2");
  h.PriorityClass("high", 100);
  // Five gangs of 2 CPU: one fits; the others wait in JobOrder (priority, then creation).
  h.Group("ns/a", "q", 1, "Pending", "cpu=2")
      .Group("ns/b", "q", 1, "Pending", "cpu=2")
      .Group("ns/c", "q", 1, "Pending", "cpu=2")
      .Group("ns/d", "q", 1, "Pending", "cpu=2")
      .Group("ns/urgent", "q", 1, "Pending", "cpu=2", "high")
      .Group("ns/other", "default", 1, "Pending", "cpu=8");
  SessionRecorder recorder({100, false});
  h.inspect = [&](const Session& ssn) { recorder.Record(ssn, Decisions{}, ssn.Now()); };
  h.Run();
  auto urgent = recorder.Explanation("ns/urgent");
  auto d = recorder.Explanation("ns/d");
  REQUIRE(urgent != nullptr);
  REQUIRE(d != nullptr);
  CHECK(urgent->queue_position == 1);  // admitted, waiting for its pods; first by priority
  CHECK(d->queue_position == 5);
  CHECK(d->queue_waiting == 5);
  CHECK(d->ahead == std::vector<JobId>{"ns/a", "ns/b", "ns/c"});
  CHECK(ExpectedStart(*urgent) ==
        "next in queue q: first to be admitted and placed once room allows");
  CHECK(ExpectedStart(*d) ==
        "5th of 5 waiting in queue q, after 1 more, ns/a, ns/b, ns/c: it starts after them, or "
        "before them where it fits and they do not");
  CHECK(recorder.Explanation("ns/other")->queue_position == 1);  // alone in its queue
  CHECK(Ordinal(1) == "1st");
  CHECK(Ordinal(12) == "12th");
  CHECK(Ordinal(22) == "22nd");
  CHECK(Ordinal(1013) == "1,013th");
}

TEST_CASE("the recorder skips jobs with nothing pending that the session did not touch") {
  Harness h;
  h.Node("n1", "cpu=4").Queue("default").Group("ns/done", "default", 1, "Running");
  h.Pod("ns/done-0", "done").Request("cpu=1").On("n1").Add();
  auto e = ExplainAfterRun(h, "ns/done");
  CHECK(e == nullptr);
}

}  // namespace
}  // namespace tephra::scheduler::testing
