// Snapshots written and read back, and sessions replayed on them.
#include "scheduler/replay/replay.h"

#include <catch2/catch.hpp>

#include "scheduler/builtins.h"
#include "scheduler/replay/snapshot_io.h"
#include "tests/unit/scheduler/harness.h"

namespace tephra::scheduler::testing {
namespace {

// A small cluster with a bit of everything a snapshot must carry.
void Populate(Harness& h) {
  h.Node("n1", "cpu=4,memory=16Gi", {{"zone", "a"}});
  h.Node("n2", "cpu=4,memory=16Gi", {{"zone", "b"}});
  h.Node("gpu", "cpu=16,memory=64Gi,nvidia.com/gpu=4", {{"zone", "a"}},
         {{"gpu", "true", "NoSchedule", {}}});
  h.Queue("default").Queue("capped", 2, "cpu=6", "cpu=1", "cpu=4");
  h.PriorityClass("high", 100);
  h.Group("ns/running", "default", 2, "Running");
  h.Pod("ns/running-0", "running").Request("cpu=1,memory=1Gi").On("n1").Add();
  h.Pod("ns/running-1", "running").Request("cpu=1,memory=1Gi").On("n2").Add();
  // Somebody else's pod occupies n2.
  h.Pod("other/web-0", "").Request("cpu=1").SchedulerName("default-scheduler").On("n2").Add();
  h.Group("ns/train", "capped", 3, "Inqueue", "", "high");
  for (int i = 0; i < 3; ++i) {
    h.Pod("ns/train-w-" + std::to_string(i), "train")
        .Request("cpu=1,memory=2Gi")
        .Role("worker")
        .Spread("zone", 1, {{"job", "train"}})
        .Labels({{"job", "train"}})
        .Add();
  }
  h.Group("ns/gpu", "default", 1, "Inqueue");
  h.Pod("ns/gpu-0", "gpu")
      .Request("cpu=2,nvidia.com/gpu=1")
      .Tolerate("gpu")
      .NodeSelector({{"zone", "a"}})
      .Add();
  h.Group("ns/waiting", "capped", 2, "Pending", "cpu=8");
  // A pod whose claim can only take the local PV on n1.
  h.StorageClass("local").Volume("pv-n1", "local", "10Gi", "n1").Claim("ns/data", "local", "1Gi");
  h.CsiNode("n2", "example.com/csi", 8);
  h.Group("ns/stateful", "default", 1, "Inqueue");
  h.Pod("ns/stateful-0", "stateful").Request("cpu=1").Claim("data").Add();
}

TEST_CASE("a snapshot reads back to the same snapshot") {
  Harness h;
  Populate(h);
  SnapshotDocument doc;
  doc.snapshot = h.cache().TakeSnapshot();
  doc.session = "tephra-7";
  doc.time = base::Time(std::chrono::seconds(1'800'000'000));
  doc.sampling.minimum_feasible_nodes = 42;
  std::string text = EncodeSnapshot(doc);
  SpecInterner interner;
  StatusOr<SnapshotDocument> back = DecodeSnapshot(text, interner);
  REQUIRE(back.ok());
  CHECK(back->session == "tephra-7");
  CHECK(back->time == doc.time);
  CHECK(back->sampling.minimum_feasible_nodes == 42);
  CHECK_FALSE(back->decisions.has_value());
  CHECK(EncodeSnapshot(*back) == text);
  const Snapshot& a = *doc.snapshot;
  const Snapshot& b = *back->snapshot;
  REQUIRE(a.nodes.size() == b.nodes.size());
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    CHECK(a.nodes[i]->name == b.nodes[i]->name);
    CHECK(a.nodes[i]->used == b.nodes[i]->used);
    CHECK(a.nodes[i]->allocatable == b.nodes[i]->allocatable);
    CHECK(a.nodes[i]->tasks.size() == b.nodes[i]->tasks.size());
    CHECK(a.nodes[i]->taints() == b.nodes[i]->taints());
  }
  CHECK(a.total == b.total);
  REQUIRE(a.jobs.size() == b.jobs.size());
  for (const auto& job : a.jobs) {
    auto other =
        std::find_if(b.jobs.begin(), b.jobs.end(), [&](const auto& j) { return j->id == job->id; });
    REQUIRE(other != b.jobs.end());
    CHECK((*other)->counts == job->counts);
    CHECK((*other)->priority == job->priority);
    CHECK((*other)->min_resources == job->min_resources);
    for (const auto& [uid, t] : job->tasks) {
      const TaskInfo& u = (*other)->tasks.at(uid);
      CHECK(*u.pod->spec == *t.pod->spec);
      CHECK(u.pod->task_role == t.pod->task_role);
      CHECK(u.pod->group_name == t.pod->group_name);
    }
  }
  CHECK(b.queues.at("capped")->capability == a.queues.at("capped")->capability);
  CHECK(b.queues.at("capped")->guarantee == a.queues.at("capped")->guarantee);
  REQUIRE(b.storage);
  REQUIRE(b.storage->Claim("ns", "data") != nullptr);
  CHECK(b.storage->Claim("ns", "data")->spec == a.storage->Claim("ns", "data")->spec);
  REQUIRE(b.storage->Volume("pv-n1") != nullptr);
  CHECK(b.storage->Volume("pv-n1")->spec == a.storage->Volume("pv-n1")->spec);
  CHECK(b.storage->volumes_by_class.at("local").size() == 1);
  CHECK(b.storage->Class("local")->WaitForFirstConsumer());
  CHECK(b.storage->CsiNode("n2")->FindDriver("example.com/csi")->allocatable_count == 8);
}

TEST_CASE("a replayed snapshot makes the decisions the live session made") {
  Harness h;
  Populate(h);
  DecisionLog log(&h.binder(), &h.binder());
  h.decisions = &log;
  SnapshotDocument live;
  h.inspect = [&](const Session& ssn) {
    live.snapshot = ssn.snapshot_ptr();
    live.session = ssn.uid();
    live.time = ssn.Now();
    live.decisions = log.Take(ssn);
  };
  auto r = h.Run();
  REQUIRE_FALSE(r.binds.empty());
  REQUIRE(live.decisions);
  CHECK(live.decisions->binds.size() == r.binds.size());

  // Through the file format, as a bug report would travel.
  SpecInterner interner;
  StatusOr<SnapshotDocument> doc = DecodeSnapshot(EncodeSnapshot(live), interner);
  REQUIRE(doc.ok());
  Registry registry;
  REQUIRE(RegisterBuiltins(registry).ok());
  auto conf = ParseSchedulerConf(DefaultSchedulerConfYaml(), registry.Names());
  REQUIRE(conf.ok());
  ReplayResult replay = Replay(*doc, *conf, registry);
  Decisions recorded = *live.decisions;
  recorded.Normalize();
  CHECK(replay.decisions == recorded);
  std::string text = FormatReplay(replay, *doc);
  INFO(text);
  CHECK(text.find("# same decisions as the recorded session") != std::string::npos);
  CHECK(SameAsRecorded(replay, *doc));
  CHECK(text.find("bind ns/gpu-0 gpu") != std::string::npos);
  // The claim's volume, decided in the session, comes with its pod's bind.
  CHECK(text.find("bind ns/stateful-0 n1 (bind PersistentVolume pv-n1 to claim ns/data)") !=
        std::string::npos);
  // The job over its queue's capability is still waiting, and says why.
  CHECK(text.find("waiting ns/waiting: not admitted") != std::string::npos);

  // What if the gpu node were cordoned? A different configuration or state gives a diff.
  auto no_gpu = ParseSchedulerConf(
      "actions: \"enqueue, allocate\"\ntiers:\n- plugins: [{name: gang}]\n- plugins: [{name: "
      "proportion}]\n",
      registry.Names());
  REQUIRE(no_gpu.ok());
  ReplayResult other = Replay(*doc, *no_gpu, registry);
  std::string diff = FormatReplay(other, *doc);
  INFO(diff);
  CHECK(SameAsRecorded(other, *doc) == (other.decisions == recorded));
  if (!(other.decisions == recorded))
    CHECK(diff.find("# DIFFERENT from the recorded session") != std::string::npos);
}

TEST_CASE("a bad snapshot is refused with the path of the problem") {
  SpecInterner interner;
  auto bad = [&](const std::string& text) {
    StatusOr<SnapshotDocument> doc = DecodeSnapshot(text, interner);
    REQUIRE_FALSE(doc.ok());
    return doc.status().message();
  };
  CHECK(bad("{").find("offset") != std::string::npos);
  CHECK(bad(R"({"apiVersion":"v1","kind":"Pod"})")
            .find("expected apiVersion tephra.dev/v1alpha1 kind SchedulerSnapshot") !=
        std::string::npos);
  std::string missing = bad(R"({"apiVersion":"tephra.dev/v1alpha1","kind":"SchedulerSnapshot",
      "jobs":[{"id":"ns/j","tasks":[{"uid":"nope","status":"Pending"}]}]})");
  CHECK(missing.find("jobs[0].tasks[0].uid") != std::string::npos);
  CHECK(missing.find("pod nope is not in pods") != std::string::npos);
  std::string status = bad(R"({"apiVersion":"tephra.dev/v1alpha1","kind":"SchedulerSnapshot",
      "pods":[{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns","uid":"u1"},"spec":{"containers":[{"name":"c"}]}}],
      "nodes":[{"name":"n","tasks":[{"uid":"u1","status":"Sleeping"}]}]})");
  CHECK(status.find("unknown task status \"Sleeping\"") != std::string::npos);
}

}  // namespace
}  // namespace tephra::scheduler::testing
