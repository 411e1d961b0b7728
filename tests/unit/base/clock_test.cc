#include "base/clock.h"

#include <thread>

#include <catch2/catch.hpp>

namespace tephra::base {
namespace {

TEST_CASE("FakeClock advances wall and monotonic time together") {
  FakeClock clock;
  Time t0 = clock.Now();
  auto m0 = clock.Monotonic();
  clock.Advance(std::chrono::seconds(5));
  CHECK(clock.Now() - t0 == std::chrono::seconds(5));
  CHECK(clock.Monotonic() - m0 == std::chrono::seconds(5));
}

TEST_CASE("FakeClock wakes a waiter only when advanced past its deadline") {
  FakeClock clock;
  sync::Mutex mu;
  sync::CondVar cv;
  bool done = false;
  bool result = true;
  std::thread waiter([&] {
    sync::MutexLock lock(mu);
    result =
        clock.WaitUntil(mu, cv, clock.Monotonic() + std::chrono::seconds(10), [] { return false; });
    done = true;
  });
  while (clock.Waiters() == 0) std::this_thread::yield();
  clock.Advance(std::chrono::seconds(9));
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  {
    sync::MutexLock l(mu);
    CHECK_FALSE(done);
  }
  clock.Advance(std::chrono::seconds(1));
  waiter.join();
  CHECK(done);
  CHECK_FALSE(result);
}

TEST_CASE("RealClock waits for a predicate") {
  sync::Mutex mu;
  sync::CondVar cv;
  sync::MutexLock lock(mu);
  bool ok = RealClock().WaitUntil(mu, cv, RealClock().Monotonic() + std::chrono::seconds(5),
                                  [] { return true; });
  CHECK(ok);
}

}  // namespace
}  // namespace tephra::base
