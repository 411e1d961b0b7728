// The gang plugin's hooks: validity, readiness, pipelining, order, starvation, the victim veto
// and the PodGroup condition it writes at close (docs/scheduler.md, Plugins: gang).
#include <map>
#include <string>

#include <catch2/catch.hpp>

#include "scheduler/framework/outcome.h"
#include "scheduler/plugins/plugins.h"
#include "tests/unit/scheduler/plugins/plugin_session.h"

namespace tephra::scheduler::testing {
namespace {

const char kGang[] = "- plugins:\n  - name: gang\n";
// The veto needs a deciding plugin to veto.
const char kGangVeto[] = "- plugins:\n  - name: offer-all\n  - name: gang\n";

TEST_CASE("gang: a job with fewer valid pods than minAvailable is not valid") {
  Harness h;
  h.Node("n1", "cpu=8")
      .Queue("default")
      .Group("ns/short", "default", 3)
      .Group("ns/enough", "default", 2);
  h.Pod("ns/s1", "short").Request("cpu=1").Add();
  h.Pod("ns/s2", "short").Request("cpu=1").Add();
  h.Pod("ns/e1", "enough").Request("cpu=1").Add();
  h.Pod("ns/e2", "enough").Request("cpu=1").On("n1").Add();
  PluginSession s(h, kGang);
  ValidateResult bad = s->JobValid(s.Job("ns/short"));
  CHECK_FALSE(bad.pass);
  CHECK(bad.reason == "NotEnoughTasks");
  CHECK(bad.message == "Not enough valid tasks for gang-scheduling, valid: 2, min: 3");
  CHECK(s->JobValid(s.Job("ns/enough")).pass);
}

TEST_CASE(
    "gang: each role needs its minTaskMember of valid pods when the minimums are part of the "
    "gang") {
  Harness h;
  h.Node("n1", "cpu=8").Queue("default");
  h.Group("ns/strict", "default", 3, "Inqueue", "", "", {{"ps", 1}, {"worker", 2}});
  // minAvailable 1 < 1 + 2: elastic, the task minimums do not count.
  h.Group("ns/elastic", "default", 1, "Inqueue", "", "", {{"ps", 1}, {"worker", 2}});
  for (const char* job : {"strict", "elastic"}) {
    for (int i = 0; i < 3; ++i) {
      h.Pod("ns/" + std::string(job) + "-w" + std::to_string(i), job)
          .Role("worker")
          .Request("cpu=1")
          .Add();
    }
  }
  PluginSession s(h, kGang);
  ValidateResult strict = s->JobValid(s.Job("ns/strict"));
  CHECK_FALSE(strict.pass);
  CHECK(strict.reason == "NotEnoughPodsOfTask");
  CHECK(strict.message == "Not enough valid pods of task ps for gang-scheduling, valid: 0, min: 1");
  CHECK(s->JobValid(s.Job("ns/elastic")).pass);
}

TEST_CASE("gang: ready once minAvailable tasks are placed, pipelined counts towards the vote") {
  Harness h;
  h.Node("n1", "cpu=8").Queue("default").Group("ns/g", "default", 3);
  h.Pod("ns/p1", "g").Request("cpu=1").On("n1").Add();
  h.Pod("ns/p2", "g").Request("cpu=1").Add();
  h.Pod("ns/p3", "g").Request("cpu=1").Add();
  PluginSession s(h, kGang);
  CHECK_FALSE(s->JobReady(s.Job("ns/g")));
  CHECK_FALSE(s->JobPipelined(s.Job("ns/g")));
  CHECK(s->JobStarving(s.Job("ns/g")));
  s.Place("ns/p2", "n1");
  s.Pipeline("ns/p3", "n1");
  CHECK_FALSE(s->JobReady(s.Job("ns/g")));  // 2 ready of 3
  CHECK(s->JobPipelined(s.Job("ns/g")));    // 2 ready + 1 pipelined
  CHECK_FALSE(s->JobStarving(s.Job("ns/g")));
}

TEST_CASE("gang: a role below its minimum keeps the job from being ready") {
  Harness h;
  h.Node("n1", "cpu=8")
      .Queue("default")
      .Group("ns/g", "default", 3, "Inqueue", "", "", {{"ps", 1}, {"worker", 2}});
  h.Pod("ns/w1", "g").Role("worker").Request("cpu=1").On("n1").Add();
  h.Pod("ns/w2", "g").Role("worker").Request("cpu=1").On("n1").Add();
  h.Pod("ns/w3", "g").Role("worker").Request("cpu=1").On("n1").Add();
  h.Pod("ns/ps", "g").Role("ps").Request("cpu=1").Add();
  PluginSession s(h, kGang);
  CHECK_FALSE(s->JobReady(s.Job("ns/g")));  // 3 ready >= 3, but ps has 0 of 1
  s.Place("ns/ps", "n1");
  CHECK(s->JobReady(s.Job("ns/g")));
}

TEST_CASE("gang: jobs that are not ready yet go first") {
  Harness h;
  h.Node("n1", "cpu=8")
      .Queue("default")
      .Group("ns/ready", "default", 1, "Running")
      .Group("ns/waiting", "default", 1);
  h.Pod("ns/r1", "ready").Request("cpu=1").On("n1").Add();
  h.Pod("ns/w1", "waiting").Request("cpu=1").Add();
  PluginSession s(h, kGang);
  CHECK(s->JobOrder(s.Job("ns/waiting"), s.Job("ns/ready")));
  CHECK_FALSE(s->JobOrder(s.Job("ns/ready"), s.Job("ns/waiting")));
}

TEST_CASE(
    "gang: victims never leave a running gang below minAvailable, unless all of it is offered") {
  Harness h;
  h.Node("n1", "cpu=8")
      .Queue("default")
      .Group("ns/g", "default", 2, "Running")
      .Group("ns/new", "default", 1);
  h.Pod("ns/g1", "g").Request("cpu=1").On("n1").Add();
  h.Pod("ns/g2", "g").Request("cpu=1").On("n1").Add();
  h.Pod("ns/g3", "g").Request("cpu=1").On("n1").Add();
  h.Pod("ns/new-0", "new").Request("cpu=1").Add();
  PluginSession s(h, kGangVeto);
  // 3 ready, minAvailable 2: one can go.
  CHECK(s.Preemptable("ns/new-0", {"ns/g1", "ns/g2"}).size() == 1);
  CHECK(s.Reclaimable("ns/new-0", {"ns/g1", "ns/g2"}).size() == 1);
  // The whole gang offered at once is taken completely.
  CHECK(s.Preemptable("ns/new-0", {"ns/g1", "ns/g2", "ns/g3"}).size() == 3);
}

TEST_CASE("gang: victims keep each role's minimum where task minimums apply") {
  Harness h;
  h.Node("n1", "cpu=8")
      .Queue("default")
      .Group("ns/g", "default", 3, "Running", "", "", {{"ps", 1}, {"worker", 2}});
  h.Group("ns/new", "default", 1);
  h.Pod("ns/ps", "g").Role("ps").Request("cpu=1").On("n1").Add();
  h.Pod("ns/w1", "g").Role("worker").Request("cpu=1").On("n1").Add();
  h.Pod("ns/w2", "g").Role("worker").Request("cpu=1").On("n1").Add();
  h.Pod("ns/w3", "g").Role("worker").Request("cpu=1").On("n1").Add();
  h.Pod("ns/new-0", "new").Request("cpu=1").Add();
  PluginSession s(h, kGangVeto);
  // One task above minAvailable, but ps is at its minimum: only a worker may go.
  CHECK(s.Preemptable("ns/new-0", {"ns/ps", "ns/w1"}) == std::vector<std::string>{"w1"});
}

TEST_CASE(
    "gang: at close an admitted job short of its gang gets Unschedulable with the fit errors") {
  Harness h;
  h.Node("n1", "cpu=2").Queue("default").Group("ns/g", "default", 2).Group("ns/ok", "default", 1);
  h.Pod("ns/p1", "g").Request("cpu=4").Add();
  h.Pod("ns/p2", "g").Request("cpu=4").Add();
  h.Pod("ns/ok-0", "ok").Request("cpu=1").Add();
  PluginSession s(h, kGang);
  FitErrors errors;
  errors.Add(reason::kInsufficientCpu);
  s->RecordFitErrors(s.JobAt("ns/g"), s.Task("ns/p1").uid(), errors);
  s->RecordFitErrors(s.JobAt("ns/g"), s.Task("ns/p2").uid(), errors);
  s.Place("ns/ok-0", "n1");
  s.Close();
  const auto& unschedulable = s->JobCondition(s.JobAt("ns/g"));
  REQUIRE(unschedulable.has_value());
  CHECK(unschedulable->type == "Unschedulable");
  CHECK(unschedulable->reason == "NotEnoughResources");
  CHECK(unschedulable->message ==
        "2/2 tasks in gang unschedulable: 2 tasks: 0/1 nodes are available: 1 Insufficient cpu");
  const auto& scheduled = s->JobCondition(s.JobAt("ns/ok"));
  REQUIRE(scheduled.has_value());
  CHECK(scheduled->type == "Scheduled");
  CHECK(scheduled->status == "True");
}

TEST_CASE(
    "gang: at close a settled gang whose group already says Scheduled is not said again, one "
    "whose group still says Unschedulable is") {
  Harness h;
  h.Node("n1", "cpu=8").Queue("default");
  h.Group("ns/said", "default", 1, "Running").Group("ns/stale", "default", 1, "Running");
  api::PodGroupCondition scheduled;
  scheduled.type = "Scheduled";
  scheduled.status = "True";
  scheduled.reason = "tasks in gang are ready to be scheduled";
  api::PodGroupCondition unschedulable;
  unschedulable.type = "Unschedulable";
  unschedulable.status = "True";
  unschedulable.reason = "NotEnoughResources";
  h.ChangeGroup("ns/said", [&](api::PodGroup& pg) { pg.status.conditions = {scheduled}; });
  h.ChangeGroup("ns/stale", [&](api::PodGroup& pg) {
    pg.status.conditions = {unschedulable, scheduled};
  });
  h.Pod("ns/s0", "said").Request("cpu=1").On("n1").Add();
  h.Pod("ns/t0", "stale").Request("cpu=1").On("n1").Add();
  PluginSession s(h, kGang);
  s.Close();
  CHECK_FALSE(s->JobCondition(s.JobAt("ns/said")).has_value());
  const auto& stale = s->JobCondition(s.JobAt("ns/stale"));
  REQUIRE(stale.has_value());
  CHECK(stale->type == "Scheduled");
  // Only the stale group is written: its Unschedulable condition turns False.
  std::vector<std::string> written;
  for (const PodGroupUpdate& u : ComputeOutcome(s.session()).pod_groups) {
    if (u.status.conditions == s.Job("ns/" + u.name).pod_group->status.conditions) continue;
    written.push_back(u.name);
  }
  CHECK(written == std::vector<std::string>{"stale"});
}

TEST_CASE(
    "gang: at close a running gang that lost a member and has nothing to place is "
    "Unschedulable, one whose member is still terminating is not") {
  Harness h;
  h.Node("n1", "cpu=8").Queue("default");
  h.Group("ns/failed", "default", 2, "Running").Group("ns/leaving", "default", 2, "Running");
  h.Pod("ns/f0", "failed").Request("cpu=1").On("n1", "Failed").Add();
  h.Pod("ns/f1", "failed").Request("cpu=1").On("n1").Add();
  h.Pod("ns/l0", "leaving").Request("cpu=1").On("n1").Terminating().Add();
  h.Pod("ns/l1", "leaving").Request("cpu=1").On("n1").Add();
  PluginSession s(h, kGang);
  s.Close();
  const auto& failed = s->JobCondition(s.JobAt("ns/failed"));
  REQUIRE(failed.has_value());
  CHECK(failed->type == "Unschedulable");
  CHECK(failed->reason == "NotEnoughResources");
  CHECK(failed->message ==
        "1/2 tasks in gang unschedulable: gang not whole: 1 ready of minAvailable 2 "
        "(1 Running, 1 Failed)");
  CHECK_FALSE(s->JobCondition(s.JobAt("ns/leaving")).has_value());

  // The written phases: Unknown for the gang that cannot be whole, Running for the other.
  std::map<std::string, std::string> phases;
  for (const PodGroupUpdate& u : ComputeOutcome(s.session()).pod_groups) {
    phases[u.name] = u.status.phase;
  }
  CHECK(phases["failed"] == "Unknown");
  if (phases.count("leaving")) CHECK(phases["leaving"] == "Running");  // counts may change
}

TEST_CASE(
    "outcome: a group leaving Pending is written at once, so it never shows Pending while "
    "its pods run") {
  Harness h;
  h.Node("n1", "cpu=8").Queue("default");
  h.Group("ns/solo", "default", 1, "Pending").Group("ns/gang", "default", 2, "Inqueue");
  h.Pod("ns/solo-0", "solo").Request("cpu=1").Add();
  h.Pod("ns/gang-0", "gang").Request("cpu=1").Add();
  h.Pod("ns/gang-1", "gang").Request("cpu=1").Add();
  PluginSession s(h, kGang);
  s.Place("ns/solo-0", "n1");
  s.Place("ns/gang-0", "n1");
  s.Place("ns/gang-1", "n1");
  s.Close();
  std::map<std::string, const PodGroupUpdate*> updates;
  SessionOutcome out = ComputeOutcome(s.session());
  for (const PodGroupUpdate& u : out.pod_groups) updates[u.name] = &u;
  REQUIRE(updates.count("solo") == 1);
  CHECK(updates["solo"]->status.phase == "Running");
  CHECK(updates["solo"]->urgent);
  // Inqueue to Running is for people: it may wait to share a write, and waits longer while
  // the pods placed are starting, so that one write says they run.
  REQUIRE(updates.count("gang") == 1);
  CHECK(updates["gang"]->status.phase == "Running");
  CHECK_FALSE(updates["gang"]->urgent);
  CHECK(updates["gang"]->pods_starting);
}

}  // namespace
}  // namespace tephra::scheduler::testing
