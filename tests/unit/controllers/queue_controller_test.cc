// The queue controller against the fake API server: spec.parent defaulting, Commands, the
// Closing → Closed wait for PodGroups and closing cascading to child queues and back.
#include "controllers/queue/queue_controller.h"

#include <thread>

#include <catch2/catch.hpp>
#include <rapidjson/document.h>

#include "api/kinds.h"
#include "controllers/framework/commands.h"
#include "json/json.h"
#include "metrics/metrics.h"
#include "tests/fakes/fake_apiserver.h"

namespace tephra::controllers::queue {
namespace {

using tephra::testing::FakeApiServer;

const std::string kQueuesPath = "/apis/scheduling.volcano.sh/v1beta1/queues";
const std::string kPodGroupsPath = "/apis/scheduling.volcano.sh/v1beta1/namespaces/ns/podgroups";
const std::string kCommandsPath = "/apis/bus.volcano.sh/v1alpha1/namespaces/ns/commands";

bool Soon(const std::function<bool()>& f) {
  for (int i = 0; i < 400; ++i) {
    if (f()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return f();
}

std::string Get(FakeApiServer& fake, const std::string& queue, const char* a, const char* b) {
  auto text = fake.Object(kQueuesPath, queue);
  if (!text) return "<gone>";
  json::Document doc;
  if (!json::Parse(*text, &doc).ok()) return "<bad>";
  json::Errors errors;
  return json::Reader(&doc, &errors)[a][b].String();
}

std::string QueueJson(const std::string& name, const std::string& parent,
                      const std::string& state) {
  return R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","metadata":{"name":")" +
         name + R"("},"spec":{"weight":1)" +
         (parent.empty() ? "" : R"(,"parent":")" + parent + "\"") + R"(},"status":{"state":")" +
         state + R"("}})";
}

struct Harness {
  Harness() : fake(std::make_shared<FakeApiServer>()) {
    kube::ClientOptions co;
    co.qps = 0;
    co.max_retries = 0;
    client = std::make_shared<kube::Client>(fake, co);
    informers = std::make_unique<kube::InformerFactory>(client);
    ctx.client = client;
    ctx.informers = informers.get();
    ctx.clock = &clock;
    ctx.metrics = &registry;
  }
  ~Harness() {
    controller.Stop();
    informers->Stop();
  }
  void Start() {
    REQUIRE(controller.Initialize(ctx).ok());
    informers->Start();
    REQUIRE(informers->WaitForCacheSync(std::chrono::seconds(5)));
    queues = informers->For(api::kQueues, nullptr, QueueScope(ctx.options));
    pgs = informers->For(api::kPodGroups, nullptr, NamespacedScope(ctx.options));
    commands = informers->For(api::kCommands, nullptr, NamespacedScope(ctx.options));
  }
  // Waits for the caches to show the server's queues, PodGroups and commands, then syncs.
  Status Sync(const std::string& queue) {
    REQUIRE(Soon([&] {
      for (const auto& key : queues->store().Keys()) {
        auto server = fake->Object(kQueuesPath, key);
        auto cached = queues->store().Get(key);
        if (!server || !cached) return false;
        json::Document doc;
        (void)json::Parse(*server, &doc);
        json::Errors e;
        if (json::Reader(&doc, &e)["metadata"]["resourceVersion"].String() !=
            cached->metadata.resource_version) {
          return false;
        }
      }
      // Same size is not enough for commands: a handled one may still be cached while the
      // next one is not yet — the set must match.
      for (const auto& key : commands->store().Keys()) {
        std::string name = key.substr(key.rfind('/') + 1);
        if (!fake->Object(kCommandsPath, key) && !fake->Object(kCommandsPath, name)) return false;
      }
      return queues->store().size() == fake->Count(kQueuesPath) &&
             pgs->store().size() == fake->Count(kPodGroupsPath) &&
             commands->store().size() == fake->Count(kCommandsPath);
    }));
    return controller.Sync(queue);
  }
  void Command(const std::string& name, const std::string& action, const std::string& queue) {
    fake->Put(kCommandsPath,
              R"({"apiVersion":"bus.volcano.sh/v1alpha1","kind":"Command","metadata":{"name":")" +
                  name + R"("},"action":")" + action +
                  R"(","target":{"apiVersion":"scheduling.volcano.sh/v1beta1",)"
                  R"("kind":"Queue","name":")" +
                  queue + R"(","uid":"x"}})");
  }

  std::shared_ptr<FakeApiServer> fake;
  std::shared_ptr<kube::Client> client;
  std::unique_ptr<kube::InformerFactory> informers;
  base::FakeClock clock;
  metrics::Registry registry;
  ControllerContext ctx;
  QueueController controller;
  std::shared_ptr<kube::Informer> queues, pgs, commands;
};

TEST_CASE("a new queue opens under root, closes only when its PodGroups are gone") {
  Harness h;
  h.fake->Put(kQueuesPath, QueueJson("q", "", ""));
  h.fake->Put(
      kPodGroupsPath,
      R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":)"
      R"({"name":"pg","namespace":"ns"},"spec":{"queue":"q"},"status":{"phase":"Running"}})");
  h.Start();
  REQUIRE(h.Sync("q").ok());
  CHECK(Get(*h.fake, "q", "spec", "parent") == "root");
  CHECK(Get(*h.fake, "q", "status", "state") == "Open");
  h.Command("close", "CloseQueue", "q");
  REQUIRE(h.Sync("q").ok());
  CHECK(h.fake->Count(kCommandsPath) == 0);
  CHECK(Get(*h.fake, "q", "status", "state") == "Closing");
  REQUIRE(h.Sync("q").ok());
  CHECK(Get(*h.fake, "q", "status", "state") == "Closing");
  // The counts follow the PodGroup informer's events, which may trail its store a moment.
  h.fake->Put(
      kPodGroupsPath,
      R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":)"
      R"({"name":"pg","namespace":"ns"},"spec":{"queue":"q"},"status":{"phase":"Inqueue"}})");
  auto counted = [&](const std::string& phase, int n) {
    return h.Sync("q").ok() &&
           h.registry.Render().find(R"(tephra_queue_podgroup_count{queue="q",phase=")" + phase +
                                    R"("} )" + std::to_string(n)) != std::string::npos;
  };
  REQUIRE(Soon([&] { return counted("Inqueue", 1); }));
  CHECK(counted("Running", 0));
  CHECK(Get(*h.fake, "q", "status", "state") == "Closing");
  REQUIRE(h.fake->Remove(kPodGroupsPath, "pg"));
  REQUIRE(Soon([&] { return counted("Inqueue", 0); }));
  CHECK(Get(*h.fake, "q", "status", "state") == "Closed");
}

TEST_CASE("closing a parent closes its open children, opening it reopens them") {
  Harness h;
  h.fake->Put(kQueuesPath, QueueJson("p", "root", "Open"));
  h.fake->Put(kQueuesPath, QueueJson("c", "p", "Open"));
  h.fake->Put(kQueuesPath, QueueJson("own", "p", "Closed"));
  h.Start();
  h.Command("close", "CloseQueue", "p");
  REQUIRE(h.Sync("p").ok());
  CHECK(Get(*h.fake, "p", "status", "state") == "Closed");
  const std::string marked = R"("volcano.sh/closed-by-parent":"true")";
  CHECK(h.fake->Object(kQueuesPath, "c")->find(marked) != std::string::npos);
  CHECK(h.fake->Object(kQueuesPath, "own")->find(marked) == std::string::npos);
  REQUIRE(h.Sync("c").ok());
  CHECK(Get(*h.fake, "c", "status", "state") == "Closed");
  // A child cannot be opened while its parent is closed.
  h.Command("open-child", "OpenQueue", "c");
  REQUIRE(h.Sync("c").ok());
  CHECK(Get(*h.fake, "c", "status", "state") == "Closed");
  h.Command("open", "OpenQueue", "p");
  REQUIRE(h.Sync("p").ok());
  CHECK(Get(*h.fake, "p", "status", "state") == "Open");
  REQUIRE(h.Sync("c").ok());
  CHECK(Get(*h.fake, "c", "status", "state") == "Open");
  CHECK(h.fake->Object(kQueuesPath, "c")->find(marked) == std::string::npos);
  // A child closed on its own stays closed.
  REQUIRE(h.Sync("own").ok());
  CHECK(Get(*h.fake, "own", "status", "state") == "Closed");
}

TEST_CASE("a Command for a queue that does not exist is deleted after its grace period") {
  Harness h;
  h.Start();
  h.Command("close-ghost", "CloseQueue", "ghost");
  REQUIRE(h.Sync("ghost").ok());
  CHECK(h.fake->Count(kCommandsPath) == 1);  // the queue may still be on its way
  h.clock.Advance(kCommandTargetGrace);
  REQUIRE(h.Sync("ghost").ok());
  CHECK(h.fake->Count(kCommandsPath) == 0);
  CHECK(h.fake->Count(kQueuesPath) == 0);
}

TEST_CASE("a Command whose queue appears within the grace period is carried out") {
  Harness h;
  h.Start();
  h.Command("close-soon", "CloseQueue", "soon");
  REQUIRE(h.Sync("soon").ok());
  h.fake->Put(kQueuesPath, QueueJson("soon", "root", "Open"));
  REQUIRE(h.Sync("soon").ok());
  CHECK(h.fake->Count(kCommandsPath) == 0);
  CHECK(Get(*h.fake, "soon", "status", "state") == "Closed");
}

TEST_CASE("a namespace-scoped manager needs a queue selector for the queue controller") {
  Harness h;
  h.ctx.options.namespace_ = "ns";
  Status s = h.controller.Initialize(h.ctx);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  h.ctx.options.queue_label_selector = "team=a";
  CHECK(h.controller.Initialize(h.ctx).ok());
}

}  // namespace
}  // namespace tephra::controllers::queue
