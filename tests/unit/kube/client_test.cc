// kube::Client failure paths against the in-memory FakeApiServer and scripted streams.
#include "kube/client.h"

#include <deque>

#include <catch2/catch.hpp>
#include <rapidjson/document.h>

#include "tests/fakes/fake_apiserver.h"

namespace tephra::kube {
namespace {

using testing::FakeApiServer;

ClientOptions FastRetries() {
  ClientOptions o;
  o.qps = 0;  // unthrottled
  o.max_retries = 3;
  o.retry_base_delay = std::chrono::milliseconds(1);
  o.retry_max_delay = std::chrono::milliseconds(2);
  return o;
}

const char* kCm =
    R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"v"}})";

TEST_CASE("resource paths for core, grouped, namespaced and cluster-scoped resources") {
  CHECK(resources::kPods.Path("ns", "p", "binding") == "/api/v1/namespaces/ns/pods/p/binding");
  CHECK(resources::kPods.Path("") == "/api/v1/pods");
  CHECK(resources::kNodes.Path("ignored", "n") == "/api/v1/nodes/n");
  CHECK(resources::kLeases.Path("kube-system", "l") ==
        "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/l");
  Resource jobs{"batch.volcano.sh", "v1alpha1", "jobs", true, "Job"};
  CHECK(jobs.ToString() == "jobs.v1alpha1.batch.volcano.sh");
  CHECK(QueryEscape("a=b,c in (x)") == "a%3Db%2Cc%20in%20%28x%29");
}

TEST_CASE("429 with Retry-After is retried for every verb") {
  auto fake = std::make_shared<FakeApiServer>();
  Client client(fake, FastRetries());
  fake->FailNext(2, 429, "POST", 0);
  auto created = client.Create(resources::kConfigMaps, "ns", kCm);
  REQUIRE(created.ok());
  CHECK(fake->requests().size() == 3);
}

TEST_CASE("5xx is retried for reads but not for creates") {
  auto fake = std::make_shared<FakeApiServer>();
  Client client(fake, FastRetries());
  REQUIRE(client.Create(resources::kConfigMaps, "ns", kCm).ok());
  fake->FailNext(1, 500, "GET");
  CHECK(client.Get(resources::kConfigMaps, "ns", "a").ok());
  fake->FailNext(1, 500, "POST");
  auto again = client.Create(resources::kConfigMaps, "ns",
                             R"({"metadata":{"name":"b"},"kind":"ConfigMap"})");
  CHECK(again.status().code() == StatusCode::kInternal);
  CHECK(fake->Count("/api/v1/namespaces/ns/configmaps") == 1);
}

TEST_CASE("retries give up after max_retries with the last error") {
  auto fake = std::make_shared<FakeApiServer>();
  Client client(fake, FastRetries());
  fake->FailNext(10, 503, "GET", 0);
  auto r = client.Get(resources::kConfigMaps, "ns", "a");
  CHECK(r.status().code() == StatusCode::kUnavailable);
  CHECK(r.status().message().find("after 3 retries") != std::string::npos);
  CHECK(fake->requests().size() == 4);
}

TEST_CASE("broken connections are retried only for idempotent requests") {
  auto fake = std::make_shared<FakeApiServer>();
  Client client(fake, FastRetries());
  fake->BreakNext(2);
  CHECK(client.Get(resources::kConfigMaps, "ns", "a").status().code() == StatusCode::kNotFound);
  fake->BreakNext(1);
  CHECK(client.Create(resources::kConfigMaps, "ns", kCm).status().code() ==
        StatusCode::kUnavailable);
}

TEST_CASE("API Status bodies become typed errors with the server's message") {
  ApiResponse r;
  r.status = 422;
  r.body = R"({"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Invalid",
      "message":"Job.batch.volcano.sh \"j\" is invalid: spec.minAvailable: Invalid value: -1",
      "code":422})";
  Status s = StatusFromResponse(r);
  CHECK(s.code() == StatusCode::kInvalid);
  CHECK(s.message().find("spec.minAvailable") != std::string::npos);
  r.status = 403;
  r.body = R"({"kind":"Status","reason":"Forbidden","message":"pods is forbidden","code":403})";
  CHECK(StatusFromResponse(r).code() == StatusCode::kForbidden);
  r.status = 410;
  r.body = R"({"kind":"Status","reason":"Expired","message":"too old","code":410})";
  CHECK(StatusFromResponse(r).code() == StatusCode::kGone);
  r.status = 504;
  r.body = R"({"kind":"Status","reason":"Timeout","message":"timed out","code":504})";
  CHECK(StatusFromResponse(r).code() == StatusCode::kDeadlineExceeded);
  r.status = 502;
  r.body = "<html>bad gateway</html>";
  s = StatusFromResponse(r);
  CHECK(s.code() == StatusCode::kUnavailable);
  CHECK(s.message() == "HTTP 502: <html>bad gateway</html>");
  r.status = 401;
  r.body = "";
  CHECK(StatusFromResponse(r).code() == StatusCode::kUnauthorized);
}

TEST_CASE("conflicts on stale updates surface as Conflict") {
  auto fake = std::make_shared<FakeApiServer>();
  Client client(fake, FastRetries());
  auto created = client.Create(resources::kConfigMaps, "ns", kCm);
  REQUIRE(created.ok());
  std::string stale = R"({"metadata":{"name":"a","resourceVersion":"1"},"data":{}})";
  CHECK(client.Update(resources::kConfigMaps, "ns", "a", stale).status().code() ==
        StatusCode::kConflict);
}

TEST_CASE("ListAll follows continue tokens") {
  auto fake = std::make_shared<FakeApiServer>();
  for (int i = 0; i < 23; ++i) {
    fake->Put("/api/v1/namespaces/ns/configmaps",
              R"({"kind":"ConfigMap","metadata":{"name":"c)" + std::to_string(i) + R"("}})");
  }
  Client client(fake, FastRetries());
  ListOptions o;
  o.limit = 5;
  int n = 0;
  auto rv = client.ListAll(resources::kConfigMaps, "ns", o, [&](const json::Value&) {
    ++n;
    return Status::Ok();
  });
  REQUIRE(rv.ok());
  CHECK(n == 23);
  CHECK(fake->requests().size() == 5);
  CHECK(*rv == std::to_string(fake->resource_version()));
}

TEST_CASE("ListAll hands items over in order and stops at the first error") {
  auto fake = std::make_shared<FakeApiServer>();
  for (int i = 0; i < 23; ++i) {
    std::string name = (i < 10 ? "c0" : "c") + std::to_string(i);
    fake->Put("/api/v1/namespaces/ns/configmaps",
              R"({"kind":"ConfigMap","metadata":{"name":")" + name + R"("}})");
  }
  Client client(fake, FastRetries());
  ListOptions o;
  o.limit = 5;
  std::vector<std::string> names;
  auto rv = client.ListAll(resources::kConfigMaps, "ns", o, [&](const json::Value& item) {
    json::Errors e;
    names.push_back(json::Reader(&item, &e)["metadata"]["name"].String());
    if (names.size() == 7) return Cancelled("enough");
    return Status::Ok();
  });
  CHECK(rv.status().code() == StatusCode::kCancelled);
  CHECK(names == std::vector<std::string>{"c00", "c01", "c02", "c03", "c04", "c05", "c06"});
  // The page after the failing one was already being fetched; nothing beyond it is asked for.
  CHECK(fake->requests().size() == 3);
}

TEST_CASE("DecodeWatchEvent handles every event type and rejects garbage") {
  auto added =
      DecodeWatchEvent(R"({"type":"ADDED","object":{"metadata":{"resourceVersion":"7"}}})");
  REQUIRE(added.ok());
  CHECK(added->type == WatchEventType::kAdded);
  CHECK(added->resource_version() == "7");
  auto bookmark = DecodeWatchEvent(
      R"({"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"9"}}})");
  REQUIRE(bookmark.ok());
  CHECK(bookmark->type == WatchEventType::kBookmark);
  auto gone = DecodeWatchEvent(
      R"({"type":"ERROR","object":{"kind":"Status","reason":"Expired","message":"too old","code":410}})");
  CHECK(gone.status().code() == StatusCode::kGone);
  CHECK(DecodeWatchEvent("{").status().code() == StatusCode::kInvalidArgument);
  CHECK(DecodeWatchEvent(R"({"type":"ADDED","object":3})").status().code() ==
        StatusCode::kInvalidArgument);
  CHECK(DecodeWatchEvent(R"({"type":"WHAT","object":{}})").status().code() ==
        StatusCode::kInvalidArgument);
  CHECK(DecodeWatchEvent("[]").status().code() == StatusCode::kInvalidArgument);
}

// Delivers a body in the chunks given, to test line splitting.
class ChunkStream : public ResponseStream {
 public:
  explicit ChunkStream(std::deque<std::string> chunks) : chunks_(std::move(chunks)) {}
  int status() const override { return 200; }
  StatusOr<bool> Read(std::string* out) override {
    if (chunks_.empty()) return false;
    *out += chunks_.front();
    chunks_.pop_front();
    return true;
  }
  void Close() override {}

 private:
  std::deque<std::string> chunks_;
};

TEST_CASE("Watch splits events across arbitrary chunk boundaries") {
  std::string a = R"({"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"1"}}})";
  std::string b = R"({"type":"DELETED","object":{"metadata":{"name":"b","resourceVersion":"2"}}})";
  std::string body = a + "\n\n" + b + "\n" + a;  // blank line skipped; last line unterminated
  for (size_t cut = 1; cut < body.size(); cut += 7) {
    std::deque<std::string> chunks;
    for (size_t i = 0; i < body.size(); i += cut) chunks.push_back(body.substr(i, cut));
    Watch watch(std::make_unique<ChunkStream>(chunks));
    std::vector<std::string> seen;
    while (true) {
      auto ev = watch.Next();
      REQUIRE(ev.ok());
      if (!ev->has_value()) break;
      seen.push_back(std::string(WatchEventTypeName((*ev)->type)) + (*ev)->resource_version());
    }
    CHECK(seen == std::vector<std::string>{"ADDED1", "DELETED2", "ADDED1"});
  }
}

TEST_CASE("a watch stream that breaks reports the transport error") {
  auto fake = std::make_shared<FakeApiServer>();
  Client client(fake, FastRetries());
  WatchOptions wo;
  auto watch = client.StartWatch(resources::kConfigMaps, "ns", wo);
  REQUIRE(watch.ok());
  fake->DropWatches();
  auto ev = (*watch)->Next();
  CHECK(ev.status().code() == StatusCode::kUnavailable);
}

TEST_CASE("subresources and deletes with preconditions") {
  auto fake = std::make_shared<FakeApiServer>();
  Client client(fake, FastRetries());
  REQUIRE(
      client.Create(resources::kPods, "ns", R"({"kind":"Pod","metadata":{"name":"p"},"spec":{}})")
          .ok());
  REQUIRE(client
              .CreateSubresource(resources::kPods, "ns", "p", "binding",
                                 R"({"kind":"Binding","target":{"name":"n1"}})")
              .ok());
  auto pod = client.Get(resources::kPods, "ns", "p");
  REQUIRE(pod.ok());
  CHECK(pod->find(R"("nodeName":"n1")") != std::string::npos);
  DeleteOptions d;
  d.precondition_uid = "nope";
  CHECK(client.Delete(resources::kPods, "ns", "p", d).code() == StatusCode::kConflict);
  CHECK(client.Delete(resources::kPods, "ns", "p").ok());
  auto requests = fake->requests();
  CHECK(requests.back() == "DELETE /api/v1/namespaces/ns/pods/p");
}

TEST_CASE("write options become query parameters") {
  auto fake = std::make_shared<FakeApiServer>();
  Client client(fake, FastRetries());
  WriteOptions w;
  w.field_manager = "tephra-scheduler";
  w.dry_run = true;
  (void)client.Create(resources::kConfigMaps, "ns", kCm, w);
  PatchOptions p;
  p.field_manager = "tephra-controller-manager";
  p.force = true;
  (void)client.Patch(resources::kConfigMaps, "ns", "a", PatchType::kApply, "{}", p, "status");
  auto requests = fake->requests();
  REQUIRE(requests.size() == 2);
  CHECK(requests[0] ==
        "POST /api/v1/namespaces/ns/configmaps?fieldManager=tephra-scheduler&dryRun=All");
  CHECK(requests[1] ==
        "PATCH "
        "/api/v1/namespaces/ns/configmaps/a/"
        "status?fieldManager=tephra-controller-manager&force=true");
}

}  // namespace
}  // namespace tephra::kube
