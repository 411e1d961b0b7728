#include "base/http_worker_pool.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include <glog/logging.h>

namespace tephra::base {

// ---- ByteBudget -----------------------------------------------------------------------------

struct ByteBudget::State {
  explicit State(size_t l) : limit(l) {}
  const size_t limit;
  std::mutex mu;
  size_t used = 0;  // guarded by mu
  size_t peak = 0;  // guarded by mu
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
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->used -= bytes_;
  }
  state_.reset();
  bytes_ = 0;
}

ByteBudget::ByteBudget(size_t limit) : state_(std::make_shared<State>(limit)) {}

std::optional<ByteBudget::Lease> ByteBudget::TryAcquire(size_t bytes) {
  std::lock_guard<std::mutex> lock(state_->mu);
  if (state_->limit > 0 && bytes > state_->limit - std::min(state_->used, state_->limit)) {
    return std::nullopt;
  }
  state_->used += bytes;
  state_->peak = std::max(state_->peak, state_->used);
  return Lease(state_, bytes);
}

size_t ByteBudget::in_use() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->used;
}

size_t ByteBudget::limit() const { return state_->limit; }

size_t ByteBudget::TakePeak() {
  std::lock_guard<std::mutex> lock(state_->mu);
  return std::exchange(state_->peak, state_->used);
}

// ---- WorkerPool -----------------------------------------------------------------------------

// Shared with the threads, so that a thread left running after Shutdown() stays valid.
struct WorkerPool::State {
  struct Item {
    std::function<void()> work;
    std::shared_ptr<const std::atomic<bool>> cancelled;
  };

  mutable std::mutex mu;
  std::condition_variable work_cv;  // an item arrived or shutdown began
  std::condition_variable idle_cv;  // a thread finished an item or exited
  std::deque<Item> queue;           // guarded by mu
  size_t threads = 0;               // running threads; guarded by mu
  size_t busy = 0;                  // guarded by mu
  uint64_t completed = 0;           // guarded by mu
  uint64_t rejected = 0;            // guarded by mu
  bool shutting_down = false;       // guarded by mu
  Clock::time_point last_progress = Clock::now();  // guarded by mu
};

namespace {

void RunWorker(const std::shared_ptr<WorkerPool::State>& state, const std::string& name) {
  std::unique_lock<std::mutex> lock(state->mu);
  while (true) {
    state->work_cv.wait(lock, [&] { return state->shutting_down || !state->queue.empty(); });
    if (state->shutting_down) break;
    WorkerPool::State::Item item = std::move(state->queue.front());
    state->queue.pop_front();
    if (item.cancelled != nullptr && item.cancelled->load()) {
      lock.unlock();
      item = {};  // the item's captures are destroyed outside the lock
      lock.lock();
      continue;
    }
    ++state->busy;
    state->last_progress = WorkerPool::Clock::now();
    lock.unlock();
    try {
      item.work();
    } catch (const std::exception& e) {
      LOG(ERROR) << name << " worker: unexpected exception: " << e.what();
    } catch (...) {
      LOG(ERROR) << name << " worker: unexpected exception";
    }
    item = {};
    lock.lock();
    --state->busy;
    ++state->completed;
    state->last_progress = WorkerPool::Clock::now();
    state->idle_cv.notify_all();
  }
  --state->threads;
  state->idle_cv.notify_all();
}

}  // namespace

WorkerPool::WorkerPool(Options options)
    : options_(std::move(options)), state_(std::make_shared<State>()) {}

WorkerPool::~WorkerPool() { Shutdown(std::chrono::milliseconds(0)); }

Status WorkerPool::Start() {
  if (started_) return FailedPrecondition(options_.name + " workers already started");
  started_ = true;
  const int wanted = std::max(1, options_.threads);
  for (int i = 0; i < wanted; ++i) {
    {
      std::lock_guard<std::mutex> lock(state_->mu);
      ++state_->threads;  // before the thread runs: it decrements when it exits
    }
    try {
      // Detached: a thread stuck in a handler must not hold up shutdown. It keeps the state.
      std::thread([state = state_, name = options_.name] { RunWorker(state, name); }).detach();
    } catch (const std::system_error& e) {
      LOG(ERROR) << options_.name << ": starting worker threads: " << e.what();
      std::lock_guard<std::mutex> lock(state_->mu);
      --state_->threads;
      break;
    }
  }
  std::lock_guard<std::mutex> lock(state_->mu);
  if (state_->threads == 0) return Internal(options_.name + ": cannot start worker threads");
  return Status::Ok();
}

bool WorkerPool::TrySubmit(std::function<void()> work,
                           std::shared_ptr<const std::atomic<bool>> cancelled) {
  std::unique_lock<std::mutex> lock(state_->mu);
  const size_t idle = state_->threads - std::min(state_->busy, state_->threads);
  if (state_->shutting_down || state_->queue.size() >= idle + options_.max_queued) {
    ++state_->rejected;
    lock.unlock();
    work = nullptr;  // destroyed outside the lock
    return false;
  }
  state_->queue.push_back({std::move(work), std::move(cancelled)});
  state_->work_cv.notify_one();
  return true;
}

WorkerPool::Stats WorkerPool::stats() const {
  std::lock_guard<std::mutex> lock(state_->mu);
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
  const auto quiet = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() -
                                                                           s.last_progress);
  if (quiet < stall) return Status::Ok();
  return Unavailable("all " + std::to_string(s.threads) + " " + options_.name +
                     " workers busy with no request finished for " +
                     std::to_string(quiet.count() / 1000) + "s (" + std::to_string(s.queued) +
                     " waiting)");
}

size_t WorkerPool::Shutdown(std::chrono::milliseconds grace) {
  std::deque<State::Item> dropped;
  std::unique_lock<std::mutex> lock(state_->mu);
  if (state_->shutting_down) return state_->busy;
  state_->shutting_down = true;
  dropped.swap(state_->queue);
  state_->work_cv.notify_all();
  state_->idle_cv.wait_for(lock, grace, [&] { return state_->busy == 0; });
  const size_t stuck = state_->busy;
  lock.unlock();
  dropped.clear();
  if (stuck > 0) {
    LOG(WARNING) << options_.name << ": leaving " << stuck
                 << " handlers running after shutdown; their results are discarded";
  }
  return stuck;
}

}  // namespace tephra::base
