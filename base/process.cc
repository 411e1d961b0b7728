#include "base/process.h"

#include <pthread.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <signal.h>
#include <thread>
#include <unistd.h>

#include <glog/logging.h>

#ifndef TEPHRA_VERSION
#error "TEPHRA_VERSION must be defined by the build"
#endif

namespace tephra::base {

// ---- ShutdownSignal -------------------------------------------------------------------------

ShutdownSignal::ShutdownSignal(ClockInterface& clock) : clock_(clock) {}

void ShutdownSignal::Request(std::string reason) {
  std::vector<std::function<void()>> callbacks;
  {
    sync::MutexLock lock(mu_);
    if (requested_) return;
    requested_ = true;
    reason_ = std::move(reason);
    callbacks.swap(callbacks_);
  }
  for (auto& callback : callbacks) callback();
  {
    sync::MutexLock lock(mu_);
    callbacks_done_ = true;
  }
  cv_.NotifyAll();
}

bool ShutdownSignal::Requested() const {
  sync::MutexLock lock(mu_);
  return requested_;
}

std::string ShutdownSignal::Reason() const {
  sync::MutexLock lock(mu_);
  return reason_;
}

void ShutdownSignal::Wait() const {
  sync::MutexLock lock(mu_);
  cv_.Wait(mu_, [&]() REQUIRES(mu_) { return callbacks_done_; });
}

bool ShutdownSignal::WaitFor(std::chrono::nanoseconds timeout) const {
  sync::MutexLock lock(mu_);
  const auto deadline =
      clock_.Monotonic() + std::chrono::ceil<std::chrono::steady_clock::duration>(timeout);
  return clock_.WaitUntil(mu_, cv_, deadline, [&]() REQUIRES(mu_) { return callbacks_done_; });
}

void ShutdownSignal::OnShutdown(std::function<void()> callback) {
  {
    sync::MutexLock lock(mu_);
    if (!requested_) {
      callbacks_.push_back(std::move(callback));
      return;
    }
  }
  callback();
}

ShutdownSignal& ProcessShutdownSignal() {
  // Leaked: the signal thread may use it while static destructors run at exit.
  static ShutdownSignal* signal = new ShutdownSignal();
  return *signal;
}

// ---- Command line ---------------------------------------------------------------------------

std::optional<int> ParseCommandLine(int argc, const char* const* argv, FlagSet& flags,
                                    std::ostream& out, std::ostream& err) {
  Status status = flags.Parse(argc, argv);
  if (status.ok() && flags.HelpRequested()) {
    out << flags.Usage();
    return 0;
  }
  if (status.ok() && flags.VersionRequested()) {
    out << flags.VersionText();
    return 0;
  }
  if (status.ok() && !flags.positional().empty()) {
    status = InvalidArgument("unexpected argument \"" + flags.positional()[0] +
                             "\" (flags start with --)");
  }
  if (!status.ok()) {
    err << flags.program() << ": " << status.message() << "\n"
        << "Run '" << flags.program() << " --help' for usage.\n";
    return 2;
  }
  return std::nullopt;
}

// ---- Signals --------------------------------------------------------------------------------

namespace {

const char* SignalName(int signo) {
  switch (signo) {
    case SIGTERM:
      return "SIGTERM";
    case SIGINT:
      return "SIGINT";
    default:
      return "a signal";
  }
}

// Runs for the life of the process. Signals are taken synchronously with sigwait, so nothing
// here is restricted to async-signal-safe calls.
void SignalLoop(ShutdownSignal* shutdown, sigset_t signals) {
  bool first = true;
  while (true) {
    int signo = 0;
    if (sigwait(&signals, &signo) != 0) continue;
    if (first) {
      first = false;
      LOG(INFO) << "received " << SignalName(signo)
                << ", shutting down (send it again to exit immediately)";
      // Callbacks run on their own thread so that a slow one cannot delay a second signal.
      std::thread([shutdown, signo] {
        shutdown->Request(std::string("received ") + SignalName(signo));
      }).detach();
      continue;
    }
    LOG(WARNING) << "received " << SignalName(signo) << " again, exiting immediately";
    google::FlushLogFiles(google::GLOG_INFO);
    std::_Exit(128 + signo);
  }
}

}  // namespace

void InstallSignalHandling(ShutdownSignal& signal) {
  static std::atomic<bool> installed{false};
  if (installed.exchange(true)) return;
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  const int rc = pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  CHECK_EQ(rc, 0) << "blocking SIGTERM and SIGINT: " << std::strerror(rc);
  std::thread(SignalLoop, &signal, signals).detach();
}

ShutdownSignal& InitProcess(int argc, char** argv, FlagSet& flags) {
  // Containers collect stderr; log files are opt-in with --logtostderr=false.
  FLAGS_logtostderr = true;
  if (!flags.Has("v")) flags.AddGlogFlags();
  if (flags.version().empty()) flags.SetVersion(TEPHRA_VERSION);
  if (std::optional<int> exit_code = ParseCommandLine(argc, argv, flags, std::cout, std::cerr)) {
    std::cout.flush();
    std::exit(*exit_code);
  }
  if (!google::IsGoogleLoggingInitialized()) google::InitGoogleLogging(argv[0]);
  // Stack traces on crashes. glog also claims SIGTERM for a trace; give it back, as SIGTERM is
  // a request to stop, taken by the signal thread below.
  google::InstallFailureSignalHandler();
  ::signal(SIGTERM, SIG_DFL);
  ShutdownSignal& shutdown = ProcessShutdownSignal();
  InstallSignalHandling(shutdown);
  LOG(INFO) << flags.program() << " " << flags.version() << " starting, pid " << getpid();
  return shutdown;
}

void ReturnFreedMemoryPromptly() {
#ifdef __GLIBC__
  // Setting either threshold also stops glibc from adjusting them.
  mallopt(M_MMAP_THRESHOLD, 256 * 1024);
  mallopt(M_TRIM_THRESHOLD, 1024 * 1024);
#endif
}

}  // namespace tephra::base
