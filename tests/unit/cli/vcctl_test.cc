// vcctl mode without an API server: vcctl's exact layouts (docs/compatibility.md §6), and its
// command lines accepted or refused with vcctl's messages and exit codes.
#include "cli/vcctl.h"

#include <cstdlib>
#include <ctime>
#include <sstream>

#include <catch2/catch.hpp>

#include "cli/cli.h"
#include "tests/unit/cli/run_cli.h"

namespace tephra::cli {
namespace {

Ran RunVcctlLine(std::vector<std::string> args, const std::string& program = "vcctl") {
  return RunCli(std::move(args), program);
}

// Dates are printed in the local time zone, as vcctl does; the tests pin it.
void UseUtc() {
  setenv("TZ", "UTC", 1);
  tzset();
}

std::shared_ptr<api::Job> Job(const std::string& json) {
  StatusOr<std::shared_ptr<api::Job>> job = api::DecodeJob(json);
  REQUIRE(job.ok());
  return *job;
}

const char* kJob1 = R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job",
  "metadata":{"name":"job-1","namespace":"team-a","creationTimestamp":"2024-05-01T12:00:00Z",
              "labels":{"app":"x"}},
  "spec":{"minAvailable":2,"schedulerName":"volcano","tasks":[
    {"name":"ps","replicas":1,"template":{"spec":{"restartPolicy":"Never","containers":[
      {"name":"c","image":"busybox","command":["sleep","10"],
       "resources":{"requests":{"cpu":"1"}}}]}}},
    {"name":"worker","replicas":2,"template":{"spec":{"containers":[{"name":"c","image":"busybox"}]}}}]},
  "status":{"state":{"phase":"Running"},"minAvailable":2,"pending":1,"running":2,"retryCount":1}})";

const char* kJob2 = R"({"metadata":{"name":"a-much-longer-name","namespace":"default",
  "creationTimestamp":"2024-05-02T08:00:00Z","labels":{"volcano.sh/job-type":"Training"}},
  "spec":{"tasks":[]}})";

TEST_CASE("vcctl job list: vcctl's columns, widths and date") {
  UseUtc();
  std::vector<std::shared_ptr<api::Job>> jobs{Job(kJob1), Job(kJob2)};
  CHECK(VcctlJobList(jobs, false) ==
        "Name                 Creation       Phase       JobType     Replicas    Min   Pending   "
        "Running   Succeeded   Failed    Unknown     RetryCount\n"
        "job-1                2024-05-01     Running     Batch       3           2     1         2 "
        "        0           0         0           1         \n"
        "a-much-longer-name   2024-05-02                 Training    0           0     0         0 "
        "        0           0         0           0         \n");
  jobs.pop_back();
  CHECK(VcctlJobList(jobs, true) ==
        "Namespace   Name    Creation       Phase       JobType     Replicas    Min   Pending   "
        "Running   Succeeded   Failed    Unknown     RetryCount\n"
        "team-a      job-1   2024-05-01     Running     Batch       3           2     1         2 "
        "        0           0         0           1         \n");
}

TEST_CASE("vcctl job view: fields indented two spaces a level, events last") {
  UseUtc();
  std::string view = VcctlJobView(*Job(kJob1), {});
  INFO(view);
  CHECK(view.rfind("Name:       \tjob-1\nNamespace:  \tteam-a\nLabels:     \t{\"app\":\"x\"}\n"
                   "Annotations:\t<none>\nAPI Version:\tbatch.volcano.sh/v1alpha1\n",
                   0) == 0);
  CHECK(view.find("  Creation Timestamp:\t2024-05-01 12:00:00 +0000 UTC\n") != std::string::npos);
  CHECK(view.find("Spec:\n  Min Available:     \t2\n  Plugins:\n    Env:\t[]\n") !=
        std::string::npos);
  CHECK(view.find("          Command:\n            sleep\n            10\n") != std::string::npos);
  CHECK(view.find("              Cpu:   \t1\n") != std::string::npos);
  CHECK(view.find("        Restart Policy:   \tNever\n") != std::string::npos);
  CHECK(view.find("Status:\n  Pending:      \t1\n  Running:      \t2\n") != std::string::npos);
  CHECK(view.find("  State:\n    Phase:\tRunning\n") != std::string::npos);
  CHECK(view.substr(view.size() - 16) == "Events: \t<none>\n");

  std::string with_events =
      VcctlJobView(*Job(kJob1), {{"Normal", "Scheduled", "5s", "vc-controller", "done"}});
  CHECK(with_events.find("Events:\nType           \tReason") != std::string::npos);
  CHECK(with_events.find("\nNormal         \tScheduled") != std::string::npos);
}

TEST_CASE("vcctl queue list: Name 25 wide, every other column 8") {
  StatusOr<std::shared_ptr<api::Queue>> q = api::DecodeQueue(
      R"({"metadata":{"name":"test-queue"},"spec":{"weight":1,"parent":"root"},
          "status":{"state":"Open"}})");
  REQUIRE(q.ok());
  std::map<std::string, VcctlPhaseCounts> counts{
      {"test-queue",
       {{"Inqueue", 1}, {"Pending", 2}, {"Running", 3}, {"Unknown", 4}, {"Completed", 5}}}};
  CHECK(VcctlQueueList({*q}, counts) ==
        "Name                     Weight  State   Parent  Inqueue Pending Running Unknown "
        "Completed\n"
        "test-queue               1       Open    root    1       2       3       4       5       "
        "\n");
  // A queue without PodGroups counts zero.
  CHECK(VcctlQueueList({*q}, {}).find("root    0       0       0       0       0       \n") !=
        std::string::npos);
}

TEST_CASE("vcctl pod list: each column its widest cell plus 8") {
  StatusOr<std::shared_ptr<api::Pod>> pod = api::DecodePod(
      R"({"metadata":{"name":"p-0","namespace":"default","creationTimestamp":"2024-05-01T12:00:00Z"},
          "spec":{"containers":[{"name":"c","image":"busybox"}]},
          "status":{"phase":"Running","containerStatuses":[
            {"name":"c","ready":true,"restartCount":0,"state":{"running":{}}}]}})");
  REQUIRE(pod.ok());
  base::Time created = *(*pod)->metadata.creation_timestamp;
  CHECK(VcctlPodList({*pod}, created + std::chrono::seconds(90)) ==
        "Name       Ready      Status         Restart  Age        \n"
        "p-0        1/1        Running        0        90s        \n");
}

TEST_CASE("vcctl dates and durations") {
  UseUtc();
  base::Time t(std::chrono::seconds(1714564800));  // 2024-05-01T12:00:00Z
  CHECK(VcctlDate(t) == "2024-05-01");
  auto after = [&](int64_t s) { return VcctlDuration(t, t + std::chrono::seconds(s)); };
  CHECK(after(45) == "45s");
  CHECK(after(330) == "5m30s");
  CHECK(after(300) == "5m");
  CHECK(after(3 * 3600) == "3h");
  CHECK(after(2 * 3600 + 600) == "130m");
  CHECK(after(4 * 3600 + 600) == "4h10m");
  CHECK(after(52 * 3600) == "2d4h");
  CHECK(after(30 * 86400) == "30d");
  CHECK(after(-5) == "<invalid>");
}

TEST_CASE("vcctl command lines: names by -N/-n, vcctl's messages and exit codes") {
  // Checked before any API server is needed.
  auto r = RunVcctlLine({"job", "suspend"});
  CHECK(r.code == 255);
  CHECK(r.out == "Failed to job suspend: job name is mandatory to suspend a particular job\n");
  r = RunVcctlLine({"job", "resume", "-n", "ns"});
  CHECK(r.out == "Failed to job resume: job name is mandatory to resume a particular job\n");
  r = RunVcctlLine({"job", "delete"});
  CHECK(r.out == "Failed to job delete: job name is mandatory to delete a particular job\n");
  r = RunVcctlLine({"job", "view"});
  CHECK(r.out ==
        "Failed to job view: job name (specified by --name or -N) is mandatory to view a "
        "particular job\n");
  r = RunVcctlLine({"job", "run"});
  CHECK(r.out == "Failed to job run: job name cannot be left blank\n");
  r = RunVcctlLine({"job", "run", "-N", "x", "-f", "job.json"});
  CHECK(r.out == "Failed to job run: only support yaml file\n");
  r = RunVcctlLine({"queue", "get"});
  CHECK(r.out == "Failed to queue get: name is mandatory to get the particular queue details\n");
  r = RunVcctlLine({"queue", "delete"});
  CHECK(r.out == "Failed to queue delete: queue name must be specified\n");
  r = RunVcctlLine({"queue", "operate", "-n", "q"});
  CHECK(r.out == "Failed to queue operate: action can not be null\n");
  r = RunVcctlLine({"queue", "operate", "-n", "q", "-a", "frob"});
  CHECK(r.out ==
        "Failed to queue operate: action frob invalid, valid actions are open, close and "
        "update\n");
  r = RunVcctlLine({"queue", "operate", "--name", "q", "--action", "update"});
  CHECK(r.out ==
        "Failed to queue operate: when update queue q, weight must be specified, the value must "
        "be greater than 0\n");

  // -N, -n and the other vcctl flags are accepted: these fail only for want of a cluster.
  for (std::vector<std::string> args :
       {std::vector<std::string>{"job", "suspend", "-N", "x", "-n", "ns"},
        {"job", "delete", "--name", "x", "--namespace", "ns"},
        {"job", "list", "-q", "q", "-S", "volcano", "--selector", "x", "--all-namespaces"},
        {"queue", "operate", "-n", "q", "-a", "close"},
        {"queue", "create", "-n", "q", "-w", "3", "-S", "Open"},
        {"pod", "list", "-j", "x", "-q", "q", "-n", "ns"}}) {
    args.push_back("--kubeconfig=/nonexistent/kubeconfig");
    r = RunVcctlLine(args);
    INFO(args[0] << " " << args[1] << ": " << r.out << r.err);
    CHECK(r.code == 255);
    CHECK(r.out.rfind("Failed to " + args[0] + " " + args[1] + ": ", 0) == 0);
  }

  // cobra's refusals: exit 2.
  r = RunVcctlLine({"job", "list", "--bogus"});
  CHECK(r.code == 2);
  CHECK(r.err.find("Error: unknown flag --bogus") == 0);
  CHECK(r.out.find("Failed to execute command: unknown flag --bogus") == 0);
  r = RunVcctlLine({"frob"});
  CHECK(r.code == 2);
  CHECK(r.out == "Failed to execute command: unknown command \"frob\" for \"vcctl\"\n");
  r = RunVcctlLine({"job", "frob"});
  CHECK(r.code == 2);
  // --vcctl first does the same from tephractl; vcctl alone prints its help.
  r = RunVcctlLine({"--vcctl", "job", "suspend"}, "tephractl");
  CHECK(r.out == "Failed to job suspend: job name is mandatory to suspend a particular job\n");
  r = RunVcctlLine({}, "/usr/local/bin/vcctl");
  CHECK(r.code == 0);
  CHECK(r.out.find("Usage:\n  vcctl [command]") == 0);
  r = RunVcctlLine({"version"});
  CHECK(r.code == 0);
  CHECK(r.out.rfind("API Version: v1alpha1\nVersion: ", 0) == 0);
}

TEST_CASE("tephractl's own job commands take --name/-N as well as NAME") {
  auto r = RunVcctlLine(
      {"job", "suspend", "-N", "x", "-n", "ns", "--kubeconfig=/nonexistent/config"}, "tephractl");
  CHECK(r.code == 1);  // got as far as the cluster
  r = RunVcctlLine({"job", "delete", "--name", "x", "y", "-n", "ns"}, "tephractl");
  CHECK(r.code == 2);
  CHECK(r.err.find("job delete: NAME \"y\" and --name \"x\" disagree") != std::string::npos);
  r = RunVcctlLine({"job", "get", "-n", "ns"}, "tephractl");
  CHECK(r.err.find("job get: missing NAME") != std::string::npos);
}

}  // namespace
}  // namespace tephra::cli
