// Access to the real control plane that hack/test.sh (hack/control-plane.sh up) started for
// integration tests: kubeconfigs from the environment, kubectl, throw-away namespaces, polling.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "tests/support/process.h"

namespace tephra::testing {

// The control plane's environment (see hack/control-plane.sh env). Throws std::runtime_error
// with instructions when integration tests run without a control plane.
struct ClusterEnv {
  std::string kubeconfig;  // admin (system:masters)
  std::string kubeconfig_controller_manager;
  std::string kubeconfig_admission;
  std::string kubeconfig_scheduler;
  std::string apiserver;  // https://127.0.0.1:PORT
  std::string ca_file;

  static const ClusterEnv& Get();
};

// kubectl bound to one kubeconfig.
class Kubectl {
 public:
  explicit Kubectl(std::string kubeconfig) : kubeconfig_(std::move(kubeconfig)) {}

  CommandResult Run(const std::vector<std::string>& args, std::string_view input = {}) const;
  // Runs and returns stdout; throws std::runtime_error with stderr when the command fails.
  std::string MustRun(const std::vector<std::string>& args, std::string_view input = {}) const;
  // `kubectl apply` of objects other test processes may apply at the same moment (CRDs, the
  // chart's cluster roles): client-side apply reads then creates, so two racing processes can
  // get AlreadyExists or a conflict. Retries those; throws like MustRun on anything else.
  std::string ApplyShared(const std::vector<std::string>& args, std::string_view input = {}) const;

 private:
  std::string kubeconfig_;
};

// A namespace with a unique name, deleted (without waiting) when the object goes away.
class TestNamespace {
 public:
  TestNamespace(const Kubectl& kubectl, std::string_view prefix);
  ~TestNamespace();
  TestNamespace(const TestNamespace&) = delete;
  TestNamespace& operator=(const TestNamespace&) = delete;

  const std::string& name() const { return name_; }

 private:
  const Kubectl& kubectl_;
  std::string name_;
};

// Operations on the control plane's processes (hack/control-plane.sh stop|start|compact).
// Tests using them disturb every test running at the same time: declare them SERIAL.
Status StopComponent(const std::string& component, bool hard_kill = false);
Status StartComponent(const std::string& component);
// Compacts etcd to its current revision: resources started with --uncached-watch
// (configmaps in hack/test.sh) then answer watches from older versions with 410 Gone.
Status CompactEtcd();

// Templates of the Helm chart charts/tephra rendered offline (`helm template RELEASE --namespace
// NS --show-only TEMPLATE ARGS...`): tests grant the daemons the chart's RBAC, so a rule missing
// from the chart fails them. Throws std::runtime_error with helm's message.
std::string RenderChart(const std::string& release, const std::string& ns, const std::string& templ,
                        const std::vector<std::string>& args = {});
// The whole file ("" when it cannot be read).
std::string ReadFile(const std::string& path);
// `text` with every `from` replaced by `to` (templated manifests: ${NAME}).
std::string ReplaceAll(std::string text, const std::string& from, const std::string& to);

// A random lowercase suffix usable in object names.
std::string RandomSuffix(size_t length = 6);

// Polls `condition` every `interval` until it returns true or `timeout` passes.
bool Eventually(const std::function<bool()>& condition, std::chrono::milliseconds timeout,
                std::chrono::milliseconds interval = std::chrono::milliseconds(200));

}  // namespace tephra::testing
