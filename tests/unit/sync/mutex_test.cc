#include "sync/mutex.h"

#include <thread>

#include <catch2/catch.hpp>

namespace tephra::sync {
namespace {

// Whether another thread can take `mu` right now.
bool FreeForAnotherThread(Mutex& mu) {
  bool taken = false;
  std::thread([&] {
    if (mu.TryLock()) {
      taken = true;
      mu.Unlock();
    }
  }).join();
  return taken;
}

TEST_CASE("MutexLock holds the mutex, and lets it go between Unlock and Lock") {
  Mutex mu;
  {
    MutexLock lock(mu);
    CHECK_FALSE(FreeForAnotherThread(mu));
    lock.Unlock();
    CHECK(FreeForAnotherThread(mu));
    lock.Lock();
    CHECK_FALSE(FreeForAnotherThread(mu));
  }
  CHECK(FreeForAnotherThread(mu));
}

TEST_CASE("CondVar wakes a waiter whose predicate became true") {
  Mutex mu;
  CondVar cv;
  int value = 0;
  std::thread setter([&] {
    MutexLock lock(mu);
    value = 42;
    cv.NotifyAll();
  });
  {
    MutexLock lock(mu);
    cv.Wait(mu, [&]() REQUIRES(mu) { return value == 42; });
    CHECK(value == 42);
  }
  setter.join();
}

TEST_CASE("CondVar waits give up at the deadline and hold the mutex again") {
  Mutex mu;
  CondVar cv;
  MutexLock lock(mu);
  const auto past = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  CHECK_FALSE(cv.WaitUntil(mu, past));
  CHECK_FALSE(cv.WaitUntil(mu, past, [] { return false; }));
  CHECK(cv.WaitUntil(mu, past, [] { return true; }));
  CHECK_FALSE(cv.WaitFor(mu, std::chrono::milliseconds(0), [] { return false; }));
  CHECK_FALSE(FreeForAnotherThread(mu));  // still held
}

TEST_CASE("SharedMutex admits readers together and a writer alone") {
  SharedMutex mu;
  int value = 0;
  {
    WriterMutexLock lock(mu);
    value = 1;
  }
  ReaderMutexLock outer(mu);
  int seen = 0;
  // A second reader gets in while the first holds it (a writer would block forever here).
  std::thread([&] {
    ReaderMutexLock inner(mu);
    seen = 1;
  }).join();
  CHECK(seen == 1);
  CHECK(value == 1);
}

}  // namespace
}  // namespace tephra::sync
