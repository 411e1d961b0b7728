// A minimal daemon for process_test: InitProcess, then wait for shutdown. It reports progress
// on stdout, one line per step, so the test can drive it with signals.
#include <chrono>
#include <iostream>
#include <thread>

#include <glog/logging.h>

#include "kube/process.h"

int main(int argc, char** argv) {
  tephra::kube::FlagSet flags("process-test-child", "Test daemon.");
  bool slow_stop = false;
  flags.AddBool("slow-stop", &slow_stop, "Take a long time to stop.");
  tephra::kube::ShutdownSignal& shutdown = tephra::kube::InitProcess(argc, argv, flags);
  shutdown.OnShutdown([&] { std::cout << "callback: " << shutdown.Reason() << std::endl; });
  std::cout << "ready vlog2=" << (VLOG_IS_ON(2) ? 1 : 0) << std::endl;
  shutdown.Wait();
  if (slow_stop) {
    std::cout << "stopping slowly" << std::endl;
    std::this_thread::sleep_for(std::chrono::seconds(30));
  }
  std::cout << "stopped" << std::endl;
  return 0;
}
