// The predicates plugin: whether a node can take a pod, as kube-scheduler's filters decide
// (docs/scheduler.md, Plugins: predicates), and whether the answer follows the session's own
// placements.
#include <catch2/catch.hpp>

#include "scheduler/plugins/plugins.h"
#include "tests/unit/scheduler/plugins/plugin_session.h"

namespace tephra::scheduler::testing {
namespace {

const char kPredicates[] = "- plugins:\n  - name: predicates\n";

bool Fails(const Fit& f, const char* reason, Fit::Code code) {
  return !f.ok() && std::string(f.reason) == reason && f.code == code;
}

TEST_CASE("predicates: an unschedulable node takes only pods that tolerate it") {
  Harness h;
  h.Node("cordoned", "cpu=4", {}, {}, true).Queue("default").Group("ns/g", "default", 1);
  h.Pod("ns/plain", "g").Request("cpu=1").Add();
  h.Pod("ns/tolerant", "g")
      .Request("cpu=1")
      .Tolerate("node.kubernetes.io/unschedulable", "NoSchedule")
      .Add();
  PluginSession s(h, kPredicates);
  CHECK(Fails(s.Predicate("ns/plain", "cordoned"), reason::kNodeUnschedulable,
              Fit::Code::kUnschedulableUnresolvable));
  CHECK(s.Predicate("ns/tolerant", "cordoned").ok());
}

TEST_CASE("predicates: nodeSelector must match, unless predicate.NodeAffinityEnable is false") {
  Harness h;
  h.Node("n-ssd", "cpu=4", {{"disk", "ssd"}}).Node("n-hdd", "cpu=4", {{"disk", "hdd"}});
  h.Queue("default").Group("ns/g", "default", 1);
  h.Pod("ns/p", "g").Request("cpu=1").NodeSelector({{"disk", "ssd"}}).Add();
  {
    PluginSession s(h, kPredicates);
    CHECK(s.Predicate("ns/p", "n-ssd").ok());
    CHECK(Fails(s.Predicate("ns/p", "n-hdd"), reason::kNodeSelector,
                Fit::Code::kUnschedulableUnresolvable));
  }
  PluginSession off(h,
                    "- plugins:\n  - name: predicates\n    arguments:\n      "
                    "predicate.NodeAffinityEnable: false\n");
  CHECK(off.Predicate("ns/p", "n-hdd").ok());
}

TEST_CASE(
    "predicates: NoSchedule and NoExecute taints need a toleration, the reason names the taint") {
  Harness h;
  h.Node("n-gpu", "cpu=4", {}, {{"gpu", "true", "NoSchedule", {}}});
  h.Node("n-evict", "cpu=4", {}, {{"maintenance", "", "NoExecute", {}}});
  h.Node("n-soft", "cpu=4", {}, {{"spot", "true", "PreferNoSchedule", {}}});
  h.Queue("default").Group("ns/g", "default", 1);
  h.Pod("ns/p", "g").Request("cpu=1").Add();
  h.Pod("ns/gpu-ok", "g").Request("cpu=1").Tolerate("gpu", "NoSchedule").Add();
  PluginSession s(h, kPredicates);
  Fit gpu = s.Predicate("ns/p", "n-gpu");
  CHECK(Fails(gpu, gpu.reason, Fit::Code::kUnschedulableUnresolvable));
  CHECK(std::string(gpu.reason) == "node(s) had untolerated taint gpu=true:NoSchedule");
  CHECK(std::string(s.Predicate("ns/p", "n-evict").reason) ==
        "node(s) had untolerated taint maintenance:NoExecute");
  CHECK(s.Predicate("ns/p", "n-soft").ok());
  CHECK(s.Predicate("ns/gpu-ok", "n-gpu").ok());
}

TEST_CASE("predicates: a host port in use on a node rules the node out, until it is free") {
  Harness h;
  h.Node("n1", "cpu=4").Node("n2", "cpu=4").Queue("default");
  h.Group("ns/run", "default", 1, "Running").Group("ns/g", "default", 1);
  h.Pod("ns/web", "run").Request("cpu=1").HostPort(8080).On("n1").Add();
  h.Pod("ns/p", "g").Request("cpu=1").HostPort(8080).Add();
  h.Pod("ns/q", "g").Request("cpu=1").HostPort(8080).Add();
  h.Pod("ns/other-port", "g").Request("cpu=1").HostPort(9090).Add();
  PluginSession s(h, kPredicates);
  CHECK(Fails(s.Predicate("ns/p", "n1"), reason::kHostPorts, Fit::Code::kUnschedulable));
  CHECK(s.Predicate("ns/p", "n2").ok());
  CHECK(s.Predicate("ns/other-port", "n1").ok());
  s.Place("ns/p", "n2");
  CHECK(Fails(s.Predicate("ns/q", "n2"), reason::kHostPorts, Fit::Code::kUnschedulable));
}

TEST_CASE("predicates: required pod anti-affinity, the pod's own and existing pods'") {
  Harness h;
  h.Node("n1", "cpu=4").Node("n2", "cpu=4").Node("n3", "cpu=4").Queue("default");
  h.Group("ns/run", "default", 1, "Running").Group("ns/g", "default", 1);
  h.Pod("ns/web-0", "run").Labels({{"app", "web"}}).Request("cpu=1").On("n1").Add();
  h.Pod("ns/db-0", "run")
      .Labels({{"app", "db"}})
      .Request("cpu=1")
      .AntiAffinity("kubernetes.io/hostname", {{"app", "db"}})
      .On("n2")
      .Add();
  h.Pod("ns/web-1", "g")
      .Labels({{"app", "web"}})
      .Request("cpu=1")
      .AntiAffinity("kubernetes.io/hostname", {{"app", "web"}})
      .Add();
  h.Pod("ns/web-2", "g")
      .Labels({{"app", "web"}})
      .Request("cpu=1")
      .AntiAffinity("kubernetes.io/hostname", {{"app", "web"}})
      .Add();
  h.Pod("ns/db-1", "g").Labels({{"app", "db"}}).Request("cpu=1").Add();
  PluginSession s(h, kPredicates);
  CHECK(Fails(s.Predicate("ns/web-1", "n1"), reason::kPodAntiAffinity, Fit::Code::kUnschedulable));
  CHECK(s.Predicate("ns/web-1", "n3").ok());
  // db-0's anti-affinity keeps other db pods off n2 though db-1 has no rule of its own.
  CHECK(Fails(s.Predicate("ns/db-1", "n2"), reason::kExistingAntiAffinity,
              Fit::Code::kUnschedulable));
  CHECK(s.Predicate("ns/db-1", "n3").ok());
  // A pod placed in this session counts at once.
  s.Place("ns/web-1", "n3");
  CHECK(Fails(s.Predicate("ns/web-2", "n3"), reason::kPodAntiAffinity, Fit::Code::kUnschedulable));
}

TEST_CASE(
    "predicates: required pod affinity needs a matching pod in the domain, except for the first of "
    "a group") {
  Harness h;
  h.Node("n-a", "cpu=4", {{"zone", "a"}})
      .Node("n-b", "cpu=4", {{"zone", "b"}})
      .Node("n-none", "cpu=4");
  h.Queue("default").Group("ns/run", "default", 1, "Running").Group("ns/g", "default", 1);
  h.Pod("ns/cache", "run").Labels({{"app", "cache"}}).Request("cpu=1").On("n-a").Add();
  h.Pod("ns/near-cache", "g").Request("cpu=1").Affinity("zone", {{"app", "cache"}}).Add();
  h.Pod("ns/first", "g")
      .Labels({{"app", "new"}})
      .Request("cpu=1")
      .Affinity("zone", {{"app", "new"}})
      .Add();
  h.Pod("ns/lonely", "g").Request("cpu=1").Affinity("zone", {{"app", "nothing"}}).Add();
  PluginSession s(h, kPredicates);
  CHECK(s.Predicate("ns/near-cache", "n-a").ok());
  CHECK(Fails(s.Predicate("ns/near-cache", "n-b"), reason::kPodAffinity,
              Fit::Code::kUnschedulableUnresolvable));
  CHECK(Fails(s.Predicate("ns/near-cache", "n-none"), reason::kPodAffinity,
              Fit::Code::kUnschedulableUnresolvable));
  CHECK(s.Predicate("ns/first", "n-b").ok());  // selects itself and nothing matches yet
  CHECK(Fails(s.Predicate("ns/lonely", "n-b"), reason::kPodAffinity,
              Fit::Code::kUnschedulableUnresolvable));
}

TEST_CASE(
    "predicates: DoNotSchedule spread keeps the skew within maxSkew, nodes without the key are "
    "out") {
  Harness h;
  h.Node("n-a", "cpu=8", {{"zone", "a"}})
      .Node("n-b", "cpu=8", {{"zone", "b"}})
      .Node("n-none", "cpu=8");
  h.Queue("default").Group("ns/g", "default", 1);
  h.Pod("ns/w0", "g").Labels({{"app", "web"}}).Request("cpu=1").On("n-a").Add();
  h.Pod("ns/w1", "g")
      .Labels({{"app", "web"}})
      .Request("cpu=1")
      .Spread("zone", 1, {{"app", "web"}})
      .Add();
  h.Pod("ns/w2", "g")
      .Labels({{"app", "web"}})
      .Request("cpu=1")
      .Spread("zone", 1, {{"app", "web"}})
      .Add();
  PluginSession s(h, kPredicates);
  CHECK(Fails(s.Predicate("ns/w1", "n-a"), reason::kTopologySpread, Fit::Code::kUnschedulable));
  CHECK(s.Predicate("ns/w1", "n-b").ok());
  CHECK(Fails(s.Predicate("ns/w1", "n-none"), reason::kTopologySpreadMissing,
              Fit::Code::kUnschedulableUnresolvable));
  s.Place("ns/w1", "n-b");  // a 1, b 1: either zone may take the next
  CHECK(s.Predicate("ns/w2", "n-a").ok());
  CHECK(s.Predicate("ns/w2", "n-b").ok());
}

TEST_CASE("predicates: each predicate.*Enable argument turns its filter off") {
  Harness h;
  h.Node("n1", "cpu=4", {{"zone", "a"}}, {{"gpu", "true", "NoSchedule", {}}});
  h.Queue("default").Group("ns/run", "default", 1, "Running").Group("ns/g", "default", 1);
  h.Pod("ns/web-0", "run").Labels({{"app", "web"}}).Request("cpu=1").HostPort(80).On("n1").Add();
  h.Pod("ns/p", "g")
      .Labels({{"app", "web"}})
      .Request("cpu=1")
      .HostPort(80)
      .AntiAffinity("kubernetes.io/hostname", {{"app", "web"}})
      .Spread("zone", 0, {{"app", "web"}})
      .Add();
  PluginSession s(
      h,
      "- plugins:\n  - name: predicates\n    arguments:\n"
      "      predicate.TaintTolerationEnable: false\n      predicate.NodePortsEnable: false\n"
      "      predicate.PodAffinityEnable: false\n      predicate.PodTopologySpreadEnable: false\n");
  CHECK(s.Predicate("ns/p", "n1").ok());
  PluginSession on(h, kPredicates);
  CHECK_FALSE(on.Predicate("ns/p", "n1").ok());
}

}  // namespace
}  // namespace tephra::scheduler::testing
