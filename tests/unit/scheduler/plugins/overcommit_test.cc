// The overcommit plugin's admission vote: the cluster x overcommit-factor less what is used must
// hold the minResources of every admitted job not started yet (docs/scheduler.md, Plugins:
// overcommit).
#include <catch2/catch.hpp>

#include "tests/unit/scheduler/plugins/plugin_session.h"

namespace tephra::scheduler::testing {
namespace {

const char kOvercommit[] = "- plugins:\n  - name: overcommit\n";

// 10 CPU with 4 used: 10 x 1.2 - 4 = 8 CPU of room. An admitted job not started holds 3 of it.
void Cluster(Harness& h) {
  h.Node("n1", "cpu=10").Queue("default");
  h.Group("ns/run", "default", 1, "Running");
  h.Pod("ns/running", "run").Request("cpu=4").On("n1").Add();
  h.Group("ns/admitted", "default", 1, "Inqueue", "cpu=3");
  h.Pod("ns/admitted-0", "admitted").Request("cpu=3").Add();
  h.Group("ns/fits", "default", 1, "Pending", "cpu=5");
  h.Group("ns/too-big", "default", 1, "Pending", "cpu=6");
  h.Group("ns/small", "default", 1, "Pending", "cpu=1");
  h.Group("ns/no-min", "default", 1, "Pending");
}

TEST_CASE("overcommit: admits while the inflated cluster has room for admitted, unstarted jobs") {
  Harness h;
  Cluster(h);
  PluginSession s(h, kOvercommit);
  CHECK(s->JobEnqueueable(s.Job("ns/fits")));           // 3 + 5 <= 8
  CHECK_FALSE(s->JobEnqueueable(s.Job("ns/too-big")));  // 3 + 6 > 8
  CHECK(s->JobEnqueueable(s.Job("ns/no-min")));         // nothing to hold
}

TEST_CASE("overcommit: a refused job gets a note naming the plugin and the numbers") {
  Harness h;
  Cluster(h);
  PluginSession s(h, kOvercommit);
  REQUIRE_FALSE(s->JobEnqueueable(s.Job("ns/too-big")));
  const std::vector<JobNote>* notes = s->JobNotes(s.JobAt("ns/too-big"));
  REQUIRE(notes != nullptr);
  REQUIRE(notes->size() == 1);
  CHECK(notes->front().plugin == "overcommit");
  CHECK(notes->front().message.find("minResources cpu 6") != std::string::npos);
}

TEST_CASE("overcommit: each job admitted in the session holds its minResources for the next vote") {
  Harness h;
  Cluster(h);
  PluginSession s(h, kOvercommit);
  REQUIRE(s->JobEnqueueable(s.Job("ns/fits")));
  s->JobEnqueued(s.Job("ns/fits"));                   // 3 + 5 = 8 held
  CHECK_FALSE(s->JobEnqueueable(s.Job("ns/small")));  // 8 + 1 > 8
}

TEST_CASE("overcommit: overcommit-factor sets the inflation, below 1 it falls back to 1.2") {
  Harness h;
  Cluster(h);
  {
    PluginSession s(
        h, "- plugins:\n  - name: overcommit\n    arguments:\n      overcommit-factor: 1.3\n");
    CHECK(s->JobEnqueueable(s.Job("ns/too-big")));  // 13 - 4 = 9 >= 3 + 6
  }
  PluginSession s(
      h, "- plugins:\n  - name: overcommit\n    arguments:\n      overcommit-factor: 0.5\n");
  CHECK(s->JobEnqueueable(s.Job("ns/fits")));
  CHECK_FALSE(s->JobEnqueueable(s.Job("ns/too-big")));
}

TEST_CASE("overcommit: resources the job may preempt count as room") {
  Harness h;
  Cluster(h);
  PluginSession s(h, kOvercommit);
  CHECK(s->JobEnqueueable(s.Job("ns/too-big"), *api::Resources::FromString("cpu=1")));
}

}  // namespace
}  // namespace tephra::scheduler::testing
