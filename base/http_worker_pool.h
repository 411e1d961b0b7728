// The HTTP server's bounded resources (http_server.h): a pool of handler threads with a queue
// limit and a progress watchdog, and a budget of request bytes shared by every connection.
//
// Both outlive the server that made them when they must: a handler stuck past the server's
// Stop() keeps its worker, the work's captures and its share of the budget alive on its own,
// without touching the server.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "base/status.h"

namespace tephra::base {

// Bytes of request data held at once across all connections of a server.
class ByteBudget {
 public:
  struct State;

  // A share of the budget, given back when destroyed. Move-only.
  class Lease {
   public:
    Lease() = default;
    Lease(Lease&& other) noexcept;
    Lease& operator=(Lease&& other) noexcept;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() { Release(); }

    size_t bytes() const { return bytes_; }
    void Release();

   private:
    friend class ByteBudget;
    Lease(std::shared_ptr<State> state, size_t bytes) : state_(std::move(state)), bytes_(bytes) {}
    std::shared_ptr<State> state_;
    size_t bytes_ = 0;
  };

  // `limit` 0: unlimited (still counted).
  explicit ByteBudget(size_t limit);

  // A lease for `bytes`, or nullopt when that much is not free.
  std::optional<Lease> TryAcquire(size_t bytes);
  size_t in_use() const;
  size_t limit() const;
  // The most bytes in use at once since the previous call.
  size_t TakePeak();

 private:
  std::shared_ptr<State> state_;
};

// Runs work on a fixed set of threads, with at most `max_queued` items waiting.
class WorkerPool {
 public:
  using Clock = std::chrono::steady_clock;

  struct Options {
    int threads = 1;
    size_t max_queued = 0;
    std::string name = "http";  // thread purpose in log lines
  };

  struct Stats {
    size_t threads = 0;  // started and not yet exited
    size_t busy = 0;
    size_t queued = 0;
    uint64_t completed = 0;
    uint64_t rejected = 0;
    Clock::time_point last_progress;  // a worker started or finished an item
  };

  explicit WorkerPool(Options options);
  // Shutdown(0).
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Starts the threads; Internal when none can be started.
  Status Start();
  // Queues `work`; false (and `work` is dropped) when every thread is busy and max_queued
  // items already wait, or after Shutdown. When `cancelled` is set by the time a worker takes
  // the item, it is dropped unrun.
  bool TrySubmit(std::function<void()> work,
                 std::shared_ptr<const std::atomic<bool>> cancelled = nullptr);
  Stats stats() const;
  // Unavailable, saying why, when every thread has been busy for `stall` without starting or
  // finishing anything: the pool is wedged and the process should be restarted.
  Status CheckProgress(std::chrono::milliseconds stall) const;
  // Drops the queued items, waits up to `grace` for the running ones, and leaves threads still
  // running an item to finish it on their own. Returns how many were left. Idempotent.
  size_t Shutdown(std::chrono::milliseconds grace);

  struct State;

 private:
  const Options options_;
  std::shared_ptr<State> state_;
  bool started_ = false;
};

}  // namespace tephra::base
