// Daemon start-up: flags, glog, and graceful shutdown on SIGTERM/SIGINT.
//
//   int main(int argc, char** argv) {
//     Options options;
//     FlagSet flags("tephra-scheduler", "The Tephra batch scheduler.");
//     options.Register(flags);
//     ShutdownSignal& shutdown = InitProcess(argc, argv, flags);
//     shutdown.OnShutdown([&] { queue.ShutDown(); });
//     ...start components...
//     shutdown.Wait();
//     ...stop components within the termination grace period...
//   }
//
// The first SIGTERM or SIGINT requests shutdown; a second one exits at once with status
// 128+signal, for an operator who does not want to wait.
#pragma once

#include <chrono>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/flags.h"
#include "sync/mutex.h"

namespace tephra::base {

// A one-way latch announcing that the process should stop. Thread-safe.
class ShutdownSignal {
 public:
  explicit ShutdownSignal(ClockInterface& clock = RealClock());
  ShutdownSignal(const ShutdownSignal&) = delete;
  ShutdownSignal& operator=(const ShutdownSignal&) = delete;

  // Requests shutdown and runs the callbacks on this thread, in the order they were added,
  // then wakes the waiters. Only the first call does anything.
  void Request(std::string reason);
  // True as soon as shutdown was requested, before the callbacks finish.
  bool Requested() const;
  // Why shutdown was requested ("received SIGTERM"); empty before.
  std::string Reason() const;

  // Blocks until shutdown was requested and the callbacks have run, so that main() does not
  // return while a callback is still stopping something.
  void Wait() const;
  // As Wait, for at most `timeout` on the clock; returns whether the wait was over in time.
  bool WaitFor(std::chrono::nanoseconds timeout) const;

  // Runs `callback` when shutdown is requested, or right away on this thread if it already was.
  // Callbacks should start stopping things and return; they must not call Request or Wait.
  void OnShutdown(std::function<void()> callback);

 private:
  ClockInterface& clock_;
  mutable sync::Mutex mu_;
  mutable sync::CondVar cv_;
  bool requested_ GUARDED_BY(mu_) = false;
  bool callbacks_done_ GUARDED_BY(mu_) = false;
  std::string reason_ GUARDED_BY(mu_);
  std::vector<std::function<void()>> callbacks_ GUARDED_BY(mu_);  // cleared once run
};

// The process-wide signal that InitProcess wires to SIGTERM and SIGINT.
ShutdownSignal& ProcessShutdownSignal();

// Parses the command line. --help or --version: prints to `out`, returns 0. A bad flag or an
// unexpected positional argument (daemons take none): prints the error and a hint to `err`,
// returns 2. Otherwise nullopt: carry on.
std::optional<int> ParseCommandLine(int argc, const char* const* argv, FlagSet& flags,
                                    std::ostream& out, std::ostream& err);

// Blocks SIGTERM and SIGINT in the calling thread, and so in every thread it creates later,
// and starts a thread that takes them with sigwait: the first requests `signal`, the next one
// exits immediately with 128+signal. Call it before any other thread exists. Only the first
// call in a process has an effect.
void InstallSignalHandling(ShutdownSignal& signal);

// Everything a daemon's main() does first:
//   * glog logs to stderr by default (--logtostderr=false logs to files instead) and its flags
//     are added to `flags` (group "Logging");
//   * the flags are parsed; --help/--version exit 0, bad flags exit 2 (see ParseCommandLine);
//     the version defaults to Tephra's;
//   * glog is initialised, with stack traces on crashes;
//   * signal handling is installed for ProcessShutdownSignal(), which is returned.
ShutdownSignal& InitProcess(int argc, char** argv, FlagSet& flags);

// Makes malloc give memory back to the system as it is freed, instead of keeping it for reuse:
// blocks of 256 KiB and more are mapped and unmapped on their own, and more than 1 MiB free at
// the top of a heap is returned. glibc otherwise raises both thresholds after the first large
// block is freed, and a burst of large requests then leaves hundreds of MiB resident for good.
// For daemons that take large request bodies in bursts (tephra-admission); costs a little
// allocation speed. No effect outside glibc.
void ReturnFreedMemoryPromptly();

}  // namespace tephra::base
