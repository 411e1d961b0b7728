// Preempt and reclaim on the real control plane: tephra-scheduler evicting pods on kwok nodes.
#include <fstream>
#include <sstream>
#include <thread>

#include <catch2/catch.hpp>

#include "tests/integration/scheduler_fixture.h"
#include "tests/support/cluster.h"
#include "tests/support/process.h"

namespace tephra::testing {
namespace {

const char* kEvictingConf = R"(actions: "enqueue, allocate, preempt, reclaim, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: overcommit}, {name: drf}, {name: predicates}, {name: proportion}, {name: nodeorder}]
)";

const char* kCapacityConf = R"(actions: "enqueue, allocate, reclaim, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: drf}, {name: predicates}, {name: capacity}, {name: nodeorder}]
)";

std::string Priority(const SchedulerFixture& f, const std::string& cls) {
  return R"("priorityClassName":")" + f.queue_name(cls) + R"(",)";
}

std::string PodGroupPriority(const SchedulerFixture& f, const std::string& cls) {
  return R"(,"priorityClassName":")" + f.queue_name(cls) + "\"";
}

size_t CountPrefix(const std::map<std::string, std::string>& bound, const std::string& prefix) {
  size_t n = 0;
  for (const auto& [pod, node] : bound) n += pod.rfind(prefix, 0) == 0;
  return n;
}

// Messages of events with `reason` about object `name` in ns.
std::string EventMessages(const Kubectl& k, const std::string& ns, const std::string& name,
                          const std::string& reason) {
  return k.MustRun({"-n", ns, "get", "events",
                    "--field-selector=involvedObject.name=" + name + ",reason=" + reason, "-o",
                    R"(jsonpath={range .items[*]}{.message}{"\n"}{end})"});
}

TEST_CASE(
    "a high-priority gang preempts a low-priority job in its queue and the victims hear why") {
  SchedulerFixture f;
  f.AddNodes(2, "4", "16Gi");
  f.AddPriorityClass("low", 10);
  f.AddPriorityClass("high", 1000);
  TestNamespace ns(f.kubectl(), "preempt");
  f.AddGang(ns.name(), "low", f.queue_name("default"), 1, 8, "1", Priority(f, "low"),
            PodGroupPriority(f, "low"));
  f.Start(kEvictingConf);
  REQUIRE(Eventually([&] { return f.Bindings(ns.name()).size() == 8; }, std::chrono::seconds(30)));

  // The cluster is full; the gang of two 2-CPU pods is admitted into room it may preempt.
  f.AddGang(ns.name(), "high", f.queue_name("default"), 2, 2, "2", Priority(f, "high"),
            PodGroupPriority(f, "high"));
  REQUIRE(Eventually([&] { return CountPrefix(f.Bindings(ns.name()), "high-") == 2; },
                     std::chrono::seconds(60)));
  auto bound = f.Bindings(ns.name());
  CHECK(CountPrefix(bound, "low-") == 4);  // the fewest victims: 2 CPUs per preemptor pod
  // The PodGroup's status follows in a later cycle, once the binds are seen.
  CHECK(Eventually(
      [&] {
        return Jsonpath(f.kubectl(), ns.name(), "podgroup/high", "{.status.phase}") == "Running";
      },
      std::chrono::seconds(30)));

  // Every victim's event names the preemptor; so does the victims' PodGroup's.
  int victims = 0;
  for (int i = 0; i < 8; ++i) {
    std::string pod = "low-" + std::to_string(i);
    if (bound.count(pod) != 0) continue;
    ++victims;
    std::string events = EventMessages(f.kubectl(), ns.name(), pod, "Evicted");
    INFO(pod << ": " << events);
    CHECK(events.find("preempted by job " + ns.name() + "/high") != std::string::npos);
  }
  CHECK(victims == 4);
  std::string pg_events = EventMessages(f.kubectl(), ns.name(), "low", "Evicted");
  CHECK(pg_events.find("preempted by job " + ns.name() + "/high") != std::string::npos);
}

TEST_CASE("a starved queue reclaims down to its deserved share and no further") {
  SchedulerFixture f;
  f.AddNodes(2, "4", "16Gi");
  f.AddQueue("lender", 1);
  f.AddQueue("owner", 1);
  TestNamespace ns(f.kubectl(), "reclaim");
  for (int i = 0; i < 8; ++i)
    f.AddGang(ns.name(), "a" + std::to_string(i), f.queue_name("lender"), 1, 1, "1");
  f.Start(kEvictingConf);
  REQUIRE(Eventually([&] { return f.Bindings(ns.name()).size() == 8; }, std::chrono::seconds(30)));

  // The owner queue had lent everything; it now wants 8 CPUs but deserves 4.
  for (int i = 0; i < 8; ++i)
    f.AddGang(ns.name(), "b" + std::to_string(i), f.queue_name("owner"), 1, 1, "1");
  REQUIRE(Eventually([&] { return CountPrefix(f.Bindings(ns.name()), "b") == 4; },
                     std::chrono::seconds(60)));
  std::this_thread::sleep_for(std::chrono::seconds(3));  // and it stays 4:4
  auto bound = f.Bindings(ns.name());
  CHECK(CountPrefix(bound, "a") == 4);
  CHECK(CountPrefix(bound, "b") == 4);
  std::string lender_events =
      f.kubectl().MustRun({"-n", ns.name(), "get", "events", "--field-selector=reason=Evicted",
                           "-o", R"(jsonpath={range .items[*]}{.message}{"\n"}{end})"});
  CHECK(lender_events.find("reclaimed for queue " + f.queue_name("owner")) != std::string::npos);
}

TEST_CASE("Volcano's CI configuration loads, names what it leaves out, and reclaims") {
  SchedulerFixture f;
  f.AddNodes(2, "4", "16Gi");
  f.AddQueue("lender", 1);
  f.AddQueue("owner", 1);
  TestNamespace ns(f.kubectl(), "ci-conf");
  // The ConfigMap the configuration comes from, readable by the scheduler as the chart allows.
  std::ifstream in(std::string(TEPHRA_SOURCE_DIR) + "/tests/unit/scheduler/confs/volcano-ci.conf");
  std::stringstream conf;
  conf << in.rdbuf();
  REQUIRE(!conf.str().empty());
  conf << "  - name: usage\n";  // a plugin Tephra only recognises: tiers[1].plugins[7]
  f.kubectl().MustRun({"-n", ns.name(), "create", "configmap", "scheduler-conf",
                       "--from-literal=volcano-scheduler.conf=" + conf.str()});
  f.kubectl().MustRun({"-n", ns.name(), "create", "role", "read-conf", "--verb=get",
                       "--resource=configmaps", "--resource-name=scheduler-conf"});
  f.kubectl().MustRun({"-n", ns.name(), "create", "rolebinding", "read-conf", "--role=read-conf",
                       "--serviceaccount=tephra-system:tephra-scheduler"});
  for (int i = 0; i < 8; ++i)
    f.AddGang(ns.name(), "a" + std::to_string(i), f.queue_name("lender"), 1, 1, "1");
  const uint16_t port = FreeLoopbackPort();
  REQUIRE(port != 0);
  f.Start(conf.str(), {"--scheduler-conf-configmap=" + ns.name() + "/scheduler-conf",
                       "--listen-address=127.0.0.1:" + std::to_string(port)});
  REQUIRE(Eventually([&] { return f.Bindings(ns.name()).size() == 8; }, std::chrono::seconds(30)));

  // What is left out is said in the log, as an Event on the ConfigMap and in the gauge.
  CHECK(f.Log().find("plugin \"usage\"") != std::string::npos);
  std::string events;
  CHECK(Eventually(
      [&] {
        events =
            EventMessages(f.kubectl(), ns.name(), "scheduler-conf", "UnsupportedSchedulerConf");
        return events.find("tiers[1].plugins[7].name: plugin \"usage\"") != std::string::npos;
      },
      std::chrono::seconds(20)));
  CommandResult metrics =
      RunCommand({"curl", "-s", "http://127.0.0.1:" + std::to_string(port) + "/metrics"});
  CHECK(metrics.out.find(
            R"(tephra_scheduler_conf_unsupported_plugins{kind="plugin",name="usage"} 1)") !=
        std::string::npos);

  // reclaim, which the configuration adds, runs: the owner queue takes back its share.
  for (int i = 0; i < 8; ++i)
    f.AddGang(ns.name(), "b" + std::to_string(i), f.queue_name("owner"), 1, 1, "1");
  REQUIRE(Eventually([&] { return CountPrefix(f.Bindings(ns.name()), "b") == 4; },
                     std::chrono::seconds(60)));
}

TEST_CASE("a queue is never reclaimed below its guarantee") {
  SchedulerFixture f;
  f.AddNodes(2, "4", "16Gi");
  f.AddQueue("guarded", 1, R"(,"deserved":{"cpu":"4"},"guarantee":{"resource":{"cpu":"6"}})");
  f.AddQueue("hungry", 1, R"(,"deserved":{"cpu":"4"})");
  TestNamespace ns(f.kubectl(), "guarantee");
  for (int i = 0; i < 8; ++i)
    f.AddGang(ns.name(), "g" + std::to_string(i), f.queue_name("guarded"), 1, 1, "1");
  f.Start(kCapacityConf);
  REQUIRE(Eventually([&] { return f.Bindings(ns.name()).size() == 8; }, std::chrono::seconds(30)));
  for (int i = 0; i < 4; ++i)
    f.AddGang(ns.name(), "h" + std::to_string(i), f.queue_name("hungry"), 1, 1, "1");
  REQUIRE(Eventually([&] { return CountPrefix(f.Bindings(ns.name()), "h") == 2; },
                     std::chrono::seconds(60)));
  std::this_thread::sleep_for(std::chrono::seconds(3));
  auto bound = f.Bindings(ns.name());
  CHECK(CountPrefix(bound, "g") == 6);  // deserved 4, but guaranteed 6
  CHECK(CountPrefix(bound, "h") == 2);
}

TEST_CASE("system-critical pods and kube-system pods are never evicted") {
  SchedulerFixture f;
  f.AddNodes(1, "4", "16Gi", {{"tephra.dev/slot", "a"}});
  f.AddNodes(1, "4", "16Gi", {{"tephra.dev/slot", "b"}});
  f.AddPriorityClass("low", 10);
  f.AddPriorityClass("high", 1000);
  TestNamespace ns(f.kubectl(), "critical");
  // One node full of low-priority pods in kube-system, the other of system-node-critical pods.
  std::string sys_group = "tephra-it-" + f.id();
  struct KubeSystemCleanup {  // kube-system outlives the test: remove what it put there
    const Kubectl& k;
    std::string group;
    ~KubeSystemCleanup() {
      std::vector<std::string> args{"-n",           "kube-system",        "delete",
                                    "--wait=false", "--ignore-not-found", "podgroup/" + group};
      for (int i = 0; i < 4; ++i) args.push_back("pod/" + group + "-" + std::to_string(i));
      k.Run(args);
    }
  } cleanup{f.kubectl(), sys_group};
  f.AddGang("kube-system", sys_group, f.queue_name("default"), 1, 4, "1",
            Priority(f, "low") + R"("nodeSelector":{"tephra.dev/slot":"a"},)",
            PodGroupPriority(f, "low"));
  f.AddGang(
      ns.name(), "critical", f.queue_name("default"), 1, 4, "1",
      R"("priorityClassName":"system-node-critical","nodeSelector":{"tephra.dev/slot":"b"},)");
  f.Start(kEvictingConf);
  REQUIRE(Eventually(
      [&] {
        return CountPrefix(f.Bindings("kube-system"), sys_group) == 4 &&
               f.Bindings(ns.name()).size() == 4;
      },
      std::chrono::seconds(30)));
  f.AddGang(ns.name(), "high", f.queue_name("default"), 1, 1, "2", Priority(f, "high"),
            PodGroupPriority(f, "high"));
  std::this_thread::sleep_for(std::chrono::seconds(5));
  CHECK(CountPrefix(f.Bindings("kube-system"), sys_group) == 4);
  CHECK(CountPrefix(f.Bindings(ns.name()), "critical-") == 4);
  CHECK(CountPrefix(f.Bindings(ns.name()), "high-") == 0);
  std::string evicted =
      f.kubectl().MustRun({"get", "events", "-A", "--field-selector=reason=Evicted", "-o",
                           R"(jsonpath={range .items[*]}{.involvedObject.name}{"\n"}{end})"});
  CHECK(evicted.find(sys_group) == std::string::npos);
  CHECK(evicted.find("critical-") == std::string::npos);
}

TEST_CASE("with preemption disabled in the configuration nothing is evicted") {
  SchedulerFixture f;
  f.AddNodes(1, "4", "16Gi");
  f.AddPriorityClass("low", 10);
  f.AddPriorityClass("high", 1000);
  TestNamespace ns(f.kubectl(), "nopreempt");
  f.AddGang(ns.name(), "low", f.queue_name("default"), 1, 4, "1", Priority(f, "low"),
            PodGroupPriority(f, "low"));
  f.Start();  // Volcano's default actions: enqueue, allocate, backfill
  REQUIRE(Eventually([&] { return f.Bindings(ns.name()).size() == 4; }, std::chrono::seconds(30)));
  f.AddGang(ns.name(), "high", f.queue_name("default"), 1, 1, "2", Priority(f, "high"),
            PodGroupPriority(f, "high"));
  std::this_thread::sleep_for(std::chrono::seconds(5));
  auto bound = f.Bindings(ns.name());
  CHECK(CountPrefix(bound, "low-") == 4);
  CHECK(CountPrefix(bound, "high-") == 0);
  CHECK(EventMessages(f.kubectl(), ns.name(), "low", "Evicted").empty());
}

}  // namespace
}  // namespace tephra::testing
