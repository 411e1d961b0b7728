// Leader election on a coordination.k8s.io/v1 Lease, with client-go's timing model:
//
//  * A candidate takes the lease only if its holder has not renewed it for lease_duration,
//    measured on the candidate's own clock from when it *observed* the last change (so clock
//    skew between machines does not matter).
//  * The leader renews every retry_period; if it cannot renew within renew_deadline of its
//    last successful renewal it stops leading.
//  * Because renew_deadline < lease_duration, a leader that lost the lease has stopped acting
//    (IsLeader() false, OnStoppedLeading called) before any other candidate may take over.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "base/clock.h"
#include "kube/client.h"
#include "sync/mutex.h"

namespace tephra::kube {

struct LeaderElectionConfig {
  std::string namespace_;
  std::string name;      // the Lease's name
  std::string identity;  // this process: unique per replica (e.g. hostname + random suffix)
  std::chrono::milliseconds lease_duration{15000};
  std::chrono::milliseconds renew_deadline{10000};
  std::chrono::milliseconds retry_period{2000};
  // On Stop() while leading, hand the lease back so a successor need not wait it out.
  bool release_on_cancel = true;
};

struct LeaderCallbacks {
  std::function<void()> on_started_leading;
  std::function<void()> on_stopped_leading;
  std::function<void(const std::string& identity)> on_new_leader;
};

class LeaderElector {
 public:
  LeaderElector(std::shared_ptr<Client> client, LeaderElectionConfig config,
                LeaderCallbacks callbacks, base::ClockInterface& clock = base::RealClock());

  // Checks the timing invariants (renew_deadline < lease_duration, retry < renew_deadline).
  static Status Validate(const LeaderElectionConfig& config);

  // Campaigns, then leads until the lease is lost or Stop() is called. Blocks; calls the
  // callbacks on this thread. Returns OK after a clean Stop(), or an error when leadership was
  // lost (daemons exit on it: a restarted process starts clean).
  Status Run();
  // Thread-safe. If leading, stops renewing and (release_on_cancel) releases the lease.
  void Stop();

  // True only while this process holds a lease it renewed within renew_deadline.
  bool IsLeader() const;
  std::string CurrentLeader() const;

 private:
  struct Record {
    std::string holder;
    int64_t lease_duration_seconds = 0;
    std::string acquire_time;
    std::string renew_time;
    int64_t transitions = 0;
  };

  // One attempt to take or renew the lease; true when this process holds it afterwards.
  bool TryAcquireOrRenew();
  bool Release();
  bool Wait(std::chrono::milliseconds d);  // false if stopped
  std::string LeaseJson(const Record& r, const std::string& resource_version) const;

  std::shared_ptr<Client> client_;
  LeaderElectionConfig config_;
  LeaderCallbacks callbacks_;
  base::ClockInterface& clock_;

  mutable sync::Mutex mu_;
  sync::CondVar cv_;
  bool stopped_ GUARDED_BY(mu_) = false;
  std::string observed_holder_ GUARDED_BY(mu_);
  std::string observed_renew_ GUARDED_BY(mu_);
  std::chrono::steady_clock::time_point observed_time_ GUARDED_BY(mu_);
  std::string observed_resource_version_ GUARDED_BY(mu_);
  Record observed_ GUARDED_BY(mu_);
  // When this process last renewed successfully (valid while leading_).
  std::chrono::steady_clock::time_point last_renew_ GUARDED_BY(mu_);
  bool leading_ GUARDED_BY(mu_) = false;
};

}  // namespace tephra::kube
