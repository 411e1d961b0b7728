#include "base/process.h"

#include <atomic>
#include <fcntl.h>
#include <future>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/support/process.h"

extern char** environ;

namespace tephra::base {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST_CASE("ShutdownSignal wakes waiters and runs callbacks once, in order") {
  FakeClock clock;
  ShutdownSignal signal(clock);
  std::vector<std::string> calls;
  signal.OnShutdown([&] { calls.push_back("first:" + signal.Reason()); });
  signal.OnShutdown([&] { calls.push_back("second"); });
  CHECK_FALSE(signal.Requested());

  auto waiter = std::async(std::launch::async, [&] { signal.Wait(); });
  CHECK(waiter.wait_for(milliseconds(20)) == std::future_status::timeout);
  signal.Request("test");
  signal.Request("ignored");
  CHECK(waiter.wait_for(seconds(5)) == std::future_status::ready);
  CHECK(signal.Requested());
  CHECK(signal.Reason() == "test");
  CHECK(calls == std::vector<std::string>{"first:test", "second"});

  bool late = false;
  signal.OnShutdown([&] { late = true; });  // already requested: runs right away
  CHECK(late);
  CHECK(signal.WaitFor(seconds(100)));
}

TEST_CASE("ShutdownSignal::Wait returns only after the callbacks finished") {
  ShutdownSignal signal;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  signal.OnShutdown([released] { released.wait(); });
  auto requester = std::async(std::launch::async, [&] { signal.Request("stop"); });
  auto waiter = std::async(std::launch::async, [&] { signal.Wait(); });
  for (int i = 0; i < 2000 && !signal.Requested(); ++i) {
    std::this_thread::sleep_for(milliseconds(1));
  }
  CHECK(signal.Requested());
  CHECK(waiter.wait_for(milliseconds(30)) == std::future_status::timeout);
  release.set_value();
  CHECK(waiter.wait_for(seconds(5)) == std::future_status::ready);
  requester.get();
}

TEST_CASE("ShutdownSignal::WaitFor times out in simulated time") {
  FakeClock clock;
  ShutdownSignal signal(clock);
  auto wait = std::async(std::launch::async, [&] { return signal.WaitFor(seconds(30)); });
  for (int i = 0; i < 2000 && clock.Waiters() == 0; ++i) {
    std::this_thread::sleep_for(milliseconds(1));
  }
  clock.Advance(seconds(29));
  CHECK(wait.wait_for(milliseconds(20)) == std::future_status::timeout);
  clock.Advance(seconds(1));
  CHECK_FALSE(wait.get());
}

TEST_CASE("ParseCommandLine answers --help, --version and bad flags with exit codes") {
  auto run = [](std::vector<const char*> argv, std::string* out, std::string* err) {
    FlagSet flags("tephra-test", "Does tests.");
    flags.SetVersion("1.2.3");
    int qps = 5;
    flags.AddInt("kube-api-qps", &qps, "QPS.");
    std::ostringstream o;
    std::ostringstream e;
    std::optional<int> code =
        ParseCommandLine(static_cast<int>(argv.size()), argv.data(), flags, o, e);
    *out = o.str();
    *err = e.str();
    return code;
  };
  std::string out;
  std::string err;
  CHECK(run({"tephra-test", "--kube-api-qps=7"}, &out, &err) == std::nullopt);
  CHECK(out.empty());
  CHECK(run({"tephra-test", "--help"}, &out, &err) == 0);
  CHECK(out.rfind("Usage: tephra-test [flags]\n\nDoes tests.\n", 0) == 0);
  CHECK(run({"tephra-test", "--version"}, &out, &err) == 0);
  CHECK(out == "tephra-test 1.2.3\n");
  CHECK(run({"tephra-test", "--kube-api-qps=x"}, &out, &err) == 2);
  CHECK(err ==
        "tephra-test: invalid value \"x\" for flag --kube-api-qps: expected an integer\n"
        "Run 'tephra-test --help' for usage.\n");
  CHECK(run({"tephra-test", "stray"}, &out, &err) == 2);
  CHECK(err.rfind("tephra-test: unexpected argument \"stray\"", 0) == 0);
}

// The test daemon (process_test_child.cc) run as a real process.
class Child {
 public:
  explicit Child(std::vector<std::string> args) {
    args.insert(args.begin(), TEPHRA_PROCESS_TEST_CHILD);
    REQUIRE(pipe2(out_, O_CLOEXEC) == 0);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out_[1], 1);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const int rc = posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    close(out_[1]);
    REQUIRE(rc == 0);
  }

  ~Child() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    close(out_[0]);
  }

  // The next line of standard output ("" on EOF or after 10 s).
  std::string ReadLine() {
    const auto deadline = std::chrono::steady_clock::now() + seconds(10);
    while (true) {
      const size_t nl = buffer_.find('\n');
      if (nl != std::string::npos) {
        std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        return line;
      }
      pollfd p{out_[0], POLLIN, 0};
      if (std::chrono::steady_clock::now() > deadline || poll(&p, 1, 100) < 0) return "";
      if (p.revents == 0) continue;
      char buf[256];
      const ssize_t n = read(out_[0], buf, sizeof(buf));
      if (n <= 0) return "";
      buffer_.append(buf, static_cast<size_t>(n));
    }
  }

  void Signal(int signo) { REQUIRE(kill(pid_, signo) == 0); }

  // The exit status as a shell reports it (128+signal when killed), or -1 after 10 s.
  int Wait() {
    for (int i = 0; i < 1000; ++i) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        if (WIFEXITED(status)) return WEXITSTATUS(status);
        return 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(milliseconds(10));
    }
    return -1;
  }

 private:
  pid_t pid_ = -1;
  int out_[2] = {-1, -1};
  std::string buffer_;
};

TEST_CASE("SIGTERM requests a graceful shutdown that runs the callbacks") {
  Child child({"-v", "2"});
  CHECK(child.ReadLine() == "ready vlog2=1");  // -v reached glog
  child.Signal(SIGTERM);
  // Wait() returns only after the callbacks ran.
  CHECK(child.ReadLine() == "callback: received SIGTERM");
  CHECK(child.ReadLine() == "stopped");
  CHECK(child.Wait() == 0);
}

TEST_CASE("SIGINT works too and a second signal exits immediately") {
  Child child({"--slow-stop"});
  CHECK(child.ReadLine() == "ready vlog2=0");
  child.Signal(SIGINT);
  CHECK(child.ReadLine() == "callback: received SIGINT");
  CHECK(child.ReadLine() == "stopping slowly");
  child.Signal(SIGTERM);
  CHECK(child.Wait() == 128 + SIGTERM);
}

TEST_CASE("InitProcess exits 0 for --help and --version and 2 for bad flags") {
  testing::CommandResult help = testing::RunCommand({TEPHRA_PROCESS_TEST_CHILD, "--help"});
  CHECK(help.exit_code == 0);
  CHECK(help.out.find("Usage: process-test-child [flags]") != std::string::npos);
  CHECK(help.out.find("Logging flags:") != std::string::npos);
  CHECK(help.out.find("--slow-stop") != std::string::npos);

  testing::CommandResult version = testing::RunCommand({TEPHRA_PROCESS_TEST_CHILD, "--version"});
  CHECK(version.exit_code == 0);
  CHECK(version.out == std::string("process-test-child ") + TEPHRA_VERSION + "\n");

  testing::CommandResult bad = testing::RunCommand({TEPHRA_PROCESS_TEST_CHILD, "--slow-stpo"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("unknown flag --slow-stpo (did you mean --slow-stop?)") != std::string::npos);
}

}  // namespace
}  // namespace tephra::base
