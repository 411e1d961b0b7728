#include "kube/daemon.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

#include <catch2/catch.hpp>

#include "metrics/metrics.h"
#include "tests/fakes/fake_apiserver.h"
#include "tests/support/cluster.h"

// GCC 12 at -O3 (release preset) reports assigning a short literal to a std::string member as a
// read of uninitialised bytes (GCC bug 105562, a false positive).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace tephra::kube {
namespace {

TEST_CASE("SplitHostPort reads host and port and names the flag in errors") {
  auto plain = SplitHostPort("listen-address", "127.0.0.1:8080");
  REQUIRE(plain.ok());
  CHECK(plain->first == "127.0.0.1");
  CHECK(plain->second == 8080);
  auto all = SplitHostPort("listen-address", ":9090");
  REQUIRE(all.ok());
  CHECK(all->first == "0.0.0.0");
  auto v6 = SplitHostPort("listen-address", "[::1]:0");
  REQUIRE(v6.ok());
  CHECK(v6->first == "::1");
  CHECK(v6->second == 0);
  for (const char* bad : {"localhost", "127.0.0.1:", "127.0.0.1:http", "127.0.0.1:70000"}) {
    auto r = SplitHostPort("healthz-address", bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message().find("--healthz-address") == 0);
  }
}

TEST_CASE("leader-election flags refuse timings that would let two leaders overlap") {
  LeaderElectionFlags flags;
  flags.resource_name = "volcano";
  flags.resource_namespace = "ns";
  auto good = flags.Config("me");
  REQUIRE(good.ok());
  CHECK(good->namespace_ == "ns");
  CHECK(good->identity == "me");
  flags.renew_deadline = flags.lease_duration;
  CHECK_FALSE(flags.Config("me").ok());
  flags.renew_deadline = std::chrono::seconds(10);
  flags.resource_name.clear();
  auto unnamed = flags.Config("me");
  REQUIRE_FALSE(unnamed.ok());
  CHECK(unnamed.status().message().find("--leader-elect-resource-name") != std::string::npos);
}

TEST_CASE("ServeHealth serves on an ephemeral port, or not at all when told") {
  base::HealthChecks checks;
  metrics::Registry registry;
  auto none = ServeHealth({"listen-address", "0", true}, checks, registry);
  REQUIRE(none.ok());
  CHECK(*none == nullptr);
  auto skipped = ServeHealth({"listen-address", "127.0.0.1:0", false}, checks, registry);
  REQUIRE(skipped.ok());
  CHECK(*skipped == nullptr);
  auto served = ServeHealth({"listen-address", "127.0.0.1:0", true}, checks, registry);
  REQUIRE(served.ok());
  REQUIRE(*served != nullptr);
  CHECK((*served)->port() != 0);
  (*served)->Stop();
}

TEST_CASE("the process identity is stable and names the host") {
  CHECK(ProcessIdentity() == ProcessIdentity());
  CHECK(ProcessIdentity().find('_') != std::string::npos);
}

// ---- DaemonRunner, over the fake API server ----

using testing::FakeApiServer;

// What a RecordingDaemon saw; shared with the test, as the runner owns the daemon.
struct Probe {
  void Add(const std::string& call) {
    std::lock_guard<std::mutex> l(mu);
    calls.push_back(call);
  }
  std::vector<std::string> Calls() {
    std::lock_guard<std::mutex> l(mu);
    return calls;
  }
  bool Saw(const std::string& call) {
    std::vector<std::string> c = Calls();
    return std::find(c.begin(), c.end(), call) != c.end();
  }
  std::mutex mu;
  std::vector<std::string> calls;
  std::atomic<bool> synced{false};  // Lead's "cache sync" is over once the test says so
  std::atomic<int> led{-1};         // what Lead returned (-1: it has not)
  std::atomic<bool> context_complete{false};
  StartStatus build_result, start_result;
};

// Records each of its parts as the runner calls it; Lead waits for the test's "sync".
class RecordingDaemon : public Daemon {
 public:
  explicit RecordingDaemon(std::shared_ptr<Probe> probe) : probe_(std::move(probe)) {}
  StartStatus Build(const DaemonContext& context, base::HealthChecks&) override {
    probe_->Add("build");
    probe_->context_complete = context.client != nullptr && context.events != nullptr &&
                               context.registry != nullptr && context.shutdown != nullptr &&
                               context.runner != nullptr && context.identity == ProcessIdentity();
    return probe_->build_result;
  }
  StartStatus Start() override {
    probe_->Add("start");
    return probe_->start_result;
  }
  bool Lead(const std::function<bool()>& keep_leading) override {
    probe_->Add("lead");
    while (!probe_->synced && keep_leading()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    probe_->led = keep_leading() ? 1 : 0;
    return probe_->led == 1;
  }
  void StopLeading() override { probe_->Add("stop leading"); }
  void Stop() override { probe_->Add("stop"); }

 private:
  std::shared_ptr<Probe> probe_;
};

DaemonOptions TestOptions(bool elect) {
  DaemonOptions options;
  options.component = "tephra-test";
  options.leader.enabled = elect;
  options.leader.resource_namespace = "tephra-system";
  options.leader.resource_name = "tephra-test";
  options.leader.lease_duration = std::chrono::milliseconds(600);
  options.leader.renew_deadline = std::chrono::milliseconds(400);
  options.leader.retry_period = std::chrono::milliseconds(100);
  options.health = {"listen-address", "0", false};
  return options;
}

std::shared_ptr<Client> ClientOn(const std::shared_ptr<FakeApiServer>& fake) {
  ClientOptions co;
  co.qps = 0;
  co.max_retries = 0;
  return std::make_shared<Client>(fake, co);
}

// Whether `condition` holds within `limit`, asked every 5 ms.
bool Within(std::chrono::milliseconds limit, const std::function<bool()>& condition) {
  return testing::Eventually(condition, limit, std::chrono::milliseconds(5));
}

// Runs a DaemonRunner on a thread of its own until shutdown.
struct Running {
  Running(DaemonOptions options, std::shared_ptr<Probe> probe,
          std::shared_ptr<FakeApiServer> api = std::make_shared<FakeApiServer>())
      : fake(std::move(api)), runner(std::move(options), shutdown, &registry) {
    thread = std::thread([this, probe = std::move(probe)] {
      exit_code = runner.Run(std::make_unique<RecordingDaemon>(probe), ClientOn(fake));
      done = true;
    });
  }
  ~Running() {
    shutdown.Request("test over");
    if (thread.joinable()) thread.join();
  }
  int Stop() {
    shutdown.Request("test");
    thread.join();
    return exit_code;
  }
  // Run's exit code when it returns by itself; -1 if it does not within 3 s.
  int Ended() {
    if (!Within(std::chrono::seconds(3), [&] { return done.load(); })) return -1;
    thread.join();
    return exit_code;
  }
  std::shared_ptr<FakeApiServer> fake;
  base::ShutdownSignal shutdown;
  metrics::Registry registry;
  DaemonRunner runner;
  std::atomic<bool> done{false};
  int exit_code = -1;
  std::thread thread;
};

const std::vector<std::string> kWholeLife = {"build", "start", "lead", "stop leading", "stop"};

TEST_CASE("DaemonRunner calls the parts in order and a leader is ready once its caches synced") {
  for (bool elect : {false, true}) {
    INFO("leader election " << elect);
    auto probe = std::make_shared<Probe>();
    Running r(TestOptions(elect), probe);
    REQUIRE(Within(std::chrono::seconds(3), [&] { return probe->Saw("lead"); }));
    CHECK(r.runner.leading());
    // Leading and still syncing, long past the renew deadline: not ready, and the lease is kept
    // (Lead runs off the elector's thread).
    std::this_thread::sleep_for(std::chrono::milliseconds(elect ? 700 : 50));
    CHECK_FALSE(r.runner.Ready());
    CHECK_FALSE(probe->Saw("stop leading"));
    probe->synced = true;
    CHECK(Within(std::chrono::seconds(2), [&] { return r.runner.Ready(); }));
    CHECK(r.Stop() == 0);
    CHECK(probe->Calls() == kWholeLife);
    CHECK(probe->context_complete);
    CHECK(probe->led == 1);
    CHECK_FALSE(r.runner.leading());
  }
}

TEST_CASE("DaemonRunner: shutdown during the sync stops without the work having run") {
  auto probe = std::make_shared<Probe>();
  Running r(TestOptions(true), probe);
  REQUIRE(Within(std::chrono::seconds(3), [&] { return probe->Saw("lead"); }));
  CHECK(r.Stop() == 0);
  CHECK(probe->Calls() == kWholeLife);
  CHECK(probe->led == 0);  // the work never ran
}

TEST_CASE("DaemonRunner: a standby is ready and never leads") {
  auto probe = std::make_shared<Probe>();
  probe->synced = true;
  // Another replica holds the lease for an hour.
  auto fake = std::make_shared<FakeApiServer>();
  fake->Put("/apis/coordination.k8s.io/v1/namespaces/tephra-system/leases",
            R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease",)"
            R"("metadata":{"name":"tephra-test"},)"
            R"("spec":{"holderIdentity":"other","leaseDurationSeconds":3600}})");
  Running r(TestOptions(true), probe, fake);
  REQUIRE(Within(std::chrono::seconds(3), [&] { return probe->Saw("start"); }));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  CHECK(r.runner.Ready());
  CHECK_FALSE(r.runner.leading());
  CHECK(r.Stop() == 0);
  CHECK(probe->Calls() == std::vector<std::string>{"build", "start", "stop"});
}

TEST_CASE("DaemonRunner: a lost lease stops the work and exits with 1") {
  auto probe = std::make_shared<Probe>();
  probe->synced = true;
  Running r(TestOptions(true), probe);
  // Ready() once Run got as far as the lease (it is read from health checks, served later).
  REQUIRE(Within(std::chrono::seconds(3), [&] { return probe->Saw("lead") && r.runner.Ready(); }));
  r.fake->FailNext(1000000, 500, "PUT");  // renewals fail from now on
  CHECK(r.Ended() == kExitFailure);
  CHECK(probe->Calls() == kWholeLife);
}

TEST_CASE("DaemonRunner: a failed step ends the run with its exit code") {
  SECTION("bad leader-election flags: 2, before anything is built") {
    auto probe = std::make_shared<Probe>();
    DaemonOptions options = TestOptions(true);
    options.leader.renew_deadline = options.leader.lease_duration;
    Running r(std::move(options), probe);
    CHECK(r.Ended() == kExitBadConfiguration);
    CHECK(probe->Calls().empty());
  }
  SECTION("Build") {
    auto probe = std::make_shared<Probe>();
    probe->build_result = {kExitFailure, Internal("no controllers")};
    Running r(TestOptions(false), probe);
    CHECK(r.Ended() == kExitFailure);
    CHECK(probe->Calls() == std::vector<std::string>{"build"});
  }
  SECTION("Start") {
    auto probe = std::make_shared<Probe>();
    probe->start_result = {kExitBadConfiguration, InvalidArgument("--admin-address: bad")};
    Running r(TestOptions(false), probe);
    CHECK(r.Ended() == kExitBadConfiguration);
    CHECK(probe->Calls() == std::vector<std::string>{"build", "start"});
  }
  SECTION("the health server") {
    auto probe = std::make_shared<Probe>();
    DaemonOptions options = TestOptions(false);
    options.health = {"listen-address", "localhost", true};
    Running r(std::move(options), probe);
    CHECK(r.Ended() == kExitFailure);
    CHECK(probe->Calls() == std::vector<std::string>{"build"});
  }
}

}  // namespace
}  // namespace tephra::kube
