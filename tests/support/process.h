// Runs a child process and captures its output. Test-only: daemons never shell out.
#pragma once

#include <chrono>
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

}  // namespace tephra::testing
