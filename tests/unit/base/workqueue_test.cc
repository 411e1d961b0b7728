#include "base/workqueue.h"

#include <algorithm>
#include <atomic>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "metrics/metrics.h"

namespace tephra::base {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;

// A queue on a fake clock with a limiter that never delays unless a test says otherwise.
WorkQueueOptions FakeOptions(FakeClock& clock) {
  WorkQueueOptions options;
  options.clock = &clock;
  return options;
}

// Waits (in real time, bounded) until `n` threads are blocked on the fake clock.
void AwaitWaiters(const FakeClock& clock, int n) {
  for (int i = 0; i < 2000 && clock.Waiters() < n; ++i) {
    std::this_thread::sleep_for(milliseconds(1));
  }
  REQUIRE(clock.Waiters() >= n);
}

TEST_CASE("A key added twice while queued is handed out once") {
  FakeClock clock;
  WorkQueue q(FakeOptions(clock));
  q.Add("ns/a");
  q.Add("ns/b");
  q.Add("ns/a");
  CHECK(q.Len() == 2);
  CHECK(q.Get() == "ns/a");
  CHECK(q.Get() == "ns/b");
  CHECK(q.Len() == 0);
}

TEST_CASE("A key re-added while processing is delivered again after Done") {
  FakeClock clock;
  WorkQueue q(FakeOptions(clock));
  q.Add("a");
  REQUIRE(q.Get() == "a");
  q.Add("a");
  q.Add("a");
  CHECK(q.Len() == 0);  // not handed to a second worker while "a" is processing
  q.Done("a");
  CHECK(q.Len() == 1);
  CHECK(q.Get() == "a");
  q.Done("a");
  CHECK(q.Len() == 0);
  q.Done("never-handed-out");  // harmless
}

TEST_CASE("Concurrent workers never share a key and every add is processed") {
  WorkQueue q;  // real clock: this is a thread stress test
  constexpr int kKeys = 64;
  constexpr int kWorkers = 6;
  constexpr int kProducers = 3;
  constexpr int kAddsPerProducer = 4000;
  std::vector<std::atomic<bool>> in_flight(kKeys);
  std::vector<std::atomic<int>> version(kKeys);    // bumped before every Add
  std::vector<std::atomic<int>> processed(kKeys);  // version seen by the latest processing
  std::atomic<int> overlaps{0};
  std::atomic<int> deliveries{0};

  std::vector<std::thread> workers;
  for (int w = 0; w < kWorkers; ++w) {
    workers.emplace_back([&] {
      while (auto key = q.Get()) {
        const size_t k = std::stoul(*key);
        if (in_flight[k].exchange(true)) ++overlaps;
        const int seen = version[k].load();
        if (deliveries.fetch_add(1) % 7 == 0) std::this_thread::yield();
        int prev = processed[k].load();
        while (prev < seen && !processed[k].compare_exchange_weak(prev, seen)) {
        }
        in_flight[k] = false;
        q.Done(*key);
      }
    });
  }
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      for (int i = 0; i < kAddsPerProducer; ++i) {
        const auto k = static_cast<size_t>((i * 7 + p * 13) % kKeys);
        ++version[k];
        q.Add(std::to_string(k));
      }
    });
  }
  for (auto& t : producers) t.join();
  q.ShutDown();  // queued and re-dirtied keys are still handed out before Get says stop
  for (auto& t : workers) t.join();

  CHECK(overlaps == 0);
  CHECK(deliveries > 0);
  CHECK(deliveries <= kProducers * kAddsPerProducer);
  for (size_t k = 0; k < kKeys; ++k) {
    INFO("key " << k);
    CHECK(processed[k] == version[k]);
  }
}

TEST_CASE("Delayed adds fire in simulated time, earliest first") {
  FakeClock clock;
  WorkQueue q(FakeOptions(clock));
  q.AddAfter("late", seconds(2));
  q.AddAfter("early-1", seconds(1));
  q.AddAfter("early-2", seconds(1));
  q.AddAfter("late", seconds(5));  // a later time does not postpone the key
  q.AddAfter("now", nanoseconds(0));
  CHECK(q.Get() == "now");
  q.Done("now");

  auto next = std::async(std::launch::async, [&] { return q.Get(); });
  AwaitWaiters(clock, 1);
  clock.Advance(milliseconds(999));
  CHECK(next.wait_for(milliseconds(30)) == std::future_status::timeout);
  clock.Advance(milliseconds(1));
  CHECK(next.get() == "early-1");
  CHECK(q.Get() == "early-2");  // both were due; insertion order breaks the tie

  // An earlier delayed key wakes a Get already sleeping towards a later one.
  auto earlier = std::async(std::launch::async, [&] { return q.Get(); });
  AwaitWaiters(clock, 1);
  q.AddAfter("sooner", milliseconds(100));
  clock.Advance(milliseconds(100));
  CHECK(earlier.get() == "sooner");
  clock.Advance(milliseconds(900));
  CHECK(q.Get() == "late");
  CHECK(q.Len() == 0);
}

TEST_CASE("Per-key exponential backoff doubles from 5ms up to its cap") {
  ExponentialFailureRateLimiter limiter;  // 5ms .. 1000s
  std::vector<nanoseconds> waits;
  for (int i = 0; i < 5; ++i) waits.push_back(limiter.When("a"));
  CHECK(waits == std::vector<nanoseconds>{milliseconds(5), milliseconds(10), milliseconds(20),
                                          milliseconds(40), milliseconds(80)});
  CHECK(limiter.NumRequeues("a") == 5);
  CHECK(limiter.When("b") == milliseconds(5));  // keys are independent
  for (int i = 0; i < 100; ++i) limiter.When("a");
  CHECK(limiter.When("a") == seconds(1000));

  limiter.Forget("a");
  CHECK(limiter.NumRequeues("a") == 0);
  CHECK(limiter.When("a") == milliseconds(5));

  ExponentialFailureRateLimiter small(milliseconds(1), milliseconds(6));
  CHECK(small.When("k") == milliseconds(1));
  CHECK(small.When("k") == milliseconds(2));
  CHECK(small.When("k") == milliseconds(4));
  CHECK(small.When("k") == milliseconds(6));
  CHECK(small.When("k") == milliseconds(6));
}

TEST_CASE("The token bucket allows a burst, then spaces retries at 1/qps") {
  FakeClock clock;
  TokenBucketRateLimiter bucket(10, 2, clock);
  CHECK(bucket.When("a") == nanoseconds(0));
  CHECK(bucket.When("b") == nanoseconds(0));
  CHECK(bucket.When("c") == milliseconds(100));
  CHECK(bucket.When("d") == milliseconds(200));
  clock.Advance(seconds(10));  // refills, but never beyond the burst
  CHECK(bucket.When("e") == nanoseconds(0));
  CHECK(bucket.When("f") == nanoseconds(0));
  CHECK(bucket.When("g") == milliseconds(100));
  CHECK(bucket.NumRequeues("g") == 0);
}

TEST_CASE("The default controller limiter is the max of backoff and bucket") {
  FakeClock clock;
  auto limiter = NewDefaultControllerRateLimiter(clock);
  // 100 distinct keys fit in the burst: each waits only its own first backoff.
  for (int i = 0; i < 100; ++i) REQUIRE(limiter->When("k" + std::to_string(i)) == milliseconds(5));
  // The 101st must wait for a token (1/10 s) although its own backoff is 5ms.
  CHECK(limiter->When("k100") == milliseconds(100));
  CHECK(limiter->NumRequeues("k100") == 1);
  limiter->Forget("k100");
  CHECK(limiter->NumRequeues("k100") == 0);
}

TEST_CASE("Other keys' failures hold a key's first retry back at most kMaxSharedRetryDelay") {
  FakeClock clock;
  auto limiter = NewDefaultControllerRateLimiter(clock);
  // A namespace being deleted: its jobs fail over and over, a thousand retries at once.
  for (int i = 0; i < 1000; ++i) limiter->When("doomed/" + std::to_string(i % 20));
  // Unbounded, the bucket would hold this job's first retry back 90 s.
  CHECK(limiter->When("live/job") == kMaxSharedRetryDelay);
  clock.Advance(kMaxSharedRetryDelay);
  // A second later the bucket has room again (tokens refill; none are owed beyond a second).
  CHECK(limiter->When("live/other") <= kMaxSharedRetryDelay);
  // A key that keeps failing is slowed by its own back-off, beyond the bucket's bound.
  for (int i = 0; i < 12; ++i) limiter->When("live/job");
  CHECK(limiter->When("live/job") == milliseconds(5) * (1 << 13));
}

TEST_CASE("A bounded bucket spreads a burst over max_delay and takes no token beyond it") {
  FakeClock clock;
  TokenBucketRateLimiter bucket(10, 2, clock, milliseconds(300));
  CHECK(bucket.When("a") == nanoseconds(0));
  CHECK(bucket.When("b") == nanoseconds(0));
  CHECK(bucket.When("c") == milliseconds(100));
  CHECK(bucket.When("d") == milliseconds(200));
  CHECK(bucket.When("e") == milliseconds(300));
  // Full: later retries wait the bound and owe nothing, so the debt stays at 300 ms.
  for (int i = 0; i < 50; ++i) REQUIRE(bucket.When("x") == milliseconds(300));
  clock.Advance(milliseconds(100));
  CHECK(bucket.When("f") == milliseconds(300));
  clock.Advance(milliseconds(400));  // pays off the 300 ms owed, and banks one token
  CHECK(bucket.When("g") == nanoseconds(0));
  CHECK(bucket.When("h") == milliseconds(100));
}

TEST_CASE("AddRateLimited delays the key by the limiter's answer and Forget resets it") {
  FakeClock clock;
  WorkQueueOptions options = FakeOptions(clock);
  options.rate_limiter = std::make_shared<ExponentialFailureRateLimiter>();
  WorkQueue q(options);
  q.AddRateLimited("a");
  q.AddRateLimited("a");  // now due in 10ms, but the earlier 5ms entry stands
  CHECK(q.NumRequeues("a") == 2);
  auto got = std::async(std::launch::async, [&] { return q.Get(); });
  AwaitWaiters(clock, 1);
  clock.Advance(milliseconds(4));
  CHECK(got.wait_for(milliseconds(30)) == std::future_status::timeout);
  clock.Advance(milliseconds(1));
  CHECK(got.get() == "a");
  q.Forget("a");
  q.Done("a");
  CHECK(q.NumRequeues("a") == 0);
}

TEST_CASE("ShutDown wakes a blocked Get, ignores later adds and still hands out queued keys") {
  FakeClock clock;
  WorkQueue q(FakeOptions(clock));
  auto blocked = std::async(std::launch::async, [&] { return q.Get(); });
  AwaitWaiters(clock, 1);
  q.ShutDown();
  CHECK(blocked.get() == std::nullopt);
  CHECK(q.ShuttingDown());

  WorkQueue q2(FakeOptions(clock));
  q2.Add("x");
  q2.AddAfter("delayed", seconds(1));
  q2.ShutDown();
  q2.Add("y");
  clock.Advance(seconds(2));
  CHECK(q2.Get() == "x");
  CHECK(q2.Get() == std::nullopt);
}

TEST_CASE("ShutDownWithDrain waits for keys in flight") {
  FakeClock clock;
  WorkQueue q(FakeOptions(clock));
  q.Add("a");
  REQUIRE(q.Get() == "a");
  auto drained = std::async(std::launch::async, [&] { q.ShutDownWithDrain(); });
  CHECK(drained.wait_for(milliseconds(50)) == std::future_status::timeout);
  CHECK(q.ShuttingDown());
  q.Done("a");
  CHECK(drained.wait_for(seconds(5)) == std::future_status::ready);

  WorkQueue q2(FakeOptions(clock));
  q2.Add("stuck");
  REQUIRE(q2.Get() == "stuck");
  auto timed = std::async(std::launch::async, [&] { return q2.ShutDownWithDrain(seconds(10)); });
  AwaitWaiters(clock, 1);
  clock.Advance(seconds(10));
  CHECK_FALSE(timed.get());
  q2.Done("stuck");
  CHECK(q2.ShutDownWithDrain(seconds(1)));
}

TEST_CASE("QueueWorkers retry a failed key through the limiter and finish queued keys on Stop") {
  FakeClock clock;
  WorkQueueOptions options = FakeOptions(clock);
  options.rate_limiter = std::make_shared<ExponentialFailureRateLimiter>();
  WorkQueue q(options);
  std::mutex mu;
  std::vector<std::string> synced;
  int failures_left = 2;
  QueueWorkers workers;
  workers.Start(&q, 2, "test", [&](const std::string& key) -> Status {
    std::lock_guard<std::mutex> l(mu);
    synced.push_back(key);
    if (key == "flaky" && failures_left-- > 0) return Unavailable("try again");
    return Status::Ok();
  });
  auto flaky_syncs = [&] {
    std::lock_guard<std::mutex> l(mu);
    return std::count(synced.begin(), synced.end(), "flaky");
  };
  q.Add("flaky");
  // Two failures, each retried once the limiter's delay passed on the queue's clock.
  for (int i = 0; i < 2000 && flaky_syncs() < 3; ++i) {
    clock.Advance(milliseconds(5));
    std::this_thread::sleep_for(milliseconds(1));
  }
  REQUIRE(flaky_syncs() == 3);
  // Success forgot the failures (Forget runs just after sync returns).
  for (int i = 0; i < 2000 && q.NumRequeues("flaky") != 0; ++i) {
    std::this_thread::sleep_for(milliseconds(1));
  }
  CHECK(q.NumRequeues("flaky") == 0);
  for (const char* key : {"a", "b", "c"}) q.Add(key);
  workers.Stop();
  workers.Stop();  // idempotent
  CHECK(flaky_syncs() == 3);
  std::lock_guard<std::mutex> l(mu);
  CHECK(std::set<std::string>(synced.begin(), synced.end()) ==
        std::set<std::string>{"a", "b", "c", "flaky"});
}

TEST_CASE("Fnv32 matches Go's hash/fnv New32 and sharding is stable") {
  CHECK(Fnv32("") == 0x811c9dc5u);
  CHECK(Fnv32("a") == 0x050c5d7eu);
  CHECK(Fnv32("foobar") == 0x31f0b262u);

  ShardedWorkQueue sharded(4);
  CHECK(sharded.size() == 4);
  CHECK(sharded.ShardFor("default/job-1") == 0x04a25f72u % 4);
  std::set<size_t> used;
  for (int i = 0; i < 100; ++i) {
    const std::string key = "ns/job-" + std::to_string(i);
    const size_t shard = sharded.ShardFor(key);
    CHECK(sharded.ShardFor(key) == shard);
    used.insert(shard);
  }
  CHECK(used.size() == 4);

  sharded.Add("ns/job-7");
  WorkQueue& owner = sharded.ForKey("ns/job-7");
  CHECK(owner.Len() == 1);
  for (size_t i = 0; i < sharded.size(); ++i) {
    if (&sharded.Shard(i) != &owner) CHECK(sharded.Shard(i).Len() == 0);
  }
  CHECK(owner.Get() == "ns/job-7");
  owner.Done("ns/job-7");
  sharded.ShutDownWithDrain();
  CHECK(owner.ShuttingDown());
}

TEST_CASE("Queue metrics count adds, depth, retries and durations") {
  FakeClock clock;
  metrics::Registry registry;
  WorkQueueOptions options = FakeOptions(clock);
  options.name = "jobs";
  options.registry = &registry;
  WorkQueue q(options);
  q.Add("a");
  q.Add("a");
  q.Add("b");
  clock.Advance(seconds(2));
  REQUIRE(q.Get() == "a");
  clock.Advance(seconds(3));
  q.Done("a");
  q.AddAfter("c", seconds(1));

  const std::string text = registry.Render();
  CHECK(text.find("workqueue_adds_total{name=\"jobs\"} 2\n") != std::string::npos);
  CHECK(text.find("workqueue_depth{name=\"jobs\"} 1\n") != std::string::npos);
  CHECK(text.find("workqueue_retries_total{name=\"jobs\"} 1\n") != std::string::npos);
  CHECK(text.find("workqueue_queue_duration_seconds_sum{name=\"jobs\"} 2\n") != std::string::npos);
  CHECK(text.find("workqueue_work_duration_seconds_sum{name=\"jobs\"} 3\n") != std::string::npos);
  CHECK(text.find("workqueue_work_duration_seconds_count{name=\"jobs\"} 1\n") != std::string::npos);
}

}  // namespace
}  // namespace tephra::base
