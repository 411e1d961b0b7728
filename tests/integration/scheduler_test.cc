// tephra-scheduler against the real control plane: a process scheduling onto kwok nodes.
//
// Tests run in parallel on one control plane, so each starts its own scheduler with its own
// scheduler name, node pool (--node-selector) and default queue: no two tests ever compete
// for a pod or a node.
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <catch2/catch.hpp>
#include <rapidjson/document.h>

#include "api/resources.h"
#include "kube/json.h"
#include "tests/support/cluster.h"

namespace tephra::testing {
namespace {

void EnsureClusterSetup(const Kubectl& kubectl) {
  static bool done = false;
  if (done) return;
  kubectl.MustRun({"apply", "-f", std::string(TEPHRA_SOURCE_DIR) + "/crds/"});
  kubectl.MustRun({"apply", "-f", std::string(TEPHRA_SOURCE_DIR) + "/tests/integration/fixtures/rbac-scheduler.yaml"});
  kubectl.MustRun({"wait", "--for=condition=Established", "crd/podgroups.scheduling.volcano.sh",
                   "crd/queues.scheduling.volcano.sh", "--timeout=60s"});
  done = true;
}

class SchedulerFixture {
 public:
  SchedulerFixture()
      : kubectl_(ClusterEnv::Get().kubeconfig),
        id_(RandomSuffix()),
        name_("tephra-it-" + id_),
        dir_("/tmp/tephra-sched-it-" + id_) {
    EnsureClusterSetup(kubectl_);
    std::filesystem::create_directories(dir_);
  }
  ~SchedulerFixture() {
    process_.reset();
    for (const auto& n : nodes_) kubectl_.Run({"delete", "node", n, "--wait=false"});
    for (const auto& q : queues_) kubectl_.Run({"delete", "queue", q, "--wait=false"});
    std::filesystem::remove_all(dir_);
  }

  const Kubectl& kubectl() const { return kubectl_; }
  const std::string& name() const { return name_; }
  std::string queue_name(const std::string& q) const { return q + "-" + id_; }

  void AddNodes(int count, const std::string& cpu, const std::string& memory,
                std::map<std::string, std::string> labels = {}) {
    for (int i = 0; i < count; ++i) {
      std::string node = "it-" + id_ + "-" + std::to_string(nodes_.size());
      labels["tephra.dev/test-pool"] = id_;
      std::string label_json;
      for (const auto& [k, v] : labels) label_json += ",\"" + k + "\":\"" + v + "\"";
      kubectl_.MustRun({"create", "-f", "-"},
                       R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")" + node +
                           R"(","annotations":{"kwok.x-k8s.io/node":"fake"},"labels":{"type":"kwok-it")" +
                           label_json + R"(}},"status":{"allocatable":{"cpu":")" + cpu + R"(","memory":")" +
                           memory + R"(","pods":"110"},"capacity":{"cpu":")" + cpu + R"(","memory":")" +
                           memory + R"(","pods":"110"}}})");
      nodes_.push_back(node);
    }
    REQUIRE(Eventually(
        [&] {
          for (const auto& n : nodes_) {
            auto r = kubectl_.Run({"get", "node", n, "-o", R"(jsonpath={.status.conditions[?(@.type=="Ready")].status})"});
            if (r.out != "True") return false;
          }
          return true;
        },
        std::chrono::seconds(60)));
  }

  void AddQueue(const std::string& q, int weight) {
    std::string name = queue_name(q);
    kubectl_.MustRun({"apply", "-f", "-"},
                     R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","metadata":{"name":")" +
                         name + R"("},"spec":{"weight":)" + std::to_string(weight) + "}}");
    queues_.push_back(name);
  }

  // A PodGroup and `pods` pods requesting `cpu` each, in namespace ns.
  void AddGang(const std::string& ns, const std::string& group, const std::string& queue, int min_member,
               int pods, const std::string& cpu, const std::string& extra_spec = "") {
    kubectl_.MustRun({"-n", ns, "create", "-f", "-"},
                     R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":{"name":")" +
                         group + R"("},"spec":{"minMember":)" + std::to_string(min_member) +
                         R"(,"queue":")" + queue + R"("}})");
    std::string list = R"({"apiVersion":"v1","kind":"List","items":[)";
    for (int i = 0; i < pods; ++i) {
      if (i > 0) list += ",";
      list += R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + group + "-" + std::to_string(i) +
              R"(","annotations":{"scheduling.k8s.io/group-name":")" + group + R"("}},
              "spec":{"schedulerName":")" + name_ + R"(",)" + extra_spec +
              R"("containers":[{"name":"c","image":"busybox","resources":{"requests":{"cpu":")" + cpu + R"("}}}]}})";
    }
    list += "]}";
    kubectl_.MustRun({"-n", ns, "create", "-f", "-"}, list);
  }

  void Start(const std::string& conf = "") {
    std::vector<std::string> argv{TEPHRA_SCHEDULER_PATH,
                                  "--kubeconfig=" + ClusterEnv::Get().kubeconfig_scheduler,
                                  "--scheduler-name=" + name_,
                                  "--node-selector=tephra.dev/test-pool=" + id_,
                                  "--default-queue=" + queue_name("default"),
                                  "--leader-elect=false",
                                  "--listen-address=127.0.0.1:0",
                                  "--schedule-period=500ms",
                                  "-v=1"};
    if (!conf.empty()) {
      std::ofstream(dir_ + "/scheduler.conf") << conf;
      argv.push_back("--scheduler-conf=" + dir_ + "/scheduler.conf");
    }
    queues_.push_back(queue_name("default"));
    process_ = std::make_unique<BackgroundProcess>(argv, dir_ + "/scheduler.log");
    REQUIRE(process_->started());
  }

  void Kill() {
    process_->Signal(SIGKILL);
    process_->Wait(std::chrono::seconds(5));
  }

  std::string Log() const {
    std::ifstream in(dir_ + "/scheduler.log");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  // pod name -> node, for bound pods in ns.
  std::map<std::string, std::string> Bindings(const std::string& ns) const {
    auto out = kubectl_.MustRun({"-n", ns, "get", "pods", "-o",
                                 R"(jsonpath={range .items[*]}{.metadata.name}={.spec.nodeName}{"\n"}{end})"});
    std::map<std::string, std::string> m;
    std::stringstream ss(out);
    for (std::string line; std::getline(ss, line);) {
      auto eq = line.find('=');
      if (eq != std::string::npos && eq + 1 < line.size()) m[line.substr(0, eq)] = line.substr(eq + 1);
    }
    return m;
  }

  const std::vector<std::string>& nodes() const { return nodes_; }

 private:
  Kubectl kubectl_;
  std::string id_;
  std::string name_;
  std::string dir_;
  std::vector<std::string> nodes_;
  std::vector<std::string> queues_;
  std::unique_ptr<BackgroundProcess> process_;
};

std::string Jsonpath(const Kubectl& k, const std::string& ns, const std::string& what,
                     const std::string& path) {
  auto r = k.Run({"-n", ns, "get", what, "-o", "jsonpath=" + path});
  return r.ok() ? r.out : "";
}

TEST_CASE("a gang larger than the cluster stays Pending and says why") {
  SchedulerFixture f;
  f.AddNodes(2, "4", "16Gi");
  TestNamespace ns(f.kubectl(), "sched-big");
  f.AddGang(ns.name(), "big", f.queue_name("default"), 5, 5, "2");
  f.Start();
  std::string message;
  REQUIRE(Eventually(
      [&] {
        message = Jsonpath(f.kubectl(), ns.name(), "podgroup/big",
                           R"({.status.conditions[?(@.type=="Unschedulable")].message})");
        return !message.empty();
      },
      std::chrono::seconds(30)));
  INFO(message);
  CHECK(message.find("5/5 tasks in gang unschedulable") != std::string::npos);
  CHECK(message.find("Insufficient cpu") != std::string::npos);
  CHECK(f.Bindings(ns.name()).empty());
  std::string pod_reason = Jsonpath(f.kubectl(), ns.name(), "pod/big-0",
                                    R"({.status.conditions[?(@.type=="PodScheduled")].message})");
  CHECK_FALSE(pod_reason.empty());
  std::string events = f.kubectl().MustRun({"-n", ns.name(), "get", "events",
                                            "--field-selector=involvedObject.name=big", "-o", "name"});
  CHECK_FALSE(events.empty());
  // Nothing bound a few cycles later either: the gang is all or nothing.
  std::this_thread::sleep_for(std::chrono::seconds(2));
  CHECK(f.Bindings(ns.name()).empty());
}

TEST_CASE("a pod with a node selector lands only on matching nodes") {
  SchedulerFixture f;
  f.AddNodes(2, "8", "32Gi", {{"disk", "hdd"}});
  f.AddNodes(2, "8", "32Gi", {{"disk", "ssd"}});
  TestNamespace ns(f.kubectl(), "sched-sel");
  f.AddGang(ns.name(), "fast", f.queue_name("default"), 6, 6, "1", R"("nodeSelector":{"disk":"ssd"},)");
  f.Start();
  REQUIRE(Eventually([&] { return f.Bindings(ns.name()).size() == 6; }, std::chrono::seconds(30)));
  std::set<std::string> ssd{f.nodes()[2], f.nodes()[3]};
  for (const auto& [pod, node] : f.Bindings(ns.name())) CHECK(ssd.count(node) == 1);
  REQUIRE(Eventually([&] { return Jsonpath(f.kubectl(), ns.name(), "podgroup/fast", "{.status.phase}") == "Running"; },
                     std::chrono::seconds(30)));
}

TEST_CASE("two queues with weights 1 and 3 share a saturated cluster 1:3") {
  SchedulerFixture f;
  f.AddNodes(2, "8", "64Gi");
  f.AddQueue("light", 1);
  f.AddQueue("heavy", 3);
  TestNamespace ns(f.kubectl(), "sched-share");
  for (int i = 0; i < 16; ++i) {
    f.AddGang(ns.name(), "l" + std::to_string(i), f.queue_name("light"), 1, 1, "1");
    f.AddGang(ns.name(), "h" + std::to_string(i), f.queue_name("heavy"), 1, 1, "1");
  }
  f.Start();
  REQUIRE(Eventually([&] { return f.Bindings(ns.name()).size() == 16; }, std::chrono::seconds(60)));
  std::this_thread::sleep_for(std::chrono::seconds(2));  // and it stays that way
  int light = 0, heavy = 0;
  for (const auto& [pod, node] : f.Bindings(ns.name())) (pod[0] == 'l' ? light : heavy)++;
  CHECK(light == 4);
  CHECK(heavy == 12);
  // The queues' status.allocated says the same.
  std::string allocated = f.kubectl().MustRun({"get", "queue", f.queue_name("heavy"), "-o", "jsonpath={.status.allocated.cpu}"});
  CHECK(allocated == "12");
}

TEST_CASE("restarting the scheduler mid-workload never double-binds or over-commits") {
  SchedulerFixture f;
  f.AddNodes(4, "4", "16Gi");
  TestNamespace ns(f.kubectl(), "sched-restart");
  for (int g = 0; g < 14; ++g) f.AddGang(ns.name(), "g" + std::to_string(g), f.queue_name("default"), 2, 2, "1");
  f.Start();
  REQUIRE(Eventually([&] { return !f.Bindings(ns.name()).empty(); }, std::chrono::seconds(30)));
  f.Kill();
  size_t at_kill = f.Bindings(ns.name()).size();
  f.Start();
  // 16 CPUs for 28 one-CPU pods in gangs of 2: exactly 8 gangs fit.
  REQUIRE(Eventually([&] { return f.Bindings(ns.name()).size() == 16; }, std::chrono::seconds(60)));
  std::this_thread::sleep_for(std::chrono::seconds(2));
  auto bound = f.Bindings(ns.name());
  CHECK(bound.size() == 16);
  CHECK(bound.size() >= at_kill);
  std::map<std::string, int> per_node;
  std::map<std::string, int> per_gang;
  for (const auto& [pod, node] : bound) {
    per_node[node]++;
    per_gang[pod.substr(0, pod.find('-'))]++;
  }
  for (const auto& [node, n] : per_node) CHECK(n <= 4);  // 4 CPUs each
  for (const auto& [gang, n] : per_gang) CHECK(n == 2);   // never half a gang
}

}  // namespace
}  // namespace tephra::testing
