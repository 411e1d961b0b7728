// tephra-controller-manager against the real control plane (kube-apiserver, kwok nodes): jobs
// run to completion, fail and restart by policy, answer Commands, scale, expire, get their
// plugin objects; queues close; a killed controller converges on restart. The test plays the
// scheduler (tests/integration/controllers/harness.h).
#include <functional>
#include <set>
#include <thread>

#include <catch2/catch.hpp>

#include "api/labels.h"
#include "base/base64.h"
#include "tests/integration/controllers/harness.h"

namespace tephra::testing {
namespace {

constexpr auto kTimeout = std::chrono::seconds(60);

// A task whose pods finish with `result` ("Succeeded", "Failed" or "" to run forever).
std::string TaskYaml(const std::string& name, int replicas, const std::string& result,
                     const std::string& extra = "", const std::string& duration = "1s") {
  std::string y =
      "  - name: " + name + "\n    replicas: " + std::to_string(replicas) + "\n" + extra;
  y += "    template:\n      metadata:\n        annotations:\n";
  if (!result.empty()) {
    y += "          sim.tephra.dev/result: " + result + "\n";
    y += "          sim.tephra.dev/duration: " + duration + "\n";
  } else {
    y += "          sim.tephra.dev/note: runs\n";
  }
  y += "      spec:\n        restartPolicy: Never\n        containers:\n        - name: main\n"
       "          image: busybox\n          resources:\n            requests: {cpu: 100m, memory: "
       "64Mi}\n";
  return y;
}

std::string JobYaml(const std::string& name, const std::string& tasks,
                    const std::string& spec = "") {
  return "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: " + name +
         "\nspec:\n  schedulerName: volcano\n" + spec + "  tasks:\n" + tasks;
}

struct Env {
  // Without arguments the queue controller is off: a namespace-scoped manager may run it only
  // for queues of its own (see the queue test).
  Env(const std::string& prefix,
      std::vector<std::string> manager_args = {"--controllers=*,-queue-controller"})
      : kubectl(ClusterEnv::Get().kubeconfig),
        prereq((InstallControllerPrerequisites(kubectl), 0)),
        ns(kubectl, prefix),
        client(AdminClient()),
        manager(ns.name(), std::move(manager_args)),
        scheduler(ns.name()) {}

  void Apply(const std::string& yaml) {
    kubectl.MustRun({"apply", "-n", ns.name(), "-f", "-"}, yaml);
  }

  std::shared_ptr<api::Job> Job(const std::string& name) {
    return GetJob(*client, ns.name(), name);
  }

  // Waits for the job's phase; the failure message carries the status and the manager's log.
  void WaitPhase(const std::string& name, const std::string& phase,
                 std::chrono::milliseconds timeout = kTimeout) {
    bool ok = Eventually(
        [&] {
          auto job = Job(name);
          return job && job->status.state.phase == phase;
        },
        timeout);
    if (!ok) {
      auto job = Job(name);
      INFO("job phase: " << (job ? job->status.state.phase : "<gone>"));
      INFO(kubectl.Run({"describe", "vcjob", "-n", ns.name(), name}).out);
      INFO(manager.LogTail());
      REQUIRE(ok);
    }
  }

  std::vector<std::shared_ptr<api::Pod>> LivePods() {
    std::vector<std::shared_ptr<api::Pod>> live;
    for (auto& p : ListPods(*client, ns.name())) {
      if (!p->metadata.deletion_timestamp) live.push_back(p);
    }
    return live;
  }

  void Command(const std::string& name, const std::string& action, const std::string& target_kind,
               const std::string& target) {
    std::string api_version =
        target_kind == "Job" ? "batch.volcano.sh/v1alpha1" : "scheduling.volcano.sh/v1beta1";
    std::string uid = kubectl.MustRun({"get", target_kind == "Job" ? "vcjob" : "queue", target,
                                       "-n", ns.name(), "-o", "jsonpath={.metadata.uid}"});
    Apply("apiVersion: bus.volcano.sh/v1alpha1\nkind: Command\nmetadata:\n  name: " + name +
          "\naction: " + action + "\ntarget:\n  apiVersion: " + api_version +
          "\n  kind: " + target_kind + "\n  name: " + target + "\n  uid: " + uid + "\n");
  }

  // "type: message" lines of the events about `name` (any kind) with `reason`.
  std::string Events(const std::string& name, const std::string& reason) {
    return kubectl
        .Run({"get", "events", "-n", ns.name(),
              "--field-selector=involvedObject.name=" + name + ",reason=" + reason, "-o",
              R"(jsonpath={range .items[*]}{.type}: {.message}{"\n"}{end})"})
        .out;
  }

  // Waits until `condition` holds of the job; the failure message shows the job and the log.
  void WaitJob(const std::string& name, const std::function<bool(const api::Job&)>& condition) {
    bool ok = Eventually(
        [&] {
          auto job = Job(name);
          return job && condition(*job);
        },
        kTimeout);
    if (!ok) {
      INFO(kubectl.Run({"get", "vcjob", "-n", ns.name(), name, "-o", "yaml"}).out);
      INFO(manager.LogTail());
      REQUIRE(ok);
    }
  }

  Kubectl kubectl;
  int prereq;
  TestNamespace ns;
  std::shared_ptr<kube::Client> client;
  ControllerManager manager;
  FakeScheduler scheduler;
};

TEST_CASE("a three-task job runs to Completed") {
  Env env("ctl-complete");
  env.Apply(JobYaml("three", TaskYaml("a", 1, "Succeeded") + TaskYaml("b", 2, "Succeeded") +
                                 TaskYaml("c", 1, "Succeeded")));
  env.WaitPhase("three", "Completed");
  auto job = env.Job("three");
  // A finished job keeps no pod counters, as in Volcano (docs/compatibility.md §2.3).
  CHECK(job->status.succeeded == 0);
  CHECK(job->status.running == 0);
  CHECK(job->status.min_available == 4);
  CHECK(job->status.task_status_count.empty());
  std::vector<std::string> phases;
  for (const auto& c : job->status.conditions) phases.push_back(c.status);
  CHECK(phases == std::vector<std::string>{"Pending", "Running", "Completed"});
  // The PodGroup was made for the gang (the pods name it), then removed with the job's completion.
  CHECK(Eventually([&] { return ListPodGroups(*env.client, env.ns.name()).empty(); }, kTimeout));
  // A normal lifecycle writes no Job event, as in Volcano (docs/architecture.md, Events).
  CHECK(
      env.kubectl
          .Run({"get", "events", "-n", env.ns.name(),
                "--field-selector=involvedObject.kind=Job,involvedObject.name=three", "-o", "name"})
          .out.empty());
  std::set<std::string> names;
  for (const auto& p : env.LivePods()) {
    names.insert(p->metadata.name);
    CHECK(p->metadata.Annotation(api::kGroupNameAnnotation) == "three-" + job->metadata.uid);
    CHECK(p->spec.scheduler_name == "volcano");
  }
  CHECK(names == std::set<std::string>{"three-a-0", "three-b-0", "three-b-1", "three-c-0"});
}

TEST_CASE("PodFailed RestartJob restarts the job until maxRetry, then it fails") {
  Env env("ctl-restart");
  env.Apply(JobYaml("flaky", TaskYaml("steady", 1, "") + TaskYaml("crash", 1, "Failed"),
                    "  maxRetry: 2\n  policies:\n  - event: PodFailed\n    action: RestartJob\n"));
  bool restarted = Eventually(
      [&] {
        auto job = env.Job("flaky");
        return job && job->status.retry_count >= 1 && job->status.version >= 1;
      },
      kTimeout);
  INFO(env.manager.LogTail());
  REQUIRE(restarted);
  // Pods of the new generation carry the new version.
  REQUIRE(Eventually(
      [&] {
        for (const auto& p : env.LivePods()) {
          if (p->metadata.Annotation(api::kJobVersionAnnotation) != "0") return true;
        }
        return false;
      },
      kTimeout));
  env.WaitPhase("flaky", "Failed", std::chrono::seconds(90));
  auto job = env.Job("flaky");
  CHECK(job->status.retry_count == 2);
  std::string events = env.kubectl.MustRun({"describe", "vcjob", "-n", env.ns.name(), "flaky"});
  CHECK(events.find("PodFailed -> RestartJob (job policy)") != std::string::npos);
  CHECK(Eventually([&] { return env.Events("flaky", "Failed").find("Warning: job phase ") == 0; },
                   kTimeout));
  // Failed is reported only once the steady pod is gone.
  for (const auto& p : env.LivePods()) CHECK(p->status.phase != "Running");
}

TEST_CASE("a restart back-off waits before each restart, doubling, and says so") {
  Env env("ctl-backoff");
  env.Apply(
      "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: flaky\n"
      "  annotations: {tephra.dev/restart-backoff: 2s}\nspec:\n  schedulerName: volcano\n"
      "  maxRetry: 2\n  policies:\n  - event: PodFailed\n    action: RestartJob\n"
      "  tasks:\n" +
      TaskYaml("crash", 1, "Failed"));
  using Clock = std::chrono::steady_clock;
  // The first failure is seen, then the restart no sooner than the back-off allows.
  auto failed = [&] {
    for (const auto& p : env.LivePods()) {
      if (p->status.phase == "Failed") return true;
    }
    return false;
  };
  REQUIRE(Eventually(failed, kTimeout, std::chrono::milliseconds(50)));
  const Clock::time_point seen_failed = Clock::now();
  REQUIRE(Eventually(
      [&] {
        auto job = env.Job("flaky");
        return job && job->status.retry_count >= 1;
      },
      kTimeout, std::chrono::milliseconds(50)));
  // 2 s of back-off, less what polling may have lost on the first observation.
  CHECK(Clock::now() - seen_failed >= std::chrono::milliseconds(1500));
  env.WaitPhase("flaky", "Failed", std::chrono::seconds(90));
  CHECK(env.Job("flaky")->status.retry_count == 2);
  std::string events = env.kubectl.MustRun({"get", "events", "-n", env.ns.name(),
                                            "--field-selector=reason=ActionDelayed", "-o",
                                            R"(jsonpath={range .items[*]}{.message}{"\n"}{end})"});
  INFO(events);
  CHECK(events.find("restart 1/2, PodFailed -> RestartJob (job policy) in 2s") !=
        std::string::npos);
  CHECK(events.find("restart 2/2, PodFailed -> RestartJob (job policy) in 4s") !=
        std::string::npos);
}

TEST_CASE("TaskCompleted CompleteJob ends the job when the master finishes") {
  Env env("ctl-taskdone");
  env.Apply(JobYaml(
      "mw",
      TaskYaml("master", 1, "Succeeded",
               "    policies:\n    - event: TaskCompleted\n      action: CompleteJob\n", "2s") +
          TaskYaml("worker", 2, "")));
  env.WaitPhase("mw", "Completed");
  // The workers were stopped on the way.
  CHECK(Eventually([&] { return env.LivePods().size() == 1; }, kTimeout));
  CHECK(env.LivePods().front()->metadata.name == "mw-master-0");
}

TEST_CASE("AbortJob then ResumeJob through Commands") {
  Env env("ctl-abort");
  env.Apply(JobYaml("svc", TaskYaml("web", 2, "")));
  env.WaitPhase("svc", "Running");
  env.Command("stop-it", "AbortJob", "Job", "svc");
  env.WaitPhase("svc", "Aborted");
  CHECK(env.LivePods().empty());
  // The Command was consumed.
  CHECK(Eventually(
      [&] {
        return !env.kubectl.Run({"get", "command", "-n", env.ns.name(), "stop-it"}).ok();
      },
      kTimeout));
  env.Command("go-on", "ResumeJob", "Job", "svc");
  env.WaitPhase("svc", "Running");
  auto job = env.Job("svc");
  CHECK(job->status.retry_count == 1);
  CHECK(env.LivePods().size() == 2);
}

TEST_CASE("a scaled-up task gets new pods") {
  Env env("ctl-scale");
  env.Apply(JobYaml("grow", TaskYaml("w", 2, ""), "  minAvailable: 2\n"));
  env.WaitPhase("grow", "Running");
  env.kubectl.MustRun({"patch", "vcjob", "grow", "-n", env.ns.name(), "--type=json", "-p",
                       R"([{"op":"replace","path":"/spec/tasks/0/replicas","value":4}])"});
  REQUIRE(Eventually(
      [&] {
        auto job = env.Job("grow");
        return job && job->status.running == 4;
      },
      kTimeout));
  std::set<std::string> names;
  for (const auto& p : env.LivePods()) names.insert(p->metadata.name);
  CHECK(names == std::set<std::string>{"grow-w-0", "grow-w-1", "grow-w-2", "grow-w-3"});
  env.kubectl.MustRun({"patch", "vcjob", "grow", "-n", env.ns.name(), "--type=json", "-p",
                       R"([{"op":"replace","path":"/spec/tasks/0/replicas","value":1}])"});
  CHECK(Eventually([&] { return env.LivePods().size() == 1; }, kTimeout));
}

TEST_CASE("TTL deletes a finished job") {
  Env env("ctl-ttl");
  env.Apply(JobYaml("brief", TaskYaml("t", 1, "Succeeded"), "  ttlSecondsAfterFinished: 2\n"));
  env.WaitPhase("brief", "Completed");
  CHECK(Eventually([&] { return env.Job("brief") == nullptr; }, kTimeout));
}

TEST_CASE("svc and ssh plugins create their objects with the right contents") {
  Env env("ctl-plugins");
  env.Apply(JobYaml("net", TaskYaml("master", 1, "") + TaskYaml("worker", 2, ""),
                    "  plugins:\n    svc: []\n    ssh: []\n    env: []\n"));
  env.WaitPhase("net", "Running");
  const std::string ns = env.ns.name();
  CHECK(env.kubectl.MustRun({"get", "svc", "net", "-n", ns, "-o", "jsonpath={.spec.clusterIP}"}) ==
        "None");
  CHECK(env.kubectl.MustRun({"get", "svc", "net", "-n", ns, "-o", "jsonpath={.spec.ports}"}) == "");
  CHECK(env.kubectl.MustRun({"get", "networkpolicy", "net", "-n", ns, "-o",
                             "jsonpath={.spec.podSelector.matchLabels.volcano\\.sh/job-name}"}) ==
        "net");
  CHECK(env.kubectl.MustRun(
            {"get", "cm", "net-svc", "-n", ns, "-o", "jsonpath={.data.VC_WORKER_HOSTS}"}) ==
        "net-worker-0.net,net-worker-1.net");
  CHECK(env.kubectl.MustRun(
            {"get", "cm", "net-svc", "-n", ns, "-o", "jsonpath={.data.VC_MASTER_NUM}"}) == "1");
  CHECK(env.kubectl.MustRun(
            {"get", "cm", "net-svc", "-n", ns, "-o", "jsonpath={.data.worker\\.host}"}) ==
        "net-worker-0.net\nnet-worker-1.net");  // no newline after the last, as Volcano
  auto secret = [&](const std::string& key) {
    std::string b64 = env.kubectl.MustRun(
        {"get", "secret", "net-ssh", "-n", ns, "-o", "jsonpath={.data." + key + "}"});
    return base::Base64Decode(b64).value_or("<bad base64>");
  };
  CHECK(secret("id_rsa").rfind("-----BEGIN RSA PRIVATE KEY-----", 0) == 0);
  CHECK(secret("id_rsa\\.pub").rfind("ssh-rsa ", 0) == 0);
  CHECK(secret("authorized_keys") == secret("id_rsa\\.pub"));
  CHECK(secret("config").find("Host net-worker-1\n  HostName net-worker-1.net\n") !=
        std::string::npos);
  auto pod = env.kubectl.MustRun({"get", "pod", "net-worker-1", "-n", ns, "-o",
                                  "jsonpath={.spec.hostname}/{.spec.subdomain}/"
                                  "{.spec.containers[0].env[?(@.name==\"VC_TASK_INDEX\")].value}"});
  CHECK(pod == "net-worker-1/net/1");
}

TEST_CASE("a queue closes only when its last PodGroup is gone") {
  std::string label = "tephra-test=q-" + RandomSuffix();
  Env env("ctl-queue", {"--queue-label-selector=" + label});
  std::string queue = "ctl-q-" + RandomSuffix();
  std::string key = label.substr(0, label.find('='));
  std::string value = label.substr(label.find('=') + 1);
  env.kubectl.MustRun(
      {"apply", "-f", "-"},
      "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata:\n  name: " + queue +
          "\n  labels:\n    " + key + ": " + value + "\nspec:\n  weight: 1\n");
  struct Cleanup {
    Kubectl& k;
    std::string q;
    ~Cleanup() { k.Run({"delete", "queue", q, "--wait=false", "--ignore-not-found"}); }
  } cleanup{env.kubectl, queue};
  auto state = [&] {
    return env.kubectl.Run({"get", "queue", queue, "-o", "jsonpath={.status.state}"}).out;
  };
  REQUIRE(Eventually([&] { return state() == "Open"; }, kTimeout));
  CHECK(env.kubectl.MustRun({"get", "queue", queue, "-o", "jsonpath={.spec.parent}"}) == "root");
  env.Apply(JobYaml("held", TaskYaml("t", 1, ""), "  queue: " + queue + "\n"));
  env.WaitPhase("held", "Running");
  env.Command("close-q", "CloseQueue", "Queue", queue);
  REQUIRE(Eventually([&] { return state() == "Closing"; }, kTimeout));
  std::this_thread::sleep_for(std::chrono::seconds(2));
  CHECK(state() == "Closing");  // the job's PodGroup is still there
  env.kubectl.MustRun({"delete", "vcjob", "held", "-n", env.ns.name()});
  REQUIRE(Eventually([&] { return state() == "Closed"; }, kTimeout));
  // The state is the controller manager's field.
  std::string managers = env.kubectl.MustRun({"get", "queue", queue, "--show-managed-fields", "-o",
                                              "jsonpath={.metadata.managedFields[*].manager}"});
  CHECK(managers.find("tephra-controller-manager") != std::string::npos);
}

TEST_CASE("a controller killed mid-way converges after restart without duplicate pods") {
  Env env("ctl-crash");
  env.scheduler.Pause(true);
  env.Apply(JobYaml("big", TaskYaml("w", 30, ""), "  minAvailable: 30\n"));
  REQUIRE(
      Eventually([&] { return ListPodGroups(*env.client, env.ns.name()).size() == 1; }, kTimeout));
  env.scheduler.Pause(false);
  // Kill it as soon as pod creation has started.
  REQUIRE(
      Eventually([&] { return !env.LivePods().empty(); }, kTimeout, std::chrono::milliseconds(20)));
  env.manager.Kill();
  size_t before = env.LivePods().size();
  INFO("pods when killed: " << before);
  env.manager.Restart();
  env.WaitPhase("big", "Running");
  REQUIRE(Eventually([&] { return env.LivePods().size() == 30; }, kTimeout));
  std::this_thread::sleep_for(std::chrono::seconds(2));
  auto pods = env.LivePods();
  CHECK(pods.size() == 30);
  std::set<std::string> indexes;
  for (const auto& p : pods) indexes.insert(p->metadata.Label(api::kTaskIndexKey));
  CHECK(indexes.size() == 30);
  CHECK(env.Job("big")->status.running == 30);
}

// Objects created while the webhook was not registered (these tests run without it): the
// controller gives each a verdict (docs/controllers.md).
TEST_CASE(
    "jobs that bypassed admission fail naming the field and rule, and a valid job beside them "
    "runs") {
  Env env("ctl-invalid");
  env.Apply(JobYaml("cycle", TaskYaml("a", 1, "", "    dependsOn: {name: [b]}\n") +
                                 TaskYaml("b", 1, "", "    dependsOn: {name: [a]}\n")));
  env.Apply(JobYaml("twins", TaskYaml("w", 1, "") + TaskYaml("w", 1, "")));
  env.Apply(JobYaml("fine", TaskYaml("t", 2, "")));
  env.WaitPhase("cycle", "Failed");
  env.WaitPhase("twins", "Failed");
  env.WaitPhase("fine", "Running");

  auto cycle = env.Job("cycle");
  CHECK(cycle->status.state.reason == "InvalidJob");
  CHECK(cycle->status.state.message.find("spec.tasks") != std::string::npos);
  CHECK(cycle->status.state.message.find("cycle") != std::string::npos);
  auto twins = env.Job("twins");
  CHECK(twins->status.state.reason == "InvalidJob");
  CHECK(twins->status.state.message.find("spec.tasks[1].name: duplicate task name \"w\"") !=
        std::string::npos);
  std::vector<std::string> phases;
  for (const auto& c : twins->status.conditions) phases.push_back(c.status);
  CHECK(phases == std::vector<std::string>{"Failed"});
  // A Warning event on each names the field and the rule.
  CHECK(Eventually(
      [&] {
        return env.Events("twins", "InvalidJob")
                   .find(
                       "Warning: spec.tasks[1].name: "
                       "duplicate task name") == 0;
      },
      kTimeout));
  CHECK(Eventually(
      [&] { return env.Events("cycle", "InvalidJob").find("Warning: spec.tasks: ") == 0; },
      kTimeout));

  // Nothing was ever created for them, and nothing is a while later.
  std::this_thread::sleep_for(std::chrono::seconds(2));
  for (const auto& pg : ListPodGroups(*env.client, env.ns.name())) {
    CHECK(pg->metadata.name.rfind("fine-", 0) == 0);
  }
  std::set<std::string> pods;
  for (const auto& p : env.LivePods()) pods.insert(p->metadata.name);
  CHECK(pods == std::set<std::string>{"fine-t-0", "fine-t-1"});
  CHECK(env.Job("cycle")->status.state.phase == "Failed");
}

TEST_CASE("a job whose queue does not exist waits, says so, and starts once the queue is created") {
  Env env("ctl-noqueue");
  const std::string queue = "ctl-late-" + RandomSuffix();
  struct Cleanup {
    Kubectl& k;
    std::string q;
    ~Cleanup() { k.Run({"delete", "queue", q, "--wait=false", "--ignore-not-found"}); }
  } cleanup{env.kubectl, queue};
  env.Apply(JobYaml("patient", TaskYaml("t", 1, ""), "  queue: " + queue + "\n"));
  env.WaitJob("patient",
              [](const api::Job& job) { return job.status.state.reason == "QueueNotFound"; });
  auto job = env.Job("patient");
  CHECK(job->status.state.phase == "Pending");
  CHECK(job->status.state.message.find("spec.queue: queue \"" + queue + "\" does not exist") == 0);
  CHECK(Eventually(
      [&] { return env.Events("patient", "QueueNotFound").find("Warning: spec.queue: ") == 0; },
      kTimeout));
  CHECK(ListPodGroups(*env.client, env.ns.name()).empty());

  env.kubectl.MustRun(
      {"apply", "-f", "-"},
      "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata:\n  name: " + queue +
          "\nspec:\n  weight: 1\n");
  env.WaitPhase("patient", "Running");
  job = env.Job("patient");
  CHECK(job->status.state.reason.empty());
  CHECK(ListPodGroups(*env.client, env.ns.name()).size() == 1);
  CHECK(env.LivePods().size() == 1);
}

TEST_CASE("Commands for a missing Job or Queue are deleted with an event naming the target") {
  std::string label = "tephra-test=q-" + RandomSuffix();
  Env env("ctl-orphan", {"--queue-label-selector=" + label});
  const std::string ghost_queue = "ctl-ghost-" + RandomSuffix();
  auto command = [&](const std::string& name, const std::string& action,
                     const std::string& api_version, const std::string& kind,
                     const std::string& target, const std::string& uid) {
    env.Apply("apiVersion: bus.volcano.sh/v1alpha1\nkind: Command\nmetadata:\n  name: " + name +
              "\naction: " + action + "\ntarget:\n  apiVersion: " + api_version +
              "\n  kind: " + kind + "\n  name: " + target + "\n  uid: " + uid + "\n");
  };
  command("abort-ghost", "AbortJob", "batch.volcano.sh/v1alpha1", "Job", "ghost",
          "00000000-0000-0000-0000-000000000001");
  command("close-ghost", "CloseQueue", "scheduling.volcano.sh/v1beta1", "Queue", ghost_queue,
          "00000000-0000-0000-0000-000000000002");
  // A Command naming an existing job by a stale uid is carried out, as Volcano does.
  env.Apply(JobYaml("stale", TaskYaml("t", 1, "")));
  env.WaitPhase("stale", "Running");
  command("abort-stale", "AbortJob", "batch.volcano.sh/v1alpha1", "Job", "stale",
          "00000000-0000-0000-0000-000000000003");
  env.WaitPhase("stale", "Aborted");

  auto commands_left = [&] {
    return env.kubectl.MustRun({"get", "command", "-n", env.ns.name(), "-o", "name"});
  };
  bool gone = Eventually([&] { return commands_left().empty(); }, kTimeout);
  INFO(commands_left());
  INFO(env.manager.LogTail());
  REQUIRE(gone);
  CHECK(Eventually([&] { return !env.Events("abort-ghost", "TargetNotFound").empty(); }, kTimeout));
  CHECK(env.Events("abort-ghost", "TargetNotFound") ==
        "Warning: target Job " + env.ns.name() +
            "/ghost does not exist; command AbortJob deleted "
            "without effect\n");
  CHECK(Eventually([&] { return !env.Events("close-ghost", "TargetNotFound").empty(); }, kTimeout));
  CHECK(env.Events("close-ghost", "TargetNotFound") ==
        "Warning: target Queue " + ghost_queue +
            " does not exist; command CloseQueue deleted without effect\n");
  CHECK(env.Events("abort-stale", "TargetNotFound").empty());
}

TEST_CASE("plain pods of a ReplicaSet join one PodGroup sized by the owner's annotation") {
  Env env("ctl-plain");
  env.Apply(R"(apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: web
  annotations:
    scheduling.volcano.sh/group-min-member: "2"
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
      annotations: {scheduling.volcano.sh/queue-name: default}
    spec:
      schedulerName: volcano
      containers:
      - name: c
        image: busybox
        resources:
          requests: {cpu: 100m}
)");
  std::string rs_uid = env.kubectl.MustRun(
      {"get", "rs", "web", "-n", env.ns.name(), "-o", "jsonpath={.metadata.uid}"});
  REQUIRE(Eventually(
      [&] {
        auto pods = env.LivePods();
        if (pods.size() != 2) return false;
        for (const auto& p : pods) {
          if (p->metadata.Annotation(api::kGroupNameAnnotation) != "podgroup-" + rs_uid)
            return false;
        }
        return true;
      },
      kTimeout));
  auto pgs = ListPodGroups(*env.client, env.ns.name());
  REQUIRE(pgs.size() == 1);
  CHECK(pgs[0]->metadata.name == "podgroup-" + rs_uid);
  CHECK(pgs[0]->spec.min_member == 2);
  CHECK(pgs[0]->spec.queue == "default");
  REQUIRE(pgs[0]->spec.min_resources.has_value());
  CHECK(api::Resources::FromList(*pgs[0]->spec.min_resources).milli_cpu() == 200);
  // Volcano's quota-style keys too.
  CHECK(pgs[0]->spec.min_resources->Find("requests.cpu")->MilliValue() == 200);
  CHECK(pgs[0]->spec.min_resources->Find("count/pods")->Value() == 2);

  // Scaled to zero, as a Deployment leaves its replaced ReplicaSet, it loses its PodGroup.
  env.kubectl.MustRun({"scale", "rs", "web", "-n", env.ns.name(), "--replicas=0"});
  CHECK(Eventually([&] { return ListPodGroups(*env.client, env.ns.name()).empty(); }, kTimeout));
}

}  // namespace
}  // namespace tephra::testing
