// KubeBinder over the fake API server: assume-then-bind, rollback and the FailedScheduling
// event when a bind fails, the client's retries of throttled binds, eviction (DisruptionTarget
// condition, then a delete guarded by the pod's uid), the binder's metrics, and units whose
// volume steps are written, waited for and undone before any of their pods is bound.
#include "scheduler/binder/binder.h"

#include <algorithm>
#include <functional>
#include <thread>

#include <catch2/catch.hpp>
#include <rapidjson/document.h>

#include "json/json.h"
#include "tests/unit/scheduler/fake_api.h"
#include "tests/unit/scheduler/harness.h"

namespace tephra::scheduler::testing {
namespace {

const char kPods[] = "/api/v1/namespaces/ns/pods";

struct BinderFixture : FakeApi {
  BinderFixture() {
    h.Node("n1", "cpu=8")
        .Node("n2", "cpu=8")
        .Queue("default")
        .Group("ns/g", "default", 1, "Running");
  }

  // A pod both in the API server and in the scheduler's cache, with the uid the server gave it.
  std::string Pod(const std::string& name, const std::string& node = "",
                  bool implicit_group = false) {
    std::string spec = node.empty() ? "{}" : R"({"nodeName":")" + node + R"("})";
    std::string stored =
        fake->Put(kPods, R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
                             R"("},"spec":)" + spec + "}");
    json::Document doc;
    REQUIRE(json::Parse(stored, &doc).ok());
    json::Errors errors;
    std::string uid = json::Reader(&doc, &errors)["metadata"]["uid"].String();
    auto b = h.Pod("ns/" + name, "g").Request("cpu=1").Uid(uid);
    if (!node.empty()) b.On(node);
    if (implicit_group) b.ImplicitGroup();
    b.Add();
    return uid;
  }

  const TaskInfo& Task(const std::string& uid) { return h.cache().Job("ns/g")->tasks.at(uid); }
  // Binds one pod, with `steps` first, as a committed statement of one task would.
  void Bind(const std::string& uid, const std::string& node, std::vector<PreBindStep> steps = {}) {
    BindUnit unit;
    unit.binds.push_back({&Task(uid), node, std::move(steps)});
    Binder().Bind(unit);
  }
  TaskStatus StatusOf(const std::string& uid) { return Task(uid).status; }

  KubeBinder& Binder() {
    if (!binder)
      binder = std::make_unique<KubeBinder>(client, h.cache(), &events, &registry,
                                            BinderOptions{2, true, std::chrono::milliseconds(10)});
    return *binder;
  }

  Harness h;
  std::unique_ptr<KubeBinder> binder;
};

TEST_CASE("binder: a bind is assumed in the cache at once, then posted as a Binding") {
  BinderFixture f;
  std::string uid = f.Pod("p");
  f.Bind(uid, "n1");
  // Assumed before the request is answered: the next session sees the pod on n1.
  CHECK(f.h.cache().Node("n1")->tasks.count(uid) == 1);
  REQUIRE(f.Binder().Drain(kWait));
  CHECK(f.Requests("POST /api/v1/namespaces/ns/pods/p/binding") == 1);
  CHECK(f.fake->Object(kPods, "p")->find(R"("nodeName":"n1")") != std::string::npos);
  CHECK(f.StatusOf(uid) == TaskStatus::kBinding);
  CHECK(f.Binder().bound() == 1);
  CHECK(f.Binder().failed() == 0);
  CHECK(f.HasMetric("tephra_pods_bound_total 1"));
  CHECK(f.HasMetric("tephra_bind_errors_total 0"));
  CHECK(f.Events().find("Successfully assigned ns/p to n1") != std::string::npos);
}

TEST_CASE("binder: a pod that names no group gets its group's name in the binding itself") {
  BinderFixture f;
  std::string implicit = f.Pod("bare", "", true);
  std::string named = f.Pod("named");
  f.Bind(implicit, "n1");
  f.Bind(named, "n2");
  REQUIRE(f.Binder().Drain(kWait));
  // The API server copies a binding's annotations to the pod: one write, no patch.
  CHECK(f.fake->Object(kPods, "bare")->find(R"("scheduling.k8s.io/group-name":"g")") !=
        std::string::npos);
  CHECK(f.fake->Object(kPods, "named")->find("group-name") == std::string::npos);
  CHECK(f.Requests("PATCH /api/v1/namespaces/ns/pods/bare") == 0);
}

TEST_CASE("binder: a conflicting bind is rolled back, so the next session places the pod again") {
  BinderFixture f;
  std::string uid = f.Pod("p");
  f.fake->FailNext(1, 409, "POST");
  f.Bind(uid, "n1");
  REQUIRE(f.Binder().Drain(kWait));
  CHECK(f.StatusOf(uid) == TaskStatus::kPending);
  CHECK(f.h.cache().Node("n1")->tasks.count(uid) == 0);
  CHECK(f.Binder().failed() == 1);
  CHECK(f.HasMetric("tephra_bind_errors_total 1"));
  CHECK(f.Events().find("FailedScheduling") != std::string::npos);
  // The retry: a later session binds it again and this time it goes through.
  f.Bind(uid, "n2");
  REQUIRE(f.Binder().Drain(kWait));
  CHECK(f.StatusOf(uid) == TaskStatus::kBinding);
  CHECK(f.fake->Object(kPods, "p")->find(R"("nodeName":"n2")") != std::string::npos);
  CHECK(f.Binder().bound() == 1);
}

TEST_CASE(
    "binder: a server error is not retried blindly (a bind is not idempotent) and is rolled back") {
  BinderFixture f;
  std::string uid = f.Pod("p");
  f.fake->FailNext(1, 500, "POST");
  f.Bind(uid, "n1");
  REQUIRE(f.Binder().Drain(kWait));
  CHECK(f.Requests("POST /api/v1/namespaces/ns/pods/p/binding") == 1);
  CHECK(f.StatusOf(uid) == TaskStatus::kPending);
  CHECK(f.Binder().failed() == 1);
}

TEST_CASE("binder: a throttled bind is retried by the client and succeeds") {
  BinderFixture f;
  std::string uid = f.Pod("p");
  f.fake->FailNext(2, 429, "POST");
  f.Bind(uid, "n1");
  REQUIRE(f.Binder().Drain(kWait));
  CHECK(f.Requests("POST /api/v1/namespaces/ns/pods/p/binding") == 3);
  CHECK(f.StatusOf(uid) == TaskStatus::kBinding);
  CHECK(f.Binder().bound() == 1);
  CHECK(f.HasMetric("tephra_bind_errors_total 0"));
}

TEST_CASE("binder: a pod deleted before its bind is forgotten without a FailedScheduling event") {
  BinderFixture f;
  std::string uid = f.Pod("p");
  f.fake->Remove(kPods, "p");
  f.Bind(uid, "n1");
  REQUIRE(f.Binder().Drain(kWait));
  CHECK(f.StatusOf(uid) == TaskStatus::kPending);
  CHECK(f.Binder().failed() == 1);
  CHECK(f.Events().find("FailedScheduling") == std::string::npos);
}

TEST_CASE("binder: an eviction marks the pod, says why, then deletes it by uid") {
  BinderFixture f;
  std::string uid = f.Pod("victim", "n1");
  f.Binder().Evict(f.Task(uid), "preempted by ns/urgent");
  CHECK(f.StatusOf(uid) == TaskStatus::kReleasing);  // at once, for the next session
  REQUIRE(f.Binder().Drain(kWait));
  auto requests = f.fake->requests();
  auto patch =
      std::find(requests.begin(), requests.end(), "PATCH /api/v1/namespaces/ns/pods/victim/status");
  auto del =
      std::find(requests.begin(), requests.end(), "DELETE /api/v1/namespaces/ns/pods/victim");
  REQUIRE(patch != requests.end());
  REQUIRE(del != requests.end());
  CHECK(patch < del);  // the DisruptionTarget condition first
  CHECK_FALSE(f.fake->Object(kPods, "victim").has_value());
  CHECK(f.HasMetric("volcano_pod_preemption_victims 1"));
  std::string events = f.Events();
  CHECK(events.find(R"("reason":"Evicted")") != std::string::npos);
  CHECK(events.find(R"("kind":"PodGroup")") != std::string::npos);
  CHECK(events.find("preempted by ns/urgent") != std::string::npos);
}

TEST_CASE("binder: an eviction never deletes a pod recreated under the same name") {
  BinderFixture f;
  std::string uid = f.Pod("victim", "n1");
  f.fake->Remove(kPods, "victim");
  f.fake->Put(
      kPods,
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"victim"},"spec":{"nodeName":"n1"}})");
  f.Binder().Evict(f.Task(uid), "preempted");
  REQUIRE(f.Binder().Drain(kWait));
  CHECK(f.fake->Object(kPods, "victim").has_value());  // the uid precondition failed
  CHECK(f.HasMetric("volcano_pod_preemption_victims 0"));
}

// ---- units with volume steps ----

const char kVolumes[] = "/api/v1/persistentvolumes";
const char kClaims[] = "/api/v1/namespaces/ns/persistentvolumeclaims";

// A PV and a claim both in the API server and in the cache (as the informers would show them),
// with the uid and resourceVersion the server gave them.
struct VolumeFixture : BinderFixture {
  VolumeFixture() { h.StorageClass("local").StorageClass("csi", true, "example.com/csi"); }

  std::string Field(const std::string& stored, const char* section, const char* field) {
    json::Document doc;
    REQUIRE(json::Parse(stored, &doc).ok());
    json::Errors errors;
    return json::Reader(&doc, &errors)[section][field].String();
  }

  // Stores PV `name`; returns its resourceVersion.
  std::string Volume(const std::string& name) {
    std::string stored = fake->Put(kVolumes, R"({"apiVersion":"v1","kind":"PersistentVolume",)"
                                             R"("metadata":{"name":")" +
                                                 name +
                                                 R"("},)"
                                                 R"("spec":{"storageClassName":"local"},)"
                                                 R"("status":{"phase":"Available"}})");
    std::string rv = Field(stored, "metadata", "resourceVersion");
    h.Volume(name, "local", "10Gi").ChangeVolume(name, [&](api::PersistentVolume& pv) {
      pv.metadata.resource_version = rv;
    });
    return rv;
  }

  // Stores claim "ns/name"; the step that gives it `volume` (provisions on `node` when "").
  PreBindStep Claim(const std::string& name, const std::string& volume, const std::string& node,
                    std::chrono::seconds timeout = std::chrono::seconds(30)) {
    std::string stored = fake->Put(kClaims, R"({"apiVersion":"v1","kind":"PersistentVolumeClaim",)"
                                            R"("metadata":{"name":")" +
                                                name +
                                                R"("},)"
                                                R"("spec":{"storageClassName":"csi"}})");
    std::string uid = Field(stored, "metadata", "uid");
    std::string rv = Field(stored, "metadata", "resourceVersion");
    h.Claim("ns/" + name, "csi", "1Gi")
        .ChangeClaim("ns/" + name, [&](api::PersistentVolumeClaim& c) {
          c.metadata.uid = uid;
          c.metadata.resource_version = rv;
        });
    PreBindStep step;
    step.timeout = timeout;
    if (volume.empty()) {
      step.what = ProvisionVolumeStep{"ns/" + name, uid, rv, node};
    } else {
      auto pv = h.cache().ObservedVolume(volume);
      step.what = BindVolumeStep{"ns/" + name, uid, rv, volume, pv->metadata.resource_version};
    }
    return step;
  }

  // What the PV controller does once it bound claim `name` to `volume`, as the informers show.
  void ControllerBinds(const std::string& name, const std::string& volume) {
    h.ChangeClaim("ns/" + name, [&](api::PersistentVolumeClaim& c) {
      c.spec.volume_name = volume;
      c.bind_completed = true;
      c.metadata.resource_version = "9" + c.metadata.resource_version;
    });
  }

  void Bind(BindUnit unit) { Binder().Bind(unit); }
  BindRequest Request(const std::string& uid, const std::string& node,
                      std::vector<PreBindStep> steps) {
    return {&Task(uid), node, std::move(steps)};
  }

  // Polls `done` until it holds (the binder works on its own threads).
  static bool Eventually(const std::function<bool()>& done) {
    auto until = std::chrono::steady_clock::now() + kWait;
    while (!done()) {
      if (std::chrono::steady_clock::now() > until) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
  }
};

TEST_CASE(
    "binder: a static volume is bound to its claim before the pod, as the PV controller "
    "expects") {
  VolumeFixture f;
  f.Volume("pv-1");
  PreBindStep step = f.Claim("data", "pv-1", "");
  std::string uid = f.Pod("p");
  f.Bind(BindUnit{{f.Request(uid, "n1", {step})}});
  REQUIRE(VolumeFixture::Eventually(
      [&] { return f.Requests("PATCH /api/v1/persistentvolumes/pv-1") == 1; }));
  std::string pv = *f.fake->Object(kVolumes, "pv-1");
  CHECK(pv.find(R"("claimRef":{"kind":"PersistentVolumeClaim","namespace":"ns","name":"data",)") !=
        std::string::npos);
  CHECK(pv.find(R"("pv.kubernetes.io/bound-by-controller":"yes")") != std::string::npos);
  // The claim is not bound yet: neither is the pod, though the cache holds both for it.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(f.Requests("POST /api/v1/namespaces/ns/pods/p/binding") == 0);
  CHECK(f.StatusOf(uid) == TaskStatus::kBinding);
  CHECK(f.h.cache().TakeSnapshot()->storage->Volume("pv-1")->spec.claim_ref);
  f.ControllerBinds("data", "pv-1");
  REQUIRE(f.Binder().Drain(kWait));
  CHECK(f.Requests("POST /api/v1/namespaces/ns/pods/p/binding") == 1);
  CHECK(f.Binder().bound() == 1);
}

TEST_CASE("binder: provisioning selects the node on the claim, then waits for the provisioner") {
  VolumeFixture f;
  PreBindStep step = f.Claim("data", "", "n2");
  std::string uid = f.Pod("p");
  f.Bind(BindUnit{{f.Request(uid, "n2", {step})}});
  REQUIRE(VolumeFixture::Eventually(
      [&] { return f.Requests("PATCH " + std::string(kClaims) + "/data") == 1; }));
  CHECK(f.fake->Object(kClaims, "data")->find(R"("volume.kubernetes.io/selected-node":"n2")") !=
        std::string::npos);
  f.h.ChangeClaim("ns/data", [](api::PersistentVolumeClaim& c) {  // the informer's echo
    c.selected_node = "n2";
    c.metadata.resource_version = "echoed";
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(f.Requests("POST /api/v1/namespaces/ns/pods/p/binding") == 0);
  f.ControllerBinds("data", "pvc-provisioned");
  REQUIRE(f.Binder().Drain(kWait));
  CHECK(f.Binder().bound() == 1);
}

TEST_CASE("binder: a provisioner that gives the node back fails the unit and binds no pod") {
  VolumeFixture f;
  PreBindStep step = f.Claim("data", "", "n2");
  std::string uid = f.Pod("p");
  f.Bind(BindUnit{{f.Request(uid, "n2", {step})}});
  REQUIRE(VolumeFixture::Eventually(
      [&] { return f.Requests("PATCH " + std::string(kClaims) + "/data") == 1; }));
  // The provisioner cannot provision there: it removes the annotation.
  f.h.ChangeClaim("ns/data", [](api::PersistentVolumeClaim& c) {
    c.selected_node.clear();
    c.metadata.resource_version = "given-back";
  });
  REQUIRE(f.Binder().Drain(kWait));
  CHECK(f.Requests("POST /api/v1/namespaces/ns/pods/p/binding") == 0);
  CHECK(f.StatusOf(uid) == TaskStatus::kPending);
  CHECK(f.Binder().failed() == 1);
  CHECK(f.h.cache().TakeSnapshot()->storage->Claim("ns", "data")->selected_node.empty());
  CHECK(f.Events().find("binding volumes: provisioning failed for claim ns/data on node n2") !=
        std::string::npos);
}

TEST_CASE("binder: a step not complete in time is undone, and its pod waits for the next session") {
  VolumeFixture f;
  f.Volume("pv-1");
  PreBindStep step = f.Claim("data", "pv-1", "", std::chrono::seconds(1));
  std::string uid = f.Pod("p");
  f.Bind(BindUnit{{f.Request(uid, "n1", {step})}});
  REQUIRE(f.Binder().Drain(kWait));  // about a second: nobody binds the claim
  CHECK(f.Requests("POST /api/v1/namespaces/ns/pods/p/binding") == 0);
  CHECK(f.StatusOf(uid) == TaskStatus::kPending);
  // The claimRef it set is taken back: the PV is free for whoever comes next.
  CHECK(f.Requests("PATCH /api/v1/persistentvolumes/pv-1") == 2);
  CHECK(f.fake->Object(kVolumes, "pv-1")->find("claimRef") == std::string::npos);
  CHECK_FALSE(f.h.cache().TakeSnapshot()->storage->Volume("pv-1")->spec.claim_ref);
  CHECK(f.Events().find("binding volumes: timed out waiting to bind PersistentVolume pv-1 to "
                        "claim ns/data") != std::string::npos);
}

TEST_CASE("binder: a gang whose last member's volume fails leaves no member bound") {
  VolumeFixture f;
  f.Volume("pv-1");
  f.Volume("pv-2");
  PreBindStep first = f.Claim("a", "pv-1", "");
  PreBindStep second = f.Claim("b", "pv-2", "");
  std::string p1 = f.Pod("p1");
  std::string p2 = f.Pod("p2");
  f.fake->Remove(kVolumes, "pv-2");  // the first write goes through, the second cannot
  f.Bind(BindUnit{{f.Request(p1, "n1", {first}), f.Request(p2, "n2", {second})}});
  REQUIRE(f.Binder().Drain(kWait));
  CHECK(f.Requests("POST /api/v1/namespaces/ns/pods/p1/binding") == 0);
  CHECK(f.Requests("POST /api/v1/namespaces/ns/pods/p2/binding") == 0);
  CHECK(f.StatusOf(p1) == TaskStatus::kPending);
  CHECK(f.StatusOf(p2) == TaskStatus::kPending);
  CHECK(f.Binder().failed() == 2);
  // What the first member's step wrote is taken back.
  CHECK(f.Requests("PATCH /api/v1/persistentvolumes/pv-1") == 2);
  CHECK(f.fake->Object(kVolumes, "pv-1")->find("claimRef") == std::string::npos);
}

}  // namespace
}  // namespace tephra::scheduler::testing
