// The priority plugin's hooks: task and job order, starvation and victims (docs/scheduler.md,
// Plugins: priority).
#include <catch2/catch.hpp>

#include "tests/unit/scheduler/plugins/plugin_session.h"

namespace tephra::scheduler::testing {
namespace {

const char kPriority[] = "- plugins:\n  - name: priority\n";

TEST_CASE("priority: tasks of higher pod priority go first") {
  Harness h;
  h.Node("n1", "cpu=8").Queue("default").Group("ns/g", "default", 1);
  h.Pod("ns/low", "g").Request("cpu=1").Priority(1).Add();
  h.Pod("ns/high", "g").Request("cpu=1").Priority(100).Add();
  h.Pod("ns/same", "g").Request("cpu=1").Priority(1).Add();
  PluginSession s(h, kPriority);
  CHECK(s->TaskOrder(s.Task("ns/high"), s.Task("ns/low")));
  CHECK_FALSE(s->TaskOrder(s.Task("ns/low"), s.Task("ns/high")));
  CHECK(s->CompareTasksByPlugins(s.Task("ns/high"), s.Task("ns/low")) < 0);
  CHECK(s->CompareTasksByPlugins(s.Task("ns/low"), s.Task("ns/same")) == 0);  // no opinion on a tie
}

TEST_CASE("priority: jobs of a higher PriorityClass go first") {
  Harness h;
  h.Node("n1", "cpu=8").Queue("default").PriorityClass("urgent", 1000).PriorityClass("batch", 10);
  h.Group("ns/batch", "default", 1, "Inqueue", "", "batch")
      .Group("ns/urgent", "default", 1, "Inqueue", "", "urgent");
  h.Pod("ns/b", "batch").Request("cpu=1").Add();
  h.Pod("ns/u", "urgent").Request("cpu=1").Add();
  PluginSession s(h, kPriority);
  CHECK(s.Job("ns/urgent").priority == 1000);
  CHECK(s->JobOrder(s.Job("ns/urgent"), s.Job("ns/batch")));
  CHECK_FALSE(s->JobOrder(s.Job("ns/batch"), s.Job("ns/urgent")));
}

TEST_CASE("priority: within equal priority, jobs with a deadline first, the earliest first") {
  Harness h;
  h.Node("n1", "cpu=8").Queue("default").PriorityClass("urgent", 1000);
  h.Group("ns/none", "default", 1, "Pending")
      .Group("ns/late", "default", 1, "Pending")
      .Group("ns/soon", "default", 1, "Pending")
      .Group("ns/urgent", "default", 1, "Pending", "", "urgent")
      .Group("ns/garbled", "default", 1, "Pending");
  h.AnnotateGroup("ns/late", "tephra.dev/deadline", "2030-01-01T00:00:00Z");
  h.AnnotateGroup("ns/soon", "tephra.dev/deadline", "2026-01-01T00:00:00+01:00");
  h.AnnotateGroup("ns/garbled", "tephra.dev/deadline", "tomorrow");
  PluginSession s(h, kPriority);
  auto before = [&](const char* l, const char* r) {
    return s->JobOrder(s.Job(l), s.Job(r)) && !s->JobOrder(s.Job(r), s.Job(l));
  };
  CHECK(before("ns/urgent", "ns/soon"));  // priority first: the urgent job has no deadline
  CHECK(before("ns/soon", "ns/late"));
  CHECK(before("ns/late", "ns/none"));
  CHECK(before("ns/none", "ns/garbled"));  // no deadline either: the older first
  const std::vector<JobNote>* notes = s->JobNotes(s.JobAt("ns/soon"));
  REQUIRE(notes != nullptr);
  CHECK(notes->front().message.rfind("deadline 2026-01-01T00:00:00+01:00 (", 0) == 0);
}

TEST_CASE("priority: a job starves while any of its live tasks is neither ready nor pipelined") {
  Harness h;
  h.Node("n1", "cpu=8").Queue("default").Group("ns/g", "default", 1);
  h.Pod("ns/run", "g").Request("cpu=1").On("n1").Add();
  h.Pod("ns/wait", "g").Request("cpu=1").Add();
  PluginSession s(h, kPriority);
  // gang alone would call this job satisfied (1 ready >= minAvailable 1); priority wants all.
  CHECK(s->JobStarving(s.Job("ns/g")));
  s.Place("ns/wait", "n1");
  CHECK_FALSE(s->JobStarving(s.Job("ns/g")));
}

TEST_CASE(
    "priority: victims come from lower-priority jobs, or lower-priority tasks of the same job") {
  Harness h;
  h.Node("n1", "cpu=8").Queue("default").PriorityClass("high", 100).PriorityClass("low", 1);
  h.Group("ns/hi", "default", 1, "Inqueue", "", "high")
      .Group("ns/lo", "default", 1, "Running", "", "low");
  h.Group("ns/peer", "default", 1, "Running", "", "high");
  h.Pod("ns/preemptor", "hi").Request("cpu=1").Priority(50).Add();
  h.Pod("ns/hi-low-task", "hi").Request("cpu=1").Priority(10).On("n1").Add();
  h.Pod("ns/hi-high-task", "hi").Request("cpu=1").Priority(50).On("n1").Add();
  h.Pod("ns/lo-task", "lo").Request("cpu=1").Priority(1000).On("n1").Add();
  h.Pod("ns/peer-task", "peer").Request("cpu=1").Priority(1).On("n1").Add();
  PluginSession s(h, kPriority);
  auto victims = s.Preemptable("ns/preemptor",
                               {"ns/hi-low-task", "ns/hi-high-task", "ns/lo-task", "ns/peer-task"});
  // Across jobs the job's priority counts, not the task's: lo-task goes despite its 1000, and
  // the equal-priority peer job is safe despite its task's 1.
  CHECK(victims == std::vector<std::string>{"hi-low-task", "lo-task"});
}

}  // namespace
}  // namespace tephra::scheduler::testing
