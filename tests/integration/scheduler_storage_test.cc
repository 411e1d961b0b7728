// Pods with claims on the real control plane (docs/scheduler.md, "Storage"): tephra-scheduler
// binds a claim's volume before its pod — a static PV's claimRef, or the claim's selected node
// for a provisioner (tests/support/test_provisioner.py, standing in for a CSI driver's
// external-provisioner) — and kube-controller-manager's PV controller completes the binding.
// The tests assert on the API objects: the pod's node, the claim's phase and volume, the PV's
// claimRef, the Events.
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/integration/scheduler_fixture.h"
#include "tests/support/cluster.h"

namespace tephra::testing {
namespace {

constexpr auto kBound = std::chrono::seconds(60);

// The cluster-scoped storage objects of one test (names carry its id), deleted with it.
class Storage {
 public:
  explicit Storage(SchedulerFixture& f) : f_(f) {}
  ~Storage() {
    provisioner_.reset();
    for (const auto& [kind, name] : created_)
      f_.kubectl().Run({"delete", kind, name, "--wait=false"});
  }

  std::string Name(const std::string& base) const { return base + "-" + f_.id(); }

  // A WaitForFirstConsumer class; provisions when `provisioner` is set, only on `only_node`
  // when that is set.
  std::string Class(const std::string& base, const std::string& provisioner = "",
                    const std::string& only_node = "") {
    std::string name = Name(base);
    std::string topology =
        only_node.empty()
            ? ""
            : R"(,"allowedTopologies":[{"matchLabelExpressions":[{"key":"kubernetes.io/hostname","values":[")" +
                  only_node + R"("]}]}])";
    Create("storageclass", name,
           R"({"apiVersion":"storage.k8s.io/v1","kind":"StorageClass","metadata":{"name":")" +
               name + R"("},"provisioner":")" +
               (provisioner.empty() ? "kubernetes.io/no-provisioner" : provisioner) +
               R"(","volumeBindingMode":"WaitForFirstConsumer")" + topology + "}");
    return name;
  }

  // A local PV of `klass` on `node`.
  std::string LocalVolume(const std::string& base, const std::string& klass,
                          const std::string& node, const std::string& size = "10Gi") {
    std::string name = Name(base);
    Create("persistentvolume", name,
           R"({"apiVersion":"v1","kind":"PersistentVolume","metadata":{"name":")" + name +
               R"("},"spec":{"capacity":{"storage":")" + size +
               R"("},"accessModes":["ReadWriteOnce"],"persistentVolumeReclaimPolicy":"Retain",)"
               R"("storageClassName":")" +
               klass +
               R"(","local":{"path":"/mnt/disk"},"nodeAffinity":{"required":)"
               R"({"nodeSelectorTerms":[{"matchExpressions":[{"key":"kubernetes.io/hostname",)"
               R"("operator":"In","values":[")" +
               node + R"("]}]}]}}}})");
    return name;
  }

  void Claim(const std::string& ns, const std::string& name, const std::string& klass,
             const std::string& size = "5Gi") {
    f_.kubectl().MustRun(
        {"-n", ns, "create", "-f", "-"},
        R"({"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":")" + name +
            R"("},"spec":{"accessModes":["ReadWriteOnce"],"storageClassName":")" + klass +
            R"(","resources":{"requests":{"storage":")" + size + R"("}}}})");
  }

  // The test provisioner for `name`, refusing `refuse_node` when set.
  void StartProvisioner(const std::string& name, const std::string& refuse_node = "") {
    std::vector<std::string> argv{
        "python3", std::string(TEPHRA_SOURCE_DIR) + "/tests/support/test_provisioner.py",
        "--kubeconfig=" + ClusterEnv::Get().kubeconfig, "--name=" + name, "--interval=0.2"};
    if (!refuse_node.empty()) argv.push_back("--refuse-node=" + refuse_node);
    provisioner_ = std::make_unique<BackgroundProcess>(argv, f_.dir() + "/provisioner.log");
    REQUIRE(provisioner_->started());
  }

 private:
  void Create(const std::string& kind, const std::string& name, const std::string& json) {
    f_.kubectl().MustRun({"create", "-f", "-"}, json);
    created_.emplace_back(kind, name);
  }

  SchedulerFixture& f_;
  std::vector<std::pair<std::string, std::string>> created_;
  std::unique_ptr<BackgroundProcess> provisioner_;
};

// `count` nodes labelled kubernetes.io/hostname with their names, as a kubelet labels its node
// (the fixture's simulated nodes have no kubelet; local PVs and allowedTopologies name it).
void AddNodes(SchedulerFixture& f, int count) {
  f.AddNodes(count, "4", "16Gi");
  for (const auto& node : f.nodes()) {
    f.kubectl().MustRun({"label", "--overwrite", "node", node, "kubernetes.io/hostname=" + node});
  }
}

// A PodGroup of the pods named, each mounting its claim ("<pod>-data").
void Gang(SchedulerFixture& f, const std::string& ns, const std::string& group,
          const std::vector<std::string>& pods) {
  f.kubectl().MustRun(
      {"-n", ns, "create", "-f", "-"},
      R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":{"name":")" +
          group + R"("},"spec":{"minMember":)" + std::to_string(pods.size()) + R"(,"queue":")" +
          f.queue_name("default") + R"("}})");
  for (const auto& pod : pods) {
    f.kubectl().MustRun(
        {"-n", ns, "create", "-f", "-"},
        R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + pod +
            R"(","annotations":{"scheduling.k8s.io/group-name":")" + group +
            R"("}},"spec":{"schedulerName":")" + f.name() +
            R"(","volumes":[{"name":"data","persistentVolumeClaim":{"claimName":")" + pod +
            R"(-data"}}],"containers":[{"name":"c","image":"busybox","resources":{"requests":{"cpu":"1"}}}]}})");
  }
}

std::string Get(SchedulerFixture& f, const std::string& ns, const std::string& what,
                const std::string& path) {
  return Jsonpath(f.kubectl(), ns, what, path);
}

std::string Events(SchedulerFixture& f, const std::string& ns, const std::string& pod) {
  return f.kubectl()
      .Run({"-n", ns, "get", "events", "--field-selector=involvedObject.name=" + pod, "-o",
            "jsonpath={range .items[*]}{.reason}: {.message}{\"\\n\"}{end}"})
      .out;
}

TEST_CASE("storage: a WaitForFirstConsumer claim takes the local PV on its pod's node") {
  SchedulerFixture f;
  AddNodes(f, 3);
  TestNamespace ns(f.kubectl(), "st-static");
  Storage s(f);
  std::string klass = s.Class("local");
  std::string pv = s.LocalVolume("pv", klass, f.nodes()[1]);
  s.Claim(ns.name(), "p-data", klass);
  Gang(f, ns.name(), "g", {"p"});
  f.Start();
  const bool bound = Eventually([&] { return f.Bindings(ns.name()).count("p") == 1; }, kBound);
  INFO(f.Log());
  REQUIRE(bound);
  CHECK(f.Bindings(ns.name()).at("p") == f.nodes()[1]);
  REQUIRE(Eventually([&] { return Get(f, ns.name(), "pvc/p-data", "{.status.phase}") == "Bound"; },
                     kBound));
  CHECK(Get(f, ns.name(), "pvc/p-data", "{.spec.volumeName}") == pv);
  std::string uid = Get(f, ns.name(), "pvc/p-data", "{.metadata.uid}");
  CHECK(Get(f, "", "pv/" + pv, "{.spec.claimRef.uid}") == uid);
  CHECK(Get(f, "", "pv/" + pv, "{.spec.claimRef.name}") == "p-data");
  CHECK(Get(f, "", "pv/" + pv,
            R"({.metadata.annotations.pv\.kubernetes\.io/bound-by-controller})") == "yes");
}

TEST_CASE("storage: a claim is provisioned on the node its pod goes to, then bound") {
  SchedulerFixture f;
  AddNodes(f, 3);
  TestNamespace ns(f.kubectl(), "st-provision");
  Storage s(f);
  std::string provisioner = "provisioner-" + f.id() + ".tephra.dev";
  std::string klass = s.Class("csi", provisioner, f.nodes()[2]);
  s.Claim(ns.name(), "p-data", klass);
  s.StartProvisioner(provisioner);
  Gang(f, ns.name(), "g", {"p"});
  f.Start();
  const bool bound = Eventually([&] { return f.Bindings(ns.name()).count("p") == 1; }, kBound);
  INFO(f.Log());
  REQUIRE(bound);
  CHECK(f.Bindings(ns.name()).at("p") == f.nodes()[2]);
  CHECK(Get(f, ns.name(), "pvc/p-data",
            R"({.metadata.annotations.volume\.kubernetes\.io/selected-node})") == f.nodes()[2]);
  CHECK(Get(f, ns.name(), "pvc/p-data", "{.status.phase}") == "Bound");
  std::string pv = Get(f, ns.name(), "pvc/p-data", "{.spec.volumeName}");
  CHECK(pv == "pvc-" + Get(f, ns.name(), "pvc/p-data", "{.metadata.uid}"));
  CHECK(Get(f, "", "pv/" + pv,
            "{.spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values[0]}") ==
        f.nodes()[2]);
}

TEST_CASE("storage: a claim not bound in time is given back, and its pod bound once it can be") {
  SchedulerFixture f;
  AddNodes(f, 2);
  TestNamespace ns(f.kubectl(), "st-timeout");
  Storage s(f);
  std::string provisioner = "provisioner-" + f.id() + ".tephra.dev";
  std::string klass = s.Class("csi", provisioner);
  s.Claim(ns.name(), "p-data", klass);
  Gang(f, ns.name(), "g", {"p"});
  f.Start(R"(actions: "enqueue, allocate, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}]
- plugins: [{name: predicates, arguments: {volumebinding.bindTimeoutSeconds: 2}}, {name: proportion}]
)");
  // No provisioner runs yet: the claim is annotated, nobody provisions, the unit times out.
  REQUIRE(Eventually(
      [&] {
        return Events(f, ns.name(), "p")
                   .find(
                       "binding volumes: timed out waiting to provision "
                       "claim " +
                       ns.name() + "/p-data") != std::string::npos;
      },
      kBound));
  INFO(f.Log());
  CHECK(f.Bindings(ns.name()).empty());
  CHECK(f.Log().find("none of them is bound") != std::string::npos);
  // Once a provisioner serves the class, the next try goes through.
  s.StartProvisioner(provisioner);
  REQUIRE(Eventually([&] { return f.Bindings(ns.name()).count("p") == 1; }, kBound));
  CHECK(Get(f, ns.name(), "pvc/p-data", "{.status.phase}") == "Bound");
  CHECK(Get(f, ns.name(), "pvc/p-data",
            R"({.metadata.annotations.volume\.kubernetes\.io/selected-node})") ==
        f.Bindings(ns.name()).at("p"));
}

TEST_CASE("storage: a gang whose last member's volume fails leaves no member bound") {
  SchedulerFixture f;
  AddNodes(f, 2);
  TestNamespace ns(f.kubectl(), "st-gang");
  Storage s(f);
  std::string local = s.Class("local");
  s.LocalVolume("pv-a", local, f.nodes()[0]);
  s.Claim(ns.name(), "a-data", local);
  // b's volume can only be provisioned on node 1, where the provisioner always refuses.
  std::string provisioner = "provisioner-" + f.id() + ".tephra.dev";
  std::string refused = s.Class("csi", provisioner, f.nodes()[1]);
  s.Claim(ns.name(), "b-data", refused);
  s.StartProvisioner(provisioner, f.nodes()[1]);
  Gang(f, ns.name(), "g", {"a", "b"});
  f.Start();
  // Every try fails on b's volume, after a's was written; neither member is ever bound.
  const std::string failed = "binding volumes: provisioning failed for claim " + ns.name() +
                             "/b-data on node " + f.nodes()[1];
  bool any_bound = false;
  const bool failed_seen = Eventually(
      [&] {
        any_bound = !f.Bindings(ns.name()).empty();
        return any_bound || Events(f, ns.name(), "a").find(failed) != std::string::npos;
      },
      kBound);
  INFO(f.Log());
  INFO(f.kubectl().Run({"-n", ns.name(), "get", "pods,pvc,events", "-o", "wide"}).out);
  REQUIRE_FALSE(any_bound);
  REQUIRE(failed_seen);
  CHECK(Events(f, ns.name(), "b").find(failed) != std::string::npos);
  for (int i = 0; i < 25; ++i) {  // sessions keep trying for five seconds more
    if (!f.Bindings(ns.name()).empty()) {
      INFO(f.Log());
      FAIL("a member was bound: " << f.Bindings(ns.name()).begin()->first);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

}  // namespace
}  // namespace tephra::testing
