// The gang schedule timeout (docs/scheduler.md, "Schedule timeout"): an admitted gang that stays
// unplaced for tephra.dev/schedule-timeout gives its admission back, so the queue's room goes to
// the next job, and is admitted again once its back-off has passed.
#include <catch2/catch.hpp>

#include "api/labels.h"
#include "tests/unit/scheduler/harness.h"

namespace tephra::scheduler::testing {
namespace {

using std::chrono::seconds;

// Queue q holds 4 CPU (or `capability`). "stuck" (admitted first) needs a zone no node has;
// "next" fits.
void Cluster(Harness& h, const std::string& backoff = "", const std::string& capability = "cpu=4") {
  h.Node("n1", "cpu=8", {{"zone", "a"}}).Queue("default").Queue("q", 1, capability);
  h.Group("ns/stuck", "q", 2, "Pending", "cpu=4");
  h.AnnotateGroup("ns/stuck", std::string(api::kScheduleTimeoutKey), "10s");
  if (!backoff.empty()) h.AnnotateGroup("ns/stuck", std::string(api::kScheduleBackoffKey), backoff);
  for (const char* p : {"ns/stuck-0", "ns/stuck-1"})
    h.Pod(p, "stuck").Request("cpu=2").NodeSelector({{"zone", "b"}}).Add();
  h.Group("ns/next", "q", 2, "Pending", "cpu=4");
  for (const char* p : {"ns/next-0", "ns/next-1"}) h.Pod(p, "next").Request("cpu=2").Add();
}

Harness::Result RunAndApply(Harness& h) {
  Harness::Result r = h.Run();
  h.ApplyOutcome(r.outcome);
  return r;
}

TEST_CASE("schedule timeout: an unplaced gang gives its admission back to the next job") {
  base::FakeClock clock;
  Harness h(clock);
  Cluster(h);
  Harness::Result r = RunAndApply(h);
  CHECK(r.phases["ns/stuck"] == "Inqueue");
  CHECK(r.binds.empty());  // "next" waits: the queue's 4 CPU are admitted to "stuck"

  clock.Advance(seconds(9));
  r = RunAndApply(h);
  CHECK(r.phases.count("ns/stuck") == 0);  // not yet: still Inqueue, nothing to write
  CHECK(r.binds.empty());

  clock.Advance(seconds(2));
  r = RunAndApply(h);
  CHECK(r.phases["ns/stuck"] == "Pending");
  const api::PodGroupCondition* c = WrittenCondition(r, "ns/stuck", "Unschedulable");
  REQUIRE(c != nullptr);
  CHECK(c->reason == "ScheduleTimeout");
  CHECK(c->message.rfind("not placed within 10s of admission (", 0) == 0);
  CHECK(c->message.find("admission given back, next try in 10s") != std::string::npos);

  r = RunAndApply(h);  // the queue's room is free for "next"; "stuck" backs off
  CHECK(r.binds.size() == 2);
  CHECK(r.binds.count("next-0") == 1);
  CHECK(r.phases.count("ns/stuck") == 0);
}

TEST_CASE("schedule timeout: admitted again once the back-off has passed") {
  base::FakeClock clock;
  Harness h(clock);
  Cluster(h, "30s", "cpu=8");  // room for both
  RunAndApply(h);
  clock.Advance(seconds(11));
  Harness::Result r = RunAndApply(h);
  REQUIRE(r.phases["ns/stuck"] == "Pending");
  h.Node("n2", "cpu=8", {{"zone", "b"}});  // "stuck" could fit now, but backs off
  clock.Advance(seconds(20));
  r = RunAndApply(h);
  CHECK(r.binds.count("stuck-0") == 0);
  clock.Advance(seconds(11));
  r = RunAndApply(h);
  CHECK(r.phases["ns/stuck"] == "Running");
  CHECK(r.binds.count("stuck-0") == 1);
}

TEST_CASE("schedule timeout: without the annotation an admitted gang waits as in Volcano") {
  base::FakeClock clock;
  Harness h(clock);
  h.Node("n1", "cpu=8").Queue("default");
  h.Group("ns/g", "default", 2, "Pending", "cpu=4");
  for (const char* p : {"ns/g-0", "ns/g-1"})
    h.Pod(p, "g").Request("cpu=2").NodeSelector({{"zone", "b"}}).Add();
  REQUIRE(RunAndApply(h).phases["ns/g"] == "Inqueue");
  clock.Advance(std::chrono::hours(24));
  Harness::Result r = RunAndApply(h);
  CHECK((r.phases.count("ns/g") == 0 || r.phases["ns/g"] == "Inqueue"));
}

}  // namespace
}  // namespace tephra::scheduler::testing
