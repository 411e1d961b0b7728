// Test tool: one leader-election candidate as its own process, so tests can kill -9 or freeze
// it. Prints "<unix-micros> START|LEAD|STOP <identity>" lines; LEAD every 50 ms while
// IsLeader() holds, i.e. while it would be allowed to act.
//   lease_contender KUBECONFIG NAMESPACE LEASE IDENTITY LEASE_MS RENEW_MS RETRY_MS
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "kube/client.h"
#include "kube/config.h"
#include "kube/leader_election.h"

namespace {

void Say(const char* what, const std::string& identity) {
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                std::chrono::system_clock::now().time_since_epoch())
                .count();
  std::printf("%lld %s %s\n", static_cast<long long>(us), what, identity.c_str());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 8) {
    std::fprintf(stderr,
                 "usage: %s KUBECONFIG NAMESPACE LEASE IDENTITY LEASE_MS RENEW_MS RETRY_MS\n",
                 argv[0]);
    return 2;
  }
  using namespace tephra::kube;
  auto cfg = LoadKubeconfig({argv[1], ""});
  if (!cfg.ok()) {
    std::fprintf(stderr, "%s\n", cfg.status().ToString().c_str());
    return 1;
  }
  auto client = Client::FromConfig(*cfg);
  if (!client.ok()) return 1;
  LeaderElectionConfig le;
  le.namespace_ = argv[2];
  le.name = argv[3];
  le.identity = argv[4];
  le.lease_duration = std::chrono::milliseconds(std::stoi(argv[5]));
  le.renew_deadline = std::chrono::milliseconds(std::stoi(argv[6]));
  le.retry_period = std::chrono::milliseconds(std::stoi(argv[7]));
  LeaderCallbacks cb;
  cb.on_started_leading = [&] { Say("START", le.identity); };
  cb.on_stopped_leading = [&] { Say("STOP", le.identity); };
  LeaderElector elector(*client, le, cb);
  std::thread heartbeat([&] {
    while (true) {
      if (elector.IsLeader()) Say("LEAD", le.identity);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  heartbeat.detach();
  tephra::Status s = elector.Run();
  std::fprintf(stderr, "elector ended: %s\n", s.ToString().c_str());
  return s.ok() ? 0 : 3;
}
