// Helpers shared by the webhooks/ unit tests: a small queue tree, namespaces, AdmissionReview
// request bodies, and a router serving every path over them.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include <catch2/catch.hpp>
#include <rapidjson/document.h>

#include "api/json_patch.h"
#include "api/scheduling.h"
#include "api/validation.h"
#include "json/json.h"
#include "metrics/metrics.h"
#include "webhooks/admission/admission_review.h"
#include "webhooks/admission/handlers.h"
#include "webhooks/server/router.h"

namespace tephra::webhooks::testing {

inline std::shared_ptr<const api::Queue> QueueFromJson(const std::string& json) {
  auto q = api::DecodeQueue(json);
  REQUIRE(q.ok());
  return *q;
}

// A queue with a state and extra spec members (JSON text without braces).
inline std::shared_ptr<const api::Queue> MakeQueue(const std::string& name,
                                                   const std::string& state,
                                                   const std::string& spec = "") {
  return QueueFromJson(R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue",
      "metadata":{"name":")" +
                       name + R"("},"spec":{)" + spec + R"(},"status":{"state":")" + state +
                       R"("}})");
}

// root
//  ├─ default                 Open
//  ├─ closed                  Closed
//  ├─ research                capability cpu 20, deserved cpu 10, guarantee cpu 4
//  │   ├─ research-a          deserved cpu 6, guarantee cpu 2
//  │   └─ research-b          deserved cpu 3, guarantee cpu 1
//  ├─ capped                  capability cpu 10
//  └─ l1 └─ l2 └─ l3 └─ l4 └─ l5   (depth 5, the maximum)
inline api::StaticQueueLookup TestQueues() {
  return api::StaticQueueLookup({
      MakeQueue("root", "Open"),
      MakeQueue("default", "Open"),
      MakeQueue("closed", "Closed"),
      MakeQueue(
          "research", "Open",
          R"("capability":{"cpu":"20"},"deserved":{"cpu":"10"},"guarantee":{"resource":{"cpu":"4"}})"),
      MakeQueue(
          "research-a", "Open",
          R"("parent":"research","deserved":{"cpu":"6"},"guarantee":{"resource":{"cpu":"2"}})"),
      MakeQueue(
          "research-b", "Open",
          R"("parent":"research","deserved":{"cpu":"3"},"guarantee":{"resource":{"cpu":"1"}})"),
      MakeQueue("capped", "Open", R"("capability":{"cpu":"10"})"),
      MakeQueue("l1", "Open"),
      MakeQueue("l2", "Open", R"("parent":"l1")"),
      MakeQueue("l3", "Open", R"("parent":"l2")"),
      MakeQueue("l4", "Open", R"("parent":"l3")"),
      MakeQueue("l5", "Open", R"("parent":"l4")"),
  });
}

class StaticNamespaces : public api::NamespaceLookup {
 public:
  void Put(const std::string& name, std::map<std::string, std::string> annotations) {
    auto ns = std::make_shared<api::Namespace>();
    ns->metadata.name = name;
    ns->metadata.annotations = std::move(annotations);
    namespaces_[name] = ns;
  }
  std::shared_ptr<const api::Namespace> Get(std::string_view name) const override {
    auto it = namespaces_.find(std::string(name));
    return it == namespaces_.end() ? nullptr : it->second;
  }

 private:
  std::map<std::string, std::shared_ptr<const api::Namespace>> namespaces_;
};

// An AdmissionReview request for `kind` (Job, Queue, PodGroup or Pod); name and namespace
// come from the object (or the old object for DELETE).
inline std::string Review(std::string_view kind, Operation op, std::string_view object,
                          std::string_view old_object = {}, bool dry_run = false) {
  AdmissionRequest r;
  r.uid = "uid-1";
  r.operation = op;
  r.dry_run = dry_run;
  r.user_info.username = "alice";
  if (kind == "Job") {
    r.kind = {"batch.volcano.sh", "v1alpha1", "Job"};
    r.resource = {"batch.volcano.sh", "v1alpha1", "jobs"};
  } else if (kind == "Pod") {
    r.kind = {"", "v1", "Pod"};
    r.resource = {"", "v1", "pods"};
  } else {
    r.kind = {"scheduling.volcano.sh", "v1beta1", std::string(kind)};
    r.resource = {"scheduling.volcano.sh", "v1beta1", kind == "Queue" ? "queues" : "podgroups"};
  }
  json::Document doc;
  std::string_view named = object.empty() ? old_object : object;
  if (!named.empty() && json::Parse(named, &doc).ok()) {
    json::Errors errors;
    json::Reader meta = json::Reader(&doc, &errors)["metadata"];
    r.name = meta["name"].String();
    r.namespace_ = meta["namespace"].String();
  }
  return EncodeAdmissionRequest(r, object, old_object);
}

// Every path served over `queues` and `namespaces`.
class TestRouter {
 public:
  TestRouter(const api::QueueLookup& queues, const api::NamespaceLookup& namespaces,
             HandlerOptions options = {})
      : router_(registry_) {
    for (std::string_view path : kAllPaths) {
      auto handler = NewHandler(path, options, {&queues, &namespaces});
      REQUIRE(handler.ok());
      REQUIRE(router_.Add(std::string(path), *handler).ok());
    }
  }

  base::HttpResponse Http(std::string_view path, std::string body) const {
    base::HttpRequest request;
    request.method = "POST";
    request.path = std::string(path);
    request.body = std::move(body);
    return router_.Serve(path, request);
  }

  // The decoded answer; the HTTP status must be 200.
  AdmissionResponse Call(std::string_view path, std::string body) const {
    base::HttpResponse http = Http(path, std::move(body));
    INFO(http.body);
    REQUIRE(http.status == 200);
    auto response = DecodeAdmissionResponse(http.body);
    REQUIRE(response.ok());
    return *response;
  }

  metrics::Registry& registry() { return registry_; }

 private:
  metrics::Registry registry_;
  AdmissionRouter router_;
};

// `object` with the JSON patch of a mutating webhook's answer applied, as the API server does.
inline std::string Patched(const std::string& object, const AdmissionResponse& response) {
  if (response.patch.empty()) return object;
  json::Document ops;
  REQUIRE(json::Parse(response.patch, &ops).ok());
  api::JsonPatch patch;
  for (const auto& op : ops.GetArray()) {
    patch.push_back({op["op"].GetString(), op["path"].GetString(),
                     op.HasMember("value") ? json::Write(op["value"]) : ""});
  }
  auto patched = api::ApplyJsonPatch(object, patch);
  REQUIRE(patched.ok());
  return *patched;
}

// A Job CREATE as the API server calls the webhooks: /jobs/mutate, its patch applied, then
// /jobs/validate. Empty when allowed, else the message.
inline std::string Admit(const TestRouter& router, const std::string& job) {
  AdmissionResponse mutated = router.Call(kJobsMutate, Review("Job", Operation::kCreate, job));
  if (!mutated.allowed) return mutated.message;
  AdmissionResponse validated =
      router.Call(kJobsValidate, Review("Job", Operation::kCreate, Patched(job, mutated)));
  return validated.allowed ? "" : validated.message;
}

// Compares JSON texts by value.
inline bool JsonEqual(std::string_view actual, std::string_view expected) {
  json::Document a;
  json::Document b;
  bool ok = json::Parse(actual, &a).ok() && json::Parse(expected, &b).ok() && a == b;
  if (!ok) UNSCOPED_INFO("JSON differs\n  actual:   " << actual << "\n  expected: " << expected);
  return ok;
}

}  // namespace tephra::webhooks::testing
