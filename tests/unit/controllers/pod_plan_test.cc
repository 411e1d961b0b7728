// Which pods a job controller pass kills, deletes as surplus and creates (pod_plan.h), and
// what it did that the caches do not show yet (expectations.h).
#include "controllers/job/pod_plan.h"

#include <catch2/catch.hpp>

#include "controllers/job/expectations.h"
#include "tests/unit/controllers/testing.h"

namespace tephra::controllers::job {
namespace {

using testing::JobJson;
using testing::MakeJob;
using testing::MakePod;
using testing::Task;
using Pods = std::vector<std::shared_ptr<const api::Pod>>;

std::vector<std::string> Names(const std::vector<const api::Pod*>& pods) {
  std::vector<std::string> names;
  for (const api::Pod* p : pods) names.push_back(p->metadata.name);
  return names;
}

std::vector<std::string> Names(const std::vector<PodToCreate>& pods) {
  std::vector<std::string> names;
  for (const PodToCreate& p : pods) names.push_back(p.name);
  return names;
}

std::shared_ptr<const api::Pod> WithLabel(std::shared_ptr<const api::Pod> pod, std::string_view key,
                                          const std::string& value) {
  auto copy = std::make_shared<api::Pod>(*pod);
  copy->metadata.labels[std::string(key)] = value;
  return copy;
}

TEST_CASE("a kill deletes by its kind, never a pod already being deleted") {
  auto deleting = std::make_shared<api::Pod>(*MakePod("w", 3, "Running"));
  deleting->metadata.deletion_timestamp = base::Time();
  Pods pods = {MakePod("m", 0, "Running"),
               MakePod("w", 0, "Succeeded"),
               MakePod("w", 1, "Failed"),
               WithLabel(MakePod("w", 2, "Pending"), api::kPartitionIdLabel, "p1"),
               deleting,
               MakePod("w", 4, "Running")};
  const std::set<std::string> deleted = {"pod-w-4"};
  Request none;
  CHECK(PodsToKill(pods, Kill::kNone, Action::kSyncJob, none, deleted).empty());
  CHECK(Names(PodsToKill(pods, Kill::kSoft, Action::kRestartJob, none, deleted)) ==
        std::vector<std::string>{"j-m-0", "j-w-2"});
  CHECK(Names(PodsToKill(pods, Kill::kHard, Action::kRestartJob, none, deleted)) ==
        std::vector<std::string>{"j-m-0", "j-w-0", "j-w-1", "j-w-2"});

  Request target;
  target.task = "w";
  target.pod_name = "j-w-1";
  target.partition = "p1";
  CHECK(Names(PodsToKill(pods, Kill::kTarget, Action::kRestartTask, target, deleted)) ==
        std::vector<std::string>{"j-w-0", "j-w-1", "j-w-2"});
  CHECK(Names(PodsToKill(pods, Kill::kTarget, Action::kRestartPod, target, deleted)) ==
        std::vector<std::string>{"j-w-1"});
  CHECK(Names(PodsToKill(pods, Kill::kTarget, Action::kRestartPartition, target, deleted)) ==
        std::vector<std::string>{"j-w-2"});
  target.pod_name.clear();
  target.pod_uid = "pod-m-0";  // RestartPod matches the uid too
  CHECK(Names(PodsToKill(pods, Kill::kTarget, Action::kRestartPod, target, deleted)) ==
        std::vector<std::string>{"j-m-0"});
}

TEST_CASE("surplus pods: scaled down, of a task gone, without an index, or out of sync") {
  api::Job job = MakeJob(JobJson("[" + Task("w", 2) + "]"));
  auto no_index = std::make_shared<api::Pod>(*MakePod("w", 5, "Running"));
  no_index->metadata.name = "j-w-x";
  no_index->metadata.uid = "pod-w-x";
  no_index->metadata.labels[std::string(api::kTaskIndexKey)] = "x";
  auto out_of_sync = std::make_shared<api::Pod>(*MakePod("w", 1, "Running"));
  out_of_sync->metadata.annotations[std::string(api::kControllerOutOfSyncAnnotation)] = "true";
  auto deleting = std::make_shared<api::Pod>(*MakePod("w", 3, "Running"));
  deleting->metadata.deletion_timestamp = base::Time();
  Pods pods = {MakePod("w", 0, "Running"),
               out_of_sync,
               MakePod("w", 2, "Running"),
               deleting,
               no_index,
               MakePod("gone", 0, "Running"),
               MakePod("w", 4, "Running")};
  CHECK(Names(SurplusPods(job, pods, {"pod-w-4"})) ==
        std::vector<std::string>{"j-w-1", "j-w-2", "j-w-x", "j-gone-0"});
}

TEST_CASE("missing pods are every replica neither cached nor created already") {
  api::Job job = MakeJob(JobJson("[" + Task("m", 1) + "," + Task("w", 3) + "]"));
  Pods pods = {MakePod("w", 1, "Running")};
  std::map<std::string, base::Time> created = {{"j-w-2", base::Time()}};
  std::vector<PodToCreate> missing = MissingPods(job, pods, created);
  CHECK(Names(missing) == std::vector<std::string>{"j-m-0", "j-w-0"});
  REQUIRE(missing.size() == 2);
  CHECK(missing[1].task == &job.spec.tasks[1]);
  CHECK(missing[1].index == 0);
}

TEST_CASE("a task with dependsOn waits until its dependencies are ready") {
  auto depends = [](const std::string& iteration) {
    return MakeJob(
        JobJson("[" + Task("db", 2, R"("minAvailable":1)") + "," + Task("cache", 1) + "," +
                Task("app", 1,
                     R"("dependsOn":{"name":["db","cache"])" +
                         (iteration.empty() ? "" : R"(,"iteration":")" + iteration + "\"") + "}") +
                "]"));
  };
  auto ready = [](std::shared_ptr<const api::Pod> pod) {
    auto copy = std::make_shared<api::Pod>(*pod);
    copy->status.conditions.push_back({"Ready", "True", "", "", std::nullopt});
    return std::shared_ptr<const api::Pod>(copy);
  };
  api::Job all = depends("");
  api::Job any = depends("any");
  // db's one Running pod is not ready yet, cache has none: app waits either way.
  Pods pods = {MakePod("db", 0, "Running")};
  CHECK(Names(MissingPods(all, pods, {})) == std::vector<std::string>{"j-db-1", "j-cache-0"});
  CHECK(Names(MissingPods(any, pods, {})) == std::vector<std::string>{"j-db-1", "j-cache-0"});
  // db ready (minAvailable 1): enough for "any", not for all.
  pods = {ready(MakePod("db", 0, "Running"))};
  CHECK(Names(MissingPods(all, pods, {})) == std::vector<std::string>{"j-db-1", "j-cache-0"});
  CHECK(Names(MissingPods(any, pods, {})) ==
        std::vector<std::string>{"j-db-1", "j-cache-0", "j-app-0"});
  // cache Succeeded counts as ready too.
  pods.push_back(MakePod("cache", 0, "Succeeded"));
  CHECK(Names(MissingPods(all, pods, {})) == std::vector<std::string>{"j-db-1", "j-app-0"});
}

TEST_CASE("expectations are forgotten once the cache shows them, or after a while") {
  const base::Time now = base::ParseTime("2026-01-01T00:10:00Z").value();
  Expectations exp;
  exp.created = {{"j-w-0", now},
                 {"j-w-1", now - std::chrono::seconds(5)},
                 {"j-w-2", now - kCreationExpectationTtl - std::chrono::seconds(1)}};
  exp.deleted_pod_uids = {"pod-w-3", "pod-w-4"};
  Pods pods = {MakePod("w", 0, "Pending"), MakePod("w", 3, "Running")};
  exp.CatchUp(pods, now);
  // j-w-0 is cached; j-w-2 was created too long ago to still wait for.
  CHECK(exp.created == std::map<std::string, base::Time>{{"j-w-1", now - std::chrono::seconds(5)}});
  // pod-w-3 is still cached (its deletion not seen yet); pod-w-4 is gone.
  CHECK(exp.deleted_pod_uids == std::set<std::string>{"pod-w-3"});
}

TEST_CASE("unseen creations and deletions count in the pass's pod writes") {
  api::Job job = MakeJob(JobJson("[" + Task("m", 1) + "," + Task("w", 2) + "]"));
  Expectations exp;
  exp.created = {{"j-w-0", base::Time()}, {"j-w-1", base::Time()}, {"other-w-0", base::Time()}};
  exp.deleted_pod_uids = {"pod-m-0"};
  PodWrites writes;
  writes.created = {{"j-w-1", "w"}};  // this pass created it: not counted twice
  Pods pods = {MakePod("m", 0, "Running"), MakePod("w", 1, "Pending")};
  exp.AddUnseen(job, pods, &writes);
  CHECK(writes.created ==
        std::vector<std::pair<std::string, std::string>>{{"j-w-1", "w"}, {"j-w-0", "w"}});
  CHECK(writes.deleted == std::set<std::string>{"j-m-0"});
}

}  // namespace
}  // namespace tephra::controllers::job
