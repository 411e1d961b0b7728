// Status derivation, completion rules, policy matching and delayed actions.
#include <catch2/catch.hpp>

#include "base/clock.h"
#include "controllers/job/policy.h"
#include "controllers/job/status.h"
#include "tests/unit/controllers/testing.h"

namespace tephra::controllers::job {
namespace {

using testing::JobJson;
using testing::MakeJob;
using testing::MakePod;
using testing::Task;
using Pods = std::vector<std::shared_ptr<const api::Pod>>;

TEST_CASE("pods are counted per phase and per task, deleted ones as terminating") {
  auto deleting = std::make_shared<api::Pod>(*MakePod("w", 3, "Running"));
  deleting->metadata.deletion_timestamp = base::Time();
  Pods pods = {MakePod("m", 0, "Running"),
               MakePod("w", 0, "Succeeded"),
               MakePod("w", 1, "Failed"),
               MakePod("w", 2, ""),
               deleting,
               MakePod("w", 4, "Unknown"),
               MakePod("w", 5, "Running")};
  PodCounts c = CountPods(pods, {"j-w-5"}, {{"j-w-6", "w"}});
  CHECK(c.running == 1);
  CHECK(c.succeeded == 1);
  CHECK(c.failed == 1);
  CHECK(c.pending == 2);  // an empty phase, and the pod created but not cached yet
  CHECK(c.terminating == 2);
  CHECK(c.unknown == 1);
  CHECK(c.per_task["m"]["Running"] == 1);
  CHECK(c.per_task["w"]["Pending"] == 2);
  CHECK(c.per_task["w"]["Running"] == 2);
  CHECK(c.per_task["w"]["Succeeded"] == 1);
}

TEST_CASE("completion rules: everything succeeded completes the job") {
  api::Job job = MakeJob(JobJson("[" + Task("m", 1) + "," + Task("w", 2) + "]"));
  PodCounts c;
  c.succeeded = 3;
  c.per_task["m"]["Succeeded"] = 1;
  c.per_task["w"]["Succeeded"] = 2;
  CHECK(DecideRunning(job, c) == Phase::kCompleted);
}

TEST_CASE("completion rules: a task short of its minAvailable fails the job") {
  api::Job job = MakeJob(JobJson("[" + Task("m", 1) + "," + Task("w", 2) + "]"));
  PodCounts c;
  c.succeeded = 2;
  c.failed = 1;
  c.per_task["m"]["Succeeded"] = 1;
  c.per_task["w"]["Succeeded"] = 1;
  c.per_task["w"]["Failed"] = 1;
  CHECK(DecideRunning(job, c) == Phase::kFailed);
}

TEST_CASE("completion rules: a gang smaller than the tasks completes on minAvailable") {
  api::Job job = MakeJob(JobJson("[" + Task("w", 4) + "]", R"("minAvailable":2)"));
  PodCounts c;
  c.succeeded = 2;
  c.failed = 2;
  c.per_task["w"]["Succeeded"] = 2;
  c.per_task["w"]["Failed"] = 2;
  // minAvailable (2) < Σ task minAvailable (4): the per-task rule does not apply.
  CHECK(DecideRunning(job, c) == Phase::kCompleted);
  c.succeeded = 1;
  c.failed = 3;
  CHECK(DecideRunning(job, c) == Phase::kFailed);
}

TEST_CASE("completion rules: minSuccess completes early and fails when missed") {
  api::Job job = MakeJob(JobJson("[" + Task("w", 4) + "]", R"("minAvailable":1,"minSuccess":2)"));
  PodCounts c;
  c.succeeded = 2;
  c.running = 2;
  CHECK(DecideRunning(job, c) == Phase::kCompleted);
  c = PodCounts{};
  c.succeeded = 1;
  c.failed = 3;
  CHECK(DecideRunning(job, c) == Phase::kFailed);
}

TEST_CASE("completion rules: scaled to zero keeps the phase, too many pending goes back") {
  api::Job zero =
      MakeJob(JobJson("[" + Task("w", 0, R"("minAvailable":0)") + "]", R"("minAvailable":1)"));
  CHECK_FALSE(DecideRunning(zero, PodCounts{}).has_value());
  api::Job job = MakeJob(JobJson("[" + Task("w", 3) + "]", R"("minAvailable":2)"));
  PodCounts c;
  c.running = 2;
  c.pending = 1;
  CHECK_FALSE(DecideRunning(job, c).has_value());
  c.running = 1;
  c.pending = 2;
  CHECK(DecideRunning(job, c) == Phase::kPending);
}

TEST_CASE("a phase change records a condition, the transition time and the running duration") {
  api::JobStatus s;
  s.state.phase = "Pending";
  base::Time created = base::ParseTime("2026-01-01T00:00:00Z").value();
  base::Time now = created + std::chrono::seconds(90) + std::chrono::milliseconds(400);
  CHECK(SetPhase(Phase::kRunning, "", "", now, created, &s));
  CHECK(s.state.phase == "Running");
  REQUIRE(s.conditions.size() == 1);
  CHECK(s.conditions[0].status == "Running");
  CHECK(s.state.last_transition_time == created + std::chrono::seconds(90));
  CHECK(s.running_duration == std::chrono::seconds(90));
  CHECK_FALSE(SetPhase(Phase::kRunning, "", "", now, created, &s));
  CHECK(s.conditions.size() == 1);
}

// A Running job "j" with two workers, as AdvanceStatus sees it after a plain sync.
struct RunningPass {
  api::Job job = MakeJob(JobJson("[" + Task("w", 2) + "]", "", R"({"state":{"phase":"Running"}})"));
  api::JobStatus status = job.status;
  JobPass pass;
  base::Time now = base::ParseTime("2026-01-01T00:05:00Z").value();

  RunningPass() {
    pass.phase = Phase::kRunning;
    pass.rule = Lookup(Phase::kRunning, Action::kSyncJob).next;
  }
  PodCounts Succeeded() const {
    PodCounts c;
    c.succeeded = 2;
    c.per_task["w"]["Succeeded"] = 2;
    return c;
  }
};

TEST_CASE("a pass's status: finished pods complete the job unless a delayed action waits") {
  RunningPass r;
  r.pass.action_waiting = true;
  PhaseChange held = AdvanceStatus(r.job, r.Succeeded(), r.pass, r.now, &r.status);
  CHECK_FALSE(held.changed);
  CHECK(held.next == Phase::kRunning);
  CHECK(r.status.succeeded == 2);

  r.pass.action_waiting = false;
  PhaseChange done = AdvanceStatus(r.job, r.Succeeded(), r.pass, r.now, &r.status);
  CHECK(done.changed);
  CHECK(done.next == Phase::kCompleted);
  CHECK(r.status.state.phase == "Completed");
  CHECK(r.status.succeeded == 0);  // a finished job keeps no pod counters
  CHECK(r.status.task_status_count.empty());
}

TEST_CASE("a pass's status: the action and its reason, or InvalidJob, or PluginError") {
  RunningPass r;
  r.pass.action = Action::kAbortJob;
  r.pass.phase = Phase::kRunning;
  r.pass.rule = Lookup(Phase::kRunning, Action::kAbortJob).next;
  r.pass.reason = "PodFailed -> AbortJob (job policy)";
  PhaseChange aborting = AdvanceStatus(r.job, PodCounts{}, r.pass, r.now, &r.status);
  CHECK(aborting.changed);
  CHECK(r.status.state.reason == "AbortJob");
  CHECK(r.status.state.message == "PodFailed -> AbortJob (job policy)");

  RunningPass invalid;
  invalid.pass.verdict.invalid = {{"spec.tasks", "dependsOn forms a cycle: a, b"}};
  invalid.pass.rule = NextPhase::kKeep;
  PhaseChange failed =
      AdvanceStatus(invalid.job, PodCounts{}, invalid.pass, invalid.now, &invalid.status);
  CHECK(failed.next == Phase::kFailed);
  CHECK(invalid.status.state.reason == "InvalidJob");
  CHECK(invalid.status.state.message == DescribeErrors(invalid.pass.verdict.invalid));

  RunningPass plugin;
  plugin.pass.plugin_error = "svc: bad port";
  AdvanceStatus(plugin.job, PodCounts{}, plugin.pass, plugin.now, &plugin.status);
  CHECK(plugin.status.state.phase == "Running");
  CHECK(plugin.status.state.reason == "PluginError");
  CHECK(plugin.status.state.message == "svc: bad port");
}

TEST_CASE("a pass's status: QueueNotFound while a Pending job waits, cleared once it does not") {
  api::Job job = MakeJob(JobJson("[" + Task("w", 2) + "]"));
  api::JobStatus status = job.status;
  JobPass pass;
  pass.phase = Phase::kPending;
  pass.rule = Lookup(Phase::kPending, Action::kSyncJob).next;
  pass.verdict.missing_queue = {{"spec.queue", "queue q not found"}};
  pass.waiting_for_queue = true;
  const base::Time now = base::ParseTime("2026-01-01T00:05:00Z").value();
  PhaseChange waiting = AdvanceStatus(job, PodCounts{}, pass, now, &status);
  CHECK(waiting.next == Phase::kPending);
  CHECK(status.state.reason == "QueueNotFound");
  CHECK(status.state.message ==
        DescribeErrors(pass.verdict.missing_queue) + "; the job starts once the queue is created");

  JobPass found;
  found.phase = Phase::kPending;
  found.rule = pass.rule;
  AdvanceStatus(job, PodCounts{}, found, now, &status);
  CHECK(status.state.reason.empty());
  CHECK(status.state.message.empty());
}

api::Job PolicyJob() {
  return MakeJob(JobJson(
      "[" +
          Task("master", 1,
               R"("policies":[{"event":"TaskCompleted","action":"CompleteJob"},)"
               R"({"exitCode":7,"action":"AbortJob"}])") +
          "," +
          Task("worker", 2,
               R"("policies":[{"event":"PodPending","action":"RestartPod","timeout":"30s"},)"
               R"({"events":["PodEvicted","PodFailed"],"action":"RestartTask"}])") +
          "]",
      R"("policies":[{"event":"*","action":"RestartJob"},{"event":"PodPending","action":"AbortJob"}])",
      R"({"version":2})"));
}

Request PodRequest(const std::string& task, const std::string& event, int version = 2) {
  Request r;
  r.event = event;
  r.task = task;
  r.pod_name = "j-" + task + "-0";
  r.pod_uid = "uid-" + task;
  r.job_uid = "u1";
  r.job_version = version;
  return r;
}

TEST_CASE("task policies are checked before job policies, first match wins") {
  api::Job job = PolicyJob();
  CHECK(ResolveAction(job, PodRequest("master", "TaskCompleted")).action == Action::kCompleteJob);
  CHECK(ResolveAction(job, PodRequest("worker", "PodFailed")).action == Action::kRestartTask);
  CHECK(ResolveAction(job, PodRequest("worker", "PodEvicted")).action == Action::kRestartTask);
  // The master has no PodFailed policy: the job's "*" catches it.
  Resolution any = ResolveAction(job, PodRequest("master", "PodFailed"));
  CHECK(any.action == Action::kRestartJob);
  CHECK(any.reason.find("job policy") != std::string::npos);
}

TEST_CASE("an exit code policy matches the failed pod's exit code") {
  api::Job job = PolicyJob();
  Request r = PodRequest("master", "PodFailed");
  r.exit_code = 7;
  CHECK(ResolveAction(job, r).action == Action::kAbortJob);
  r.exit_code = 8;
  CHECK(ResolveAction(job, r).action == Action::kRestartJob);
}

TEST_CASE("PodPending only matches policies with a timeout, which become delays") {
  api::Job job = PolicyJob();
  Resolution worker = ResolveAction(job, PodRequest("worker", "PodPending"));
  CHECK(worker.action == Action::kRestartPod);
  REQUIRE(worker.delay.has_value());
  CHECK(*worker.delay == std::chrono::seconds(30));
  // The master's pending pod matches neither "*" nor the job's PodPending (no timeout).
  Resolution master = ResolveAction(job, PodRequest("master", "PodPending"));
  CHECK(master.action == Action::kSyncJob);
  CHECK_FALSE(master.delay.has_value());
}

TEST_CASE("internal events, commands and stale requests resolve without policies") {
  api::Job job = PolicyJob();
  CHECK(ResolveAction(job, PodRequest("worker", "OutOfSync")).action == Action::kSyncJob);
  CHECK(ResolveAction(job, PodRequest("worker", "PodRunning")).action == Action::kSyncJob);
  Request cmd;
  cmd.action = "AbortJob";
  CHECK(ResolveAction(job, cmd).action == Action::kAbortJob);
  cmd.action = "Bogus";
  CHECK(ResolveAction(job, cmd).action == Action::kSyncJob);
  Request old_version = PodRequest("worker", "PodFailed", 1);
  Resolution stale = ResolveAction(job, old_version);
  CHECK(stale.stale);
  CHECK(stale.action == Action::kSyncJob);
  Request other_job = PodRequest("worker", "PodFailed");
  other_job.job_uid = "an-earlier-job";
  CHECK(ResolveAction(job, other_job).stale);
}

TEST_CASE("pod updates become Volcano's events") {
  auto running = MakePod("w", 0, "Running");
  auto failed = std::make_shared<api::Pod>(*running);
  failed->status.phase = "Failed";
  api::ContainerStatus cs;
  cs.state.kind = api::ContainerState::Kind::kTerminated;
  cs.state.exit_code = 3;
  failed->status.container_statuses.push_back(cs);
  Request r = RequestForPodUpdate(*running, *failed);
  CHECK(r.event == "PodFailed");
  CHECK(r.exit_code == 3);
  CHECK(r.task == "w");
  CHECK(r.job_uid == "u1");
  CHECK(r.job_version == 0);

  auto pending = MakePod("w", 0, "Pending");
  CHECK(RequestForPodUpdate(*pending, *running).event == "PodRunning");
  CHECK(RequestForPodUpdate(*running, *pending).event == "PodPending");
  auto succeeded = std::make_shared<api::Pod>(*running);
  succeeded->status.phase = "Succeeded";
  CHECK(RequestForPodUpdate(*running, *succeeded).event == "TaskCompleted");
  CHECK(RequestForPodUpdate(*running, *running).event == "OutOfSync");
  auto restarted = std::make_shared<api::Pod>(*running);
  api::ContainerStatus again;
  again.restart_count = 1;
  restarted->status.container_statuses.push_back(again);
  CHECK(RequestForPodUpdate(*running, *restarted).event == "TaskFailed");

  CHECK(RequestForPodDelete(*running).event == "PodEvicted");
  CHECK(RequestForPodAdd(*running).event == "PodPending");
  // Failed before the controller saw it (found by tests/e2e/chaos): the policy is still owed.
  Request late = RequestForPodAdd(*failed);
  CHECK(late.event == "PodFailed");
  CHECK(late.exit_code == 3);
  auto marked = std::make_shared<api::Pod>(*running);
  marked->metadata.annotations[std::string(api::kControllerOutOfSyncAnnotation)] = "true";
  CHECK(RequestForPodDelete(*marked).event == "OutOfSync");
  CHECK(RequestForPodAdd(*marked).event == "OutOfSync");
  CHECK(RequestForPodUpdate(*running, *marked).event == "OutOfSync");
}

TEST_CASE("TaskCompleted needs the whole task, TaskFailed the task's restart budget") {
  api::Job job = MakeJob(JobJson("[" + Task("w", 2, R"("maxRetry":2)") + "]"));
  Request done = PodRequest("w", "TaskCompleted");
  Pods half = {MakePod("w", 0, "Succeeded"), MakePod("w", 1, "Running")};
  CHECK(ConfirmTaskEvent(job, half, done).event == "OutOfSync");
  Pods all = {MakePod("w", 0, "Succeeded"), MakePod("w", 1, "Succeeded")};
  CHECK(ConfirmTaskEvent(job, all, done).event == "TaskCompleted");

  auto restarts = [](int n) {
    auto p = std::make_shared<api::Pod>(*MakePod("w", 0, "Running"));
    api::ContainerStatus cs;
    cs.restart_count = n;
    p->status.container_statuses.push_back(cs);
    return p;
  };
  Request failing = PodRequest("w", "TaskFailed");
  CHECK(ConfirmTaskEvent(job, {restarts(1)}, failing).event == "OutOfSync");
  CHECK(ConfirmTaskEvent(job, {restarts(1), restarts(1)}, failing).event == "TaskFailed");
}

TEST_CASE("delayed actions fire on the clock and are cancelled by the rules") {
  base::FakeClock clock;
  DelayedActions delayed(clock);
  Request pending = PodRequest("worker", "PodPending");
  REQUIRE(delayed.Add("ns/j", pending, Action::kRestartPod, std::chrono::seconds(30), "why"));
  CHECK_FALSE(delayed.Add("ns/j", pending, Action::kRestartPod, std::chrono::seconds(30), "why"));
  CHECK(delayed.NextDue("ns/j") == std::chrono::seconds(30));
  clock.Advance(std::chrono::seconds(29));
  CHECK(delayed.TakeDue("ns/j").empty());
  clock.Advance(std::chrono::seconds(2));
  auto due = delayed.TakeDue("ns/j");
  REQUIRE(due.size() == 1);
  CHECK(due[0].action == Action::kRestartPod);
  CHECK(delayed.Size("ns/j") == 0);

  SECTION("a later event of the pod cancels its PodPending delay") {
    delayed.Add("ns/j", pending, Action::kRestartPod, std::chrono::seconds(30), "why");
    delayed.OnRequest("ns/j", PodRequest("worker", "PodPending"));
    CHECK(delayed.Size("ns/j") == 1);
    // An update that leaves it pending (the scheduler's PodScheduled condition) does not.
    delayed.OnRequest("ns/j", PodRequest("worker", "OutOfSync"));
    CHECK(delayed.Size("ns/j") == 1);
    delayed.OnRequest("ns/j", PodRequest("worker", "PodRunning"));
    CHECK(delayed.Size("ns/j") == 0);
  }
  SECTION("PodRunning cancels PodFailed and PodEvicted delays of that pod only") {
    delayed.Add("ns/j", PodRequest("worker", "PodFailed"), Action::kRestartTask,
                std::chrono::seconds(5), "why");
    delayed.Add("ns/j", PodRequest("master", "PodEvicted"), Action::kRestartJob,
                std::chrono::seconds(5), "why");
    delayed.OnRequest("ns/j", PodRequest("worker", "OutOfSync"));
    CHECK(delayed.Size("ns/j") == 2);
    delayed.OnRequest("ns/j", PodRequest("worker", "PodRunning"));
    CHECK(delayed.Size("ns/j") == 1);
  }
  SECTION("an executed action cancels the delays of its scope") {
    Request other_pod = PodRequest("worker", "PodPending");
    other_pod.pod_uid = "another";
    delayed.Add("ns/j", pending, Action::kRestartPod, std::chrono::seconds(30), "why");
    delayed.Add("ns/j", other_pod, Action::kRestartPod, std::chrono::seconds(30), "why");
    delayed.Add("ns/j", PodRequest("master", "PodPending"), Action::kRestartPod,
                std::chrono::seconds(30), "why");
    delayed.OnActionExecuted("ns/j", Action::kSyncJob, pending);
    CHECK(delayed.Size("ns/j") == 3);
    delayed.OnActionExecuted("ns/j", Action::kRestartPod, pending);
    CHECK(delayed.Size("ns/j") == 2);
    delayed.OnActionExecuted("ns/j", Action::kRestartTask, other_pod);
    CHECK(delayed.Size("ns/j") == 1);
    delayed.OnActionExecuted("ns/j", Action::kAbortJob, pending);
    CHECK(delayed.Size("ns/j") == 0);
  }
}

TEST_CASE("restart back-off: doubles per restart so far, capped, none without retries left") {
  api::Job job = MakeJob(JobJson("[" + Task("w", 1) + "]", R"("maxRetry":5)"));
  using std::chrono::seconds;
  CHECK_FALSE(RestartBackoff(job, Action::kRestartJob));  // no annotation: at once, as Volcano
  job.metadata.annotations["tephra.dev/restart-backoff"] = "10s";
  job.metadata.annotations["tephra.dev/restart-backoff-max"] = "35s";
  CHECK(RestartBackoff(job, Action::kRestartJob) == seconds(10));
  job.status.retry_count = 1;
  CHECK(RestartBackoff(job, Action::kRestartPod) == seconds(20));
  job.status.retry_count = 2;
  CHECK(RestartBackoff(job, Action::kRestartTask) == seconds(35));  // 40 s, capped
  CHECK_FALSE(RestartBackoff(job, Action::kAbortJob));              // only restarts wait
  job.status.retry_count = 5;
  CHECK_FALSE(RestartBackoff(job, Action::kRestartJob));  // retries used up: fail at once
  job.status.retry_count = 0;
  job.metadata.annotations.erase("tephra.dev/restart-backoff-max");
  job.metadata.annotations["tephra.dev/restart-backoff"] = "4m";
  job.status.retry_count = 3;
  CHECK(RestartBackoff(job, Action::kRestartJob) == std::chrono::minutes(5));  // default cap
}

}  // namespace
}  // namespace tephra::controllers::job
