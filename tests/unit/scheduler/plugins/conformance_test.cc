// The conformance plugin's veto: critical pods and kube-system are never victims
// (docs/scheduler.md, Plugins: conformance).
#include <catch2/catch.hpp>

#include "tests/unit/scheduler/plugins/plugin_session.h"

namespace tephra::scheduler::testing {
namespace {

const char kConformance[] = "- plugins:\n  - name: offer-all\n  - name: conformance\n";

void Cluster(Harness& h) {
  h.Node("n1", "cpu=8").Queue("default");
  h.Group("ns/new", "default", 1)
      .Group("ns/run", "default", 1, "Running")
      .Group("kube-system/sys", "default", 1, "Running");
  h.Pod("ns/new-0", "new").Request("cpu=1").Add();
  h.Pod("ns/plain", "run").Request("cpu=1").On("n1").Add();
  h.Pod("ns/cluster-critical", "run")
      .Request("cpu=1")
      .PriorityClassName("system-cluster-critical")
      .On("n1")
      .Add();
  h.Pod("ns/node-critical", "run")
      .Request("cpu=1")
      .PriorityClassName("system-node-critical")
      .On("n1")
      .Add();
  h.Pod("ns/other-class", "run").Request("cpu=1").PriorityClassName("high").On("n1").Add();
  h.Pod("kube-system/dns", "sys").Request("cpu=1").On("n1").Add();
}

const std::vector<std::string> kCandidates = {"ns/plain", "ns/cluster-critical", "ns/node-critical",
                                              "ns/other-class", "kube-system/dns"};

TEST_CASE("conformance: preemption never takes critical pods or kube-system") {
  Harness h;
  Cluster(h);
  PluginSession s(h, kConformance);
  CHECK(s.Preemptable("ns/new-0", kCandidates) == std::vector<std::string>{"plain", "other-class"});
}

TEST_CASE("conformance: reclaim never takes critical pods or kube-system") {
  Harness h;
  Cluster(h);
  PluginSession s(h, kConformance);
  CHECK(s.Reclaimable("ns/new-0", kCandidates) == std::vector<std::string>{"plain", "other-class"});
}

TEST_CASE("conformance: alone it decides nothing (a veto never adds victims)") {
  Harness h;
  Cluster(h);
  PluginSession s(h, "- plugins:\n  - name: conformance\n");
  CHECK(s.Preemptable("ns/new-0", kCandidates).empty());
}

}  // namespace
}  // namespace tephra::scheduler::testing
