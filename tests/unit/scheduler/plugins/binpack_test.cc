// The binpack plugin's node score: the fullest node that still fits, weighted per resource
// (docs/scheduler.md, Plugins: binpack).
#include <catch2/catch.hpp>

#include "tests/unit/scheduler/plugins/plugin_session.h"

namespace tephra::scheduler::testing {
namespace {

// n-half has half its cpu used; n-empty nothing.
void Cluster(Harness& h) {
  h.Node("n-half", "cpu=4,memory=4Gi,nvidia.com/gpu=4")
      .Node("n-empty", "cpu=4,memory=4Gi,nvidia.com/gpu=4");
  h.Queue("default").Group("ns/run", "default", 1, "Running").Group("ns/g", "default", 1);
  h.Pod("ns/running", "run").Request("cpu=2").On("n-half").Add();
  h.Pod("ns/small", "g").Request("cpu=1,memory=1Gi").Add();
  h.Pod("ns/big", "g").Request("cpu=3,memory=1Gi").Add();
  h.Pod("ns/gpu", "g").Request("cpu=1,nvidia.com/gpu=2").Add();
}

TEST_CASE("binpack: the fuller node scores higher, as used + request over allocatable") {
  Harness h;
  Cluster(h);
  PluginSession s(h, "- plugins:\n  - name: binpack\n");
  // n-half: (3/4 + 1/4) / 2 x 100; n-empty: (1/4 + 1/4) / 2 x 100.
  CHECK(s.Scores("ns/small", {"n-half", "n-empty"}) == std::vector<double>{50, 25});
}

TEST_CASE("binpack: a node the pod would not fit on scores 0") {
  Harness h;
  Cluster(h);
  PluginSession s(h, "- plugins:\n  - name: binpack\n");
  CHECK(s.Scores("ns/big", {"n-half", "n-empty"}) == std::vector<double>{0, 50});
}

TEST_CASE("binpack: binpack.weight scales and binpack.cpu / binpack.memory weigh the resources") {
  Harness h;
  Cluster(h);
  PluginSession s(h,
                  "- plugins:\n  - name: binpack\n    arguments:\n      binpack.weight: 10\n"
                  "      binpack.cpu: 3\n      binpack.memory: 1\n");
  // n-half: (3 x 3/4 + 1 x 1/4) / 4 x 100 x 10; n-empty: (3 x 1/4 + 1/4) / 4 x 100 x 10.
  CHECK(s.Scores("ns/small", {"n-half", "n-empty"}) == std::vector<double>{625, 250});
}

TEST_CASE("binpack: extended resources count only when listed in binpack.resources") {
  Harness h;
  Cluster(h);
  h.Pod("ns/gpu-user", "run").Request("nvidia.com/gpu=2").On("n-empty").Add();
  {
    PluginSession s(h, "- plugins:\n  - name: binpack\n");
    // Only cpu counts: n-half (3/4), n-empty (1/4).
    CHECK(s.Scores("ns/gpu", {"n-half", "n-empty"}) == std::vector<double>{75, 25});
  }
  PluginSession s(
      h,
      "- plugins:\n  - name: binpack\n    arguments:\n"
      "      binpack.resources: nvidia.com/gpu\n      binpack.resources.nvidia.com/gpu: 3\n");
  // cpu (weight 1) and gpu (weight 3): n-half (3/4 + 3 x 2/4) / 4; n-empty (1/4 + 3 x 4/4) / 4.
  CHECK(s.Scores("ns/gpu", {"n-half", "n-empty"}) == std::vector<double>{56.25, 81.25});
}

TEST_CASE("binpack: binpack.weight 0 turns the plugin off") {
  Harness h;
  Cluster(h);
  PluginSession s(h, "- plugins:\n  - name: binpack\n    arguments:\n      binpack.weight: 0\n");
  CHECK_FALSE(s->HasNodeOrder());
  CHECK(s.Scores("ns/small", {"n-half", "n-empty"}) == std::vector<double>{0, 0});
}

}  // namespace
}  // namespace tephra::scheduler::testing
