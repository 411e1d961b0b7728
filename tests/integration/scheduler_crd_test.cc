// A scheduler-plugins (scheduling.x-k8s.io) gang whose CRD is installed after tephra-scheduler
// started. SERIAL: the test removes and reinstalls that CRD on the shared control plane.
#include <thread>

#include <catch2/catch.hpp>

#include "tests/integration/controllers/harness.h"
#include "tests/integration/scheduler_fixture.h"
#include "tests/support/cluster.h"

namespace tephra::testing {
namespace {

constexpr char kCrd[] = "podgroups.scheduling.x-k8s.io";

TEST_CASE("a scheduler-plugins gang is bound whole, though its CRD came after the scheduler") {
  SchedulerFixture f;
  InstallControllerPrerequisites(f.kubectl());
  f.kubectl().MustRun({"delete", "crd", kCrd, "--ignore-not-found", "--wait=true"});
  f.AddNodes(2, "4", "16Gi");
  TestNamespace ns(f.kubectl(), "sched-plugins");
  f.AddQueue("default", 1);
  ControllerManager manager(ns.name(), {"--scheduler-name=" + f.name(),
                                        "--queue-label-selector=tephra.dev/test-pool=" + f.id(),
                                        "--default-queue=" + f.queue_name("default")});
  f.Start();
  REQUIRE(Eventually([&] { return f.Log().find("caches synced") != std::string::npos; },
                     std::chrono::seconds(30)));

  f.kubectl().MustRun({"apply", "-f", std::string(TEPHRA_SOURCE_DIR) + "/crds/optional/"});
  f.kubectl().MustRun(
      {"wait", "--for=condition=Established", std::string("crd/") + kCrd, "--timeout=60s"});
  f.kubectl().MustRun(
      {"-n", ns.name(), "create", "-f", "-"},
      R"({"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"PodGroup","metadata":{"name":"sp"},
                          "spec":{"minMember":4,"minResources":{"cpu":"4"},"scheduleTimeoutSeconds":60}})");
  auto add_pod = [&](int i) {
    f.kubectl().MustRun(
        {"-n", ns.name(), "create", "-f", "-"},
        R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"sp-)" + std::to_string(i) +
            R"(","labels":{"scheduling.x-k8s.io/pod-group":"sp"}},"spec":{"schedulerName":")" +
            f.name() +
            R"(","containers":[{"name":"c","image":"busybox","resources":{"requests":{"cpu":"1"}}}]}})");
  };
  // The pods arrive one by one; three of four are no gang yet.
  for (int i = 0; i < 3; ++i) add_pod(i);
  // The scheduler looks for the CRD every 10 s: give it time to find it.
  std::this_thread::sleep_for(std::chrono::seconds(12));
  CHECK(f.Bindings(ns.name()).empty());
  add_pod(3);
  REQUIRE(Eventually([&] { return f.Bindings(ns.name()).size() == 4; }, std::chrono::seconds(30)));
  REQUIRE(Eventually(
      [&] {
        return Jsonpath(f.kubectl(), ns.name(), "podgroups.scheduling.x-k8s.io/sp",
                        "{.status.phase}") == "Running";
      },
      std::chrono::seconds(30)));
  // The pods kept their group: no Volcano PodGroup of their own.
  CHECK(f.kubectl()
            .MustRun({"-n", ns.name(), "get", "podgroups.scheduling.volcano.sh", "-o", "name"})
            .empty());
  // It said so at start, and picked the CRD up later without a restart.
  CHECK(f.Log().find("scheduling.x-k8s.io PodGroups are not served yet") != std::string::npos);
  CHECK(f.Log().find("scheduling.x-k8s.io PodGroups are served too") != std::string::npos);
}

}  // namespace
}  // namespace tephra::testing
