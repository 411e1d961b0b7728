#include "sync/fifo_semaphore.h"

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

namespace tephra::sync {
namespace {

using std::chrono_literals::operator""ms;

// Waits (bounded) until `semaphore` has `n` callers queued.
bool WaitForQueued(const FifoSemaphore& semaphore, size_t n) {
  for (int i = 0; i < 2000 && semaphore.waiting() < n; ++i) std::this_thread::sleep_for(1ms);
  return semaphore.waiting() == n;
}

TEST_CASE("FifoSemaphore admits up to its limit without waiting") {
  FifoSemaphore semaphore(2);
  semaphore.Acquire();
  semaphore.Acquire();
  CHECK(semaphore.in_use() == 2);
  CHECK(semaphore.waiting() == 0);
  semaphore.Release();
  semaphore.Release();
  CHECK(semaphore.in_use() == 0);
}

TEST_CASE("FifoSemaphore grants freed slots in the order they were asked for") {
  FifoSemaphore semaphore(1);
  semaphore.Acquire();
  Mutex mu;
  std::vector<int> order;
  std::vector<std::thread> threads;
  for (int i = 0; i < 5; ++i) {
    // Each waiter queues before the next starts, so arrival order is 0, 1, 2, ...
    threads.emplace_back([&, i] {
      FifoSemaphore::Slot slot(semaphore);
      MutexLock lock(mu);
      order.push_back(i);
    });
    REQUIRE(WaitForQueued(semaphore, static_cast<size_t>(i) + 1));
  }
  semaphore.Release();
  for (auto& t : threads) t.join();
  CHECK(order == std::vector<int>{0, 1, 2, 3, 4});
  CHECK(semaphore.in_use() == 0);
}

TEST_CASE("FifoSemaphore: a newcomer does not overtake a queued caller") {
  FifoSemaphore semaphore(1);
  semaphore.Acquire();
  std::atomic<bool> queued_got_it{false};
  std::thread queued([&] {
    semaphore.Acquire();
    queued_got_it = true;
  });
  REQUIRE(WaitForQueued(semaphore, 1));
  // The slot passes to the queued caller as it is released, never back to the pool, so a
  // caller arriving now must queue behind it.
  semaphore.Release();
  queued.join();
  CHECK(queued_got_it);
  CHECK(semaphore.in_use() == 1);
  std::atomic<bool> newcomer_got_it{false};
  std::thread newcomer([&] {
    semaphore.Acquire();
    newcomer_got_it = true;
  });
  REQUIRE(WaitForQueued(semaphore, 1));
  CHECK_FALSE(newcomer_got_it);
  semaphore.Release();
  newcomer.join();
  CHECK(newcomer_got_it);
  semaphore.Release();
  CHECK(semaphore.in_use() == 0);
}

TEST_CASE("FifoSemaphore never has more holders than its limit") {
  FifoSemaphore semaphore(3);
  std::atomic<int> holders{0}, most{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        FifoSemaphore::Slot slot(semaphore);
        int now = ++holders;
        for (int seen = most.load(); now > seen && !most.compare_exchange_weak(seen, now);) {
        }
        --holders;
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(most.load() <= 3);
  CHECK(most.load() >= 1);
  CHECK(semaphore.in_use() == 0);
}

}  // namespace
}  // namespace tephra::sync
