// tephra-scheduler against the real control plane: a process scheduling onto kwok nodes.
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <signal.h>
#include <sstream>
#include <thread>

#include <catch2/catch.hpp>
#include <rapidjson/document.h>

#include "api/resources.h"
#include "json/json.h"
#include "tests/integration/scheduler_fixture.h"
#include "tests/support/cluster.h"

namespace tephra::testing {
namespace {

TEST_CASE("a gang larger than the cluster stays Pending and says why") {
  SchedulerFixture f;
  f.AddNodes(2, "4", "16Gi");
  TestNamespace ns(f.kubectl(), "sched-big");
  f.AddGang(ns.name(), "big", f.queue_name("default"), 5, 5, "2");
  f.Start();
  std::string message;
  REQUIRE(Eventually(
      [&] {
        message = Jsonpath(f.kubectl(), ns.name(), "podgroup/big",
                           R"({.status.conditions[?(@.type=="Unschedulable")].message})");
        return !message.empty();
      },
      std::chrono::seconds(30)));
  INFO(message);
  CHECK(message.find("5/5 tasks in gang unschedulable") != std::string::npos);
  CHECK(message.find("Insufficient cpu") != std::string::npos);
  CHECK(f.Bindings(ns.name()).empty());
  std::string pod_reason = Jsonpath(f.kubectl(), ns.name(), "pod/big-0",
                                    R"({.status.conditions[?(@.type=="PodScheduled")].message})");
  CHECK_FALSE(pod_reason.empty());
  std::string events = f.kubectl().MustRun(
      {"-n", ns.name(), "get", "events", "--field-selector=involvedObject.name=big", "-o", "name"});
  CHECK_FALSE(events.empty());
  // Nothing bound a few cycles later either: the gang is all or nothing.
  std::this_thread::sleep_for(std::chrono::seconds(2));
  CHECK(f.Bindings(ns.name()).empty());
}

// A PodGroup created without the webhook may carry negative minResources (the CRD schema lets
// them through). Volcano's scheduler panics on one; Tephra's counts it as reserving nothing, so
// it neither crashes nor lets the queue admit more than its capability (docs/controllers.md).
TEST_CASE("a PodGroup with negative minResources gives its queue no room it does not have") {
  SchedulerFixture f;
  f.AddNodes(2, "8", "32Gi");
  f.AddQueue("capped", 1, R"(,"capability":{"cpu":"2"})");
  TestNamespace ns(f.kubectl(), "sched-negmin");
  f.AddGang(ns.name(), "minus", f.queue_name("capped"), 1, 1, "1", "",
            R"(,"minResources":{"cpu":"-10"})");
  f.AddGang(ns.name(), "big", f.queue_name("capped"), 1, 1, "1", "",
            R"(,"minResources":{"cpu":"8"})");
  f.Start();
  REQUIRE(Eventually([&] { return f.Bindings(ns.name()).count("minus-0") == 1; },
                     std::chrono::seconds(30)));
  std::string refused;
  REQUIRE(Eventually(
      [&] {
        refused = Jsonpath(f.kubectl(), ns.name(), "podgroup/big",
                           R"({.status.conditions[?(@.type=="Unschedulable")].reason})");
        return refused == "NotEnoughResources";
      },
      std::chrono::seconds(30)));
  std::this_thread::sleep_for(std::chrono::seconds(3));  // several more cycles
  INFO(f.Log());
  CHECK(Jsonpath(f.kubectl(), ns.name(), "podgroup/big", "{.status.phase}") == "Pending");
  CHECK(f.Bindings(ns.name()).count("big-0") == 0);
}

TEST_CASE("a pod with a node selector lands only on matching nodes") {
  SchedulerFixture f;
  f.AddNodes(2, "8", "32Gi", {{"disk", "hdd"}});
  f.AddNodes(2, "8", "32Gi", {{"disk", "ssd"}});
  TestNamespace ns(f.kubectl(), "sched-sel");
  f.AddGang(ns.name(), "fast", f.queue_name("default"), 6, 6, "1",
            R"("nodeSelector":{"disk":"ssd"},)");
  f.Start();
  REQUIRE(Eventually([&] { return f.Bindings(ns.name()).size() == 6; }, std::chrono::seconds(30)));
  std::set<std::string> ssd{f.nodes()[2], f.nodes()[3]};
  for (const auto& [pod, node] : f.Bindings(ns.name())) CHECK(ssd.count(node) == 1);
  REQUIRE(Eventually(
      [&] {
        return Jsonpath(f.kubectl(), ns.name(), "podgroup/fast", "{.status.phase}") == "Running";
      },
      std::chrono::seconds(30)));
}

TEST_CASE("an idle scheduler pauses its sessions and still places new work at once") {
  SchedulerFixture f;
  f.AddNodes(1, "8", "32Gi");
  TestNamespace ns(f.kubectl(), "sched-idle");
  f.AddGang(ns.name(), "first", f.queue_name("default"), 1, 1, "1");
  f.Start();
  REQUIRE(Eventually([&] { return f.Bindings(ns.name()).size() == 1; }, std::chrono::seconds(30)));
  // Once its status writes are echoed, a session finds nothing to do and the periodic ones stop.
  REQUIRE(Eventually([&] { return f.Log().find("sessions pause until") != std::string::npos; },
                     std::chrono::seconds(30)));
  // A new pod is a change: it is placed without waiting for a recheck.
  auto paused = std::chrono::steady_clock::now();
  f.AddGang(ns.name(), "second", f.queue_name("default"), 1, 1, "1");
  REQUIRE(Eventually([&] { return f.Bindings(ns.name()).size() == 2; }, std::chrono::seconds(30)));
  CHECK(std::chrono::steady_clock::now() - paused < std::chrono::seconds(10));
}

TEST_CASE("a queue label selector leaves the PodGroups of other queues alone") {
  SchedulerFixture f;  // its scheduler serves the queues labelled with its pool only
  f.AddNodes(2, "8", "32Gi");
  f.AddQueue("mine", 1);
  f.AddQueue("other", 1);
  f.kubectl().MustRun({"label", "queue", f.queue_name("other"), "tephra.dev/test-pool-"});
  TestNamespace ns(f.kubectl(), "sched-qsel");
  f.AddGang(ns.name(), "in", f.queue_name("mine"), 2, 2, "1");
  f.AddGang(ns.name(), "out", f.queue_name("other"), 2, 2, "1");
  std::string out_status_before = Jsonpath(f.kubectl(), ns.name(), "podgroup/out", "{.status}");
  f.Start();
  REQUIRE(Eventually(
      [&] {
        return Jsonpath(f.kubectl(), ns.name(), "podgroup/in", "{.status.phase}") == "Running";
      },
      std::chrono::seconds(30)));
  std::this_thread::sleep_for(std::chrono::seconds(3));  // several more cycles
  for (const auto& [pod, node] : f.Bindings(ns.name())) CHECK(pod.rfind("in-", 0) == 0);
  CHECK(f.Bindings(ns.name()).size() == 2);
  CHECK(Jsonpath(f.kubectl(), ns.name(), "podgroup/out", "{.status}") == out_status_before);
  // The default queue it created carries the selector's label, so it serves that one too.
  CHECK(f.kubectl().MustRun({"get", "queue", f.queue_name("default"), "-o",
                             "jsonpath={.metadata.labels.tephra\\.dev/test-pool}"}) == f.id());
}

TEST_CASE(
    "a bad node or queue selector stops the scheduler at start with the API server's reason") {
  for (const std::string flag : {"--node-selector", "--queue-label-selector"}) {
    CommandResult r =
        RunCommand({TEPHRA_SCHEDULER_PATH, "--kubeconfig=" + ClusterEnv::Get().kubeconfig_scheduler,
                    "--leader-elect=false", "--listen-address=0", flag + "=tier in (a"},
                   {}, std::chrono::seconds(60));
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(flag + " \"tier in (a\": ") != std::string::npos);
  }
}

TEST_CASE("two queues with weights 1 and 3 share a saturated cluster 1:3") {
  SchedulerFixture f;
  f.AddNodes(2, "8", "64Gi");
  f.AddQueue("light", 1);
  f.AddQueue("heavy", 3);
  TestNamespace ns(f.kubectl(), "sched-share");
  for (int i = 0; i < 16; ++i) {
    f.AddGang(ns.name(), "l" + std::to_string(i), f.queue_name("light"), 1, 1, "1");
    f.AddGang(ns.name(), "h" + std::to_string(i), f.queue_name("heavy"), 1, 1, "1");
  }
  f.Start();
  REQUIRE(Eventually([&] { return f.Bindings(ns.name()).size() == 16; }, std::chrono::seconds(60)));
  std::this_thread::sleep_for(std::chrono::seconds(2));  // and it stays that way
  int light = 0, heavy = 0;
  for (const auto& [pod, node] : f.Bindings(ns.name())) (pod[0] == 'l' ? light : heavy)++;
  CHECK(light == 4);
  CHECK(heavy == 12);
  // The queues' status.allocated says the same.
  std::string allocated = f.kubectl().MustRun(
      {"get", "queue", f.queue_name("heavy"), "-o", "jsonpath={.status.allocated.cpu}"});
  CHECK(allocated == "12");
}

TEST_CASE("restarting the scheduler mid-workload never double-binds or over-commits") {
  SchedulerFixture f;
  f.AddNodes(4, "4", "16Gi");
  TestNamespace ns(f.kubectl(), "sched-restart");
  for (int g = 0; g < 14; ++g)
    f.AddGang(ns.name(), "g" + std::to_string(g), f.queue_name("default"), 2, 2, "1");
  f.Start();
  REQUIRE(Eventually([&] { return !f.Bindings(ns.name()).empty(); }, std::chrono::seconds(30)));
  f.Kill();
  size_t at_kill = f.Bindings(ns.name()).size();
  f.Start();
  // 16 CPUs for 28 one-CPU pods in gangs of 2: exactly 8 gangs fit.
  REQUIRE(Eventually([&] { return f.Bindings(ns.name()).size() == 16; }, std::chrono::seconds(60)));
  std::this_thread::sleep_for(std::chrono::seconds(2));
  auto bound = f.Bindings(ns.name());
  CHECK(bound.size() == 16);
  CHECK(bound.size() >= at_kill);
  std::map<std::string, int> per_node;
  std::map<std::string, int> per_gang;
  for (const auto& [pod, node] : bound) {
    per_node[node]++;
    per_gang[pod.substr(0, pod.find('-'))]++;
  }
  for (const auto& [node, n] : per_node) CHECK(n <= 4);  // 4 CPUs each
  for (const auto& [gang, n] : per_gang) CHECK(n == 2);  // never half a gang
}

}  // namespace
}  // namespace tephra::testing
