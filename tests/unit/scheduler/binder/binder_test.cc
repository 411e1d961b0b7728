// KubeBinder over the fake API server: assume-then-bind, rollback and the FailedScheduling
// event when a bind fails, the client's retries of throttled binds, eviction (DisruptionTarget
// condition, then a delete guarded by the pod's uid) and the binder's metrics.
#include "scheduler/binder/binder.h"

#include <algorithm>

#include <catch2/catch.hpp>
#include <rapidjson/document.h>

#include "json/json.h"
#include "tests/unit/scheduler/fake_api.h"
#include "tests/unit/scheduler/harness.h"

namespace tephra::scheduler::testing {
namespace {

const char kPods[] = "/api/v1/namespaces/ns/pods";

struct BinderFixture : FakeApi {
  BinderFixture() {
    h.Node("n1", "cpu=8")
        .Node("n2", "cpu=8")
        .Queue("default")
        .Group("ns/g", "default", 1, "Running");
  }

  // A pod both in the API server and in the scheduler's cache, with the uid the server gave it.
  std::string Pod(const std::string& name, const std::string& node = "",
                  bool implicit_group = false) {
    std::string spec = node.empty() ? "{}" : R"({"nodeName":")" + node + R"("})";
    std::string stored =
        fake->Put(kPods, R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
                             R"("},"spec":)" + spec + "}");
    json::Document doc;
    REQUIRE(json::Parse(stored, &doc).ok());
    json::Errors errors;
    std::string uid = json::Reader(&doc, &errors)["metadata"]["uid"].String();
    auto b = h.Pod("ns/" + name, "g").Request("cpu=1").Uid(uid);
    if (!node.empty()) b.On(node);
    if (implicit_group) b.ImplicitGroup();
    b.Add();
    return uid;
  }

  const TaskInfo& Task(const std::string& uid) { return h.cache().Job("ns/g")->tasks.at(uid); }
  TaskStatus StatusOf(const std::string& uid) { return Task(uid).status; }

  KubeBinder& Binder() {
    if (!binder)
      binder = std::make_unique<KubeBinder>(client, h.cache(), &events, &registry,
                                            BinderOptions{2, true});
    return *binder;
  }

  Harness h;
  std::unique_ptr<KubeBinder> binder;
};

TEST_CASE("binder: a bind is assumed in the cache at once, then posted as a Binding") {
  BinderFixture f;
  std::string uid = f.Pod("p");
  f.Binder().Bind(f.Task(uid), "n1");
  // Assumed before the request is answered: the next session sees the pod on n1.
  CHECK(f.h.cache().Node("n1")->tasks.count(uid) == 1);
  REQUIRE(f.Binder().Drain(kWait));
  CHECK(f.Requests("POST /api/v1/namespaces/ns/pods/p/binding") == 1);
  CHECK(f.fake->Object(kPods, "p")->find(R"("nodeName":"n1")") != std::string::npos);
  CHECK(f.StatusOf(uid) == TaskStatus::kBinding);
  CHECK(f.Binder().bound() == 1);
  CHECK(f.Binder().failed() == 0);
  CHECK(f.HasMetric("tephra_pods_bound_total 1"));
  CHECK(f.HasMetric("tephra_bind_errors_total 0"));
  CHECK(f.Events().find("Successfully assigned ns/p to n1") != std::string::npos);
}

TEST_CASE("binder: a pod that names no group gets its group's name in the binding itself") {
  BinderFixture f;
  std::string implicit = f.Pod("bare", "", true);
  std::string named = f.Pod("named");
  f.Binder().Bind(f.Task(implicit), "n1");
  f.Binder().Bind(f.Task(named), "n2");
  REQUIRE(f.Binder().Drain(kWait));
  // The API server copies a binding's annotations to the pod: one write, no patch.
  CHECK(f.fake->Object(kPods, "bare")->find(R"("scheduling.k8s.io/group-name":"g")") !=
        std::string::npos);
  CHECK(f.fake->Object(kPods, "named")->find("group-name") == std::string::npos);
  CHECK(f.Requests("PATCH /api/v1/namespaces/ns/pods/bare") == 0);
}

TEST_CASE("binder: a conflicting bind is rolled back, so the next session places the pod again") {
  BinderFixture f;
  std::string uid = f.Pod("p");
  f.fake->FailNext(1, 409, "POST");
  f.Binder().Bind(f.Task(uid), "n1");
  REQUIRE(f.Binder().Drain(kWait));
  CHECK(f.StatusOf(uid) == TaskStatus::kPending);
  CHECK(f.h.cache().Node("n1")->tasks.count(uid) == 0);
  CHECK(f.Binder().failed() == 1);
  CHECK(f.HasMetric("tephra_bind_errors_total 1"));
  CHECK(f.Events().find("FailedScheduling") != std::string::npos);
  // The retry: a later session binds it again and this time it goes through.
  f.Binder().Bind(f.Task(uid), "n2");
  REQUIRE(f.Binder().Drain(kWait));
  CHECK(f.StatusOf(uid) == TaskStatus::kBinding);
  CHECK(f.fake->Object(kPods, "p")->find(R"("nodeName":"n2")") != std::string::npos);
  CHECK(f.Binder().bound() == 1);
}

TEST_CASE(
    "binder: a server error is not retried blindly (a bind is not idempotent) and is rolled back") {
  BinderFixture f;
  std::string uid = f.Pod("p");
  f.fake->FailNext(1, 500, "POST");
  f.Binder().Bind(f.Task(uid), "n1");
  REQUIRE(f.Binder().Drain(kWait));
  CHECK(f.Requests("POST /api/v1/namespaces/ns/pods/p/binding") == 1);
  CHECK(f.StatusOf(uid) == TaskStatus::kPending);
  CHECK(f.Binder().failed() == 1);
}

TEST_CASE("binder: a throttled bind is retried by the client and succeeds") {
  BinderFixture f;
  std::string uid = f.Pod("p");
  f.fake->FailNext(2, 429, "POST");
  f.Binder().Bind(f.Task(uid), "n1");
  REQUIRE(f.Binder().Drain(kWait));
  CHECK(f.Requests("POST /api/v1/namespaces/ns/pods/p/binding") == 3);
  CHECK(f.StatusOf(uid) == TaskStatus::kBinding);
  CHECK(f.Binder().bound() == 1);
  CHECK(f.HasMetric("tephra_bind_errors_total 0"));
}

TEST_CASE("binder: a pod deleted before its bind is forgotten without a FailedScheduling event") {
  BinderFixture f;
  std::string uid = f.Pod("p");
  f.fake->Remove(kPods, "p");
  f.Binder().Bind(f.Task(uid), "n1");
  REQUIRE(f.Binder().Drain(kWait));
  CHECK(f.StatusOf(uid) == TaskStatus::kPending);
  CHECK(f.Binder().failed() == 1);
  CHECK(f.Events().find("FailedScheduling") == std::string::npos);
}

TEST_CASE("binder: an eviction marks the pod, says why, then deletes it by uid") {
  BinderFixture f;
  std::string uid = f.Pod("victim", "n1");
  f.Binder().Evict(f.Task(uid), "preempted by ns/urgent");
  CHECK(f.StatusOf(uid) == TaskStatus::kReleasing);  // at once, for the next session
  REQUIRE(f.Binder().Drain(kWait));
  auto requests = f.fake->requests();
  auto patch =
      std::find(requests.begin(), requests.end(), "PATCH /api/v1/namespaces/ns/pods/victim/status");
  auto del =
      std::find(requests.begin(), requests.end(), "DELETE /api/v1/namespaces/ns/pods/victim");
  REQUIRE(patch != requests.end());
  REQUIRE(del != requests.end());
  CHECK(patch < del);  // the DisruptionTarget condition first
  CHECK_FALSE(f.fake->Object(kPods, "victim").has_value());
  CHECK(f.HasMetric("volcano_pod_preemption_victims 1"));
  std::string events = f.Events();
  CHECK(events.find(R"("reason":"Evicted")") != std::string::npos);
  CHECK(events.find(R"("kind":"PodGroup")") != std::string::npos);
  CHECK(events.find("preempted by ns/urgent") != std::string::npos);
}

TEST_CASE("binder: an eviction never deletes a pod recreated under the same name") {
  BinderFixture f;
  std::string uid = f.Pod("victim", "n1");
  f.fake->Remove(kPods, "victim");
  f.fake->Put(
      kPods,
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"victim"},"spec":{"nodeName":"n1"}})");
  f.Binder().Evict(f.Task(uid), "preempted");
  REQUIRE(f.Binder().Drain(kWait));
  CHECK(f.fake->Object(kPods, "victim").has_value());  // the uid precondition failed
  CHECK(f.HasMetric("volcano_pod_preemption_victims 0"));
}

}  // namespace
}  // namespace tephra::scheduler::testing
