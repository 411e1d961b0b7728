// tephractl (also installed as kubectl-tephra): see cli/cli.h and cli/README.md.
#include <iostream>

#include <glog/logging.h>

#include "cli/cli.h"

int main(int argc, char** argv) {
  FLAGS_logtostderr = true;
  FLAGS_minloglevel = 2;  // errors only unless -v is given
  google::InitGoogleLogging(argc > 0 ? argv[0] : "tephractl");
  return tephra::cli::Run(argc, argv, std::cout, std::cerr);
}
