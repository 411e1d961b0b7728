// tephractl against the real control plane, with tephra-scheduler (admin API on) and
// tephra-controller-manager running as processes: explanations name the real cause, suspend and
// resume go through Commands, a closed queue refuses jobs, and a dumped snapshot replays to the
// decisions the live scheduler made.
//
// Each test runs its own scheduler (own scheduler name, node pool and admin port) and its own
// namespace-scoped controller manager (queues labelled with the test's pool), so tests never
// share a pod, node or queue. They run one at a time all the same (SERIAL in CMakeLists.txt).
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <catch2/catch.hpp>
#include <rapidjson/document.h>

#include "json/json.h"
#include "tests/integration/controllers/harness.h"
#include "tests/integration/scheduler_fixture.h"
#include "tests/support/cluster.h"

namespace tephra::testing {
namespace {

constexpr auto kTimeout = std::chrono::seconds(90);

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A string member of a JSON document: Field(json, {"status", "state", "phase"}).
std::string Field(const std::string& text, const std::vector<std::string>& path) {
  json::Document doc;
  if (!json::Parse(text, &doc).ok()) return "";
  json::Errors errors;
  json::Reader r(&doc, &errors);
  for (const auto& p : path) r = r[p];
  return r.String();
}

// A SchedulerFixture (own scheduler name, node pool, admin port) plus a controller manager for
// the test's namespace and its queues.
class CliEnv {
 public:
  explicit CliEnv(const std::string& prefix)
      : admin_("127.0.0.1:" + std::to_string(FreeLoopbackPort())) {
    InstallControllerPrerequisites(kubectl());
    ns_ = std::make_unique<TestNamespace>(kubectl(), prefix);
  }

  ~CliEnv() {
    manager_.reset();
    for (const auto& q : queues_) kubectl().Run({"delete", "queue", q, "--wait=false"});
  }

  const std::string& ns() const { return ns_->name(); }
  const std::string& scheduler_name() const { return sched_.name(); }
  const std::string& admin() const { return admin_; }
  const std::string& dir() const { return sched_.dir(); }
  const Kubectl& kubectl() const { return sched_.kubectl(); }

  // `count` nodes with `cpu` each, tainted with `taint` ("gpu=true:NoSchedule") when given.
  void AddNodes(int count, const std::string& cpu, const std::string& taint = "") {
    size_t before = sched_.nodes().size();
    sched_.AddNodes(count, cpu, "32Gi");
    if (taint.empty()) return;
    for (size_t i = before; i < sched_.nodes().size(); ++i) {
      kubectl().MustRun({"taint", "nodes", sched_.nodes()[i], taint});
    }
  }

  // The scheduler (admin API on) and a controller manager for this namespace and its queues.
  void Start() {
    sched_.Start("", {"--admin-address=" + admin_});
    manager_ = std::make_unique<ControllerManager>(
        ns(),
        std::vector<std::string>{"--scheduler-name=" + scheduler_name(),
                                 "--queue-label-selector=tephra.dev/test-pool=" + sched_.id()});
    REQUIRE(Eventually(
        [&] { return Ctl({"version"}).out.find("tephra-scheduler: 0.") != std::string::npos; },
        std::chrono::seconds(60)));
  }

  std::string SchedulerLog() const { return sched_.Log(); }

  // tephractl as the cluster admin, in this test's namespace, talking to this test's scheduler.
  CommandResult Ctl(std::vector<std::string> args, const std::string& admin = "") const {
    std::vector<std::string> argv{TEPHRACTL_PATH, "--kubeconfig=" + ClusterEnv::Get().kubeconfig,
                                  "--admin-address=" + (admin.empty() ? admin_ : admin), "-n",
                                  ns()};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunCommand(argv);
  }
  std::string MustCtl(const std::vector<std::string>& args) const {
    CommandResult r = Ctl(args);
    INFO("tephractl " << args[0] << " " << (args.size() > 1 ? args[1] : "") << ": " << r.err);
    REQUIRE(r.ok());
    return r.out;
  }

  // A queue of this test (labelled for its controller manager), Open once the controller says so.
  std::string Queue(const std::string& name, const std::vector<std::string>& extra = {}) {
    std::string full = sched_.queue_name(name);
    std::vector<std::string> args{"queue",
                                  "create",
                                  full,
                                  "-l",
                                  "tephra.dev/test-pool=" + sched_.id(),
                                  "--wait",
                                  "--command-namespace",
                                  ns()};
    args.insert(args.end(), extra.begin(), extra.end());
    queues_.push_back(full);
    MustCtl(args);
    REQUIRE(Eventually(
        [&] {
          return Field(MustCtl({"queue", "get", full, "-o", "json"}), {"status", "state"}) ==
                 "Open";
        },
        std::chrono::seconds(30)));
    return full;
  }

  // Runs `tephractl job run NAME` for this test's scheduler.
  void RunJob(const std::string& name, const std::string& queue,
              const std::vector<std::string>& extra) {
    std::vector<std::string> args{"job", "run", name, "-q", queue, "-S", scheduler_name()};
    args.insert(args.end(), extra.begin(), extra.end());
    MustCtl(args);
  }

  std::string JobPhase(const std::string& name) const {
    CommandResult r = Ctl({"job", "get", name, "-o", "json"});
    return r.ok() ? Field(r.out, {"status", "state", "phase"}) : "";
  }

  void WaitJobPhase(const std::string& name, const std::string& phase) {
    bool ok = Eventually([&] { return JobPhase(name) == phase; }, kTimeout,
                         std::chrono::milliseconds(500));
    if (!ok) {
      INFO("job " << name << " is " << JobPhase(name));
      INFO(Ctl({"job", "explain", name}).out);
      INFO(manager_->LogTail());
      REQUIRE(ok);
    }
  }

  // Waits until `job explain NAME` (text) contains `needle`; returns the last output.
  std::string WaitExplain(const std::string& name, const std::string& needle) {
    std::string last;
    bool ok = Eventually(
        [&] {
          CommandResult r = Ctl({"job", "explain", name});
          last = r.out + r.err;
          return r.ok() && r.out.find(needle) != std::string::npos;
        },
        kTimeout, std::chrono::milliseconds(500));
    INFO(last);
    if (!ok) INFO(SchedulerLog());
    REQUIRE(ok);
    return last;
  }

 private:
  SchedulerFixture sched_;  // first: the namespace and manager go before its nodes and scheduler
  std::string admin_;
  std::unique_ptr<TestNamespace> ns_;
  std::vector<std::string> queues_;
  std::unique_ptr<ControllerManager> manager_;
};

TEST_CASE("job explain names Insufficient cpu for a gang no node can hold") {
  CliEnv env("cli-cpu");
  env.AddNodes(3, "2");
  env.Start();
  std::string q = env.Queue("work");
  // 6 CPUs in all, so the job is admitted; but no node has the 3 CPUs one task needs.
  env.RunJob("hungry", q, {"-r", "2", "-m", "2", "-R", "cpu=3,memory=1Gi"});
  std::string out = env.WaitExplain("hungry", "Insufficient cpu");
  CHECK(
      out.find("Summary:      0/2 tasks fit; 2 need 3 CPU, 1Gi memory: 3 nodes Insufficient cpu") !=
      std::string::npos);
  CHECK(out.find("the most free on any node is 2 cpu") != std::string::npos);
  CHECK(out.find("taint") == std::string::npos);
  // The same, as data.
  std::string json = env.MustCtl({"job", "explain", "hungry", "-o", "json"});
  CHECK(Field(json, {"summary"}).find("3 nodes Insufficient cpu") != std::string::npos);
  CHECK(Field(json, {"job"}) == "hungry");
  CHECK(env.MustCtl({"job", "explain", "hungry", "-o", "yaml"}).find("summary: ") !=
        std::string::npos);
}

TEST_CASE("job explain names an untolerated taint") {
  CliEnv env("cli-taint");
  env.AddNodes(2, "4", "gpu=true:NoSchedule");
  env.Start();
  std::string q = env.Queue("work");
  env.RunJob("plain", q, {"-R", "cpu=1"});
  std::string out = env.WaitExplain("plain", "untolerated taint");
  CHECK(out.find("1 needs 1 CPU: 2 nodes had untolerated taint gpu=true:NoSchedule") !=
        std::string::npos);
  CHECK(out.find("add a toleration for taint gpu=true:NoSchedule (2 nodes)") != std::string::npos);
  CHECK(out.find("Insufficient") == std::string::npos);
}

TEST_CASE(
    "job explain names the queue capability, and falls back to the API server without the "
    "scheduler") {
  CliEnv env("cli-cap");
  env.AddNodes(2, "4");
  env.Start();
  std::string q = env.Queue("capped", {"--capability", "cpu=1"});
  env.RunJob("wide", q, {"-r", "2", "-m", "2", "-R", "cpu=1"});
  std::string out = env.WaitExplain("wide", "not admitted");
  CHECK(out.find("capability cpu 1") != std::string::npos);
  CHECK(out.find("raise queue " + q + "'s capability") != std::string::npos);
  CHECK(env.JobPhase("wide") == "Pending");

  // Nothing listens on port 1: the PodGroup's condition and events still tell the story.
  CommandResult fallback = env.Ctl({"job", "explain", "wide"}, "127.0.0.1:1");
  INFO(fallback.out << fallback.err);
  REQUIRE(fallback.ok());
  CHECK(fallback.err.find("unreachable") != std::string::npos);
  CHECK(fallback.out.find("Conditions:") != std::string::npos);
  CHECK(fallback.out.find("Unschedulable=True (NotEnoughResources)") != std::string::npos);
  CHECK(fallback.out.find("not admitted") != std::string::npos);
  CHECK(fallback.out.find("Events:") != std::string::npos);
  CommandResult fallback_json = env.Ctl({"job", "explain", "wide", "-o", "json"}, "127.0.0.1:1");
  REQUIRE(fallback_json.ok());
  CHECK(Field(fallback_json.out, {"source"}) == "api-server");
}

// Operators delete and re-create PodGroups under the same name: what is shown must be about
// the PodGroup that exists now, and kubectl describe (which matches by uid) shows it too.
TEST_CASE("PodGroup events carry the uid: describe shows them, explain skips a namesake's") {
  CliEnv env("cli-uid");
  env.AddNodes(1, "4");
  env.Start();
  std::string q = env.Queue("capped", {"--capability", "cpu=1"});
  auto pod_group = [&](const std::string& cpu) {
    return "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: op-group, "
           "namespace: " +
           env.ns() + "}\nspec: {minMember: 1, queue: " + q + ", minResources: {cpu: \"" + cpu +
           "\"}}\n";
  };
  env.kubectl().MustRun({"create", "-f", "-"}, pod_group("4"));
  std::string described;
  bool shown = Eventually(
      [&] {
        described = env.kubectl().Run({"describe", "podgroup", "op-group", "-n", env.ns()}).out;
        // The condition says it too: look in the Events section only.
        size_t events = described.find("\nEvents:");
        return events != std::string::npos &&
               described.find("not admitted", events) != std::string::npos;
      },
      kTimeout, std::chrono::milliseconds(500));
  INFO(described);
  REQUIRE(shown);

  env.kubectl().MustRun({"delete", "podgroup", "op-group", "-n", env.ns(), "--wait=true"});
  env.kubectl().MustRun({"create", "-f", "-"}, pod_group("1"));
  REQUIRE(Eventually(
      [&] {
        return env.kubectl()
                   .Run({"get", "podgroup", "op-group", "-n", env.ns(), "-o",
                         "jsonpath={.status.phase}"})
                   .out == "Inqueue";
      },
      kTimeout, std::chrono::milliseconds(500)));
  CommandResult fallback = env.Ctl({"job", "explain", "op-group", "--pod-group"}, "127.0.0.1:1");
  INFO(fallback.out << fallback.err);
  REQUIRE(fallback.ok());
  CHECK(fallback.out.find("not admitted") == std::string::npos);
}

TEST_CASE("suspend then resume a running job: Aborted, then Running again") {
  CliEnv env("cli-suspend");
  env.AddNodes(2, "4");
  env.Start();
  std::string q = env.Queue("work");
  env.RunJob("sleeper", q, {"-r", "2", "-m", "2", "-R", "cpu=1"});
  env.WaitJobPhase("sleeper", "Running");
  std::string pods = env.MustCtl({"pod", "list", "-j", "sleeper"});
  CHECK(pods.find("sleeper-default0-0") != std::string::npos);
  CHECK(pods.find("Running") != std::string::npos);
  std::string explained = env.WaitExplain("sleeper", "is placed");
  CHECK(explained.find("2/2 tasks fit") != std::string::npos);

  std::string suspended = env.MustCtl({"job", "suspend", "sleeper"});
  CHECK(suspended.find("AbortJob requested (command sleeper-abortjob-") != std::string::npos);
  env.WaitJobPhase("sleeper", "Aborted");
  REQUIRE(Eventually(
      [&] {
        return env.Ctl({"pod", "list", "-j", "sleeper"}).out.empty();
      },
      kTimeout));

  std::string resumed = env.MustCtl({"job", "resume", "sleeper"});
  CHECK(resumed.find("ResumeJob requested") != std::string::npos);
  env.WaitJobPhase("sleeper", "Running");

  // The controller consumed both Commands.
  REQUIRE(Eventually(
      [&] {
        return env.kubectl()
            .Run({"-n", env.ns(), "get", "commands.bus.volcano.sh", "-o", "name"})
            .out.empty();
      },
      std::chrono::seconds(30)));
}

TEST_CASE("a closed queue refuses new jobs with a clear message, and takes them again once open") {
  CliEnv env("cli-close");
  env.AddNodes(2, "4");
  env.Start();
  std::string q = env.Queue("shut");
  std::string closed =
      env.MustCtl({"queue", "close", q, "--wait", "--command-namespace", env.ns()});
  CHECK(closed.find("is Closed") != std::string::npos);
  // The row of this queue (columns are as wide as the longest queue name in the cluster).
  std::string list = env.MustCtl({"queue", "list"});
  size_t row = list.find("\n" + q + " ");
  REQUIRE(row != std::string::npos);
  CHECK(list.substr(row + 1, list.find('\n', row + 1) - row - 1).find(" Closed ") !=
        std::string::npos);

  CommandResult refused = env.Ctl({"job", "run", "late", "-q", q, "-S", env.scheduler_name()});
  CHECK(refused.exit_code == 1);
  CHECK(refused.err.find("job " + env.ns() +
                         "/late refused: spec.queue: can only submit job to queue with state "
                         "Open; queue \"" +
                         q + "\" is \"Closed\"") != std::string::npos);

  // A job that got in anyway (no admission webhook here) is held by the scheduler, which says why.
  env.kubectl().MustRun(
      {"-n", env.ns(), "apply", "-f", "-"},
      "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: sneaky\nspec:\n"
      "  schedulerName: " +
          env.scheduler_name() + "\n  queue: " + q +
          "\n  minAvailable: 1\n"
          "  tasks:\n  - replicas: 1\n    template:\n      spec:\n        restartPolicy: Never\n"
          "        containers:\n        - name: main\n          image: busybox\n"
          "          resources: {requests: {cpu: 500m}}\n");
  std::string out = env.WaitExplain("sneaky", "is Closed");
  CHECK(out.find("tephractl queue open " + q) != std::string::npos);

  env.MustCtl({"queue", "open", q, "--wait", "--command-namespace", env.ns()});
  env.WaitJobPhase("sneaky", "Running");
  env.RunJob("late", q, {"-R", "cpu=500m"});
  env.WaitJobPhase("late", "Running");
}

TEST_CASE("a dumped snapshot replays to the decisions the live scheduler made") {
  CliEnv env("cli-replay");
  env.AddNodes(3, "4");
  env.Start();
  std::string q = env.Queue("work");
  env.RunJob("gang", q, {"-r", "3", "-m", "3", "-R", "cpu=2"});
  env.WaitJobPhase("gang", "Running");

  // The last session that decided something is the one that bound the gang (another scheduler
  // running at the same time could make this scheduler re-admit it later: see CMakeLists.txt).
  // Ask again for a while and keep what was seen for the failure message.
  std::string file = env.dir() + "/snapshot.json";
  CommandResult replay;
  std::string seen;
  bool got_binds = Eventually(
      [&] {
        CommandResult dump = env.Ctl({"snapshot", "dump", "-f", file});
        if (!dump.ok()) {
          seen += "dump: " + dump.err;
          return false;
        }
        replay = RunCommand({TEPHRA_SCHEDULER_PATH, "--replay", file});
        seen += replay.out.substr(0, 2000);
        return replay.ok() && replay.out.find("\nbind ") != std::string::npos;
      },
      std::chrono::seconds(20), std::chrono::milliseconds(1000));
  INFO(seen);
  if (!got_binds) INFO(env.SchedulerLog());
  REQUIRE(got_binds);
  REQUIRE(Field(ReadFile(file), {"kind"}) == "SchedulerSnapshot");

  // What the live scheduler decided is what the API server shows: each pod on its node.
  std::map<std::string, std::string> bound;
  std::stringstream lines(env.kubectl().MustRun(
      {"-n", env.ns(), "get", "pods", "-o",
       R"(jsonpath={range .items[*]}{.metadata.name}={.spec.nodeName}{"\n"}{end})"}));
  for (std::string line; std::getline(lines, line);) {
    auto eq = line.find('=');
    if (eq != std::string::npos) bound[env.ns() + "/" + line.substr(0, eq)] = line.substr(eq + 1);
  }
  REQUIRE(bound.size() == 3);

  INFO(replay.out << replay.err);
  CHECK(replay.out.find("# same decisions as the recorded session (3 binds") != std::string::npos);
  for (const auto& [pod, node] : bound)
    CHECK(replay.out.find("bind " + pod + " " + node + "\n") != std::string::npos);

  // "What if": the same snapshot under another configuration still runs, and says how it differs.
  std::ofstream(env.dir() + "/binpack.conf")
      << "actions: \"enqueue, allocate, backfill\"\ntiers:\n- plugins: [{name: priority}, {name: "
         "gang}]\n"
         "- plugins: [{name: predicates}, {name: proportion}, {name: binpack}]\n";
  CommandResult what_if = RunCommand(
      {TEPHRA_SCHEDULER_PATH, "--replay", file, "--scheduler-conf", env.dir() + "/binpack.conf"});
  INFO(what_if.out << what_if.err);
  // Exit 0 when the decisions stay, 1 (as diff) when they differ, and the text says which.
  bool differs = what_if.out.find("# DIFFERENT from the recorded session") != std::string::npos;
  CHECK(what_if.exit_code == (differs ? 1 : 0));
  CHECK(what_if.out.find("# replay of session ") == 0);

  CommandResult broken =
      RunCommand({TEPHRA_SCHEDULER_PATH, "--replay", env.dir() + "/missing.json"});
  CHECK(broken.exit_code == 2);
  CHECK(broken.err.find("--replay: cannot read") != std::string::npos);
}

TEST_CASE("list, get and delete against the API server, and their errors") {
  CliEnv env("cli-list");
  env.AddNodes(1, "4");
  env.Start();
  std::string q = env.Queue("work", {"--weight", "3", "--capability", "cpu=2,memory=4Gi"});
  env.RunJob("one", q, {"-R", "cpu=500m"});
  env.WaitJobPhase("one", "Running");

  std::string table = env.MustCtl({"job", "list"});
  CHECK(table.rfind("NAME   QUEUE", 0) == 0);
  CHECK(table.find("one    " + q + "   Running") != std::string::npos);
  std::string all = env.MustCtl({"job", "list", "-A", "-q", q});
  CHECK(all.rfind("NAMESPACE", 0) == 0);
  CHECK(all.find(env.ns()) != std::string::npos);
  CHECK(Field(env.MustCtl({"job", "list", "-o", "json"}), {"kind"}) == "List");
  CHECK(env.MustCtl({"job", "get", "one", "-o", "yaml"}).find("kind: Job") != std::string::npos);
  std::string queue = env.MustCtl({"queue", "get", q});
  CHECK(queue.find("cpu=2,memory=4Gi") != std::string::npos);
  std::string usage = env.MustCtl({"queue", "usage", q});
  CHECK(usage.find(q + "   Open") != std::string::npos);

  CommandResult missing = env.Ctl({"job", "get", "nope"});
  CHECK(missing.exit_code == 1);
  CHECK(missing.err == "error: job " + env.ns() + "/nope not found\n");
  CommandResult no_queue = env.Ctl(
      {"job", "run", "stray", "-q", "no-such-queue-" + env.ns(), "-S", env.scheduler_name()});
  CHECK(no_queue.err.find("spec.queue: queue \"no-such-queue-" + env.ns() + "\" does not exist") !=
        std::string::npos);
  CommandResult root = env.Ctl({"queue", "delete", "root"});
  CHECK(root.exit_code == 1);
  CHECK(root.err.find("queue root cannot be deleted") != std::string::npos);
  CommandResult explain_missing = env.Ctl({"job", "explain", "nope"});
  CHECK(explain_missing.exit_code == 1);
  CHECK(explain_missing.err.find("no PodGroup of Job " + env.ns() + "/nope") != std::string::npos);

  // As a kubectl plugin: kubectl finds kubectl-tephra (the build's link) on PATH.
  const char* path = std::getenv("PATH");
  CommandResult plugin =
      RunCommand({"env",
                  "PATH=" + std::filesystem::path(TEPHRACTL_PATH).parent_path().string() + ":" +
                      (path == nullptr ? "" : path),
                  "KUBECONFIG=" + ClusterEnv::Get().kubeconfig, "kubectl", "tephra", "-n", env.ns(),
                  "job", "list"});
  INFO(plugin.err);
  CHECK(plugin.out.find("one    " + q + "   Running") != std::string::npos);

  CHECK(env.MustCtl({"job", "delete", "one"}) == "job.batch.volcano.sh/one deleted\n");
  REQUIRE(Eventually(
      [&] {
        return !env.Ctl({"job", "get", "one"}).ok();
      },
      std::chrono::seconds(30)));
}

// Scripts written for Volcano's vcctl run unchanged against the `vcctl` link (cli/README.md).
TEST_CASE("as vcctl: vcctl's flags, tables, messages and exit codes") {
  CliEnv env("cli-vcctl");
  env.AddNodes(1, "4");
  env.Start();
  std::string q = env.Queue("work");
  env.RunJob("one", q, {"-R", "cpu=500m"});
  env.WaitJobPhase("one", "Running");

  const std::string vcctl =
      (std::filesystem::path(TEPHRACTL_PATH).parent_path() / "vcctl").string();
  auto run = [&](std::vector<std::string> args) {
    args.insert(args.begin(), vcctl);
    args.push_back("--kubeconfig=" + ClusterEnv::Get().kubeconfig);
    return RunCommand(args);
  };

  CommandResult list = run({"job", "list", "-n", env.ns(), "-q", q});
  INFO(list.out << list.err);
  REQUIRE(list.ok());
  CHECK(list.out.rfind(
            "Name   Creation       Phase       JobType     Replicas    Min   Pending   Running   "
            "Succeeded   Failed    Unknown     RetryCount\n",
            0) == 0);
  // The creation date, then the counts in their fixed widths.
  size_t row = list.out.find("\none    20");
  REQUIRE(row != std::string::npos);
  CHECK(list.out.substr(row + 18) ==
        "     Running     Batch       1           1     0         1         0           0         "
        "0           0         \n");
  CHECK(run({"job", "list", "-n", env.ns(), "-q", "other"}).out == "No resources found\n");

  CommandResult queues = run({"queue", "list"});
  REQUIRE(queues.ok());
  CHECK(queues.out.rfind(
            "Name                     Weight  State   Parent  Inqueue Pending Running Unknown "
            "Completed\n",
            0) == 0);
  size_t qrow = queues.out.find("\n" + q + (q.size() < 25 ? std::string(25 - q.size(), ' ') : ""));
  REQUIRE(qrow != std::string::npos);
  CHECK(queues.out.find("Open", qrow) < queues.out.find('\n', qrow + 1));
  CommandResult one_queue = run({"queue", "get", "-n", q});
  REQUIRE(one_queue.ok());
  CHECK(one_queue.out.find("\n" + q) != std::string::npos);

  CommandResult missing = run({"job", "view", "-N", "nope", "-n", env.ns()});
  CHECK(missing.exit_code == 255);
  CHECK(missing.out == "Failed to job view: jobs.batch.volcano.sh \"nope\" not found\n");
  CommandResult view = run({"job", "view", "-N", "one", "-n", env.ns()});
  REQUIRE(view.ok());
  CHECK(view.out.rfind("Name:       \tone\nNamespace:  \t" + env.ns() + "\n", 0) == 0);

  // suspend -N: an AbortJob Command, which the job controller carries out; vcctl prints nothing.
  CommandResult suspended = run({"job", "suspend", "-N", "one", "-n", env.ns()});
  INFO(suspended.out << suspended.err);
  REQUIRE(suspended.ok());
  CHECK(suspended.out.empty());
  env.WaitJobPhase("one", "Aborted");
  REQUIRE(run({"job", "resume", "--name", "one", "--namespace", env.ns()}).ok());
  env.WaitJobPhase("one", "Running");

  CHECK(run({"job", "delete", "-N", "one", "-n", env.ns()}).out == "delete job one successfully\n");
}

}  // namespace
}  // namespace tephra::testing
