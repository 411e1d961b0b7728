// Runs tephractl's entry point in-process, as the unit tests of cli/ need it.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "cli/cli.h"

namespace tephra::cli {

struct Ran {
  int code;
  std::string out;
  std::string err;
};

// `program` is argv[0] (it decides kubectl-plugin and vcctl modes).
inline Ran RunCli(std::vector<std::string> args, const std::string& program = "tephractl") {
  args.insert(args.begin(), program);
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  int code = Run(static_cast<int>(argv.size()), argv.data(), out, err);
  return {code, out.str(), err.str()};
}

}  // namespace tephra::cli
