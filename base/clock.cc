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
  bool WaitUntil(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                 std::chrono::steady_clock::time_point deadline,
                 const std::function<bool()>& pred) override {
    return cv.wait_until(lock, deadline, pred);
  }
};

}  // namespace

ClockInterface& RealClock() {
  static Real clock;
  return clock;
}

FakeClock::FakeClock(Time start) : wall_(start), mono_(std::chrono::steady_clock::time_point()) {}

Time FakeClock::Now() const {
  std::lock_guard<std::mutex> l(mu_);
  return wall_;
}

std::chrono::steady_clock::time_point FakeClock::Monotonic() const {
  std::lock_guard<std::mutex> l(mu_);
  return mono_;
}

bool FakeClock::WaitUntil(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                          std::chrono::steady_clock::time_point deadline,
                          const std::function<bool()>& pred) {
  {
    std::lock_guard<std::mutex> l(mu_);
    ++waiters_;
    cvs_.push_back(&cv);
  }
  while (!pred()) {
    if (Monotonic() >= deadline) break;
    // Real waits are short so a missed notification costs at most a few milliseconds.
    cv.wait_for(lock, std::chrono::milliseconds(5));
  }
  {
    std::lock_guard<std::mutex> l(mu_);
    --waiters_;
    cvs_.erase(std::find(cvs_.begin(), cvs_.end(), &cv));
  }
  return pred();
}

void FakeClock::Advance(std::chrono::steady_clock::duration d) {
  std::lock_guard<std::mutex> l(mu_);
  wall_ += std::chrono::duration_cast<Clock::duration>(d);
  mono_ += d;
  // Notified under mu_: a waiter deregisters under mu_ too, so its cv is still alive here.
  for (auto* cv : cvs_) cv->notify_all();
}

int FakeClock::Waiters() const {
  std::lock_guard<std::mutex> l(mu_);
  return waiters_;
}

}  // namespace tephra::base
