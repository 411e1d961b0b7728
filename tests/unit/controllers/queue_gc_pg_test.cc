// The queue state table, TTL expiry, PodGroups for plain pods and --controllers selection.
#include <catch2/catch.hpp>

#include "controllers/framework/controller.h"
#include "controllers/gc/gc_controller.h"
#include "controllers/podgroup/pg_controller.h"
#include "controllers/queue/queue_controller.h"
#include "tests/unit/controllers/testing.h"

namespace tephra::controllers {
namespace {

using queue::NextQueueState;
using queue::QueueAction;

TEST_CASE("queue states follow the table for every state and action") {
  struct Row {
    std::string state;
    QueueAction action;
    size_t podgroups;
    std::string next;
  };
  const std::vector<Row> rows = {
      {"", QueueAction::kSync, 0, "Open"},           {"", QueueAction::kOpen, 3, "Open"},
      {"", QueueAction::kClose, 0, "Closed"},        {"", QueueAction::kClose, 2, "Closing"},
      {"Open", QueueAction::kSync, 5, "Open"},       {"Open", QueueAction::kOpen, 5, "Open"},
      {"Open", QueueAction::kClose, 0, "Closed"},    {"Open", QueueAction::kClose, 1, "Closing"},
      {"Closed", QueueAction::kSync, 4, "Closed"},   {"Closed", QueueAction::kOpen, 0, "Open"},
      {"Closed", QueueAction::kClose, 4, "Closed"},  {"Closing", QueueAction::kSync, 1, "Closing"},
      {"Closing", QueueAction::kSync, 0, "Closed"},  {"Closing", QueueAction::kOpen, 1, "Open"},
      {"Closing", QueueAction::kClose, 0, "Closed"}, {"Closing", QueueAction::kClose, 2, "Closing"},
      {"Unknown", QueueAction::kSync, 0, "Unknown"}, {"Unknown", QueueAction::kOpen, 1, "Open"},
      {"Unknown", QueueAction::kClose, 0, "Closed"}, {"Unknown", QueueAction::kClose, 1, "Closing"},
  };
  for (const Row& r : rows) {
    INFO(r.state << " action " << static_cast<int>(r.action) << " with " << r.podgroups);
    CHECK(NextQueueState(r.state, r.action, r.podgroups) == r.next);
  }
}

api::Job FinishedJob(const std::string& phase, std::optional<int32_t> ttl) {
  api::Job job;
  job.spec.ttl_seconds_after_finished = ttl;
  job.status.state.phase = phase;
  job.status.state.last_transition_time = base::ParseTime("2026-01-01T00:00:00Z");
  return job;
}

TEST_CASE("finished jobs with a TTL expire that long after their last transition") {
  base::Time t0 = base::ParseTime("2026-01-01T00:00:00Z").value();
  for (const char* phase : {"Completed", "Failed", "Terminated", "Aborted"}) {
    INFO(phase);
    auto left = gc::TimeUntilExpiry(FinishedJob(phase, 60), t0 + std::chrono::seconds(20));
    REQUIRE(left.has_value());
    CHECK(*left == std::chrono::seconds(40));
    CHECK(gc::TimeUntilExpiry(FinishedJob(phase, 60), t0 + std::chrono::seconds(61))->count() < 0);
  }
  CHECK_FALSE(gc::TimeUntilExpiry(FinishedJob("Running", 60), t0).has_value());
  CHECK_FALSE(gc::TimeUntilExpiry(FinishedJob("Completed", std::nullopt), t0).has_value());
  api::Job no_time = FinishedJob("Completed", 0);
  no_time.status.state.last_transition_time.reset();
  CHECK_FALSE(gc::TimeUntilExpiry(no_time, t0).has_value());
  CHECK(gc::TimeUntilExpiry(FinishedJob("Completed", 0), t0)->count() == 0);
}

api::Pod PlainPod() {
  auto decoded = api::DecodePod(std::string(
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-1","namespace":"ns","uid":"pod-uid",)"
      R"("annotations":{"scheduling.volcano.sh/queue-name":"research","volcano.sh/preemptable":"true",)"
      R"("volcano.sh/network-topology-mode":"hard","volcano.sh/network-topology-highest-tier":"2"},)"
      R"("ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web","uid":"rs-uid",)"
      R"("controller":true}]},"spec":{"schedulerName":"volcano","priorityClassName":"high",)"
      R"("containers":[{"name":"c","image":"x","resources":{"requests":{"cpu":"250m","memory":"1Gi"}}}]}})"));
  REQUIRE(decoded.ok());
  return **decoded;
}

TEST_CASE("a plain pod's PodGroup takes its owner's group size and the pod's queue") {
  api::Pod pod = PlainPod();
  CHECK(api::ImplicitPodGroupName(pod.metadata) == "podgroup-rs-uid");
  api::PodGroup pg = api::ImplicitPodGroup(pod,
                                           {{"scheduling.volcano.sh/group-min-member", "3"},
                                            {"volcano.sh/sla-waiting-time", "1h"},
                                            {"unrelated", "x"}},
                                           "default");
  CHECK(pg.metadata.name == "podgroup-rs-uid");
  CHECK(pg.spec.min_member == 3);
  CHECK(pg.spec.queue == "research");
  CHECK(pg.spec.priority_class_name == "high");
  CHECK(pg.status.phase == "Pending");
  api::Resources r = api::Resources::FromList(*pg.spec.min_resources);
  CHECK(r.milli_cpu() == 750);
  CHECK(r.memory() == 3LL << 30);
  CHECK(pg.metadata.annotations.at("volcano.sh/sla-waiting-time") == "1h");
  CHECK(pg.metadata.annotations.count("unrelated") == 0);
  CHECK(pg.metadata.annotations.at("volcano.sh/preemptable") == "true");
  REQUIRE(pg.spec.network_topology.has_value());
  CHECK(pg.spec.network_topology->mode == "hard");
  CHECK(pg.spec.network_topology->highest_tier_allowed == 2);
  REQUIRE(pg.metadata.owner_references.size() == 1);
  CHECK(pg.metadata.owner_references[0].uid == "rs-uid");
}

TEST_CASE("a bare pod owns its own PodGroup of one") {
  api::Pod pod = PlainPod();
  pod.metadata.owner_references.clear();
  pod.metadata.annotations.clear();
  CHECK(api::ImplicitPodGroupName(pod.metadata) == "podgroup-pod-uid");
  api::PodGroup pg = api::ImplicitPodGroup(pod, {}, "default");
  CHECK(pg.spec.min_member == 1);
  CHECK(pg.spec.queue == "default");
  REQUIRE(pg.metadata.owner_references.size() == 1);
  CHECK(pg.metadata.owner_references[0].kind == "Pod");
  CHECK(pg.metadata.owner_references[0].uid == "pod-uid");
}

TEST_CASE("the controllers flag accepts Volcano's * and +/- syntax") {
  auto all = SelectControllers({"*"});
  REQUIRE(all.ok());
  CHECK(all->size() == 5);
  auto minus = SelectControllers({"*", "-queue-controller"});
  REQUIRE(minus.ok());
  CHECK(*minus == std::vector<std::string>{"job-controller", "pg-controller", "gc-controller",
                                           "hyperNode-controller"});
  auto some = SelectControllers({"+gc-controller", "job-controller"});
  REQUIRE(some.ok());
  CHECK(*some == std::vector<std::string>{"job-controller", "gc-controller"});
  auto bad = SelectControllers({"*", "-jobflow"});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("unknown controller \"jobflow\"") != std::string::npos);
}

}  // namespace
}  // namespace tephra::controllers
