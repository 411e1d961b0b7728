// Runs a child process and captures its output. Test-only: daemons never shell out.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tephra::testing {

struct CommandResult {
  int exit_code = -1;  // -1 when the process could not start or was killed on timeout
  std::string out;
  std::string err;
  bool timed_out = false;

  bool ok() const { return exit_code == 0; }
};

// Runs argv[0] (searched in PATH) with `input` on stdin; kills it after `timeout`.
CommandResult RunCommand(const std::vector<std::string>& argv, std::string_view input = {},
                         std::chrono::milliseconds timeout = std::chrono::seconds(120));

// A TCP port on 127.0.0.1 that nothing listens on right now (for a child to listen on);
// 0 when none could be had.
uint16_t FreeLoopbackPort();

// A child process running in the background with its output in a file; killed (SIGKILL) and
// reaped when the object goes away.
class BackgroundProcess {
 public:
  BackgroundProcess(const std::vector<std::string>& argv, const std::string& output_file);
  ~BackgroundProcess();
  BackgroundProcess(const BackgroundProcess&) = delete;
  BackgroundProcess& operator=(const BackgroundProcess&) = delete;

  bool started() const { return pid_ > 0; }
  int pid() const { return pid_; }
  bool Signal(int signal);
  // Waits for exit up to `timeout`; returns the exit status (or -1 if still running).
  int Wait(std::chrono::milliseconds timeout);

 private:
  int pid_ = -1;
  bool reaped_ = false;
};

}  // namespace tephra::testing
