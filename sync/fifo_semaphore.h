// A counting semaphore that grants its slots in the order they were asked for. Used to bound
// work in flight across threads where arrival order matters: the job controller's pod writes,
// so one Job's pods, asked for together, are also created together (docs/controllers.md).
//
//   sync::FifoSemaphore slots(48);
//   {
//     sync::FifoSemaphore::Slot slot(slots);  // blocks until it is this caller's turn
//     ...
//   }
#pragma once

#include <cstddef>
#include <deque>

#include "sync/mutex.h"

namespace tephra::sync {

class FifoSemaphore {
 public:
  // limit 0 is taken as 1.
  explicit FifoSemaphore(size_t limit) : limit_(limit == 0 ? 1 : limit) {}
  FifoSemaphore(const FifoSemaphore&) = delete;
  FifoSemaphore& operator=(const FifoSemaphore&) = delete;

  void Acquire() EXCLUDES(mu_) {
    MutexLock lock(mu_);
    if (waiting_.empty() && in_use_ < limit_) {
      ++in_use_;
      return;
    }
    // Each waiter has its own condition variable: a release wakes exactly the next in line.
    Waiter self;
    waiting_.push_back(&self);
    self.cv.Wait(mu_, [&self]() REQUIRES(mu_) { return self.granted; });
  }

  // Hands the slot straight to the longest waiter, if any, so no later caller can overtake it.
  void Release() EXCLUDES(mu_) {
    MutexLock lock(mu_);
    if (waiting_.empty()) {
      --in_use_;
      return;
    }
    Waiter* next = waiting_.front();
    waiting_.pop_front();
    next->granted = true;
    next->cv.NotifyOne();
  }

  size_t in_use() const EXCLUDES(mu_) {
    MutexLock lock(mu_);
    return in_use_;
  }
  size_t waiting() const EXCLUDES(mu_) {
    MutexLock lock(mu_);
    return waiting_.size();
  }

  class Slot {
   public:
    explicit Slot(FifoSemaphore& semaphore) : semaphore_(semaphore) { semaphore_.Acquire(); }
    ~Slot() { semaphore_.Release(); }
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;

   private:
    FifoSemaphore& semaphore_;
  };

 private:
  struct Waiter {
    CondVar cv;
    bool granted = false;
  };

  const size_t limit_;
  mutable Mutex mu_;
  size_t in_use_ GUARDED_BY(mu_) = 0;
  std::deque<Waiter*> waiting_ GUARDED_BY(mu_);  // oldest first; each lives on its caller's stack
};

}  // namespace tephra::sync
