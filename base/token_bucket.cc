#include "base/token_bucket.h"

#include <algorithm>

namespace tephra::base {

TokenBucket::TokenBucket(double qps, int burst, ClockInterface& clock)
    : qps_(qps),
      burst_(std::max(1, burst)),
      clock_(clock),
      tokens_(std::max(1, burst)),
      last_(clock.Monotonic()) {}

void TokenBucket::Refill() {
  auto now = clock_.Monotonic();
  double elapsed = std::chrono::duration<double>(now - last_).count();
  last_ = now;
  tokens_ = std::min(burst_, tokens_ + elapsed * qps_);
}

bool TokenBucket::TryAccept() {
  if (qps_ <= 0) return true;
  sync::MutexLock l(mu_);
  Refill();
  if (tokens_ < 1) return false;
  tokens_ -= 1;
  return true;
}

std::chrono::steady_clock::duration TokenBucket::Reserve() {
  if (qps_ <= 0) return {};
  sync::MutexLock l(mu_);
  Refill();
  tokens_ -= 1;
  if (tokens_ >= 0) return {};
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(-tokens_ / qps_));
}

std::optional<std::chrono::steady_clock::duration> TokenBucket::ReserveWithin(
    std::chrono::steady_clock::duration max_wait) {
  if (qps_ <= 0) return std::chrono::steady_clock::duration::zero();
  sync::MutexLock l(mu_);
  Refill();
  const double wait_seconds = (1 - tokens_) / qps_;
  if (wait_seconds > std::chrono::duration<double>(max_wait).count()) return std::nullopt;
  tokens_ -= 1;
  if (tokens_ >= 0) return std::chrono::steady_clock::duration::zero();
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(-tokens_ / qps_));
}

void TokenBucket::Wait() {
  auto delay = Reserve();
  if (delay <= std::chrono::steady_clock::duration::zero()) return;
  sync::MutexLock lock(sleep_mu_);
  clock_.WaitUntil(sleep_mu_, sleep_cv_, clock_.Monotonic() + delay, [] { return false; });
}

}  // namespace tephra::base
