// The scheduler's StatusWriter against the real API server: what it holds back and what it
// writes at once.
#include "scheduler/status/status_writer.h"

#include <catch2/catch.hpp>

#include "metrics/metrics.h"
#include "tests/integration/controllers/harness.h"
#include "tests/integration/scheduler_fixture.h"
#include "tests/support/cluster.h"

namespace tephra::testing {
namespace {

int64_t ResourceVersion(const Kubectl& k, const std::vector<std::string>& target) {
  std::vector<std::string> args = target;
  args.insert(args.end(), {"-o", "jsonpath={.metadata.resourceVersion}"});
  return std::stoll(k.MustRun(args));
}

TEST_CASE("held status updates coalesce into one write, urgent ones overtake them") {
  Kubectl k(ClusterEnv::Get().kubeconfig);
  InstallControllerPrerequisites(k);
  TestNamespace ns(k, "status-writer");
  const std::string queue = "sw-" + RandomSuffix();
  k.MustRun({"create", "-f", "-"}, R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue",
      "metadata":{"name":")" + queue + R"("},"spec":{"weight":1}})");
  k.MustRun(
      {"-n", ns.name(), "create", "-f", "-"},
      R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":{"name":"pg"},
      "spec":{"minMember":1,"queue":")" +
          queue + R"("}})");

  metrics::Registry registry;
  // A settle long enough that a slow machine cannot blur "held" and "at once".
  scheduler::StatusWriter writer(AdminClient(), nullptr, nullptr, &registry, 2,
                                 std::chrono::seconds(5));
  for (int cpu = 1; cpu <= 5; ++cpu) {
    scheduler::SessionOutcome held;
    held.queues.push_back(
        {queue, api::Resources::FromString("cpu=" + std::to_string(cpu))->ToList()});
    writer.Apply(held);
  }
  scheduler::SessionOutcome urgent;
  scheduler::PodGroupUpdate u;
  u.job = ns.name() + "/pg";
  u.namespace_ = ns.name();
  u.name = "pg";
  u.status.phase = "Inqueue";
  urgent.pod_groups.push_back(u);
  writer.Apply(urgent);
  REQUIRE(writer.Drain(std::chrono::seconds(30)));

  CHECK(Jsonpath(k, ns.name(), "podgroup/pg", "{.status.phase}") == "Inqueue");
  CHECK(k.MustRun({"get", "queue", queue, "-o", "jsonpath={.status.allocated.cpu}"}) == "5");
  // Two writes: the PodGroup, then the queue's latest allocation once its settle passed.
  CHECK(registry.Render().find("tephra_status_writes_total 2") != std::string::npos);
  CHECK(ResourceVersion(k, {"-n", ns.name(), "get", "podgroup", "pg"}) <
        ResourceVersion(k, {"get", "queue", queue}));
  k.Run({"delete", "queue", queue, "--wait=false"});
}

}  // namespace
}  // namespace tephra::testing
