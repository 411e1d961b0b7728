// StatusWriter over the fake API server: what it writes for PodGroups, Queues and pods, how it
// coalesces updates to one object, and what a failed write leaves behind.
#include "scheduler/status/status_writer.h"

#include <thread>

#include <catch2/catch.hpp>

#include "tests/unit/scheduler/fake_api.h"
#include "tests/unit/scheduler/harness.h"

namespace tephra::scheduler::testing {
namespace {

const char kPodGroups[] = "/apis/scheduling.volcano.sh/v1beta1/namespaces/ns/podgroups";
const char kQueues[] = "/apis/scheduling.volcano.sh/v1beta1/queues";
const char kPods[] = "/api/v1/namespaces/ns/pods";
constexpr auto kForever = std::chrono::hours(1);  // a settle no test waits out

PodGroupUpdate Group(const std::string& phase, int32_t running, bool urgent = true) {
  PodGroupUpdate u;
  u.job = "ns/pg";
  u.namespace_ = "ns";
  u.name = "pg";
  u.status.phase = phase;
  u.status.running = running;
  u.urgent = urgent;
  return u;
}

// Pod ns/p left pending: PodScheduled=False for `message`, on its way to `nominated`.
PodConditionUpdate PendingPod(const std::string& uid, const std::string& message,
                              const std::string& nominated) {
  PodConditionUpdate p;
  p.namespace_ = "ns";
  p.name = "p";
  p.uid = uid;
  p.condition = {"False", "Unschedulable", message};
  p.nominated_node = nominated;
  return p;
}

QueueUpdate Queue(const std::string& allocated) {
  return {"q", api::Resources::FromString(allocated)->ToList()};
}

struct WriterFixture : FakeApi {
  explicit WriterFixture(std::chrono::milliseconds settle = std::chrono::milliseconds(0)) {
    fake->Put(
        kPodGroups,
        R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":{"name":"pg"},"spec":{"queue":"q"},"status":{"phase":"Inqueue"}})");
    fake->Put(
        kQueues,
        R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","metadata":{"name":"q"},"spec":{"weight":1}})");
    fake->Put(kPods, R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{}})");
    h.Node("n1", "cpu=4").Queue("q").Group("ns/pg", "q", 1, "Inqueue");
    h.Pod("ns/p", "pg").Request("cpu=1").Add();
    writer = std::make_unique<StatusWriter>(client, &h.cache(), &events, &registry, 2, settle);
  }

  Harness h;
  std::unique_ptr<StatusWriter> writer;
};

TEST_CASE(
    "status writer: a PodGroup's phase, counts and conditions are merge-patched, with its event") {
  WriterFixture f;
  PodGroupUpdate u = Group("Running", 2);
  u.status.conditions.push_back(
      {"Scheduled", "True", "session-1", std::nullopt, "tasks in gang are ready", ""});
  u.event_type = "Normal";
  u.event_reason = "Scheduled";
  u.event_message = "all tasks placed";
  f.writer->Apply({{u}, {}, {}, {}});
  REQUIRE(f.writer->Drain(kWait));
  CHECK(f.Requests("PATCH /apis/scheduling.volcano.sh/v1beta1/namespaces/ns/podgroups/pg") == 1);
  std::string pg = *f.fake->Object(kPodGroups, "pg");
  CHECK(pg.find(R"("phase":"Running")") != std::string::npos);
  CHECK(pg.find(R"("running":2)") != std::string::npos);
  CHECK(pg.find(R"("type":"Scheduled","status":"True","transitionID":"session-1")") !=
        std::string::npos);
  CHECK(f.HasMetric("tephra_status_writes_total 1"));
  std::string events = f.Events();
  CHECK(events.find("all tasks placed") != std::string::npos);
  CHECK(events.find(R"("kind":"PodGroup")") != std::string::npos);
  // The uid comes from the object the write returned (kubectl describe matches by uid).
  CHECK(events.find(R"("name":"pg","namespace":"ns","uid":"uid-1")") != std::string::npos);
}

TEST_CASE(
    "status writer: an update for a group not yet created waits for it and is written once it "
    "arrives") {
  WriterFixture f;
  PodGroupUpdate u = Group("Running", 0, false);
  u.job = "ns/bare";
  u.name = "bare";
  u.awaiting_object = true;
  f.writer->Apply({{u}, {}, {}, {}});
  u.status.running = 1;  // a later session: the pod started
  f.writer->Apply({{u}, {}, {}, {}});
  REQUIRE(f.writer->Drain(kWait));  // parked updates do not hold Drain up
  CHECK(f.Requests("PATCH /apis/scheduling.volcano.sh/v1beta1/namespaces/ns/podgroups/bare") == 0);
  f.fake->Put(
      kPodGroups,
      R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":{"name":"bare"},"spec":{"queue":"q"},"status":{"phase":"Pending"}})");
  f.h.Group("ns/bare", "q", 1, "Pending");  // the informer delivers it: the writer is told
  REQUIRE(f.writer->Drain(kWait));
  CHECK(f.Requests("PATCH /apis/scheduling.volcano.sh/v1beta1/namespaces/ns/podgroups/bare") == 1);
  std::string pg = *f.fake->Object(kPodGroups, "bare");
  CHECK(pg.find(R"("phase":"Running")") != std::string::npos);
  CHECK(pg.find(R"("running":1)") != std::string::npos);
}

TEST_CASE(
    "status writer: a held update of a group whose pods are starting waits for them to run and "
    "goes out once") {
  WriterFixture f(std::chrono::seconds(1));
  PodGroupUpdate bound = Group("Running", 0, false);
  bound.pods_starting = true;  // bound, not yet running: held for up to 5 settle periods
  f.writer->Apply({{bound}, {}, {}, {}});
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  CHECK(f.Requests("PATCH /apis/scheduling.volcano.sh/v1beta1/namespaces/ns/podgroups/pg") == 0);
  f.writer->Apply({{Group("Running", 1, false)}, {}, {}, {}});  // the pod runs
  REQUIRE(f.writer->Drain(kWait));
  CHECK(f.Requests("PATCH /apis/scheduling.volcano.sh/v1beta1/namespaces/ns/podgroups/pg") == 1);
  CHECK(f.fake->Object(kPodGroups, "pg")->find(R"("running":1)") != std::string::npos);
}

TEST_CASE("status writer: an update for a group that already arrived is not parked") {
  WriterFixture f;
  PodGroupUpdate u = Group("Running", 1);
  u.awaiting_object = true;  // decided while provisional; the object came before the write
  f.writer->Apply({{u}, {}, {}, {}});
  REQUIRE(f.writer->Drain(kWait));
  CHECK(f.Requests("PATCH /apis/scheduling.volcano.sh/v1beta1/namespaces/ns/podgroups/pg") == 1);
}

TEST_CASE("status writer: the PodGroup status is assumed in the cache as it is queued") {
  WriterFixture f(kForever);
  f.writer->Apply({{Group("Running", 1, false)}, {}, {}, {}});
  CHECK(f.h.cache().Job("ns/pg")->phase ==
        api::PodGroupPhase::kRunning);  // before anything was written
  f.writer->Stop();
}

TEST_CASE(
    "status writer: a failed PodGroup write is forgotten in the cache, so a later session writes "
    "again") {
  WriterFixture f;
  f.fake->Remove(kPodGroups, "pg");
  f.writer->Apply({{Group("Running", 1)}, {}, {}, {}});
  REQUIRE(f.writer->Drain(kWait));
  CHECK(f.h.cache().Job("ns/pg")->phase == api::PodGroupPhase::kInqueue);
  CHECK(f.HasMetric("tephra_status_write_errors_total 1"));
}

TEST_CASE("status writer: a throttled write is retried by the client and lands") {
  WriterFixture f;
  f.fake->FailNext(2, 429, "PATCH");
  f.writer->Apply({{Group("Running", 1)}, {}, {}, {}});
  REQUIRE(f.writer->Drain(kWait));
  CHECK(f.Requests("PATCH /apis/scheduling.volcano.sh/v1beta1/namespaces/ns/podgroups/pg") == 3);
  CHECK(f.fake->Object(kPodGroups, "pg")->find(R"("phase":"Running")") != std::string::npos);
  CHECK(f.HasMetric("tephra_status_write_errors_total 0"));
}

TEST_CASE("status writer: a Queue's status.allocated goes through the status subresource") {
  WriterFixture f;
  f.writer->Apply({{}, {Queue("cpu=2,memory=1Gi")}, {}, {}});
  f.writer->Stop();  // writes what is held
  CHECK(f.Requests("PATCH /apis/scheduling.volcano.sh/v1beta1/queues/q/status") == 1);
  CHECK(f.fake->Object(kQueues, "q")->find(R"("allocated":{"cpu":"2","memory":"1Gi"})") !=
        std::string::npos);
}

TEST_CASE(
    "status writer: a pod left pending gets PodScheduled=False, its nominated node and a "
    "FailedScheduling event") {
  WriterFixture f;
  PodConditionUpdate p =
      PendingPod("uid-3", "0/1 nodes are available: 1 Insufficient cpu", /*nominated=*/"n1");
  f.writer->Apply({{}, {}, {p}, {}});
  REQUIRE(f.writer->Drain(kWait));
  CHECK(f.Requests("PATCH /api/v1/namespaces/ns/pods/p/status") == 1);
  std::string pod = *f.fake->Object(kPods, "p");
  CHECK(pod.find(R"("nominatedNodeName":"n1")") != std::string::npos);
  CHECK(pod.find(R"("type":"PodScheduled","status":"False","reason":"Unschedulable")") !=
        std::string::npos);
  std::string events = f.Events();
  CHECK(events.find(R"("reason":"FailedScheduling")") != std::string::npos);
  CHECK(events.find("0/1 nodes are available: 1 Insufficient cpu") != std::string::npos);
}

TEST_CASE("status writer: a pod bound before its condition is written gets no condition") {
  WriterFixture f;
  // A later session bound the pipelined pod while the earlier one's write still waited.
  REQUIRE(f.h.cache().AssumeBinding("ns/pg", "uid-ns/p", "n1").ok());
  PodConditionUpdate p =
      PendingPod("uid-ns/p", "pipelined: waiting for resources being released", /*nominated=*/"n1");
  f.writer->Apply({{}, {}, {p}, {}});
  REQUIRE(f.writer->Drain(kWait));
  CHECK(f.Requests("PATCH /api/v1/namespaces/ns/pods/p/status") == 0);
  CHECK(f.Events().find("FailedScheduling") == std::string::npos);
}

TEST_CASE(
    "status writer: updates nobody waits on are held and coalesced into one write of the latest") {
  WriterFixture f(kForever);
  f.writer->Apply({{Group("Running", 1, false)}, {Queue("cpu=1")}, {}, {}});
  f.writer->Apply({{Group("Running", 2, false)}, {Queue("cpu=2")}, {}, {}});
  f.writer->Apply({{Group("Running", 3, false)}, {Queue("cpu=3")}, {}, {}});
  CHECK(f.fake->requests().empty());  // held for the settle time
  f.writer->Stop();
  CHECK(f.Requests("PATCH /apis/scheduling.volcano.sh/v1beta1/queues/q/status") == 1);
  CHECK(f.Requests("PATCH /apis/scheduling.volcano.sh/v1beta1/namespaces/ns/podgroups/pg") == 1);
  CHECK(f.fake->Object(kQueues, "q")->find(R"("allocated":{"cpu":"3"})") != std::string::npos);
  CHECK(f.fake->Object(kPodGroups, "pg")->find(R"("running":3)") != std::string::npos);
}

TEST_CASE("status writer: a held update's event survives a newer update that replaces it") {
  WriterFixture f(kForever);
  PodGroupUpdate scheduled = Group("Running", 0, false);
  scheduled.event_type = "Normal";
  scheduled.event_reason = "Scheduled";
  scheduled.event_message = "all tasks of the gang are scheduled";
  f.writer->Apply({{scheduled}, {}, {}, {}});
  f.writer->Apply({{Group("Running", 3, false)}, {}, {}, {}});  // its pods run, before the write
  f.writer->Stop();
  CHECK(f.Requests("PATCH /apis/scheduling.volcano.sh/v1beta1/namespaces/ns/podgroups/pg") == 1);
  CHECK(f.fake->Object(kPodGroups, "pg")->find(R"("running":3)") != std::string::npos);
  CHECK(f.Events().find("all tasks of the gang are scheduled") != std::string::npos);
}

TEST_CASE("status writer: an urgent update cuts a held one's wait and carries the latest content") {
  WriterFixture f(kForever);
  f.writer->Apply({{Group("Running", 1, false)}, {}, {}, {}});
  f.writer->Apply({{Group("Running", 2, true)}, {}, {}, {}});
  REQUIRE(f.writer->Drain(kWait));  // long before the hour of settle
  CHECK(f.Requests("PATCH /apis/scheduling.volcano.sh/v1beta1/namespaces/ns/podgroups/pg") == 1);
  CHECK(f.fake->Object(kPodGroups, "pg")->find(R"("running":2)") != std::string::npos);
}

}  // namespace
}  // namespace tephra::scheduler::testing
