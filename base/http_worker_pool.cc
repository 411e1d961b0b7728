#include "base/http_worker_pool.h"

#include <deque>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include <glog/logging.h>

#include "sync/mutex.h"

namespace tephra::base {

// ---- ByteBudget -----------------------------------------------------------------------------

struct ByteBudget::State {
  explicit State(size_t l) : limit(l) {}
  const size_t limit;
  sync::Mutex mu;
  size_t used GUARDED_BY(mu) = 0;
  size_t peak GUARDED_BY(mu) = 0;
};

ByteBudget::Lease::Lease(Lease&& other) noexcept
    : state_(std::move(other.state_)), bytes_(std::exchange(other.bytes_, 0)) {}

ByteBudget::Lease& ByteBudget::Lease::operator=(Lease&& other) noexcept {
  if (this != &other) {
    Release();
    state_ = std::move(other.state_);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void ByteBudget::Lease::Release() {
  if (state_ != nullptr) {
    sync::MutexLock lock(state_->mu);
    state_->used -= bytes_;
  }
  state_.reset();
  bytes_ = 0;
}

ByteBudget::ByteBudget(size_t limit) : state_(std::make_shared<State>(limit)) {}

std::optional<ByteBudget::Lease> ByteBudget::TryAcquire(size_t bytes) {
  sync::MutexLock lock(state_->mu);
  if (state_->limit > 0 && bytes > state_->limit - std::min(state_->used, state_->limit)) {
    return std::nullopt;
  }
  state_->used += bytes;
  state_->peak = std::max(state_->peak, state_->used);
  return Lease(state_, bytes);
}

size_t ByteBudget::in_use() const {
  sync::MutexLock lock(state_->mu);
  return state_->used;
}

size_t ByteBudget::limit() const {
  return state_->limit;
}

size_t ByteBudget::TakePeak() {
  sync::MutexLock lock(state_->mu);
  return std::exchange(state_->peak, state_->used);
}

// ---- WorkerPool -----------------------------------------------------------------------------

// Shared with the threads, so that a thread left running after Shutdown() stays valid.
struct WorkerPool::State {
  struct Item {
    std::function<void()> work;
    std::shared_ptr<const std::atomic<bool>> cancelled;
  };

  mutable sync::Mutex mu;
  sync::CondVar work_cv;  // an item arrived or shutdown began
  sync::CondVar idle_cv;  // a thread finished an item or exited
  std::deque<Item> queue GUARDED_BY(mu);
  size_t threads GUARDED_BY(mu) = 0;  // running threads
  size_t busy GUARDED_BY(mu) = 0;
  uint64_t completed GUARDED_BY(mu) = 0;
  uint64_t rejected GUARDED_BY(mu) = 0;
  bool shutting_down GUARDED_BY(mu) = false;
  Clock::time_point last_progress GUARDED_BY(mu) = Clock::now();
};

namespace {

void RunWorker(const std::shared_ptr<WorkerPool::State>& state, const std::string& name) {
  sync::MutexLock lock(state->mu);
  while (true) {
    state->work_cv.Wait(state->mu, [&]() REQUIRES(state->mu) {
      return state->shutting_down || !state->queue.empty();
    });
    if (state->shutting_down) break;
    WorkerPool::State::Item item = std::move(state->queue.front());
    state->queue.pop_front();
    if (item.cancelled != nullptr && item.cancelled->load()) {
      lock.Unlock();
      item = {};  // the item's captures are destroyed outside the lock
      lock.Lock();
      continue;
    }
    ++state->busy;
    state->last_progress = WorkerPool::Clock::now();
    lock.Unlock();
    try {
      item.work();
    } catch (const std::exception& e) {
      LOG(ERROR) << name << " worker: unexpected exception: " << e.what();
    } catch (...) {
      LOG(ERROR) << name << " worker: unexpected exception";
    }
    item = {};
    lock.Lock();
    --state->busy;
    ++state->completed;
    state->last_progress = WorkerPool::Clock::now();
    state->idle_cv.NotifyAll();
  }
  --state->threads;
  state->idle_cv.NotifyAll();
}

}  // namespace

WorkerPool::WorkerPool(Options options)
    : options_(std::move(options)), state_(std::make_shared<State>()) {}

WorkerPool::~WorkerPool() {
  Shutdown(std::chrono::milliseconds(0));
}

Status WorkerPool::Start() {
  if (started_) return FailedPrecondition(options_.name + " workers already started");
  started_ = true;
  const int wanted = std::max(1, options_.threads);
  for (int i = 0; i < wanted; ++i) {
    {
      sync::MutexLock lock(state_->mu);
      ++state_->threads;  // before the thread runs: it decrements when it exits
    }
    try {
      // Detached: a thread stuck in a handler must not hold up shutdown. It keeps the state.
      std::thread([state = state_, name = options_.name] { RunWorker(state, name); }).detach();
    } catch (const std::system_error& e) {
      LOG(ERROR) << options_.name << ": starting worker threads: " << e.what();
      sync::MutexLock lock(state_->mu);
      --state_->threads;
      break;
    }
  }
  sync::MutexLock lock(state_->mu);
  if (state_->threads == 0) return Internal(options_.name + ": cannot start worker threads");
  return Status::Ok();
}

bool WorkerPool::TrySubmit(std::function<void()> work,
                           std::shared_ptr<const std::atomic<bool>> cancelled) {
  sync::MutexLock lock(state_->mu);
  const size_t idle = state_->threads - std::min(state_->busy, state_->threads);
  if (state_->shutting_down || state_->queue.size() >= idle + options_.max_queued) {
    ++state_->rejected;
    lock.Unlock();
    work = nullptr;  // destroyed outside the lock
    return false;
  }
  state_->queue.push_back({std::move(work), std::move(cancelled)});
  state_->work_cv.NotifyOne();
  return true;
}

WorkerPool::Stats WorkerPool::stats() const {
  sync::MutexLock lock(state_->mu);
  Stats s;
  s.threads = state_->threads;
  s.busy = state_->busy;
  s.queued = state_->queue.size();
  s.completed = state_->completed;
  s.rejected = state_->rejected;
  s.last_progress = state_->last_progress;
  return s;
}

Status WorkerPool::CheckProgress(std::chrono::milliseconds stall) const {
  const Stats s = stats();
  if (s.threads == 0 || s.busy < s.threads) return Status::Ok();
  const auto quiet =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - s.last_progress);
  if (quiet < stall) return Status::Ok();
  return Unavailable("all " + std::to_string(s.threads) + " " + options_.name +
                     " workers busy with no request finished for " +
                     std::to_string(quiet.count() / 1000) + "s (" + std::to_string(s.queued) +
                     " waiting)");
}

size_t WorkerPool::Shutdown(std::chrono::milliseconds grace) {
  std::deque<State::Item> dropped;
  sync::MutexLock lock(state_->mu);
  if (state_->shutting_down) return state_->busy;
  state_->shutting_down = true;
  dropped.swap(state_->queue);
  state_->work_cv.NotifyAll();
  state_->idle_cv.WaitFor(state_->mu, grace,
                          [&]() REQUIRES(state_->mu) { return state_->busy == 0; });
  const size_t stuck = state_->busy;
  lock.Unlock();
  dropped.clear();
  if (stuck > 0) {
    LOG(WARNING) << options_.name << ": leaving " << stuck
                 << " handlers running after shutdown; their results are discarded";
  }
  return stuck;
}

}  // namespace tephra::base
