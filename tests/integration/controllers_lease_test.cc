// tephra-controller-manager with leader election: a leader whose caches take longer than the
// renew deadline to sync keeps its lease. Found by the chaos soak (tests/e2e/chaos): with
// 10,000 pods the sync took 25 s, the elector was blocked in the start callback meanwhile, and
// every new leader lost its lease a second after starting its controllers, exited, and the
// next one did the same.
//
// The slow sync is made deterministic with RBAC: the daemon runs as a service account that may
// only use its lease until the test grants it the controller manager's role; a standby
// candidate (lease_contender) takes the lease as soon as the leader stops renewing it.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <signal.h>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "tests/integration/controllers/harness.h"
#include "tests/support/cluster.h"

namespace tephra::testing {
namespace {

bool LogHas(const std::string& log, const std::string& text) {
  return ReadFile(log).find(text) != std::string::npos;
}

TEST_CASE("a controller-manager leader keeps its lease while its caches sync slowly") {
  Kubectl k(ClusterEnv::Get().kubeconfig);
  InstallControllerPrerequisites(k);
  TestNamespace ns(k, "cm-lease");
  const std::string sa = "slow-cm";
  const std::string binding = "tephra-it-" + ns.name();
  k.MustRun({"-n", ns.name(), "create", "serviceaccount", sa});
  k.MustRun({"-n", ns.name(), "create", "role", "lease", "--verb=get,create,update",
             "--resource=leases.coordination.k8s.io"});
  k.MustRun({"-n", ns.name(), "create", "rolebinding", "lease", "--role=lease",
             "--serviceaccount=" + ns.name() + ":" + sa});
  std::string token = k.MustRun({"-n", ns.name(), "create", "token", sa, "--duration=10m"});
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) token.pop_back();
  const std::string dir = "/tmp/tephra-it-" + ns.name();
  std::filesystem::create_directories(dir);
  const std::string kubeconfig = dir + "/kubeconfig", log = dir + "/controller-manager.log";
  std::ofstream(kubeconfig)
      << "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: "
      << ClusterEnv::Get().apiserver << "\n    certificate-authority: " << ClusterEnv::Get().ca_file
      << "\nusers:\n- name: u\n  user:\n    token: " << token
      << "\ncontexts:\n- name: x\n  context:\n    cluster: c\n    user: u\ncurrent-context: x\n";

  BackgroundProcess cm(
      {CONTROLLER_MANAGER_PATH, "--kubeconfig=" + kubeconfig, "--namespace=" + ns.name(),
       "--queue-label-selector=tephra-it=" + ns.name(), "--healthz-address=0",
       "--leader-elect=true", "--leader-elect-resource-namespace=" + ns.name(),
       "--leader-elect-resource-name=cm", "--leader-elect-lease-duration=3s",
       "--leader-elect-renew-deadline=2s", "--leader-elect-retry-period=500ms", "-v=1"},
      log);
  REQUIRE(cm.started());
  INFO(ReadFile(log));
  REQUIRE(Eventually([&] { return LogHas(log, "acquired lease"); }, std::chrono::seconds(30)));
  // A standby takes the lease as soon as the leader stops renewing it.
  const std::string standby_log = dir + "/standby.log";
  BackgroundProcess standby({LEASE_CONTENDER_PATH, ClusterEnv::Get().kubeconfig, ns.name(), "cm",
                             "standby", "3000", "2000", "500"},
                            standby_log);
  REQUIRE(standby.started());
  // Leading, but every LIST is forbidden: the caches cannot sync for longer than the deadline.
  std::this_thread::sleep_for(std::chrono::seconds(5));
  CHECK_FALSE(LogHas(log, "controllers running"));
  k.MustRun({"create", "clusterrolebinding", binding, "--clusterrole=tephra-controller-manager",
             "--serviceaccount=" + ns.name() + ":" + sa});
  bool running =
      Eventually([&] { return LogHas(log, "controllers running"); }, std::chrono::seconds(90));
  // Still the leader well past a renew deadline after starting the controllers.
  std::this_thread::sleep_for(std::chrono::seconds(4));
  k.Run({"delete", "clusterrolebinding", binding, "--ignore-not-found"});
  INFO(ReadFile(log));
  CHECK(running);
  CHECK(cm.Wait(std::chrono::milliseconds(0)) == -1);  // not exited
  CHECK_FALSE(LogHas(log, "lost lease"));
  CHECK_FALSE(LogHas(standby_log, "LEAD"));
  standby.Signal(SIGKILL);
  standby.Wait(std::chrono::seconds(5));
  cm.Signal(SIGKILL);
  cm.Wait(std::chrono::seconds(5));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tephra::testing
