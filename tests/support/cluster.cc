#include "tests/support/cluster.h"

#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace tephra::testing {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

}  // namespace

const ClusterEnv& ClusterEnv::Get() {
  static const ClusterEnv env = [] {
    ClusterEnv e;
    e.kubeconfig = Env("TEPHRA_KUBECONFIG_ADMIN");
    e.kubeconfig_controller_manager = Env("TEPHRA_KUBECONFIG_CONTROLLER_MANAGER");
    e.kubeconfig_admission = Env("TEPHRA_KUBECONFIG_ADMISSION");
    e.kubeconfig_scheduler = Env("TEPHRA_KUBECONFIG_SCHEDULER");
    e.apiserver = Env("TEPHRA_APISERVER");
    e.ca_file = Env("TEPHRA_CA_FILE");
    return e;
  }();
  if (env.kubeconfig.empty() || env.apiserver.empty()) {
    throw std::runtime_error(
        "integration tests need a control plane: run hack/test.sh, or "
        "eval \"$(hack/control-plane.sh env)\" after hack/control-plane.sh up");
  }
  return env;
}

CommandResult Kubectl::Run(const std::vector<std::string>& args, std::string_view input) const {
  std::vector<std::string> argv{"kubectl", "--kubeconfig=" + kubeconfig_};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv, input);
}

namespace {

// The output of a kubectl run, or a std::runtime_error naming the command and its stderr.
std::string OutputOrThrow(const std::vector<std::string>& args, const CommandResult& r) {
  if (r.ok()) return r.out;
  std::string cmd = "kubectl";
  for (const auto& a : args) cmd += " " + a;
  throw std::runtime_error(cmd + " failed (exit " + std::to_string(r.exit_code) + "): " + r.err);
}

}  // namespace

std::string Kubectl::MustRun(const std::vector<std::string>& args, std::string_view input) const {
  return OutputOrThrow(args, Run(args, input));
}

std::string Kubectl::ApplyShared(const std::vector<std::string>& args,
                                 std::string_view input) const {
  std::vector<std::string> apply_args{"apply"};
  apply_args.insert(apply_args.end(), args.begin(), args.end());
  for (int attempt = 1;; ++attempt) {
    CommandResult r = Run(apply_args, input);
    bool raced = r.err.find("AlreadyExists") != std::string::npos ||
                 r.err.find("the object has been modified") != std::string::npos;
    if (r.ok() || !raced || attempt == 5) return OutputOrThrow(apply_args, r);
    std::this_thread::sleep_for(std::chrono::milliseconds(200 * attempt));
  }
}

namespace {

Status ControlPlane(const std::vector<std::string>& args) {
  std::string name = Env("TEPHRA_CP_NAME");
  if (name.empty()) return FailedPrecondition("TEPHRA_CP_NAME is not set");
  std::vector<std::string> argv{std::string(TEPHRA_SOURCE_DIR) + "/hack/control-plane.sh"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back("--name");
  argv.push_back(name);
  CommandResult r = RunCommand(argv, {}, std::chrono::seconds(180));
  if (!r.ok()) return Internal("control-plane.sh " + args[0] + " failed: " + r.err);
  return Status::Ok();
}

}  // namespace

Status StopComponent(const std::string& component, bool hard_kill) {
  if (hard_kill) return ControlPlane({"stop", "--kill", component});
  return ControlPlane({"stop", component});
}

Status StartComponent(const std::string& component) {
  return ControlPlane({"start", component});
}

Status CompactEtcd() {
  return ControlPlane({"compact"});
}

std::string RenderChart(const std::string& release, const std::string& ns, const std::string& templ,
                        const std::vector<std::string>& args) {
  std::vector<std::string> argv{
      "helm",        "template", release,       std::string(TEPHRA_SOURCE_DIR) + "/charts/tephra",
      "--namespace", ns,         "--show-only", templ};
  argv.insert(argv.end(), args.begin(), args.end());
  CommandResult r = RunCommand(argv);
  if (!r.ok()) {
    throw std::runtime_error("helm template " + templ + " failed (exit " +
                             std::to_string(r.exit_code) + "): " + r.err);
  }
  return r.out;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string ReplaceAll(std::string text, const std::string& from, const std::string& to) {
  for (size_t pos = text.find(from); pos != std::string::npos;
       pos = text.find(from, pos + to.size())) {
    text.replace(pos, from.size(), to);
  }
  return text;
}

std::string RandomSuffix(size_t length) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  static constexpr std::string_view kAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::uniform_int_distribution<size_t> pick(0, kAlphabet.size() - 1);
  std::string s;
  for (size_t i = 0; i < length; ++i) s += kAlphabet[pick(rng)];
  return s;
}

TestNamespace::TestNamespace(const Kubectl& kubectl, std::string_view prefix)
    : kubectl_(kubectl), name_(std::string(prefix) + "-" + RandomSuffix()) {
  kubectl_.MustRun({"create", "namespace", name_});
}

TestNamespace::~TestNamespace() {
  kubectl_.Run({"delete", "namespace", name_, "--wait=false", "--ignore-not-found"});
}

bool Eventually(const std::function<bool()>& condition, std::chrono::milliseconds timeout,
                std::chrono::milliseconds interval) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (condition()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(interval);
  }
}

}  // namespace tephra::testing
