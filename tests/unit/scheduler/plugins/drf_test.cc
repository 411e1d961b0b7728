// The drf plugin's hooks: job order by dominant share, share-keeping victims, shares that follow
// the session's allocations (docs/scheduler.md, Plugins: drf).
#include <catch2/catch.hpp>

#include "tests/unit/scheduler/plugins/plugin_session.h"

namespace tephra::scheduler::testing {
namespace {

const char kDrf[] = "- plugins:\n  - name: drf\n";

// A 10 CPU, 10 GiB cluster.
void Cluster(Harness& h) {
  h.Node("n1", "cpu=6,memory=6Gi").Node("n2", "cpu=4,memory=4Gi").Queue("default");
}

TEST_CASE("drf: the job with the lower dominant share goes first") {
  Harness h;
  Cluster(h);
  h.Group("ns/cpu-heavy", "default", 1, "Running").Group("ns/mem-heavy", "default", 1, "Running");
  h.Pod("ns/c1", "cpu-heavy").Request("cpu=4,memory=1Gi").On("n1").Add();  // share 0.4 (cpu)
  h.Pod("ns/m1", "mem-heavy").Request("cpu=1,memory=5Gi").On("n1").Add();  // share 0.5 (memory)
  PluginSession s(h, kDrf);
  CHECK(s->JobOrder(s.Job("ns/cpu-heavy"), s.Job("ns/mem-heavy")));
  CHECK_FALSE(s->JobOrder(s.Job("ns/mem-heavy"), s.Job("ns/cpu-heavy")));
}

TEST_CASE("drf: shares follow allocations made in the session") {
  Harness h;
  Cluster(h);
  h.Group("ns/a", "default", 1, "Running").Group("ns/b", "default", 1, "Running");
  h.Pod("ns/a1", "a").Request("cpu=2").On("n1").Add();  // 0.2
  h.Pod("ns/a2", "a").Request("cpu=2").Add();
  h.Pod("ns/b1", "b").Request("cpu=3").On("n1").Add();  // 0.3
  PluginSession s(h, kDrf);
  CHECK(s->JobOrder(s.Job("ns/a"), s.Job("ns/b")));
  s.Place("ns/a2", "n2");  // a: 0.4
  CHECK(s->JobOrder(s.Job("ns/b"), s.Job("ns/a")));
  s.Evict("ns/a1");  // a: 0.2 again
  CHECK(s->JobOrder(s.Job("ns/a"), s.Job("ns/b")));
}

TEST_CASE("drf: a victim's job must keep a share at least the preemptor's after the move") {
  Harness h;
  Cluster(h);
  h.Group("ns/big", "default", 1, "Running").Group("ns/small", "default", 1, "Running");
  h.Group("ns/new", "default", 1, "Inqueue");
  for (int i = 0; i < 4; ++i)
    h.Pod("ns/big-" + std::to_string(i), "big").Request("cpu=1").On("n1").Add();  // 0.4
  h.Pod("ns/small-0", "small").Request("cpu=1").On("n2").Add();                   // 0.1
  h.Pod("ns/new-0", "new").Request("cpu=2").Add();                                // 0.2 once placed
  h.Pod("ns/new-1", "new").Request("cpu=1").On("n2").Add();
  PluginSession s(h, kDrf);
  // big keeps 0.3 >= new's 0.3 (0.1 held + 0.2 asked); small would drop to 0; new's own task
  // is always offered.
  CHECK(s.Preemptable("ns/new-0", {"ns/big-0", "ns/small-0", "ns/new-1"}) ==
        std::vector<std::string>{"big-0", "new-1"});
}

TEST_CASE(
    "drf: victims are weighed against the preemptor's share after this session's placements") {
  Harness h;
  Cluster(h);
  h.Group("ns/big", "default", 1, "Running").Group("ns/new", "default", 1, "Inqueue");
  for (int i = 0; i < 4; ++i)
    h.Pod("ns/big-" + std::to_string(i), "big").Request("cpu=1").On("n1").Add();  // 0.4
  h.Pod("ns/new-0", "new").Request("cpu=2").Add();
  h.Pod("ns/new-1", "new").Request("cpu=1").On("n2").Add();  // 0.1
  h.Pod("ns/new-2", "new").Request("cpu=1").Add();
  PluginSession s(h, kDrf);
  // new would hold 0.3 with new-0; big keeps 0.3.
  CHECK(s.Preemptable("ns/new-0", {"ns/big-0"}) == std::vector<std::string>{"big-0"});
  s.Place("ns/new-2", "n2");  // new holds 0.2, and 0.4 with new-0: big would keep less
  CHECK(s.Preemptable("ns/new-0", {"ns/big-0"}).empty());
}

}  // namespace
}  // namespace tephra::scheduler::testing
