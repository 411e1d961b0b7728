// Volume placement in the predicates plugin (scheduler/plugins/support/volumes.h): each of
// kube-scheduler's volume filters with its reason, the volumes unbound claims take as the
// session places pods, and the pre-bind steps they leave with (docs/scheduler.md, "Storage").
#include <variant>

#include <catch2/catch.hpp>

#include "scheduler/plugins/plugins.h"
#include "tests/unit/scheduler/plugins/plugin_session.h"

namespace tephra::scheduler::testing {
namespace {

const char kPredicates[] = "- plugins:\n  - name: predicates\n";

bool Fails(const Fit& f, const std::string& reason, Fit::Code code) {
  return !f.ok() && std::string(f.reason) == reason && f.code == code;
}
bool Unresolvable(const Fit& f, const std::string& reason) {
  return Fails(f, reason, Fit::Code::kUnschedulableUnresolvable);
}

// Two nodes, a queue and a group; `local` is a WaitForFirstConsumer class of static PVs.
Harness& Cluster(Harness& h) {
  h.Node("n1", "cpu=8").Node("n2", "cpu=8").Queue("default").Group("ns/g", "default", 1);
  h.StorageClass("local");
  return h;
}

std::string VolumeOf(const std::vector<PreBindStep>& steps) {
  REQUIRE(steps.size() == 1);
  const auto* bind = std::get_if<BindVolumeStep>(&steps[0].what);
  REQUIRE(bind != nullptr);
  return bind->volume;
}

TEST_CASE("volumes: a pod without claims is never asked about storage") {
  Harness h;
  Cluster(h).Pod("ns/p", "g").Request("cpu=1").Add();
  PluginSession s(h, kPredicates);
  CHECK(s.Predicate("ns/p", "n1").ok());
  s.Place("ns/p", "n1");
  CHECK(s.PreBind("ns/p").empty());
}

TEST_CASE("volumes: a missing claim rules every node out, naming the claim") {
  Harness h;
  Cluster(h).Pod("ns/p", "g").Request("cpu=1").Claim("data").Add();
  PluginSession s(h, kPredicates);
  CHECK(Unresolvable(s.Predicate("ns/p", "n1"), "persistentvolumeclaim \"data\" not found"));
  CHECK(Unresolvable(s.Predicate("ns/p", "n2"), "persistentvolumeclaim \"data\" not found"));
}

TEST_CASE("volumes: an unbound claim of an Immediate class waits for the PV controller") {
  Harness h;
  Cluster(h).StorageClass("standard", /*wait_for_first_consumer=*/false);
  h.Volume("pv-1", "standard", "10Gi");
  h.Claim("ns/data", "standard", "1Gi");
  h.Pod("ns/p", "g").Request("cpu=1").Claim("data").Add();
  PluginSession s(h, kPredicates);
  CHECK(Unresolvable(s.Predicate("ns/p", "n1"), reason::kUnboundImmediateClaims));
}

TEST_CASE("volumes: a claim bound to a local PV keeps its pod on the PV's node") {
  Harness h;
  Cluster(h).Volume("pv-1", "local", "10Gi", "n1").Claim("ns/data", "local", "1Gi", "pv-1");
  h.Pod("ns/p", "g").Request("cpu=1").Claim("data").Add();
  PluginSession s(h, kPredicates);
  CHECK(s.Predicate("ns/p", "n1").ok());
  CHECK(Unresolvable(s.Predicate("ns/p", "n2"), reason::kVolumeNodeConflict));
  s.Place("ns/p", "n1");
  CHECK(s.PreBind("ns/p").empty());  // bound already: nothing to write
}

TEST_CASE("volumes: a claim bound to a PV that does not exist rules every node out") {
  Harness h;
  Cluster(h).Claim("ns/data", "local", "1Gi", "gone");
  h.Pod("ns/p", "g").Request("cpu=1").Claim("data").Add();
  {
    PluginSession s(h, kPredicates);  // VolumeZone looks the PV up first
    CHECK(Unresolvable(s.Predicate("ns/p", "n1"), "persistentvolume \"gone\" not found"));
  }
  PluginSession s(h,
                  "- plugins:\n  - name: predicates\n    arguments:\n      "
                  "predicate.VolumeZoneEnable: false\n");
  CHECK(Unresolvable(s.Predicate("ns/p", "n1"), reason::kVolumeNotExist));
}

TEST_CASE("volumes: a zonal PV's zone and region must be the node's") {
  Harness h;
  h.Node("a1", "cpu=8", {{"topology.kubernetes.io/zone", "a"}})
      .Node("b1", "cpu=8", {{"topology.kubernetes.io/zone", "b"}})
      .Node("plain", "cpu=8")  // no zone label: a single-zone cluster takes any PV
      .Queue("default")
      .Group("ns/g", "default", 1)
      .StorageClass("zonal", false, "example.com/disk");
  h.Volume("pv-a", "zonal", "10Gi").ChangeVolume("pv-a", [](api::PersistentVolume& pv) {
    pv.metadata.labels["failure-domain.beta.kubernetes.io/zone"] = "a__c";  // beta key, two zones
  });
  h.Claim("ns/data", "zonal", "1Gi", "pv-a");
  h.Pod("ns/p", "g").Request("cpu=1").Claim("data").Add();
  {
    PluginSession s(h, kPredicates);
    CHECK(s.Predicate("ns/p", "a1").ok());
    CHECK(Unresolvable(s.Predicate("ns/p", "b1"), reason::kVolumeZoneConflict));
    CHECK(s.Predicate("ns/p", "plain").ok());
  }
  PluginSession off(h,
                    "- plugins:\n  - name: predicates\n    arguments:\n      "
                    "predicate.VolumeZoneEnable: false\n");
  CHECK(off.Predicate("ns/p", "b1").ok());
}

TEST_CASE("volumes: an unbound WaitForFirstConsumer claim takes the smallest PV that fits") {
  Harness h;
  Cluster(h).Node("n3", "cpu=8");
  h.Volume("pv-big", "local", "100Gi", "n1").Volume("pv-small", "local", "20Gi", "n1");
  h.Volume("pv-tiny", "local", "5Gi", "n1");                     // too small
  h.Volume("pv-rwx", "local", "10Gi", "n2", {"ReadWriteMany"});  // wrong access mode
  h.Volume("pv-other", "other", "50Gi", "n3");                   // another class
  h.Claim("ns/data", "local", "10Gi");
  h.Pod("ns/p", "g").Request("cpu=1").Claim("data").Add();
  PluginSession s(h, kPredicates);
  CHECK(s.Predicate("ns/p", "n1").ok());
  CHECK(Unresolvable(s.Predicate("ns/p", "n2"), reason::kVolumeBindConflict));
  CHECK(Unresolvable(s.Predicate("ns/p", "n3"), reason::kVolumeBindConflict));
  s.Place("ns/p", "n1");
  std::vector<PreBindStep> steps = s.PreBind("ns/p");
  CHECK(VolumeOf(steps) == "pv-small");
  const auto& bind = std::get<BindVolumeStep>(steps[0].what);
  CHECK(bind.claim == "ns/data");
  CHECK(bind.claim_uid == "uid-pvc-ns/data");
  CHECK(steps[0].timeout == std::chrono::seconds(600));
}

TEST_CASE("volumes: a claim's selector and volume mode narrow the PVs it may take") {
  Harness h;
  Cluster(h).Volume("pv-fast", "local", "10Gi", "n1").Volume("pv-slow", "local", "10Gi", "n2");
  h.ChangeVolume("pv-fast",
                 [](api::PersistentVolume& pv) { pv.metadata.labels["speed"] = "fast"; });
  h.ChangeVolume("pv-slow", [](api::PersistentVolume& pv) { pv.spec.volume_mode = "Block"; });
  h.Claim("ns/data", "local", "1Gi").ChangeClaim("ns/data", [](api::PersistentVolumeClaim& c) {
    c.spec.selector = api::LabelSelector{{{"speed", "fast"}}, {}};
  });
  h.Claim("ns/block", "local", "1Gi").ChangeClaim("ns/block", [](api::PersistentVolumeClaim& c) {
    c.spec.volume_mode = "Block";
  });
  h.Pod("ns/p", "g").Request("cpu=1").Claim("data").Add();
  h.Pod("ns/q", "g").Request("cpu=1").Claim("block").Add();
  PluginSession s(h, kPredicates);
  CHECK(s.Predicate("ns/p", "n1").ok());
  CHECK(Unresolvable(s.Predicate("ns/p", "n2"), reason::kVolumeBindConflict));
  CHECK(Unresolvable(s.Predicate("ns/q", "n1"), reason::kVolumeBindConflict));
  CHECK(s.Predicate("ns/q", "n2").ok());
}

TEST_CASE("volumes: without a PV, a class that provisions where its topology allows") {
  Harness h;
  Cluster(h);
  api::TopologySelectorTerm only_n2;
  only_n2.match_label_expressions.push_back({"kubernetes.io/hostname", {"n2"}});
  h.StorageClass("csi", true, "example.com/csi", {only_n2});
  h.Claim("ns/data", "csi", "1Gi");
  h.Pod("ns/p", "g").Request("cpu=1").Claim("data").Add();
  PluginSession s(h, kPredicates);
  CHECK(Unresolvable(s.Predicate("ns/p", "n1"), reason::kVolumeBindConflict));
  CHECK(s.Predicate("ns/p", "n2").ok());
  s.Place("ns/p", "n2");
  std::vector<PreBindStep> steps = s.PreBind("ns/p");
  REQUIRE(steps.size() == 1);
  const auto* provision = std::get_if<ProvisionVolumeStep>(&steps[0].what);
  REQUIRE(provision != nullptr);
  CHECK(provision->claim == "ns/data");
  CHECK(provision->node == "n2");
}

TEST_CASE("volumes: a claim whose node is selected already goes there alone") {
  Harness h;
  Cluster(h).StorageClass("csi", true, "example.com/csi");
  h.Claim("ns/data", "csi", "1Gi").ChangeClaim("ns/data", [](api::PersistentVolumeClaim& c) {
    c.selected_node = "n2";
  });
  h.Pod("ns/p", "g").Request("cpu=1").Claim("data").Add();
  PluginSession s(h, kPredicates);
  CHECK(Unresolvable(s.Predicate("ns/p", "n1"), reason::kVolumeBindConflict));
  CHECK(s.Predicate("ns/p", "n2").ok());
}

TEST_CASE("volumes: two pods of a session never take the same PV") {
  Harness h;
  Cluster(h).Volume("pv-1", "local", "10Gi", "n1");
  h.Claim("ns/a", "local", "1Gi").Claim("ns/b", "local", "1Gi");
  h.Pod("ns/pa", "g").Request("cpu=1").Claim("a").Add();
  h.Pod("ns/pb", "g").Request("cpu=1").Claim("b").Add();
  PluginSession s(h, kPredicates);
  CHECK(s.Predicate("ns/pb", "n1").ok());
  s.Place("ns/pa", "n1");
  CHECK(VolumeOf(s.PreBind("ns/pa")) == "pv-1");
  CHECK(Unresolvable(s.Predicate("ns/pb", "n1"), reason::kVolumeBindConflict));
  s.Unplace("ns/pa");  // taken back: the PV is free again
  CHECK(s.Predicate("ns/pb", "n1").ok());
  s.Place("ns/pb", "n1");
  CHECK(VolumeOf(s.PreBind("ns/pb")) == "pv-1");
}

TEST_CASE("volumes: a claim shared by two pods is decided once, by the first placed") {
  Harness h;
  Cluster(h).Volume("pv-1", "local", "10Gi", "n1").Volume("pv-2", "local", "10Gi", "n2");
  h.Claim("ns/shared", "local", "1Gi", "", {"ReadWriteMany"});
  h.ChangeVolume("pv-1",
                 [](api::PersistentVolume& pv) { pv.spec.access_modes = {"ReadWriteMany"}; });
  h.ChangeVolume("pv-2",
                 [](api::PersistentVolume& pv) { pv.spec.access_modes = {"ReadWriteMany"}; });
  h.Pod("ns/first", "g").Request("cpu=1").Claim("shared").Add();
  h.Pod("ns/second", "g").Request("cpu=1").Claim("shared").Add();
  PluginSession s(h, kPredicates);
  CHECK(s.Predicate("ns/second", "n2").ok());
  s.Place("ns/first", "n1");
  // The claim goes to pv-1, on n1: its other pod must follow it there.
  CHECK(Unresolvable(s.Predicate("ns/second", "n2"), reason::kVolumeBindConflict));
  CHECK(s.Predicate("ns/second", "n1").ok());
  s.Place("ns/second", "n1");
  CHECK(VolumeOf(s.PreBind("ns/first")) == "pv-1");
  CHECK(s.PreBind("ns/second").empty());  // written once, with the first pod
  s.Unplace("ns/first");                  // the second pod now writes it
  CHECK(VolumeOf(s.PreBind("ns/second")) == "pv-1");
}

TEST_CASE("volumes: a ReadWriteOncePod claim another pod uses rules every node out") {
  Harness h;
  Cluster(h).Volume("pv-1", "local", "10Gi");
  h.Claim("ns/solo", "local", "1Gi", "pv-1", {"ReadWriteOncePod"});
  h.ChangeVolume("pv-1",
                 [](api::PersistentVolume& pv) { pv.spec.access_modes = {"ReadWriteOncePod"}; });
  h.Pod("ns/user", "g").Request("cpu=1").Claim("solo").On("n1").Add();
  h.Pod("ns/p", "g").Request("cpu=1").Claim("solo").Add();
  h.Pod("ns/q", "g").Request("cpu=1").Claim("solo").Add();
  {
    PluginSession s(h, kPredicates);
    // Evicting the user would free it: preemption may help.
    CHECK(Fails(s.Predicate("ns/p", "n2"), reason::kReadWriteOncePodConflict,
                Fit::Code::kUnschedulable));
  }
  h.Pod("ns/user", "g").Request("cpu=1").Claim("solo").On("n1", "Succeeded").Add();
  PluginSession s(h, kPredicates);
  CHECK(s.Predicate("ns/p", "n2").ok());
  s.Place("ns/p", "n2");  // now this session's pod holds it
  CHECK(Fails(s.Predicate("ns/q", "n2"), reason::kReadWriteOncePodConflict,
              Fit::Code::kUnschedulable));
  CHECK(s.Predicate("ns/p", "n2").ok());  // not in conflict with itself
}

TEST_CASE("volumes: CSI volumes on a node stay within its CSINode allocatable count") {
  Harness h;
  Cluster(h).StorageClass("csi", false, "example.com/csi");
  for (const char* name : {"pv-1", "pv-2"}) {
    h.Volume(name, "csi", "10Gi").ChangeVolume(name, [&](api::PersistentVolume& pv) {
      pv.spec.csi = api::CsiVolumeSource{"example.com/csi", std::string("handle-") + name};
    });
  }
  h.Claim("ns/one", "csi", "1Gi", "pv-1").Claim("ns/two", "csi", "1Gi", "pv-2");
  h.CsiNode("n1", "example.com/csi", 1).CsiNode("n2", "example.com/csi", 1);
  h.Pod("ns/running", "g").Request("cpu=1").Claim("one").On("n1").Add();
  h.Pod("ns/p", "g").Request("cpu=1").Claim("two").Add();
  h.Pod("ns/same", "g").Request("cpu=1").Claim("one").Add();
  {
    PluginSession s(h, kPredicates);
    CHECK(Fails(s.Predicate("ns/p", "n1"), reason::kMaxVolumeCount, Fit::Code::kUnschedulable));
    CHECK(s.Predicate("ns/p", "n2").ok());
    CHECK(s.Predicate("ns/same", "n1").ok());  // its volume is attached there already
  }
  PluginSession off(h,
                    "- plugins:\n  - name: predicates\n    arguments:\n      "
                    "predicate.NodeVolumeLimitsEnable: false\n");
  CHECK(off.Predicate("ns/p", "n1").ok());
}

TEST_CASE("volumes: a generic ephemeral volume's claim must exist and belong to the pod") {
  Harness h;
  Cluster(h).StorageClass("csi", true, "example.com/csi");
  h.Pod("ns/p", "g").Request("cpu=1").Ephemeral("scratch").Uid("uid-p").Add();
  {
    PluginSession s(h, kPredicates);
    CHECK(Unresolvable(s.Predicate("ns/p", "n1"),
                       "waiting for ephemeral volume controller to create the "
                       "persistentvolumeclaim \"p-scratch\""));
  }
  h.Claim("ns/p-scratch", "csi", "1Gi")
      .ChangeClaim("ns/p-scratch", [](api::PersistentVolumeClaim& c) {
        c.metadata.owner_references.push_back({"v1", "Pod", "p", "someone-else", true, true});
      });
  {
    PluginSession s(h, kPredicates);
    CHECK(Unresolvable(s.Predicate("ns/p", "n1"),
                       "PVC ns/p-scratch was not created for pod ns/p (pod is not owner)"));
  }
  h.ChangeClaim("ns/p-scratch", [](api::PersistentVolumeClaim& c) {
    c.metadata.owner_references[0].uid = "uid-p";
  });
  PluginSession s(h, kPredicates);
  CHECK(s.Predicate("ns/p", "n1").ok());
  s.Place("ns/p", "n1");
  REQUIRE(s.PreBind("ns/p").size() == 1);
}

TEST_CASE("volumes: predicate.VolumeBindingEnable false leaves claims' volumes unchecked") {
  Harness h;
  Cluster(h).Volume("pv-1", "local", "10Gi", "n1").Claim("ns/data", "local", "1Gi", "pv-1");
  h.StorageClass("standard", false).Claim("ns/unbound", "standard", "1Gi");
  h.Pod("ns/p", "g").Request("cpu=1").Claim("data").Claim("unbound").Add();
  PluginSession s(h,
                  "- plugins:\n  - name: predicates\n    arguments:\n      "
                  "predicate.VolumeBindingEnable: false\n");
  CHECK(s.Predicate("ns/p", "n2").ok());
  s.Place("ns/p", "n2");
  CHECK(s.PreBind("ns/p").empty());
}

TEST_CASE("volumes: volumebinding.weight scores nodes by how full their PVs would be") {
  Harness h;
  Cluster(h).Volume("pv-snug", "local", "10Gi", "n1").Volume("pv-roomy", "local", "40Gi", "n2");
  h.Claim("ns/data", "local", "10Gi");
  h.Pod("ns/p", "g").Request("cpu=1").Claim("data").Add();
  {
    PluginSession s(h, kPredicates);  // no weight: no score
    CHECK(s.Scores("ns/p", {"n1", "n2"}) == std::vector<double>{0, 0});
  }
  {
    // The default shape prefers emptier volumes: 100 % full scores 0, 25 % full 7.5 -> 8 (x10).
    PluginSession s(h,
                    "- plugins:\n  - name: predicates\n    arguments:\n      "
                    "volumebinding.weight: 2\n");
    CHECK(s.Scores("ns/p", {"n1", "n2"}) == std::vector<double>{0, 160});
  }
  PluginSession s(h,
                  "- plugins:\n  - name: predicates\n    arguments:\n      "
                  "volumebinding.weight: 1\n      volumebinding.shape: \"0:0,100:10\"\n");
  CHECK(s.Scores("ns/p", {"n1", "n2"}) == std::vector<double>{100, 30});
}

TEST_CASE("volumes: volumebinding arguments are read, a bad shape is named and ignored") {
  Registry registry;
  REQUIRE(RegisterBuiltins(registry).ok());
  auto conf = ParseSchedulerConf(
      "actions: allocate\ntiers:\n- plugins:\n  - name: predicates\n    arguments:\n"
      "      predicate.VolumeBindingEnable: true\n      volumebinding.bindTimeoutSeconds: 30\n"
      "      volumebinding.weight: 1\n      volumebinding.shape: \"50:1,10:2\"\n",
      registry.Names());
  REQUIRE(conf.ok());
  std::vector<std::string> problems = registry.ArgumentProblems(*conf);
  REQUIRE(problems.size() == 1);
  CHECK_THAT(problems[0], Catch::Contains("volumebinding.shape: expected utilisation:score pairs"));
}

}  // namespace
}  // namespace tephra::scheduler::testing
