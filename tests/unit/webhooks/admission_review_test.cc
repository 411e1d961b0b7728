// The AdmissionReview codec and the router around the handlers: round trips, malformed bodies,
// readiness, metrics.
#include <string>

#include <catch2/catch.hpp>

#include "base/base64.h"
#include "tests/unit/webhooks/testing.h"

namespace tephra::webhooks {
namespace {

using testing::JsonEqual;

constexpr const char* kRequest = R"({
  "apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",
  "request":{
    "uid":"705ab4f5-6393-11e8-b7cc-42010a800002",
    "kind":{"group":"batch.volcano.sh","version":"v1alpha1","kind":"Job"},
    "resource":{"group":"batch.volcano.sh","version":"v1alpha1","resource":"jobs"},
    "requestKind":{"group":"batch.volcano.sh","version":"v1alpha1","kind":"Job"},
    "subResource":"","name":"j","namespace":"team","operation":"UPDATE",
    "userInfo":{"username":"alice","uid":"u-1","groups":["devs","system:authenticated"],
                "extra":{"scopes":["a"]}},
    "object":{"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{"name":"j"}},
    "oldObject":{"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{"name":"j","generation":1}},
    "dryRun":true,
    "options":{"apiVersion":"meta.k8s.io/v1","kind":"UpdateOptions"}}})";

TEST_CASE("A request review decodes every field the handlers use") {
  auto r = DecodeAdmissionRequest(kRequest);
  REQUIRE(r.ok());
  CHECK(r->api_version == "admission.k8s.io/v1");
  CHECK(r->uid == "705ab4f5-6393-11e8-b7cc-42010a800002");
  CHECK(r->kind == GroupVersionKind{"batch.volcano.sh", "v1alpha1", "Job"});
  CHECK(r->resource == GroupVersionResource{"batch.volcano.sh", "v1alpha1", "jobs"});
  CHECK(r->sub_resource.empty());
  CHECK(r->operation == Operation::kUpdate);
  CHECK(r->namespace_ == "team");
  CHECK(r->name == "j");
  CHECK(r->dry_run);
  CHECK(r->user_info == UserInfo{"alice", "u-1", {"devs", "system:authenticated"}});
  REQUIRE(r->object != nullptr);
  REQUIRE(r->old_object != nullptr);
  CHECK(json::Write(*r->object) ==
        R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{"name":"j"}})");
  CHECK(json::Write(*r->old_object).find("\"generation\":1") != std::string::npos);

  // Encoding it again and decoding gives the same request.
  std::string again =
      EncodeAdmissionRequest(*r, json::Write(*r->object), json::Write(*r->old_object));
  auto r2 = DecodeAdmissionRequest(again);
  REQUIRE(r2.ok());
  CHECK(r2->uid == r->uid);
  CHECK(r2->kind == r->kind);
  CHECK(r2->resource == r->resource);
  CHECK(r2->operation == r->operation);
  CHECK(r2->namespace_ == r->namespace_);
  CHECK(r2->name == r->name);
  CHECK(r2->dry_run == r->dry_run);
  CHECK(r2->user_info == r->user_info);
  CHECK(json::Write(*r2->object) == json::Write(*r->object));
  CHECK(json::Write(*r2->old_object) == json::Write(*r->old_object));
}

TEST_CASE("DELETE carries only the old object and null objects read as absent") {
  auto r = DecodeAdmissionRequest(R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",
      "request":{"uid":"1","operation":"DELETE","name":"q","object":null,
      "oldObject":{"kind":"Queue","metadata":{"name":"q"}}}})");
  REQUIRE(r.ok());
  CHECK(r->operation == Operation::kDelete);
  CHECK(r->object == nullptr);
  CHECK(r->old_object != nullptr);
}

TEST_CASE("Responses encode verdict, status, base64 patch and warnings, and decode back") {
  AdmissionRequest request;
  request.uid = "abc";
  request.api_version = "admission.k8s.io/v1";

  AdmissionResponse allow = AdmissionResponse::Allow(request);
  CHECK(JsonEqual(EncodeAdmissionResponse(allow),
                  R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",
                      "response":{"uid":"abc","allowed":true}})"));

  AdmissionResponse deny = AdmissionResponse::Deny(request, 422, "Invalid", "spec.x: bad");
  CHECK(JsonEqual(EncodeAdmissionResponse(deny),
                  R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",
                      "response":{"uid":"abc","allowed":false,"status":{"metadata":{},
                      "status":"Failure","message":"spec.x: bad","reason":"Invalid","code":422}}})"));

  AdmissionResponse patched = AdmissionResponse::Allow(request);
  patched.patch = R"([{"op":"add","path":"/spec/queue","value":"default"}])";
  patched.warnings = {"minAvailable was computed"};
  std::string text = EncodeAdmissionResponse(patched);
  CHECK(JsonEqual(text, R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",
      "response":{"uid":"abc","allowed":true,"patchType":"JSONPatch","patch":")" +
                            base::Base64Encode(patched.patch) +
                            R"(","warnings":["minAvailable was computed"]}})"));

  for (const AdmissionResponse& r : {allow, deny, patched}) {
    auto decoded = DecodeAdmissionResponse(EncodeAdmissionResponse(r));
    REQUIRE(decoded.ok());
    CHECK(*decoded == r);
  }
}

TEST_CASE("A v1beta1 review is answered in v1beta1") {
  auto r = DecodeAdmissionRequest(R"({"apiVersion":"admission.k8s.io/v1beta1",
      "kind":"AdmissionReview","request":{"uid":"1","operation":"CREATE"}})");
  REQUIRE(r.ok());
  CHECK(EncodeAdmissionResponse(AdmissionResponse::Allow(*r)).find("admission.k8s.io/v1beta1") !=
        std::string::npos);
}

TEST_CASE("Malformed reviews are refused with the field and rule") {
  struct Bad {
    std::string body;
    std::string message;
  };
  const std::string deep = std::string(200, '[') + std::string(200, ']');
  const std::vector<Bad> bads = {
      {"", "empty body; expected an AdmissionReview"},
      {"not json", "invalid JSON at offset 1: Invalid value."},
      {"[1,2]", "expected an AdmissionReview JSON object"},
      {R"({"apiVersion":"admission.k8s.io/v1","kind":"Pod"})",
       "kind: expected AdmissionReview, got \"Pod\""},
      {R"({"apiVersion":"admission.k8s.io/v2","kind":"AdmissionReview"})",
       "apiVersion: expected admission.k8s.io/v1, got \"admission.k8s.io/v2\""},
      {R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"})",
       "request: expected an object"},
      {R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"operation":"CREATE"}})",
       "AdmissionReview: request.uid: is required"},
      {R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"1","operation":"PATCH"}})",
       "AdmissionReview: request.operation: expected CREATE, UPDATE, DELETE or CONNECT, got "
       "\"PATCH\""},
      {R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"1","operation":"CREATE","object":"x"}})",
       "AdmissionReview: request.object: expected an object"},
      {R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":7,"operation":"CREATE"}})",
       "AdmissionReview: request.uid: expected string, got integer; request.uid: is required"},
      {R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"1","operation":"CREATE","dryRun":"yes"}})",
       "AdmissionReview: request.dryRun: expected boolean, got string"},
      // Too deep and not a review: there is no request to answer in kind.
      {deep, "expected an AdmissionReview JSON object"},
  };
  for (const Bad& b : bads) {
    INFO(b.body.substr(0, 200));
    auto r = DecodeAdmissionRequest(b.body);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == StatusCode::kInvalidArgument);
    CHECK(r.status().message() == b.message);
  }
}

// A Job whose first task's affinity nests `levels` objects deep ({"a":{"a":...}}).
std::string DeepJob(int levels) {
  std::string deep;
  for (int i = 0; i < levels; ++i) deep += R"({"a":)";
  deep += "1" + std::string(static_cast<size_t>(levels), '}');
  return R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{"name":"j"},)"
         R"("spec":{"tasks":[{"name":"w","replicas":1,"template":{"spec":{"affinity":)" +
         deep + R"(,"containers":[{"name":"c","image":"x"}]}}}]}})";
}

TEST_CASE("A review nested too deep is read as far as the limit and says where it goes on") {
  auto r = DecodeAdmissionRequest(testing::Review("Job", Operation::kCreate, DeepJob(200)));
  REQUIRE(r.ok());
  CHECK(r->uid == "uid-1");
  CHECK(r->kind.kind == "Job");
  // The object's levels: the Job 1, spec 2, tasks 3, the task 4, template 5, spec 6, the
  // affinity 7 to 206: its 121st object is the 127th level.
  CHECK(r->too_deep ==
        "spec.tasks[0].template.spec.affinity.a.a.a.a.a.a ... a.a: nested more than 126 levels "
        "deep; tephra-admission reads objects up to 126 levels deep");
  // One level less is read whole.
  auto fits = DecodeAdmissionRequest(testing::Review("Job", Operation::kCreate, DeepJob(120)));
  REQUIRE(fits.ok());
  CHECK(fits->too_deep.empty());
  auto old =
      DecodeAdmissionRequest(testing::Review("Job", Operation::kUpdate, DeepJob(1), DeepJob(130)));
  REQUIRE(old.ok());
  CHECK(old->too_deep.rfind("oldObject.spec.tasks[0].template.spec.affinity.a.a", 0) == 0);
}

TEST_CASE("The router denies a review nested too deep in a review, naming the path and limit") {
  api::StaticQueueLookup queues = testing::TestQueues();
  testing::StaticNamespaces namespaces;
  testing::TestRouter router(queues, namespaces);
  const std::string review = testing::Review("Job", Operation::kCreate, DeepJob(200));
  for (std::string_view path : {kJobsMutate, kJobsValidate}) {
    INFO(path);
    AdmissionResponse response = router.Call(path, review);
    CHECK_FALSE(response.allowed);
    CHECK(response.uid == "uid-1");
    CHECK(response.code == 400);
    CHECK(response.reason == "BadRequest");
    CHECK(response.message.rfind("spec.tasks[0].template.spec.affinity.a.a", 0) == 0);
    CHECK(response.message.find("nested more than 126 levels deep") != std::string::npos);
    CHECK(response.patch.empty());
  }
  std::string metrics = router.registry().Render();
  CHECK(
      metrics.find(R"(tephra_admission_requests_total{path="/jobs/mutate",verdict="denied"} 1)") !=
      std::string::npos);
}

TEST_CASE("The depth check skips brackets inside strings") {
  std::string in_string = R"({"a":")" + std::string(500, '[') + R"("})";
  CHECK_FALSE(JsonDeeperThan(in_string, 2));
  CHECK(JsonDeeperThan(R"({"a":[[1]]})", 2));
  CHECK_FALSE(JsonDeeperThan(R"({"a":[[1]]})", 3));
  CHECK_FALSE(JsonDeeperThan(R"({"a":"\"[[[[["})", 1));
}

TEST_CASE("The router answers 400 to malformed reviews, 404 to unknown paths, and counts") {
  api::StaticQueueLookup queues = testing::TestQueues();
  testing::StaticNamespaces namespaces;
  testing::TestRouter router(queues, namespaces);
  base::HttpResponse bad = router.Http(kJobsValidate, "{");
  CHECK(bad.status == 400);
  CHECK(bad.body.rfind("malformed AdmissionReview: invalid JSON", 0) == 0);
  CHECK(router.Http("/nowhere", "{}").status == 404);

  std::string good_queue = testing::Review(
      "Queue", Operation::kCreate,
      R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","metadata":{"name":"x"},"spec":{}})");
  CHECK(router.Call(kQueuesValidate, good_queue).allowed);
  CHECK_FALSE(
      router
          .Call(kQueuesValidate, testing::Review("Queue", Operation::kDelete, "",
                                                 R"({"kind":"Queue","metadata":{"name":"root"}})"))
          .allowed);
  std::string metrics = router.registry().Render();
  INFO(metrics);
  CHECK(
      metrics.find(R"(tephra_admission_requests_total{path="/jobs/validate",verdict="error"} 1)") !=
      std::string::npos);
  CHECK(metrics.find(
            R"(tephra_admission_requests_total{path="/queues/validate",verdict="allowed"} 1)") !=
        std::string::npos);
  CHECK(metrics.find(
            R"(tephra_admission_requests_total{path="/queues/validate",verdict="denied"} 1)") !=
        std::string::npos);
  CHECK(metrics.find(
            R"(tephra_admission_request_duration_seconds_count{path="/queues/validate"} 2)") !=
        std::string::npos);
}

TEST_CASE("Until its caches sync a handler is not called and the answer says why") {
  metrics::Registry registry;
  AdmissionRouter router(registry);
  bool synced = false;
  api::StaticQueueLookup queues = testing::TestQueues();
  REQUIRE(router
              .Add(std::string(kJobsValidate), NewJobValidator(queues),
                   [&] {
                     return synced ? Status::Ok()
                                   : Unavailable("waiting for the queue cache to sync");
                   })
              .ok());
  CHECK(router.Add(std::string(kJobsValidate), NewJobValidator(queues)).code() ==
        StatusCode::kAlreadyExists);
  CHECK(router.Add("jobs", NewJobValidator(queues)).code() == StatusCode::kInvalidArgument);

  std::string body = testing::Review(
      "Job", Operation::kCreate,
      R"({"kind":"Job","metadata":{"name":"j","namespace":"t"},"spec":{"queue":"default","tasks":[
          {"name":"a","replicas":1,"template":{"spec":{"containers":[{"name":"c","image":"i"}]}}}]}})");
  base::HttpRequest http;
  http.body = body;
  auto not_ready = DecodeAdmissionResponse(router.Serve(kJobsValidate, http).body);
  REQUIRE(not_ready.ok());
  CHECK_FALSE(not_ready->allowed);
  CHECK(not_ready->code == 503);
  CHECK(not_ready->reason == "ServiceUnavailable");
  CHECK(not_ready->message ==
        "tephra-admission is not ready: waiting for the queue cache to sync; retry shortly");
  synced = true;
  auto ready = DecodeAdmissionResponse(router.Serve(kJobsValidate, http).body);
  REQUIRE(ready.ok());
  CHECK(ready->allowed);
  CHECK(registry.Render().find(R"(verdict="error"} 1)") != std::string::npos);
}

TEST_CASE("Paths: what each needs, and unknown ones refused") {
  CHECK(NeedsOf(kJobsValidate)->queues);
  CHECK_FALSE(NeedsOf(kJobsMutate)->queues);
  CHECK(NeedsOf(kPodGroupsMutate)->namespaces);
  CHECK_FALSE(NeedsOf(kPodsValidate)->queues);
  CHECK(NeedsOf("/cronjobs/validate").status().message() ==
        "unknown admission path \"/cronjobs/validate\"; known: /jobs/mutate, /jobs/validate, "
        "/queues/mutate, /queues/validate, /podgroups/mutate, /podgroups/validate, /pods/mutate, "
        "/pods/validate, /hypernodes/validate");
  CHECK(NewHandler(kJobsValidate, {}, {}).status().code() == StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace tephra::webhooks
