// The sla plugin: a job past its waiting time is ordered first and let through enqueue and
// pipelining (docs/scheduler.md, Plugins: sla). The harness's PodGroups were created in 2023,
// so a waiting time of hours has long passed and one of a century has not.
#include <catch2/catch.hpp>

#include "tests/unit/scheduler/plugins/plugin_session.h"

namespace tephra::scheduler::testing {
namespace {

const char kSla[] = "- plugins:\n  - name: sla\n";
const char kLongAgo[] = "1h";
const char kNotYet[] = "876000h";  // a century

void Cluster(Harness& h) {
  h.Node("n1", "cpu=4").Queue("default");
  for (const char* key : {"ns/plain", "ns/late", "ns/later", "ns/waiting", "ns/prefixed"})
    h.Group(key, "default", 1, "Pending", "cpu=4");
  h.AnnotateGroup("ns/late", "sla-waiting-time", kLongAgo);
  h.AnnotateGroup("ns/later", "sla-waiting-time", "2h");
  h.AnnotateGroup("ns/waiting", "sla-waiting-time", kNotYet);
  h.AnnotateGroup("ns/prefixed", "volcano.sh/sla-waiting-time", kLongAgo);
}

}  // namespace

TEST_CASE("sla: a job past its waiting time is admitted and pipelined, others abstain") {
  Harness h;
  Cluster(h);
  h.Group("ns/run", "default", 1, "Running");
  h.Pod("ns/running", "run").Request("cpu=4").On("n1").Add();
  // overcommit in the second tier refuses all of them (4 x 1.2 - 4 < 4); sla's Permit in the
  // first tier decides before it is asked.
  PluginSession s(h, std::string(kSla) + "- plugins:\n  - name: overcommit\n");
  CHECK(s->JobEnqueueable(s.Job("ns/late")));
  CHECK(s->JobEnqueueable(s.Job("ns/prefixed")));
  CHECK_FALSE(s->JobEnqueueable(s.Job("ns/waiting")));
  CHECK_FALSE(s->JobEnqueueable(s.Job("ns/plain")));
  CHECK(s->JobPipelined(s.Job("ns/late")));
  CHECK(s->JobPipelined(s.Job("ns/late")));
  const std::vector<JobNote>* notes = s->JobNotes(s.JobAt("ns/late"));
  REQUIRE(notes != nullptr);
  CHECK(notes->size() == 1);  // once a session, however often it is asked
  CHECK(notes->front().plugin == "sla");
  CHECK(notes->front().message.find("SLA deadline passed ") == 0);
}

TEST_CASE("sla: jobs with a deadline first, the earliest first, and a bad duration is none") {
  Harness h;
  Cluster(h);
  h.AnnotateGroup("ns/plain", "sla-waiting-time", "soon");
  PluginSession s(h, kSla);
  auto before = [&](const char* l, const char* r) {
    return s->JobOrder(s.Job(l), s.Job(r)) && !s->JobOrder(s.Job(r), s.Job(l));
  };
  CHECK(before("ns/late", "ns/later"));
  CHECK(before("ns/later", "ns/waiting"));
  CHECK(before("ns/waiting", "ns/plain"));
}

TEST_CASE("sla: the plugin's sla-waiting-time applies to jobs without their own") {
  Harness h;
  Cluster(h);
  PluginSession s(h, "- plugins:\n  - name: sla\n    arguments: {sla-waiting-time: 30m}\n");
  CHECK(s->JobEnqueueable(s.Job("ns/plain")));
  PluginSession own(h, std::string(kSla));
  CHECK(own->JobEnqueueable(own.Job("ns/waiting")));  // abstains: all abstain is true
  CHECK(own->JobNotes(own.JobAt("ns/waiting")) == nullptr);
}

}  // namespace tephra::scheduler::testing
