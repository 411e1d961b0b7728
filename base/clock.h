// Injectable time. Everything that waits, backs off or expires takes a Clock so tests can run
// in simulated time; production code uses RealClock().
#pragma once

#include <chrono>
#include <functional>
#include <vector>

#include "base/time.h"
#include "sync/mutex.h"

namespace tephra::base {

class ClockInterface {
 public:
  virtual ~ClockInterface() = default;
  // Wall time, for timestamps written to the API server.
  virtual Time Now() const = 0;
  // Monotonic time, for timeouts, backoff and rate limits.
  virtual std::chrono::steady_clock::time_point Monotonic() const = 0;
  // Waits on `cv` until `pred` holds or `deadline` (monotonic) passes; returns pred(). pred
  // runs with `mu` held. A fake clock wakes waiters when it is advanced.
  virtual bool WaitUntil(sync::Mutex& mu, sync::CondVar& cv,
                         std::chrono::steady_clock::time_point deadline,
                         const std::function<bool()>& pred) REQUIRES(mu) = 0;
};

// The process-wide real clock.
ClockInterface& RealClock();

// A manually advanced clock for tests. Waiters registered through WaitUntil are woken on
// Advance(); their condition variables must outlive the wait.
class FakeClock : public ClockInterface {
 public:
  explicit FakeClock(Time start = Time(std::chrono::seconds(1'800'000'000)));

  Time Now() const override;
  std::chrono::steady_clock::time_point Monotonic() const override;
  bool WaitUntil(sync::Mutex& mu, sync::CondVar& cv, std::chrono::steady_clock::time_point deadline,
                 const std::function<bool()>& pred) REQUIRES(mu) EXCLUDES(mu_) override;

  void Advance(std::chrono::steady_clock::duration d) EXCLUDES(mu_);
  // Number of threads currently blocked in WaitUntil (lets tests wait for a sleeper).
  int Waiters() const EXCLUDES(mu_);

 private:
  mutable sync::Mutex mu_;
  Time wall_ GUARDED_BY(mu_);
  std::chrono::steady_clock::time_point mono_ GUARDED_BY(mu_);
  int waiters_ GUARDED_BY(mu_) = 0;
  std::vector<sync::CondVar*> cvs_ GUARDED_BY(mu_);
};

}  // namespace tephra::base
