// Small helpers shared by the benchmark programs: flags, fatal errors, API clients.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "kube/client.h"
#include "sync/mutex.h"

namespace tephra::bench {

// The value after `--name` on the command line, or `def`.
std::string Arg(int argc, char** argv, const std::string& name, const std::string& def);

// Prints "<program>: what" and exits with status 2.
[[noreturn]] void Die(const std::string& what);

// A client for the kubeconfig, effectively unthrottled (the API server is what is measured).
std::shared_ptr<kube::Client> UnthrottledClient(const std::string& kubeconfig);

// Milliseconds of a steady-clock duration, and CPU milliseconds this thread has used (what an
// in-process benchmark reports beside wall time on a shared machine).
double Millis(std::chrono::steady_clock::duration d);
// Seconds since `t0` on the steady clock.
double SecondsSince(std::chrono::steady_clock::time_point t0);
double ThreadCpuMillis();

// VmHWM / VmRSS / ... of a process ("self" or a pid) in MiB, 0 when unreadable.
double ProcStatusMiB(const std::string& pid, const char* key);

// Lists and then watches a resource on its own thread, calling `each` for every listed object
// and every ADDED or MODIFIED one (with `added` true for listed and ADDED objects); re-lists
// when the watch ends. Stop() (or the destructor) ends it.
class ListWatcher {
 public:
  using Callback = std::function<void(const json::Value& object, bool added)>;
  ListWatcher(std::shared_ptr<kube::Client> client, const kube::Resource& resource, std::string ns,
              std::string field_selector, Callback each);
  ~ListWatcher();
  void Stop();

 private:
  void Loop();

  std::shared_ptr<kube::Client> client_;
  const kube::Resource& resource_;
  const std::string ns_, field_selector_;
  Callback each_;
  std::atomic<bool> stop_{false};
  sync::Mutex mu_;
  kube::Watch* watch_ GUARDED_BY(mu_) = nullptr;
  std::thread thread_;
};

// Runs `fn(i)` for i in [0, n) on `threads` threads.
void Parallel(int64_t n, int threads, const std::function<void(int64_t)>& fn);

struct PodTimes {
  std::string name;
  double seen = -1;     // first watch event
  double bound = -1;    // first event with spec.nodeName
  double running = -1;  // first event with status.phase Running
};

// Watches a namespace's pods; records when each was first seen, first seen bound and first seen
// Running (seconds since t0).
class PodWatcher {
 public:
  PodWatcher(std::shared_ptr<kube::Client> client, const std::string& ns,
             std::chrono::steady_clock::time_point t0);
  void Stop() { watch_.Stop(); }
  int64_t seen() const { return seen_; }
  int64_t bound() const { return bound_; }
  int64_t running() const { return running_; }
  std::vector<PodTimes> Times();

 private:
  void Observe(const json::Value& pod);

  const std::chrono::steady_clock::time_point t0_;
  sync::Mutex mu_;
  std::unordered_map<std::string, PodTimes> pods_ GUARDED_BY(mu_);
  std::atomic<int64_t> seen_{0}, bound_{0}, running_{0};
  ListWatcher watch_;  // last: its thread calls Observe
};

}  // namespace tephra::bench
