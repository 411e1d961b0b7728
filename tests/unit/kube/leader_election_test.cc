// Leader election against the in-memory FakeApiServer with short (sub-second) timings.
#include "kube/leader_election.h"

#include <atomic>
#include <thread>

#include <catch2/catch.hpp>

#include "tests/fakes/fake_apiserver.h"

namespace tephra::kube {
namespace {

using testing::FakeApiServer;

LeaderElectionConfig Config(const std::string& identity) {
  LeaderElectionConfig c;
  c.namespace_ = "tephra-system";
  c.name = "tephra-test";
  c.identity = identity;
  c.lease_duration = std::chrono::milliseconds(600);
  c.renew_deadline = std::chrono::milliseconds(400);
  c.retry_period = std::chrono::milliseconds(100);
  return c;
}

std::shared_ptr<Client> ClientOn(const std::shared_ptr<FakeApiServer>& fake) {
  ClientOptions co;
  co.qps = 0;
  return std::make_shared<Client>(fake, co);
}

// Runs an elector on its own thread and records what it saw.
struct Candidate {
  Candidate(std::shared_ptr<Client> client, LeaderElectionConfig config) {
    LeaderCallbacks cb;
    // The time first: the flag's store publishes it to a thread that sees the flag.
    cb.on_started_leading = [this] {
      started_at = std::chrono::steady_clock::now();
      started = true;
    };
    cb.on_stopped_leading = [this] {
      stopped_at = std::chrono::steady_clock::now();
      stopped = true;
    };
    elector = std::make_unique<LeaderElector>(std::move(client), std::move(config), cb);
    thread = std::thread([this] { result = elector->Run(); });
  }
  ~Candidate() {
    elector->Stop();
    if (thread.joinable()) thread.join();
  }
  std::unique_ptr<LeaderElector> elector;
  std::atomic<bool> started{false}, stopped{false};
  std::chrono::steady_clock::time_point started_at, stopped_at;
  Status result;
  std::thread thread;
};

bool Within(std::chrono::milliseconds limit, const std::function<bool()>& f) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (f()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return f();
}

TEST_CASE("invalid timings are rejected") {
  LeaderElectionConfig c = Config("a");
  c.renew_deadline = c.lease_duration;
  CHECK(LeaderElector::Validate(c).code() == StatusCode::kInvalidArgument);
  c = Config("a");
  c.retry_period = c.renew_deadline;
  CHECK_FALSE(LeaderElector::Validate(c).ok());
  c = Config("");
  CHECK_FALSE(LeaderElector::Validate(c).ok());
}

TEST_CASE("one of two candidates leads and a clean stop hands over at once") {
  auto fake = std::make_shared<FakeApiServer>();
  auto a = std::make_unique<Candidate>(ClientOn(fake), Config("a"));
  REQUIRE(Within(std::chrono::seconds(2), [&] { return a->started.load(); }));
  Candidate b(ClientOn(fake), Config("b"));
  std::this_thread::sleep_for(std::chrono::milliseconds(900));
  CHECK_FALSE(b.started);  // a keeps renewing
  CHECK(a->elector->IsLeader());
  CHECK(b.elector->CurrentLeader() == "a");

  auto stop_time = std::chrono::steady_clock::now();
  a.reset();  // Stop(): releases the lease
  REQUIRE(Within(std::chrono::seconds(2), [&] { return b.started.load(); }));
  // Released: no need to wait out the 600 ms lease.
  CHECK(b.started_at - stop_time < std::chrono::milliseconds(500));
  auto lease =
      fake->Object("/apis/coordination.k8s.io/v1/namespaces/tephra-system/leases", "tephra-test");
  REQUIRE(lease);
  CHECK(lease->find(R"("holderIdentity":"b")") != std::string::npos);
  CHECK(lease->find(R"("leaseTransitions":1)") != std::string::npos);
}

// Forwards to the fake until cut, then fails every request: a network partition that
// affects one candidate only.
class Partition : public Transport {
 public:
  explicit Partition(std::shared_ptr<FakeApiServer> fake) : fake_(std::move(fake)) {}
  StatusOr<ApiResponse> RoundTrip(const ApiRequest& r) override {
    if (cut) return Unavailable("partitioned");
    return fake_->RoundTrip(r);
  }
  StatusOr<std::unique_ptr<ResponseStream>> Stream(const ApiRequest& r) override {
    if (cut) return Unavailable("partitioned");
    return fake_->Stream(r);
  }
  std::atomic<bool> cut{false};

 private:
  std::shared_ptr<FakeApiServer> fake_;
};

TEST_CASE("a leader cut off from the API server stops before another starts") {
  auto fake = std::make_shared<FakeApiServer>();
  auto partition = std::make_shared<Partition>(fake);
  ClientOptions co;
  co.qps = 0;
  co.max_retries = 0;
  Candidate a(std::make_shared<Client>(partition, co), Config("a"));
  REQUIRE(Within(std::chrono::seconds(2), [&] { return a.started.load(); }));
  Candidate b(ClientOn(fake), Config("b"));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  CHECK_FALSE(b.started);
  partition->cut = true;
  REQUIRE(Within(std::chrono::seconds(3), [&] { return b.started.load(); }));
  REQUIRE(a.stopped);
  CHECK_FALSE(a.elector->IsLeader());
  a.thread.join();  // Run() returned after losing the lease; its result is safe to read now
  CHECK_FALSE(a.result.ok());
  // The guarantee: a had stopped acting before b began.
  CHECK(a.stopped_at < b.started_at);
}

TEST_CASE("IsLeader turns false as soon as the renew deadline passes") {
  auto fake = std::make_shared<FakeApiServer>();
  Candidate a(ClientOn(fake), Config("a"));
  REQUIRE(Within(std::chrono::seconds(2), [&] { return a.started.load(); }));
  CHECK(a.elector->IsLeader());
  fake->FailNext(1000000, 500, "PUT");
  auto cut = std::chrono::steady_clock::now();
  REQUIRE(Within(std::chrono::seconds(2), [&] { return !a.elector->IsLeader(); }));
  CHECK(std::chrono::steady_clock::now() - cut < std::chrono::milliseconds(550));
}

TEST_CASE("a crashed leader's lease is taken over after the lease duration") {
  auto fake = std::make_shared<FakeApiServer>();
  LeaderElectionConfig crash = Config("a");
  crash.release_on_cancel = false;  // as if killed: the lease stays held
  auto a = std::make_unique<Candidate>(ClientOn(fake), crash);
  REQUIRE(Within(std::chrono::seconds(2), [&] { return a->started.load(); }));
  Candidate b(ClientOn(fake), Config("b"));
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  auto crash_time = std::chrono::steady_clock::now();
  a.reset();
  REQUIRE(Within(std::chrono::seconds(3), [&] { return b.started.load(); }));
  auto waited = b.started_at - crash_time;
  CHECK(waited >= std::chrono::milliseconds(300));  // not before the lease could expire
  CHECK(waited < std::chrono::milliseconds(1500));  // lease (600) + observation + retry
}

}  // namespace
}  // namespace tephra::kube
