#include "base/clock.h"

#include <algorithm>

namespace tephra::base {
namespace {

class Real : public ClockInterface {
 public:
  Time Now() const override { return Clock::now(); }
  std::chrono::steady_clock::time_point Monotonic() const override {
    return std::chrono::steady_clock::now();
  }
  bool WaitUntil(sync::Mutex& mu, sync::CondVar& cv, std::chrono::steady_clock::time_point deadline,
                 const std::function<bool()>& pred) REQUIRES(mu) override {
    return cv.WaitUntil(mu, deadline, pred);
  }
};

}  // namespace

ClockInterface& RealClock() {
  static Real clock;
  return clock;
}

FakeClock::FakeClock(Time start) : wall_(start), mono_(std::chrono::steady_clock::time_point()) {}

Time FakeClock::Now() const {
  sync::MutexLock l(mu_);
  return wall_;
}

std::chrono::steady_clock::time_point FakeClock::Monotonic() const {
  sync::MutexLock l(mu_);
  return mono_;
}

bool FakeClock::WaitUntil(sync::Mutex& mu, sync::CondVar& cv,
                          std::chrono::steady_clock::time_point deadline,
                          const std::function<bool()>& pred) {
  {
    sync::MutexLock l(mu_);
    ++waiters_;
    cvs_.push_back(&cv);
  }
  while (!pred()) {
    if (Monotonic() >= deadline) break;
    // Real waits are short so a missed notification costs at most a few milliseconds.
    cv.WaitFor(mu, std::chrono::milliseconds(5));
  }
  {
    sync::MutexLock l(mu_);
    --waiters_;
    cvs_.erase(std::find(cvs_.begin(), cvs_.end(), &cv));
  }
  return pred();
}

void FakeClock::Advance(std::chrono::steady_clock::duration d) {
  sync::MutexLock l(mu_);
  wall_ += std::chrono::duration_cast<Clock::duration>(d);
  mono_ += d;
  // Notified under mu_: a waiter deregisters under mu_ too, so its cv is still alive here.
  for (auto* cv : cvs_) cv->NotifyAll();
}

int FakeClock::Waiters() const {
  sync::MutexLock l(mu_);
  return waiters_;
}

}  // namespace tephra::base
