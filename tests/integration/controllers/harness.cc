#include "tests/integration/controllers/harness.h"

#include <csignal>
#include <fstream>
#include <mutex>
#include <sstream>

#include <catch2/catch.hpp>

#include "api/kinds.h"
#include "tests/support/kube_client.h"

namespace tephra::testing {
namespace {

const std::string kSource = TEPHRA_SOURCE_DIR;
const std::string kBinary = CONTROLLER_MANAGER_PATH;

bool Established(const Kubectl& k, const std::string& crd) {
  CommandResult r = k.Run({"get", "crd", crd, "-o",
                           R"(jsonpath={.status.conditions[?(@.type=="Established")].status})"});
  return r.ok() && r.out == "True";
}

}  // namespace

void InstallControllerPrerequisites(const Kubectl& kubectl) {
  static std::once_flag once;
  std::call_once(once, [&] {
    kubectl.ApplyShared({"-f", kSource + "/crds/"});
    // The chart's Role for the controller configuration ConfigMap lives there.
    kubectl.Run({"create", "namespace", "tephra-system"});  // AlreadyExists is fine
    // The chart's RBAC for the controller-manager identity; the tests run it without leader
    // election, so without the lease Role in tephra-system.
    kubectl.ApplyShared({"-f", "-"}, RenderChart("tephra", "tephra-system",
                                                 "templates/rbac-controller-manager.yaml",
                                                 {"--set", "leaderElection.enabled=false"}));
    for (const char* crd : {"jobs.batch.volcano.sh", "queues.scheduling.volcano.sh",
                            "podgroups.scheduling.volcano.sh", "commands.bus.volcano.sh"}) {
      REQUIRE(Eventually([&] { return Established(kubectl, crd); }, std::chrono::seconds(30)));
    }
    REQUIRE(Eventually(
        [&] {
          return kubectl.Run({"get", "vcjob,queue,pg,command", "-A"}).ok();
        },
        std::chrono::seconds(30)));
    // The chart's default queue: a job waits for its queue (docs/controllers.md).
    kubectl.ApplyShared({"-f", "-"},
                        RenderChart("tephra", "tephra-system", "templates/default-queue.yaml", {}));
  });
}

std::shared_ptr<kube::Client> AdminClient() {
  StatusOr<std::shared_ptr<kube::Client>> client =
      testing::KubeClientFor(ClusterEnv::Get().kubeconfig, 200, 400);
  REQUIRE(client.ok());
  return *client;
}

ControllerManager::ControllerManager(const std::string& ns, std::vector<std::string> extra)
    : namespace_(ns), extra_(std::move(extra)) {
  log_ = "/tmp/tephra-controller-manager-" + namespace_ + ".log";
  Launch();
}

ControllerManager::~ControllerManager() {
  Kill();
}

void ControllerManager::Launch() {
  std::vector<std::string> argv = {
      kBinary,
      "--kubeconfig=" + ClusterEnv::Get().kubeconfig_controller_manager,
      "--leader-elect=false",
      "--namespace=" + namespace_,
      "--healthz-address=0",
      "--kube-api-qps=200",
      "--kube-api-burst=400",
      "-v=2"};
  argv.insert(argv.end(), extra_.begin(), extra_.end());
  process_ = std::make_unique<BackgroundProcess>(argv, log_);
  REQUIRE(process_->started());
}

void ControllerManager::Kill() {
  if (process_) {
    process_->Signal(SIGKILL);
    process_->Wait(std::chrono::seconds(10));
    process_.reset();
  }
}

void ControllerManager::Restart() {
  Kill();
  Launch();
}

std::string ControllerManager::LogTail() const {
  std::ifstream in(log_);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  std::string out;
  for (size_t i = lines.size() > 40 ? lines.size() - 40 : 0; i < lines.size(); ++i) {
    out += lines[i] + "\n";
  }
  return out;
}

FakeScheduler::FakeScheduler(const std::string& ns)
    : namespace_(ns), client_(AdminClient()), thread_([this] { Loop(); }) {}

FakeScheduler::~FakeScheduler() {
  stop_ = true;
  thread_.join();
}

void FakeScheduler::Loop() {
  size_t next_node = 0;
  while (!stop_) {
    if (!paused_) {
      for (const auto& pg : ListPodGroups(*client_, namespace_)) {
        if (!pg->status.phase.empty() && pg->status.phase != api::podgroup_phase::kPending)
          continue;
        (void)client_->Patch(api::kPodGroups, namespace_, pg->metadata.name,
                             kube::PatchType::kMerge, R"({"status":{"phase":"Inqueue"}})");
      }
      for (const auto& pod : ListPods(*client_, namespace_)) {
        if (!pod->spec.node_name.empty() || pod->metadata.deletion_timestamp) continue;
        std::string node = "kwok-node-" + std::to_string(next_node++ % 4);
        std::string binding = R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":")" +
                              pod->metadata.name + R"("},"target":{"kind":"Node","name":")" + node +
                              R"("}})";
        (void)client_->CreateSubresource(kube::resources::kPods, namespace_, pod->metadata.name,
                                         "binding", binding);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

std::shared_ptr<api::Job> GetJob(kube::Client& client, const std::string& ns,
                                 const std::string& name) {
  StatusOr<std::string> text = client.Get(api::kJobs, ns, name);
  if (!text.ok()) return nullptr;
  auto job = api::DecodeJob(*text);
  return job.ok() ? *job : nullptr;
}

std::vector<std::shared_ptr<api::Pod>> ListPods(kube::Client& client, const std::string& ns) {
  std::vector<std::shared_ptr<api::Pod>> pods;
  (void)client.ListAll(kube::resources::kPods, ns, {}, [&](const json::Value& v) {
    auto pod = api::DecodePod(v);
    if (pod.ok()) pods.push_back(*pod);
    return Status::Ok();
  });
  return pods;
}

std::vector<std::shared_ptr<api::PodGroup>> ListPodGroups(kube::Client& client,
                                                          const std::string& ns) {
  std::vector<std::shared_ptr<api::PodGroup>> pgs;
  (void)client.ListAll(api::kPodGroups, ns, {}, [&](const json::Value& v) {
    auto pg = api::DecodePodGroup(v);
    if (pg.ok()) pgs.push_back(*pg);
    return Status::Ok();
  });
  return pgs;
}

}  // namespace tephra::testing
