// The nodeorder plugin's scores, one scorer at a time (the others weighted 0): kube-scheduler's
// resource, affinity, taint and spread scores as docs/scheduler.md (Plugins: nodeorder) states.
#include <catch2/catch.hpp>

#include "tests/unit/scheduler/plugins/plugin_session.h"

namespace tephra::scheduler::testing {
namespace {

// The nodeorder tier with every scorer off except `only` (weighted `weight`).
std::string Only(const std::string& only, int weight = 1) {
  std::string yaml = "- plugins:\n  - name: nodeorder\n    arguments:\n";
  for (const char* w : {"leastrequested", "mostrequested", "balancedresource", "nodeaffinity",
                        "tainttoleration", "podaffinity", "podtopologyspread"}) {
    yaml +=
        "      " + std::string(w) + ".weight: " + (w == only ? std::to_string(weight) : "0") + "\n";
  }
  return yaml;
}

// n-half: 2 of 4 cpu and 2 of 4 GiB used; n-empty: nothing used.
void Cluster(Harness& h) {
  h.Node("n-half", "cpu=4,memory=4Gi").Node("n-empty", "cpu=4,memory=4Gi").Queue("default");
  h.Group("ns/run", "default", 1, "Running").Group("ns/g", "default", 1);
  h.Pod("ns/running", "run").Request("cpu=2,memory=2Gi").On("n-half").Add();
  h.Pod("ns/p", "g").Request("cpu=1,memory=1Gi").Add();
}

TEST_CASE("nodeorder: leastrequested prefers free nodes, mostrequested full ones") {
  Harness h;
  Cluster(h);
  {
    PluginSession s(h, Only("leastrequested"));
    CHECK(s.Scores("ns/p", {"n-half", "n-empty"}) == std::vector<double>{25, 75});
  }
  PluginSession s(h, Only("mostrequested", 2));
  CHECK(s.Scores("ns/p", {"n-half", "n-empty"}) == std::vector<double>{150, 50});
}

TEST_CASE("nodeorder: balancedresource scores the change in cpu/memory balance, 75 for none") {
  Harness h;
  h.Node("n-cpu-used", "cpu=4,memory=4Gi").Node("n-empty", "cpu=4,memory=4Gi").Queue("default");
  h.Group("ns/run", "default", 1, "Running").Group("ns/g", "default", 1);
  h.Pod("ns/running", "run").Request("cpu=2").On("n-cpu-used").Add();
  h.Pod("ns/mem", "g").Request("cpu=1,memory=3Gi").Add();
  h.Pod("ns/even", "g").Request("cpu=1,memory=1Gi").Add();
  PluginSession s(h, Only("balancedresource"));
  // n-cpu-used: balance 75 before, 100 after: (150 + 100 - 75) / 2 = 87 (whole numbers).
  // n-empty: 100 before, 75 after: (150 + 75 - 100) / 2 = 62.
  CHECK(s.Scores("ns/mem", {"n-cpu-used", "n-empty"}) == std::vector<double>{87, 62});
  CHECK(s.Scores("ns/even", {"n-empty"}) == std::vector<double>{75});
}

TEST_CASE("nodeorder: preferred node affinity, normalised to the best node") {
  Harness h;
  h.Node("n-a", "cpu=4", {{"zone", "a"}})
      .Node("n-b", "cpu=4", {{"zone", "b"}})
      .Node("n-c", "cpu=4", {{"zone", "c"}});
  h.Queue("default").Group("ns/g", "default", 1);
  h.Pod("ns/p", "g").Request("cpu=1").PreferNode("zone", "a", 8).PreferNode("zone", "b", 2).Add();
  PluginSession s(h, Only("nodeaffinity", 2));
  CHECK(s.Scores("ns/p", {"n-a", "n-b", "n-c"}) == std::vector<double>{200, 50, 0});
}

TEST_CASE("nodeorder: untolerated PreferNoSchedule taints lower the score") {
  Harness h;
  api::Taint soft{"spot", "true", "PreferNoSchedule", {}};
  api::Taint hard{"gpu", "true", "NoSchedule", {}};
  h.Node("n-soft", "cpu=4", {}, {soft})
      .Node("n-hard", "cpu=4", {}, {hard})
      .Node("n-clean", "cpu=4");
  h.Queue("default").Group("ns/g", "default", 1);
  h.Pod("ns/p", "g").Request("cpu=1").Add();
  h.Pod("ns/tolerant", "g").Request("cpu=1").Tolerate("spot").Add();
  PluginSession s(h, Only("tainttoleration", 3));
  // Only PreferNoSchedule counts here (NoSchedule is the predicates' business).
  CHECK(s.Scores("ns/p", {"n-soft", "n-hard", "n-clean"}) == std::vector<double>{0, 300, 300});
  CHECK(s.Scores("ns/tolerant", {"n-soft", "n-hard", "n-clean"}) ==
        std::vector<double>{300, 300, 300});
}

TEST_CASE(
    "nodeorder: soft topology spread prefers emptier domains, following the session's placements") {
  Harness h;
  h.Node("n-a", "cpu=8", {{"zone", "a"}}).Node("n-b", "cpu=8", {{"zone", "b"}}).Queue("default");
  h.Group("ns/g", "default", 1);
  h.Pod("ns/w0", "g").Labels({{"app", "web"}}).Request("cpu=1").On("n-a").Add();
  h.Pod("ns/w1", "g").Labels({{"app", "web"}}).Request("cpu=1").Add();
  h.Pod("ns/w2", "g").Labels({{"app", "web"}}).Request("cpu=1").Add();
  h.Pod("ns/new", "g")
      .Labels({{"app", "web"}})
      .Request("cpu=1")
      .Spread("zone", 1, {{"app", "web"}}, false)
      .Add();
  PluginSession s(h, Only("podtopologyspread", 2));
  CHECK(s.Scores("ns/new", {"n-a", "n-b"}) == std::vector<double>{0, 200});
  s.Place("ns/w1", "n-b");
  s.Place("ns/w2", "n-b");  // now b holds 2, a 1
  CHECK(s.Scores("ns/new", {"n-a", "n-b"}) == std::vector<double>{100, 0});
}

}  // namespace
}  // namespace tephra::scheduler::testing
