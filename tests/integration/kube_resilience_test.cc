// The client library under faults on the real control plane: a kube-apiserver restart, an
// etcd compaction that forces 410 Gone, and leader election with killed and frozen leaders.
// These tests stop shared components, so they run serially (tephra_test SERIAL).
#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <signal.h>
#include <sstream>
#include <thread>

#include <catch2/catch.hpp>
#include <rapidjson/document.h>

#include "kube/client.h"
#include "kube/config.h"
#include "kube/informer.h"
#include "tests/support/cluster.h"

namespace tephra::kube {
namespace {

using testing::ClusterEnv;
using testing::Kubectl;
using testing::TestNamespace;

RestConfig AdminConfig() {
  StatusOr<RestConfig> cfg = LoadKubeconfig({ClusterEnv::Get().kubeconfig, ""});
  REQUIRE(cfg.ok());
  cfg->qps = 1000;
  cfg->burst = 1000;
  return *cfg;
}

// Wraps a transport so a test can cut one component off the API server (a partition that
// leaves everyone else connected): open streams are closed, new requests fail.
class Partition : public Transport {
 public:
  explicit Partition(std::shared_ptr<Transport> inner) : inner_(std::move(inner)) {}

  StatusOr<ApiResponse> RoundTrip(const ApiRequest& r) override {
    if (cut_) return Unavailable("partitioned by test");
    return inner_->RoundTrip(r);
  }
  StatusOr<std::unique_ptr<ResponseStream>> Stream(const ApiRequest& r) override {
    if (cut_) return Unavailable("partitioned by test");
    TEPHRA_ASSIGN_OR_RETURN(std::unique_ptr<ResponseStream> s, inner_->Stream(r));
    std::shared_ptr<ResponseStream> shared(std::move(s));
    {
      std::lock_guard<std::mutex> l(mu_);
      streams_.push_back(shared);
    }
    struct Handle : ResponseStream {
      std::shared_ptr<ResponseStream> s;
      int status() const override { return s->status(); }
      StatusOr<bool> Read(std::string* out) override { return s->Read(out); }
      void Close() override { s->Close(); }
    };
    auto h = std::make_unique<Handle>();
    h->s = shared;
    return std::unique_ptr<ResponseStream>(std::move(h));
  }
  void Cut() {
    cut_ = true;
    std::lock_guard<std::mutex> l(mu_);
    for (auto& weak : streams_) {
      if (auto s = weak.lock()) s->Close();
    }
    streams_.clear();
  }
  void Heal() { cut_ = false; }

 private:
  std::shared_ptr<Transport> inner_;
  std::atomic<bool> cut_{false};
  std::mutex mu_;
  std::vector<std::weak_ptr<ResponseStream>> streams_;
};

// What the informer's handlers have told us, kept as name → resourceVersion.
struct Mirror {
  std::mutex mu;
  std::map<std::string, std::string> objects;
  std::set<std::string> tombstones;
  EventHandlers Handlers() {
    EventHandlers h;
    h.on_add = [this](const ObjectPtr& o) {
      std::lock_guard<std::mutex> l(mu);
      objects[o->metadata.name] = o->metadata.resource_version;
    };
    h.on_update = [this](const ObjectPtr&, const ObjectPtr& o) {
      std::lock_guard<std::mutex> l(mu);
      objects[o->metadata.name] = o->metadata.resource_version;
    };
    h.on_delete = [this](const ObjectPtr& o, bool unknown) {
      std::lock_guard<std::mutex> l(mu);
      objects.erase(o->metadata.name);
      if (unknown) tombstones.insert(o->metadata.name);
    };
    return h;
  }
  std::map<std::string, std::string> Snapshot() {
    std::lock_guard<std::mutex> l(mu);
    return objects;
  }
};

std::map<std::string, std::string> ServerState(Client& client, const std::string& ns) {
  std::map<std::string, std::string> out;
  auto rv = client.ListAll(resources::kConfigMaps, ns, {}, [&](const json::Value& item) {
    json::Errors e;
    json::Reader r(&item, &e);
    std::string name = r["metadata"]["name"].String();
    if (name.rfind("m-", 0) == 0) out[name] = r["metadata"]["resourceVersion"].String();
    return Status::Ok();
  });
  REQUIRE(rv.ok());
  return out;
}

std::string Cm(int i, int v) {
  return R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"m-)" + std::to_string(i) +
         R"("},"data":{"v":")" + std::to_string(v) + R"("}})";
}

bool MirrorMatches(Mirror& mirror, Informer& informer, Client& client, const std::string& ns,
                   std::chrono::seconds within) {
  return testing::Eventually(
      [&] {
        auto server = ServerState(client, ns);
        auto seen = mirror.Snapshot();
        seen.erase("kube-root-ca.crt");
        size_t cached = 0;
        for (const auto& o : informer.store().List())
          cached += o->metadata.name.rfind("m-", 0) == 0;
        return server == seen && cached == server.size();
      },
      within, std::chrono::milliseconds(500));
}

TEST_CASE("an informer mirrors 500 objects exactly across an apiserver restart and a 410") {
  const ClusterEnv& env = ClusterEnv::Get();
  Kubectl kubectl(env.kubeconfig);
  TestNamespace ns(kubectl, "res-informer");
  RestConfig cfg = AdminConfig();
  auto writer_client = Client::FromConfig(cfg);
  REQUIRE(writer_client.ok());
  Client& writer = **writer_client;

  auto real = NewHttpTransport(cfg);
  REQUIRE(real.ok());
  auto partition = std::make_shared<Partition>(*real);
  ClientOptions co;
  co.qps = 1000;
  co.burst = 1000;
  co.max_retries = 1;
  auto informer_client = std::make_shared<Client>(partition, co);
  InformerOptions io;
  io.resource = resources::kConfigMaps;
  io.namespace_ = ns.name();
  io.backoff_initial = std::chrono::milliseconds(200);
  io.backoff_max = std::chrono::milliseconds(2000);
  Informer informer(informer_client, io);
  Mirror mirror;
  informer.AddEventHandler(mirror.Handlers());
  informer.Start();
  REQUIRE(informer.WaitForSync(std::chrono::seconds(30)));

  // 500 objects created by 4 writers while the informer watches.
  constexpr int kObjects = 500;
  std::atomic<int> next{0};
  std::vector<std::thread> creators;
  for (int t = 0; t < 4; ++t) {
    creators.emplace_back([&] {
      for (int i = next++; i < kObjects; i = next++) {
        while (!writer.Create(resources::kConfigMaps, ns.name(), Cm(i, 0)).ok()) {
        }
      }
    });
  }
  for (auto& c : creators) c.join();
  REQUIRE(MirrorMatches(mirror, informer, writer, ns.name(), std::chrono::seconds(30)));

  // Churn (updates, deletes, re-creates) keeps going while kube-apiserver restarts.
  std::atomic<bool> churning{true};
  std::atomic<int> churn_ops{0};
  std::thread churn([&] {
    std::mt19937 rng(42);
    while (churning) {
      int i = static_cast<int>(rng() % kObjects);
      int op = static_cast<int>(rng() % 10);
      std::string name = "m-" + std::to_string(i);
      Status s;
      if (op < 6) {
        s = writer
                .Patch(resources::kConfigMaps, ns.name(), name, PatchType::kMerge,
                       R"({"data":{"v":")" + std::to_string(rng() % 1000) + R"("}})")
                .status();
      } else if (op < 8) {
        s = writer.Delete(resources::kConfigMaps, ns.name(), name);
      } else {
        s = writer.Create(resources::kConfigMaps, ns.name(), Cm(i, 1)).status();
      }
      if (s.ok()) ++churn_ops;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  });
  std::this_thread::sleep_for(std::chrono::seconds(2));
  REQUIRE(testing::StopComponent("kube-apiserver").ok());
  std::this_thread::sleep_for(std::chrono::seconds(2));
  REQUIRE(testing::StartComponent("kube-apiserver").ok());
  std::this_thread::sleep_for(std::chrono::seconds(3));
  churning = false;
  churn.join();
  CHECK(churn_ops > 100);
  REQUIRE(MirrorMatches(mirror, informer, writer, ns.name(), std::chrono::seconds(60)));
  int64_t relists_before = informer.relists();

  // Cut the informer off, change things it cannot see, compact them out of etcd's history:
  // its watch must come back with 410 Gone, relist, and report the deletions as tombstones.
  partition->Cut();
  std::set<std::string> deleted_while_away;
  auto server = ServerState(writer, ns.name());
  int k = 0;
  for (const auto& [name, rv] : server) {
    if (k < 100) {
      REQUIRE(writer.Delete(resources::kConfigMaps, ns.name(), name).ok());
      deleted_while_away.insert(name);
    } else if (k < 200) {
      REQUIRE(writer
                  .Patch(resources::kConfigMaps, ns.name(), name, PatchType::kMerge,
                         R"({"data":{"v":"away"}})")
                  .ok());
    }
    ++k;
  }
  for (int i = kObjects; i < kObjects + 50; ++i) {
    REQUIRE(writer.Create(resources::kConfigMaps, ns.name(), Cm(i, 2)).ok());
  }
  REQUIRE(testing::CompactEtcd().ok());
  partition->Heal();
  REQUIRE(MirrorMatches(mirror, informer, writer, ns.name(), std::chrono::seconds(60)));
  CHECK(informer.relists() > relists_before);
  {
    std::lock_guard<std::mutex> l(mirror.mu);
    for (const auto& name : deleted_while_away) CHECK(mirror.tombstones.count(name) == 1);
  }
  informer.Stop();
}

// ---- leader election with real processes ----

struct Line {
  int64_t us;
  std::string what;
  std::string who;
};

std::vector<Line> ReadLines(const std::string& path) {
  std::vector<Line> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    std::istringstream ss(line);
    Line l;
    if (ss >> l.us >> l.what >> l.who) out.push_back(l);
  }
  return out;
}

// The first time `who` logged `what` after `after_us`, or -1.
int64_t FirstAfter(const std::vector<Line>& lines, const std::string& what, const std::string& who,
                   int64_t after_us = 0) {
  for (const auto& l : lines) {
    if (l.what == what && l.who == who && l.us > after_us) return l.us;
  }
  return -1;
}

int64_t LastOf(const std::vector<Line>& lines, const std::string& what, const std::string& who) {
  int64_t last = -1;
  for (const auto& l : lines) {
    if (l.what == what && l.who == who) last = l.us;
  }
  return last;
}

int64_t NowUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

struct Contenders {
  explicit Contenders(const std::string& lease)
      : dir("/tmp/tephra-lease-" + testing::RandomSuffix()) {
    std::filesystem::create_directories(dir);
    const ClusterEnv& env = ClusterEnv::Get();
    for (const std::string id : {"alpha", "beta"}) {
      procs[id] = std::make_unique<testing::BackgroundProcess>(
          std::vector<std::string>{LEASE_CONTENDER_PATH, env.kubeconfig, "default", lease, id,
                                   "4000", "3000", "500"},
          dir + "/" + id + ".log");
      REQUIRE(procs[id]->started());
    }
  }
  ~Contenders() {
    procs.clear();
    std::filesystem::remove_all(dir);
  }
  std::vector<Line> Lines(const std::string& id) const {
    return ReadLines(dir + "/" + id + ".log");
  }
  std::string Leader() const {
    for (const std::string id : {"alpha", "beta"}) {
      if (FirstAfter(Lines(id), "START", id) > 0) return id;
    }
    return "";
  }
  std::string dir;
  std::map<std::string, std::unique_ptr<testing::BackgroundProcess>> procs;
};

TEST_CASE("killing the leader hands over within the lease duration") {
  Contenders c("tephra-it-kill-" + testing::RandomSuffix());
  REQUIRE(testing::Eventually([&] { return !c.Leader().empty(); }, std::chrono::seconds(20)));
  std::string leader = c.Leader();
  std::string other = leader == "alpha" ? "beta" : "alpha";
  std::this_thread::sleep_for(std::chrono::seconds(1));
  CHECK(FirstAfter(c.Lines(other), "START", other) < 0);

  int64_t killed = NowUs();
  REQUIRE(c.procs[leader]->Signal(SIGKILL));
  c.procs[leader]->Wait(std::chrono::seconds(5));
  REQUIRE(testing::Eventually([&] { return FirstAfter(c.Lines(other), "START", other) > 0; },
                              std::chrono::seconds(15)));
  int64_t took_over = FirstAfter(c.Lines(other), "START", other);
  double seconds = static_cast<double>(took_over - killed) / 1e6;
  INFO("takeover after " << seconds << " s");
  CHECK(seconds < 4.0 + 0.5 * 1.2 + 1.0);  // lease + one jittered retry + request time
  CHECK(LastOf(c.Lines(leader), "LEAD", leader) < took_over);
}

TEST_CASE("a frozen leader never acts alongside its successor") {
  Contenders c("tephra-it-freeze-" + testing::RandomSuffix());
  REQUIRE(testing::Eventually([&] { return !c.Leader().empty(); }, std::chrono::seconds(20)));
  std::string leader = c.Leader();
  std::string other = leader == "alpha" ? "beta" : "alpha";

  // SIGSTOP: the leader cannot renew (like a long GC pause or a partition). It resumes after
  // its successor took over and must notice at once that it no longer leads.
  REQUIRE(c.procs[leader]->Signal(SIGSTOP));
  REQUIRE(testing::Eventually([&] { return FirstAfter(c.Lines(other), "START", other) > 0; },
                              std::chrono::seconds(15)));
  int64_t successor = FirstAfter(c.Lines(other), "START", other);
  int64_t resumed = NowUs();
  REQUIRE(c.procs[leader]->Signal(SIGCONT));
  std::this_thread::sleep_for(std::chrono::seconds(3));

  auto old_lines = c.Lines(leader);
  // No LEAD heartbeat from the old leader after its successor started...
  for (const auto& l : old_lines) {
    if (l.what == "LEAD") CHECK(l.us < successor);
  }
  // ...and it reported losing leadership after resuming.
  CHECK(FirstAfter(old_lines, "STOP", leader, resumed - 1) > 0);
  // The successor kept leading.
  CHECK(LastOf(c.Lines(other), "LEAD", other) > resumed);
}

}  // namespace
}  // namespace tephra::kube
