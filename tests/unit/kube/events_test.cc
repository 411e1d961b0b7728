#include "kube/events.h"

#include <atomic>
#include <thread>

#include <catch2/catch.hpp>
#include <rapidjson/document.h>

#include "tests/fakes/fake_apiserver.h"

namespace tephra::kube {
namespace {

using testing::FakeApiServer;

std::shared_ptr<Client> ClientOn(const std::shared_ptr<FakeApiServer>& fake) {
  ClientOptions co;
  co.qps = 0;
  return std::make_shared<Client>(fake, co);
}

ObjectReference Job() {
  ObjectReference r;
  r.api_version = "batch.volcano.sh/v1alpha1";
  r.kind = "Job";
  r.namespace_ = "team";
  r.name = "train";
  r.uid = "u-1";
  return r;
}

std::vector<std::string> EventsIn(FakeApiServer& fake, const std::string& ns) {
  kube::Client c(std::shared_ptr<FakeApiServer>(&fake, [](FakeApiServer*) {}), ClientOptions{});
  auto page = c.List(resources::kEvents, ns);
  std::vector<std::string> out;
  for (size_t i = 0; page.ok() && i < page->size(); ++i) out.push_back(json::Write(page->item(i)));
  return out;
}

// A slow API server that counts how many requests it serves at once.
class SlowServer : public Transport {
 public:
  explicit SlowServer(std::shared_ptr<FakeApiServer> fake) : fake_(std::move(fake)) {}
  StatusOr<ApiResponse> RoundTrip(const ApiRequest& request) override {
    const int now = ++in_flight_;
    int seen = most_;
    while (now > seen && !most_.compare_exchange_weak(seen, now)) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    --in_flight_;
    return fake_->RoundTrip(request);
  }
  StatusOr<std::unique_ptr<ResponseStream>> Stream(const ApiRequest& request) override {
    return fake_->Stream(request);
  }
  int most() const { return most_; }

 private:
  std::shared_ptr<FakeApiServer> fake_;
  std::atomic<int> in_flight_{0}, most_{0};
};

TEST_CASE("events are written with their involved object and folded when repeated") {
  auto fake = std::make_shared<FakeApiServer>();
  EventRecorder rec(ClientOn(fake), {"tephra-scheduler", "host-1"});
  rec.Record(Job(), EventType::kWarning, "Unschedulable", "2/4 tasks in gang unschedulable");
  rec.Record(Job(), EventType::kWarning, "Unschedulable", "2/4 tasks in gang unschedulable");
  rec.Record(Job(), EventType::kWarning, "Unschedulable", "2/4 tasks in gang unschedulable");
  rec.Record(Job(), EventType::kNormal, "Scheduled", "all tasks bound");
  REQUIRE(rec.Flush(std::chrono::seconds(5)));
  auto events = EventsIn(*fake, "team");
  REQUIRE(events.size() == 2);
  std::string unsched =
      events[0].find("Unschedulable") != std::string::npos ? events[0] : events[1];
  CHECK(unsched.find(R"("count":3)") != std::string::npos);
  CHECK(unsched.find(R"("type":"Warning")") != std::string::npos);
  CHECK(
      unsched.find(
          R"("involvedObject":{"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","name":"train","namespace":"team","uid":"u-1"})") !=
      std::string::npos);
  CHECK(unsched.find(R"("reportingComponent":"tephra-scheduler")") != std::string::npos);
  CHECK(rec.written() == 4);
}

TEST_CASE("an event lost in transit is sent again, and one that keeps failing counts as dropped") {
  auto fake = std::make_shared<FakeApiServer>();
  metrics::Registry registry;
  EventRecorderOptions o{"tephra-scheduler", "h"};
  o.source = "volcano";
  o.retry_base_delay = std::chrono::milliseconds(1);
  o.max_retries = 2;
  o.registry = &registry;
  EventRecorder rec(ClientOn(fake), o);
  fake->BreakNext(2, Unavailable("reading response: end of stream"));
  rec.Record(Job(), EventType::kWarning, "FailedScheduling", "first");
  REQUIRE(rec.Flush(std::chrono::seconds(5)));
  auto events = EventsIn(*fake, "team");
  REQUIRE(events.size() == 1);
  CHECK(events[0].find(R"("source":{"component":"volcano"})") != std::string::npos);
  CHECK(events[0].find(R"("reportingComponent":"tephra-scheduler")") != std::string::npos);
  CHECK(rec.dropped() == 0);

  fake->BreakNext(3);
  rec.Record(Job(), EventType::kWarning, "FailedScheduling", "second");
  REQUIRE(rec.Flush(std::chrono::seconds(5)));
  CHECK(EventsIn(*fake, "team").size() == 1);
  CHECK(rec.dropped() == 1);
  CHECK(registry.Render().find("tephra_events_dropped_total 1") != std::string::npos);
  CHECK(registry.Render().find("tephra_events_written_total 1") != std::string::npos);
}

TEST_CASE("events about cluster-scoped objects go to the default namespace") {
  auto fake = std::make_shared<FakeApiServer>();
  EventRecorder rec(ClientOn(fake), {"tephra-controller-manager", "h"});
  ObjectReference q;
  q.kind = "Queue";
  q.name = "research";
  rec.Record(q, EventType::kNormal, "Closed", "queue closed");
  REQUIRE(rec.Flush(std::chrono::seconds(5)));
  CHECK(EventsIn(*fake, "default").size() == 1);
}

TEST_CASE("a flood about one object is cut off by its budget") {
  auto fake = std::make_shared<FakeApiServer>();
  EventRecorderOptions o{"tephra-scheduler", "h"};
  o.per_object_burst = 5;
  EventRecorder rec(ClientOn(fake), o);
  for (int i = 0; i < 50; ++i) {
    rec.Record(Job(), EventType::kWarning, "FailedScheduling", "attempt " + std::to_string(i));
  }
  REQUIRE(rec.Flush(std::chrono::seconds(5)));
  CHECK(rec.written() == 5);
  CHECK(rec.dropped() == 45);
  CHECK(EventsIn(*fake, "team").size() == 5);
}

TEST_CASE("an expired event is recreated instead of patched") {
  auto fake = std::make_shared<FakeApiServer>();
  EventRecorder rec(ClientOn(fake), {"c", "h"});
  rec.Record(Job(), EventType::kNormal, "Started", "go");
  REQUIRE(rec.Flush(std::chrono::seconds(5)));
  auto first = EventsIn(*fake, "team");
  REQUIRE(first.size() == 1);
  json::Document doc;
  REQUIRE(json::Parse(first[0], &doc).ok());
  fake->Remove("/api/v1/namespaces/team/events", doc["metadata"]["name"].GetString());
  rec.Record(Job(), EventType::kNormal, "Started", "go");
  REQUIRE(rec.Flush(std::chrono::seconds(5)));
  // The count patch found nothing, so a fresh Event was created.
  auto second = EventsIn(*fake, "team");
  REQUIRE(second.size() == 1);
  CHECK(second[0] != first[0]);
  CHECK(second[0].find(R"("count":1)") != std::string::npos);
  CHECK(rec.written() == 2);
  rec.Record(Job(), EventType::kNormal, "Started", "go");
  REQUIRE(rec.Flush(std::chrono::seconds(5)));
  CHECK(rec.written() == 3);
  CHECK(EventsIn(*fake, "team")[0].find(R"("count":2)") != std::string::npos);
}

TEST_CASE("events about different objects are written side by side, one object's in order") {
  auto fake = std::make_shared<FakeApiServer>();
  auto slow = std::make_shared<SlowServer>(fake);
  ClientOptions co;
  co.qps = 0;
  EventRecorderOptions o{"tephra-scheduler", "h"};
  o.writers = 4;
  EventRecorder rec(std::make_shared<Client>(slow, co), o);
  for (int i = 0; i < 16; ++i) {
    ObjectReference pod = Job();
    pod.kind = "Pod";
    pod.name = "p" + std::to_string(i);
    pod.uid = "u-p" + std::to_string(i);
    rec.Record(pod, EventType::kNormal, "Scheduled", "assigned");
  }
  // Repeats about one object stay with one writer: folded into one Event, none lost.
  for (int i = 0; i < 3; ++i) rec.Record(Job(), EventType::kNormal, "Pending", "waiting");
  REQUIRE(rec.Flush(std::chrono::seconds(10)));
  CHECK(slow->most() > 1);
  auto events = EventsIn(*fake, "team");
  CHECK(events.size() == 17);
  CHECK(rec.written() == 19);
  bool folded = false;
  for (const auto& e : events) folded |= e.find(R"("count":3)") != std::string::npos;
  CHECK(folded);
}

}  // namespace
}  // namespace tephra::kube
