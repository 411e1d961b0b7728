// The daemons under test as child processes: replicas that can be killed with SIGKILL and
// started again with the same arguments, the lease holder among them, and their memory.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kube/client.h"
#include "tests/support/process.h"

namespace tephra::chaos {

class Replica {
 public:
  Replica(std::vector<std::string> argv, std::string log)
      : argv_(std::move(argv)), log_(std::move(log)) {}
  void Start();
  void Kill();  // SIGKILL and reap
  // The exit status when the process ended by itself (it is then stopped), else nullopt.
  std::optional<int> Reap();
  bool running() const { return process_ != nullptr; }
  int pid() const { return process_ ? process_->pid() : -1; }
  const std::string& log() const { return log_; }
  // Resident set size in KiB, from /proc; nullopt when not running.
  std::optional<long> RssKiB() const;
  // Whether this incarnation's log says it acquired the lease as `identity`.
  bool Acquired(const std::string& identity) const;
  std::string LogTail(size_t lines = 30) const;
  int incarnation() const { return incarnation_; }

  // A fault keeps this replica down on purpose: the supervisor must not restart it.
  bool held_down = false;

 private:
  std::vector<std::string> argv_;
  std::string log_;
  long log_offset_ = 0;  // where this incarnation's output starts
  int incarnation_ = 0;
  std::unique_ptr<testing::BackgroundProcess> process_;
};

// Replicas of one daemon sharing a lease (lease_name empty: no leader election).
struct DaemonGroup {
  std::string kind;  // controller-manager, scheduler, admission
  std::string lease_namespace, lease_name;
  std::vector<std::unique_ptr<Replica>> replicas;

  // The Lease's holderIdentity ("" when unknown or unreadable).
  std::string Holder(kube::Client& client) const;
  // The replica holding the lease, or -1.
  int LeaderIndex(kube::Client& client) const;
};

}  // namespace tephra::chaos
