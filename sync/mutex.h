// Mutexes the thread-safety analysis can follow (see thread_annotations.h): thin wrappers over
// std::mutex, std::shared_mutex and std::condition_variable. Use them for every lock whose
// members are GUARDED_BY it.
//
//   mutable sync::Mutex mu_;
//   int count_ GUARDED_BY(mu_) = 0;
//   sync::CondVar cv_;
//
//   void Inc() EXCLUDES(mu_) {
//     sync::MutexLock lock(mu_);
//     ++count_;
//     cv_.NotifyAll();
//   }
//   void WaitPositive() EXCLUDES(mu_) {
//     sync::MutexLock lock(mu_);
//     while (count_ <= 0) cv_.Wait(mu_);  // or: cv_.Wait(mu_, [&]() REQUIRES(mu_) {...});
//   }
//
// A predicate passed to a CondVar runs with the mutex held; annotate the lambda REQUIRES(mu_) so
// the analysis checks its body (an unannotated lambda that reads a guarded member is an error).
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <shared_mutex>
#include <utility>

#include "sync/thread_annotations.h"

namespace tephra::sync {

class CondVar;

class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ACQUIRE() { mu_.lock(); }
  void Unlock() RELEASE() { mu_.unlock(); }
  bool TryLock() TRY_ACQUIRE(true) { return mu_.try_lock(); }
  // Tells the analysis the caller holds the mutex where it cannot see it (nothing is checked at
  // run time).
  void AssertHeld() const ASSERT_CAPABILITY(this) {}

 private:
  friend class CondVar;
  std::mutex mu_;
};

// Holds `mu` for its lifetime. Unlock() and Lock() drop it and take it back in between (to run
// a callback without the lock, say); the destructor releases it only if held.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ACQUIRE(mu) : mu_(mu) { mu_.Lock(); }
  ~MutexLock() RELEASE() {
    if (locked_) mu_.Unlock();
  }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void Unlock() RELEASE() {
    mu_.Unlock();
    locked_ = false;
  }
  void Lock() ACQUIRE() {
    mu_.Lock();
    locked_ = true;
  }

 private:
  Mutex& mu_;
  bool locked_ = true;
};

// A condition variable waited on with a sync::Mutex held. Waits may wake spuriously: wait in a
// loop on a condition, or pass the condition as a predicate.
class CondVar {
 public:
  CondVar() = default;
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;

  void NotifyOne() { cv_.notify_one(); }
  void NotifyAll() { cv_.notify_all(); }

  // Releases `mu`, blocks until notified, takes `mu` back.
  void Wait(Mutex& mu) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu.mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();  // the caller's MutexLock still owns it
  }
  // As Wait, giving up at `deadline`; returns false when it passed.
  template <typename ClockType, typename Duration>
  bool WaitUntil(Mutex& mu, std::chrono::time_point<ClockType, Duration> deadline) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu.mu_, std::adopt_lock);
    const bool notified = cv_.wait_until(lock, deadline) == std::cv_status::no_timeout;
    lock.release();
    return notified;
  }
  template <typename Rep, typename Period>
  bool WaitFor(Mutex& mu, std::chrono::duration<Rep, Period> timeout) REQUIRES(mu) {
    return WaitUntil(mu, std::chrono::steady_clock::now() + timeout);
  }

  // Wait until pred() holds. pred runs with `mu` held. The body is not analysed: pred's own
  // REQUIRES names the caller's mutex by the caller's expression, which the analysis cannot
  // match with `mu`; the caller's lambda is checked instead.
  template <typename Predicate>
  void Wait(Mutex& mu, Predicate pred) REQUIRES(mu) NO_THREAD_SAFETY_ANALYSIS {
    while (!pred()) Wait(mu);
  }
  // As above, giving up at `deadline`; returns pred().
  template <typename ClockType, typename Duration, typename Predicate>
  bool WaitUntil(Mutex& mu, std::chrono::time_point<ClockType, Duration> deadline, Predicate pred)
      REQUIRES(mu) NO_THREAD_SAFETY_ANALYSIS {
    while (!pred()) {
      if (!WaitUntil(mu, deadline)) return pred();
    }
    return true;
  }
  template <typename Rep, typename Period, typename Predicate>
  bool WaitFor(Mutex& mu, std::chrono::duration<Rep, Period> timeout, Predicate pred) REQUIRES(mu) {
    return WaitUntil(mu, std::chrono::steady_clock::now() + timeout, std::move(pred));
  }

 private:
  std::condition_variable cv_;
};

// A reader-writer mutex: many readers or one writer.
class CAPABILITY("mutex") SharedMutex {
 public:
  SharedMutex() = default;
  SharedMutex(const SharedMutex&) = delete;
  SharedMutex& operator=(const SharedMutex&) = delete;

  void Lock() ACQUIRE() { mu_.lock(); }
  void Unlock() RELEASE() { mu_.unlock(); }
  void ReaderLock() ACQUIRE_SHARED() { mu_.lock_shared(); }
  void ReaderUnlock() RELEASE_SHARED() { mu_.unlock_shared(); }

 private:
  std::shared_mutex mu_;
};

// Holds `mu` exclusively for its lifetime.
class SCOPED_CAPABILITY WriterMutexLock {
 public:
  explicit WriterMutexLock(SharedMutex& mu) ACQUIRE(mu) : mu_(mu) { mu_.Lock(); }
  ~WriterMutexLock() RELEASE() { mu_.Unlock(); }
  WriterMutexLock(const WriterMutexLock&) = delete;
  WriterMutexLock& operator=(const WriterMutexLock&) = delete;

 private:
  SharedMutex& mu_;
};

// Holds `mu` shared for its lifetime.
class SCOPED_CAPABILITY ReaderMutexLock {
 public:
  explicit ReaderMutexLock(SharedMutex& mu) ACQUIRE_SHARED(mu) : mu_(mu) { mu_.ReaderLock(); }
  ~ReaderMutexLock() RELEASE() { mu_.ReaderUnlock(); }
  ReaderMutexLock(const ReaderMutexLock&) = delete;
  ReaderMutexLock& operator=(const ReaderMutexLock&) = delete;

 private:
  SharedMutex& mu_;
};

}  // namespace tephra::sync
