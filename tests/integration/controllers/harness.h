// Test harness for tephra-controller-manager against the real control plane: installs the CRDs
// and the daemon's RBAC, runs one controller manager per test (scoped to the test's namespace,
// leader election off), and plays the scheduler until there is one: PodGroups go Inqueue and
// pods are bound round-robin to the kwok nodes, which then run them.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "api/batch.h"
#include "api/core.h"
#include "api/scheduling.h"
#include "kube/client.h"
#include "tests/support/cluster.h"
#include "tests/support/process.h"

namespace tephra::testing {

// CRDs, RBAC and the default queue, once per process.
void InstallControllerPrerequisites(const Kubectl& kubectl);

// An admin API client.
std::shared_ptr<kube::Client> AdminClient();

// tephra-controller-manager as the controller-manager identity, for one namespace.
class ControllerManager {
 public:
  ControllerManager(const std::string& namespace_, std::vector<std::string> extra_args = {});
  ~ControllerManager();
  void Kill();
  void Restart();
  // The last lines of its log, for failure messages.
  std::string LogTail() const;

 private:
  void Launch();
  std::string namespace_;
  std::vector<std::string> extra_;
  std::string log_;
  std::unique_ptr<BackgroundProcess> process_;
};

// Admits PodGroups and binds pods of one namespace, every 100 ms, until destroyed.
class FakeScheduler {
 public:
  explicit FakeScheduler(const std::string& namespace_);
  ~FakeScheduler();
  // Stop admitting (pods already bound keep running).
  void Pause(bool paused) { paused_ = paused; }

 private:
  void Loop();
  std::string namespace_;
  std::shared_ptr<kube::Client> client_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> paused_{false};
  std::thread thread_;
};

std::shared_ptr<api::Job> GetJob(kube::Client& client, const std::string& ns,
                                 const std::string& name);
std::vector<std::shared_ptr<api::Pod>> ListPods(kube::Client& client, const std::string& ns);
std::vector<std::shared_ptr<api::PodGroup>> ListPodGroups(kube::Client& client,
                                                          const std::string& ns);

}  // namespace tephra::testing
