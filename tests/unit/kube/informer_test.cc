// The informer against the in-memory FakeApiServer: list, watch, relist on 410 with
// tombstones, reconnects without relisting, late handlers, indexes, undecodable objects.
#include "kube/informer.h"

#include <set>

#include <catch2/catch.hpp>

#include "tests/fakes/fake_apiserver.h"

namespace tephra::kube {
namespace {

using testing::FakeApiServer;

const std::string kCollection = "/api/v1/namespaces/ns/configmaps";

std::string Cm(const std::string& name, const std::string& value, const std::string& app = "x") {
  return R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")" + name +
         R"(","namespace":"ns","labels":{"app":")" + app + R"("}},"data":{"v":")" + value +
         R"("}})";
}

// Records handler calls; thread-safe.
struct Recorder {
  std::mutex mu;
  std::vector<std::string> log;
  std::map<std::string, std::string> mirror;  // key -> resourceVersion
  void Add(const std::string& s) {
    std::lock_guard<std::mutex> l(mu);
    log.push_back(s);
  }
  EventHandlers Handlers() {
    EventHandlers h;
    h.on_add = [this](const ObjectPtr& o) {
      std::lock_guard<std::mutex> l(mu);
      log.push_back("add " + o->metadata.name);
      mirror[o->metadata.Key()] = o->metadata.resource_version;
    };
    h.on_update = [this](const ObjectPtr& old, const ObjectPtr& now) {
      std::lock_guard<std::mutex> l(mu);
      log.push_back("update " + now->metadata.name + (old == now ? " (resync)" : ""));
      mirror[now->metadata.Key()] = now->metadata.resource_version;
    };
    h.on_delete = [this](const ObjectPtr& o, bool unknown) {
      std::lock_guard<std::mutex> l(mu);
      log.push_back("delete " + o->metadata.name + (unknown ? " (tombstone)" : ""));
      mirror.erase(o->metadata.Key());
    };
    return h;
  }
  bool Has(const std::string& s) {
    std::lock_guard<std::mutex> l(mu);
    return std::find(log.begin(), log.end(), s) != log.end();
  }
  size_t Count(const std::string& s) {
    std::lock_guard<std::mutex> l(mu);
    return static_cast<size_t>(std::count(log.begin(), log.end(), s));
  }
  size_t MirrorSize() {
    std::lock_guard<std::mutex> l(mu);
    return mirror.size();
  }
};

InformerOptions Options() {
  InformerOptions o;
  o.resource = resources::kConfigMaps;
  o.namespace_ = "ns";
  o.page_size = 3;
  o.backoff_initial = std::chrono::milliseconds(5);
  o.backoff_max = std::chrono::milliseconds(20);
  return o;
}

std::shared_ptr<Client> ClientOn(const std::shared_ptr<FakeApiServer>& fake) {
  ClientOptions co;
  co.qps = 0;
  co.retry_base_delay = std::chrono::milliseconds(1);
  co.retry_max_delay = std::chrono::milliseconds(2);
  return std::make_shared<Client>(fake, co);
}

bool Soon(const std::function<bool()>& f) {
  for (int i = 0; i < 500; ++i) {
    if (f()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return f();
}

// Starts `informer` with `rec` recording its events, waits for its first sync and watch, then
// drops the watch: what follows happens while no watch is open.
void SyncThenDropWatch(Informer& informer, Recorder& rec, FakeApiServer& fake) {
  informer.AddEventHandler(rec.Handlers());
  informer.Start();
  REQUIRE(informer.WaitForSync(std::chrono::seconds(5)));
  REQUIRE(Soon([&] { return fake.open_watches() == 1; }));
  fake.DropWatches();
}

TEST_CASE("informer lists in pages, then follows the watch") {
  auto fake = std::make_shared<FakeApiServer>();
  for (int i = 0; i < 7; ++i) fake->Put(kCollection, Cm("c" + std::to_string(i), "1"));
  Informer informer(ClientOn(fake), Options());
  Recorder rec;
  informer.AddEventHandler(rec.Handlers());
  informer.Start();
  REQUIRE(informer.WaitForSync(std::chrono::seconds(5)));
  CHECK(informer.store().size() == 7);
  CHECK(rec.MirrorSize() == 7);

  fake->Put(kCollection, Cm("c0", "2"));
  fake->Put(kCollection, Cm("new", "1"));
  fake->Remove(kCollection, "c1");
  REQUIRE(Soon([&] { return rec.Has("delete c1"); }));
  CHECK(rec.Has("update c0"));
  CHECK(rec.Has("add new"));
  CHECK(informer.store().size() == 7);
  CHECK(informer.store().Get("ns/c1") == nullptr);
  CHECK(informer.relists() == 1);
  informer.Stop();
}

TEST_CASE("a dropped watch resumes from the last resourceVersion without relisting") {
  auto fake = std::make_shared<FakeApiServer>();
  fake->Put(kCollection, Cm("a", "1"));
  Informer informer(ClientOn(fake), Options());
  Recorder rec;
  SyncThenDropWatch(informer, rec, *fake);
  // Changes made while no watch is open are replayed from history on reconnect.
  fake->Put(kCollection, Cm("a", "2"));
  fake->Put(kCollection, Cm("b", "1"));
  REQUIRE(Soon([&] { return rec.Has("add b"); }));
  CHECK(rec.Has("update a"));
  CHECK(informer.relists() == 1);
  CHECK(informer.watches_started() >= 2);
  fake->EndWatches();  // a clean end (timeoutSeconds) also just re-watches
  fake->Put(kCollection, Cm("c", "1"));
  REQUIRE(Soon([&] { return rec.Has("add c"); }));
  CHECK(informer.relists() == 1);
  informer.Stop();
}

TEST_CASE("410 Gone triggers a relist that reports objects deleted while away as tombstones") {
  auto fake = std::make_shared<FakeApiServer>();
  fake->Put(kCollection, Cm("keep", "1"));
  fake->Put(kCollection, Cm("lost", "1"));
  Informer informer(ClientOn(fake), Options());
  Recorder rec;
  SyncThenDropWatch(informer, rec, *fake);
  // While disconnected: a delete, an update and an add, then history is compacted away.
  fake->BreakNext(2);  // the first re-watch attempts fail
  fake->Remove(kCollection, "lost");
  fake->Put(kCollection, Cm("keep", "2"));
  fake->Put(kCollection, Cm("fresh", "1"));
  fake->Compact();
  REQUIRE(Soon([&] { return rec.Has("delete lost (tombstone)"); }));
  CHECK(rec.Has("update keep"));
  CHECK(rec.Has("add fresh"));
  CHECK(informer.relists() == 2);
  CHECK(informer.store().size() == 2);
  informer.Stop();
}

TEST_CASE("an object deleted and created again under its name while away is a delete and an add") {
  auto fake = std::make_shared<FakeApiServer>();
  fake->Put(kCollection, Cm("job-pod", "1"));
  Informer informer(ClientOn(fake), Options());
  Recorder rec;
  SyncThenDropWatch(informer, rec, *fake);
  const std::string first_uid = informer.store().Get("ns/job-pod")->metadata.uid;
  fake->BreakNext(2);
  // A restarted job: its pod is deleted and made again with the same name, a new uid.
  fake->Remove(kCollection, "job-pod");
  fake->Put(kCollection, Cm("job-pod", "1"));
  fake->Compact();
  REQUIRE(Soon([&] { return informer.relists() == 2; }));
  REQUIRE(Soon([&] { return rec.Count("add job-pod") == 2; }));
  CHECK(rec.Has("delete job-pod (tombstone)"));
  CHECK_FALSE(rec.Has("update job-pod"));
  CHECK(informer.store().Get("ns/job-pod")->metadata.uid != first_uid);
  informer.Stop();
}

TEST_CASE("a handler added late first sees every cached object") {
  auto fake = std::make_shared<FakeApiServer>();
  fake->Put(kCollection, Cm("a", "1"));
  fake->Put(kCollection, Cm("b", "1"));
  Informer informer(ClientOn(fake), Options());
  informer.Start();
  REQUIRE(informer.WaitForSync(std::chrono::seconds(5)));
  Recorder late;
  informer.AddEventHandler(late.Handlers());
  CHECK(late.Has("add a"));
  CHECK(late.Has("add b"));
  fake->Put(kCollection, Cm("c", "1"));
  REQUIRE(Soon([&] { return late.Has("add c"); }));
  informer.Stop();
}

TEST_CASE("custom indexes follow updates and deletes") {
  auto fake = std::make_shared<FakeApiServer>();
  fake->Put(kCollection, Cm("a", "1", "web"));
  fake->Put(kCollection, Cm("b", "1", "web"));
  fake->Put(kCollection, Cm("c", "1", "db"));
  Informer informer(ClientOn(fake), Options());
  informer.AddIndex(
      "app", [](const Object& o) { return std::vector<std::string>{o.metadata.Label("app")}; });
  informer.Start();
  REQUIRE(informer.WaitForSync(std::chrono::seconds(5)));
  CHECK(informer.store().ByIndex("app", "web").size() == 2);
  CHECK(informer.store().ByIndex("namespace", "ns").size() == 3);
  fake->Put(kCollection, Cm("b", "2", "db"));
  fake->Remove(kCollection, "a");
  // The update and the delete arrive as two watch events: wait for both.
  REQUIRE(Soon([&] {
    return informer.store().ByIndex("app", "db").size() == 2 &&
           informer.store().ByIndex("app", "web").empty();
  }));
  CHECK(informer.store().ByIndex("namespace", "ns").size() == 2);
  informer.Stop();
}

TEST_CASE("undecodable objects are skipped and counted, not fatal") {
  auto fake = std::make_shared<FakeApiServer>();
  fake->Put(kCollection, Cm("good", "1"));
  fake->Put(kCollection, Cm("bad", "1"));
  InformerOptions o = Options();
  o.decoder = [](const json::Value& v) -> StatusOr<ObjectPtr> {
    json::Errors e;
    if (json::Reader(&v, &e)["metadata"]["name"].String() == "bad") {
      return InvalidArgument("metadata.name: refused by test decoder");
    }
    return RawObjectDecoder()(v);
  };
  Informer informer(ClientOn(fake), o);
  informer.Start();
  REQUIRE(informer.WaitForSync(std::chrono::seconds(5)));
  CHECK(informer.store().size() == 1);
  CHECK(informer.decode_errors() == 1);
  informer.Stop();
}

TEST_CASE("resync replays every object as an update") {
  auto fake = std::make_shared<FakeApiServer>();
  fake->Put(kCollection, Cm("a", "1"));
  InformerOptions o = Options();
  o.resync_period = std::chrono::milliseconds(20);
  Informer informer(ClientOn(fake), o);
  Recorder rec;
  informer.AddEventHandler(rec.Handlers());
  informer.Start();
  REQUIRE(Soon([&] { return rec.Has("update a (resync)"); }));
  informer.Stop();
}

TEST_CASE("the factory shares one informer per resource and scope") {
  auto fake = std::make_shared<FakeApiServer>();
  fake->Put("/api/v1/nodes", R"({"kind":"Node","metadata":{"name":"n1"}})");
  InformerFactory factory(ClientOn(fake));
  auto a = factory.For(resources::kNodes, RawObjectDecoder());
  auto b = factory.For(resources::kNodes, RawObjectDecoder());
  auto c = factory.For(resources::kNodes, RawObjectDecoder(), {"", "role=gpu", ""});
  CHECK(a == b);
  CHECK(a != c);
  factory.Start();
  REQUIRE(factory.WaitForCacheSync(std::chrono::seconds(5)));
  CHECK(a->store().Get("n1") != nullptr);
  factory.Stop();
}

TEST_CASE("a failing list is retried with backoff until it succeeds") {
  auto fake = std::make_shared<FakeApiServer>();
  fake->Put(kCollection, Cm("a", "1"));
  fake->FailNext(8, 403, "GET");
  Informer informer(ClientOn(fake), Options());
  informer.Start();
  REQUIRE(informer.WaitForSync(std::chrono::seconds(5)));
  CHECK(informer.store().size() == 1);
  CHECK(informer.relists() > 1);
  informer.Stop();
}

}  // namespace
}  // namespace tephra::kube
