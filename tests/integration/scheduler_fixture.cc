#include "tests/integration/scheduler_fixture.h"

#include <filesystem>
#include <fstream>
#include <signal.h>
#include <sstream>

#include <catch2/catch.hpp>

namespace tephra::testing {
namespace {

void EnsureClusterSetup(const Kubectl& kubectl) {
  static bool done = false;
  if (done) return;
  kubectl.ApplyShared({"-f", std::string(TEPHRA_SOURCE_DIR) + "/crds/"});
  kubectl.Run({"create", "namespace", "tephra-system"});  // AlreadyExists is fine
  // The chart's RBAC for the scheduler identity (tephra-system/tephra-scheduler); the tests run
  // it without leader election, so without the lease Role in tephra-system.
  kubectl.ApplyShared({"-f", "-"},
                      RenderChart("tephra", "tephra-system", "templates/rbac-scheduler.yaml",
                                  {"--set", "leaderElection.enabled=false"}));
  kubectl.MustRun({"wait", "--for=condition=Established", "crd/podgroups.scheduling.volcano.sh",
                   "crd/queues.scheduling.volcano.sh", "--timeout=60s"});
  done = true;
}

}  // namespace

SchedulerFixture::SchedulerFixture()
    : kubectl_(ClusterEnv::Get().kubeconfig),
      id_(RandomSuffix()),
      name_("tephra-it-" + id_),
      dir_("/tmp/tephra-sched-it-" + id_) {
  EnsureClusterSetup(kubectl_);
  std::filesystem::create_directories(dir_);
}

SchedulerFixture::~SchedulerFixture() {
  process_.reset();
  for (const auto& n : nodes_) kubectl_.Run({"delete", "node", n, "--wait=false"});
  for (const auto& q : queues_) kubectl_.Run({"delete", "queue", q, "--wait=false"});
  for (const auto& p : priority_classes_)
    kubectl_.Run({"delete", "priorityclass", p, "--wait=false"});
  std::filesystem::remove_all(dir_);
}

void SchedulerFixture::AddNodes(int count, const std::string& cpu, const std::string& memory,
                                std::map<std::string, std::string> labels) {
  for (int i = 0; i < count; ++i) {
    std::string node = "it-" + id_ + "-" + std::to_string(nodes_.size());
    labels["tephra.dev/test-pool"] = id_;
    std::string label_json;
    for (const auto& [k, v] : labels) label_json += ",\"" + k + "\":\"" + v + "\"";
    kubectl_.MustRun(
        {"create", "-f", "-"},
        R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")" + node +
            R"(","annotations":{"kwok.x-k8s.io/node":"fake"},"labels":{"type":"kwok-it")" +
            label_json + R"(}},"status":{"allocatable":{"cpu":")" + cpu + R"(","memory":")" +
            memory + R"(","pods":"110"},"capacity":{"cpu":")" + cpu + R"(","memory":")" + memory +
            R"(","pods":"110"}}})");
    nodes_.push_back(node);
  }
  REQUIRE(Eventually(
      [&] {
        for (const auto& n : nodes_) {
          auto r = kubectl_.Run({"get", "node", n, "-o",
                                 R"(jsonpath={.status.conditions[?(@.type=="Ready")].status})"});
          if (r.out != "True") return false;
        }
        return true;
      },
      std::chrono::seconds(60)));
}

void SchedulerFixture::AddQueue(const std::string& q, int weight, const std::string& spec_extra) {
  std::string name = queue_name(q);
  kubectl_.MustRun(
      {"apply", "-f", "-"},
      R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","metadata":{"name":")" +
          name + R"(","labels":{"tephra.dev/test-pool":")" + id_ + R"("}},"spec":{"weight":)" +
          std::to_string(weight) + spec_extra + "}}");
  queues_.push_back(name);
}

void SchedulerFixture::AddPriorityClass(const std::string& name, int value) {
  std::string full = queue_name(name);
  kubectl_.MustRun(
      {"apply", "-f", "-"},
      R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":")" + full +
          R"("},"value":)" + std::to_string(value) + "}");
  priority_classes_.push_back(full);
}

void SchedulerFixture::AddGang(const std::string& ns, const std::string& group,
                               const std::string& queue, int min_member, int pods,
                               const std::string& cpu, const std::string& extra_spec,
                               const std::string& pg_extra) {
  kubectl_.MustRun(
      {"-n", ns, "create", "-f", "-"},
      R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":{"name":")" +
          group + R"("},"spec":{"minMember":)" + std::to_string(min_member) + R"(,"queue":")" +
          queue + "\"" + pg_extra + "}}");
  std::string list = R"({"apiVersion":"v1","kind":"List","items":[)";
  for (int i = 0; i < pods; ++i) {
    if (i > 0) list += ",";
    list += R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + group + "-" +
            std::to_string(i) + R"(","annotations":{"scheduling.k8s.io/group-name":")" + group +
            R"("}},
            "spec":{"schedulerName":")" +
            name_ + R"(",)" + extra_spec +
            R"("containers":[{"name":"c","image":"busybox","resources":{"requests":{"cpu":")" +
            cpu + R"("}}}]}})";
  }
  list += "]}";
  kubectl_.MustRun({"-n", ns, "create", "-f", "-"}, list);
}

void SchedulerFixture::Start(const std::string& conf, const std::vector<std::string>& extra_args) {
  std::vector<std::string> argv{TEPHRA_SCHEDULER_PATH,
                                "--kubeconfig=" + ClusterEnv::Get().kubeconfig_scheduler,
                                "--scheduler-name=" + name_,
                                "--node-selector=tephra.dev/test-pool=" + id_,
                                "--queue-label-selector=tephra.dev/test-pool=" + id_,
                                "--default-queue=" + queue_name("default"),
                                "--leader-elect=false",
                                "--listen-address=127.0.0.1:0",
                                "--schedule-period=500ms",
                                "-v=1"};
  if (!conf.empty()) {
    std::ofstream(dir_ + "/scheduler.conf") << conf;
    argv.push_back("--scheduler-conf=" + dir_ + "/scheduler.conf");
  }
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  queues_.push_back(queue_name("default"));
  process_ = std::make_unique<BackgroundProcess>(argv, dir_ + "/scheduler.log");
  REQUIRE(process_->started());
}

void SchedulerFixture::Kill() {
  process_->Signal(SIGKILL);
  process_->Wait(std::chrono::seconds(5));
}

std::string SchedulerFixture::Log() const {
  std::ifstream in(dir_ + "/scheduler.log");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::map<std::string, std::string> SchedulerFixture::Bindings(const std::string& ns) const {
  auto out = kubectl_.MustRun(
      {"-n", ns, "get", "pods", "-o",
       R"(jsonpath={range .items[*]}{.metadata.name}={.spec.nodeName}={.metadata.deletionTimestamp}{"\n"}{end})"});
  std::map<std::string, std::string> m;
  std::stringstream ss(out);
  for (std::string line; std::getline(ss, line);) {
    auto eq = line.find('=');
    auto eq2 = line.find('=', eq + 1);
    if (eq == std::string::npos || eq2 == std::string::npos) continue;
    std::string node = line.substr(eq + 1, eq2 - eq - 1);
    bool deleting = eq2 + 1 < line.size();
    if (!node.empty() && !deleting) m[line.substr(0, eq)] = node;
  }
  return m;
}

std::string Jsonpath(const Kubectl& k, const std::string& ns, const std::string& what,
                     const std::string& path) {
  auto r = k.Run({"-n", ns, "get", what, "-o", "jsonpath=" + path});
  return r.ok() ? r.out : "";
}

}  // namespace tephra::testing
