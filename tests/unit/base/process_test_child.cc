// A minimal daemon for process_test: InitProcess, then wait for shutdown. It reports progress
// on stdout, one line per step, so the test can drive it with signals.
#include <chrono>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>

#include <glog/logging.h>

#include "base/process.h"

namespace {

// Shutdown callbacks run on another thread than main: keep their lines whole.
void PrintLine(const std::string& line) {
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  std::cout << line << std::endl;
}

}  // namespace

int main(int argc, char** argv) {
  tephra::base::FlagSet flags("process-test-child", "Test daemon.");
  bool slow_stop = false;
  flags.AddBool("slow-stop", &slow_stop, "Take a long time to stop.");
  tephra::base::ShutdownSignal& shutdown = tephra::base::InitProcess(argc, argv, flags);
  shutdown.OnShutdown([&] { PrintLine("callback: " + shutdown.Reason()); });
  PrintLine(std::string("ready vlog2=") + (VLOG_IS_ON(2) ? "1" : "0"));
  shutdown.Wait();
  if (slow_stop) {
    PrintLine("stopping slowly");
    std::this_thread::sleep_for(std::chrono::seconds(30));
  }
  PrintLine("stopped");
  return 0;
}
