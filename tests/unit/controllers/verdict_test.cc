// The job controller's own admission check: a Job's own rules against its queue's, and short
// messages for Jobs with many errors.
#include "controllers/job/verdict.h"

#include <catch2/catch.hpp>

#include "tests/unit/controllers/testing.h"

namespace tephra::controllers::job {
namespace {

using testing::JobJson;
using testing::MakeJob;
using testing::Task;

std::shared_ptr<api::Queue> Queue(const std::string& name, const std::string& state = "Open",
                                  const std::string& parent = "") {
  auto q = std::make_shared<api::Queue>();
  q->metadata.name = name;
  q->spec.parent = parent;
  q->status.state = state;
  return q;
}

TEST_CASE("a valid job in an open leaf queue passes") {
  api::StaticQueueLookup queues({Queue("default")});
  JobVerdict v = CheckJob(MakeJob(JobJson("[" + Task("a", 2) + "]")), queues);
  CHECK(v.ok());
}

TEST_CASE("a job's own rules and its queue's are told apart") {
  api::StaticQueueLookup queues({Queue("default")});
  std::string tasks = "[" + Task("a", 1, R"("dependsOn":{"name":["b"]})") + "," +
                      Task("b", 1, R"("dependsOn":{"name":["a"]})") + "]";
  JobVerdict cycle = CheckJob(MakeJob(JobJson(tasks)), queues);
  REQUIRE(cycle.invalid.size() == 1);
  CHECK(cycle.invalid[0].path == "spec.tasks");
  CHECK(cycle.invalid[0].message.find("cycle") != std::string::npos);
  CHECK(cycle.missing_queue.empty());

  JobVerdict both = CheckJob(
      MakeJob(JobJson("[" + Task("w", 1) + "," + Task("w", 1) + "]", R"("queue":"nosuch")")),
      queues);
  REQUIRE(both.invalid.size() == 1);
  CHECK(both.invalid[0].path == "spec.tasks[1].name");
  REQUIRE(both.missing_queue.size() == 1);
  CHECK(both.missing_queue[0].path == "spec.queue");
  CHECK(both.missing_queue[0].message == "queue \"nosuch\" does not exist");
}

TEST_CASE("a gang larger than the job's replicas is the job's own error") {
  api::StaticQueueLookup queues({Queue("default")});
  JobVerdict v =
      CheckJob(MakeJob(JobJson("[" + Task("t", 2) + "]", R"("minAvailable":5)")), queues);
  REQUIRE(v.invalid.size() == 1);
  CHECK(v.invalid[0].path == "spec.minAvailable");
  CHECK(v.missing_queue.empty());
}

TEST_CASE("a closed, root or parent queue is left to the scheduler") {
  api::StaticQueueLookup queues(
      {Queue("root"), Queue("shut", "Closed"), Queue("parent"), Queue("child", "Open", "parent")});
  for (const std::string q : {"root", "shut", "parent"}) {
    JobVerdict v =
        CheckJob(MakeJob(JobJson("[" + Task("a", 1) + "]", R"("queue":")" + q + "\"")), queues);
    INFO(q);
    CHECK(v.ok());
  }
}

TEST_CASE("a description lists a few errors, then counts the rest, in bounded length") {
  api::FieldErrors errors;
  for (int i = 0; i < 8; ++i)
    errors.push_back({"spec.tasks[" + std::to_string(i) + "].name", "bad"});
  std::string text = DescribeErrors(errors);
  CHECK(text.find("spec.tasks[4].name: bad") != std::string::npos);
  CHECK(text.find("spec.tasks[5]") == std::string::npos);
  CHECK(text.find("(and 3 more)") != std::string::npos);

  // One enormous message (a cycle through many tasks) is cut, never mid-character.
  std::string names;
  for (int i = 0; i < 2000; ++i) names += "tâche-" + std::to_string(i) + " -> ";
  std::string cut = DescribeErrors({{"spec.tasks", "dependsOn forms a cycle: " + names}});
  CHECK(cut.size() <= 1024 + 3);
  CHECK(cut.substr(cut.size() - 3) == "...");
  // Valid UTF-8: no continuation byte is left without its lead byte.
  std::string body = cut.substr(0, cut.size() - 3);
  size_t i = 0;
  while (i < body.size()) {
    unsigned char c = static_cast<unsigned char>(body[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : 4;
    REQUIRE(i + len <= body.size());
    i += len;
  }
}

}  // namespace
}  // namespace tephra::controllers::job
