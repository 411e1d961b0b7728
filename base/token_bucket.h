// A token bucket: `qps` tokens per second, at most `burst` banked. Used for client-side API
// throttling (--kube-api-qps/--kube-api-burst) and event rate limits.
#pragma once

#include <chrono>
#include <optional>

#include "base/clock.h"
#include "sync/mutex.h"

namespace tephra::base {

class TokenBucket {
 public:
  // qps <= 0 means unlimited.
  TokenBucket(double qps, int burst, ClockInterface& clock = RealClock());

  // Takes a token if one is available now.
  bool TryAccept() EXCLUDES(mu_);
  // How long the caller must wait for a token it reserves now (zero if available). The token
  // is taken: callers sleep for the returned duration and then proceed.
  std::chrono::steady_clock::duration Reserve() EXCLUDES(mu_);
  // Reserve() when the wait is at most `max_wait`; otherwise nothing is taken and nullopt
  // returned, so the reservations ahead never add up to more than `max_wait`.
  std::optional<std::chrono::steady_clock::duration> ReserveWithin(
      std::chrono::steady_clock::duration max_wait) EXCLUDES(mu_);
  // Reserve() and sleep (on the clock) until the token is due.
  void Wait();

 private:
  void Refill() REQUIRES(mu_);

  double qps_;
  double burst_;
  ClockInterface& clock_;
  sync::Mutex mu_;
  double tokens_ GUARDED_BY(mu_);  // may go negative (reserved)
  std::chrono::steady_clock::time_point last_ GUARDED_BY(mu_);
  sync::Mutex sleep_mu_;
  sync::CondVar sleep_cv_;
};

}  // namespace tephra::base
