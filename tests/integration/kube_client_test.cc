// kube::Client against the real kube-apiserver: every verb, error mapping, pagination,
// watches, subresources and RBAC denials.
#include "tests/support/kube_client.h"

#include <atomic>
#include <set>
#include <thread>

#include <catch2/catch.hpp>
#include <rapidjson/document.h>

#include "kube/client.h"
#include "kube/config.h"
#include "kube/events.h"
#include "tests/support/cluster.h"

namespace tephra::kube {
namespace {

using testing::ClusterEnv;
using testing::Kubectl;
using testing::TestNamespace;

std::shared_ptr<Client> ClientFor(const std::string& kubeconfig, double qps = 500) {
  StatusOr<std::shared_ptr<Client>> client = testing::KubeClientFor(kubeconfig, qps);
  REQUIRE(client.ok());
  return *client;
}

std::string FieldOf(const std::string& json, const char* a, const char* b = nullptr,
                    const char* c = nullptr) {
  json::Document doc;
  REQUIRE(json::Parse(json, &doc).ok());
  json::Errors errors;
  json::Reader r(&doc, &errors);
  r = r[a];
  if (b) r = r[b];
  if (c) r = r[c];
  return r.is_string() ? r.String() : json::Write(*r.value());
}

std::string ConfigMap(const std::string& name, const std::string& value) {
  return R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")" + name +
         R"("},"data":{"key":")" + value + R"("}})";
}

TEST_CASE("ConfigMap CRUD with every patch type") {
  const ClusterEnv& env = ClusterEnv::Get();
  Kubectl kubectl(env.kubeconfig);
  TestNamespace ns(kubectl, "kc-crud");
  auto client = ClientFor(env.kubeconfig);
  const Resource& cm = resources::kConfigMaps;

  StatusOr<std::string> created = client->Create(cm, ns.name(), ConfigMap("a", "1"));
  REQUIRE(created.ok());
  CHECK(FieldOf(*created, "data", "key") == "1");
  std::string rv = FieldOf(*created, "metadata", "resourceVersion");
  std::string uid = FieldOf(*created, "metadata", "uid");

  StatusOr<std::string> again = client->Create(cm, ns.name(), ConfigMap("a", "1"));
  CHECK(again.status().code() == StatusCode::kAlreadyExists);

  StatusOr<std::string> got = client->Get(cm, ns.name(), "a");
  REQUIRE(got.ok());
  CHECK(FieldOf(*got, "metadata", "uid") == uid);

  // Update with the current resourceVersion succeeds; with the stale one it conflicts.
  std::string body = R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a",
      "resourceVersion":")" +
                     rv + R"("},"data":{"key":"2"}})";
  StatusOr<std::string> updated = client->Update(cm, ns.name(), "a", body);
  REQUIRE(updated.ok());
  CHECK(FieldOf(*updated, "data", "key") == "2");
  StatusOr<std::string> stale = client->Update(cm, ns.name(), "a", body);
  CHECK(stale.status().code() == StatusCode::kConflict);
  CHECK(stale.status().message().find("the object has been modified") != std::string::npos);

  auto merge = client->Patch(cm, ns.name(), "a", PatchType::kMerge, R"({"data":{"m":"x"}})");
  REQUIRE(merge.ok());
  CHECK(FieldOf(*merge, "data", "m") == "x");
  auto strategic = client->Patch(cm, ns.name(), "a", PatchType::kStrategicMerge,
                                 R"({"metadata":{"labels":{"s":"y"}}})");
  REQUIRE(strategic.ok());
  CHECK(FieldOf(*strategic, "metadata", "labels", "s") == "y");
  auto jsonpatch = client->Patch(cm, ns.name(), "a", PatchType::kJsonPatch,
                                 R"([{"op":"replace","path":"/data/key","value":"3"}])");
  REQUIRE(jsonpatch.ok());
  CHECK(FieldOf(*jsonpatch, "data", "key") == "3");
  PatchOptions apply;
  apply.field_manager = "tephra-test";
  apply.force = true;
  auto applied = client->Patch(cm, ns.name(), "a", PatchType::kApply,
                               R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},
                                   "data":{"applied":"yes"}})",
                               apply);
  REQUIRE(applied.ok());
  CHECK(FieldOf(*applied, "data", "applied") == "yes");
  CHECK(FieldOf(*applied, "data", "key") == "3");
  auto no_manager = client->Patch(cm, ns.name(), "a", PatchType::kApply, "{}");
  CHECK(no_manager.status().code() == StatusCode::kInvalidArgument);

  // Delete with a wrong UID precondition is refused; with the right one it succeeds.
  DeleteOptions wrong;
  wrong.precondition_uid = "00000000-0000-0000-0000-000000000000";
  CHECK(client->Delete(cm, ns.name(), "a", wrong).code() == StatusCode::kConflict);
  DeleteOptions right;
  right.precondition_uid = uid;
  CHECK(client->Delete(cm, ns.name(), "a", right).ok());
  CHECK(client->Get(cm, ns.name(), "a").status().code() == StatusCode::kNotFound);
  CHECK(client->Delete(cm, ns.name(), "a").code() == StatusCode::kNotFound);
}

TEST_CASE("an invalid object is rejected with the server's field message") {
  const ClusterEnv& env = ClusterEnv::Get();
  Kubectl kubectl(env.kubeconfig);
  TestNamespace ns(kubectl, "kc-invalid");
  auto client = ClientFor(env.kubeconfig);
  StatusOr<std::string> r =
      client->Create(resources::kConfigMaps, ns.name(), ConfigMap("Not_A_Valid_Name", "x"));
  CHECK(r.status().code() == StatusCode::kInvalid);
  CHECK(r.status().message().find("metadata.name") != std::string::npos);
}

TEST_CASE("LIST pages through 2,000 objects exactly once each") {
  const ClusterEnv& env = ClusterEnv::Get();
  Kubectl kubectl(env.kubeconfig);
  TestNamespace ns(kubectl, "kc-list");
  auto client = ClientFor(env.kubeconfig, 2000);
  constexpr int kCount = 2000;
  std::atomic<int> next{0};
  std::atomic<int> failures{0};
  std::vector<std::thread> writers;
  for (int t = 0; t < 8; ++t) {
    writers.emplace_back([&] {
      for (int i = next++; i < kCount; i = next++) {
        if (!client
                 ->Create(resources::kConfigMaps, ns.name(),
                          ConfigMap("cm-" + std::to_string(i), "v"))
                 .ok()) {
          ++failures;
        }
      }
    });
  }
  for (auto& w : writers) w.join();
  REQUIRE(failures == 0);

  std::set<std::string> seen;
  int pages = 0;
  ListOptions options;
  options.limit = 300;
  while (true) {
    StatusOr<ListPage> page = client->List(resources::kConfigMaps, ns.name(), options);
    REQUIRE(page.ok());
    ++pages;
    for (size_t i = 0; i < page->size(); ++i) {
      json::Errors e;
      std::string name = json::Reader(&page->item(i), &e)["metadata"]["name"].String();
      CHECK(seen.insert(name).second);
    }
    if (page->continue_token().empty()) break;
    options.continue_token = page->continue_token();
  }
  // kube-root-ca.crt is created in every namespace by kube-controller-manager.
  seen.erase("kube-root-ca.crt");
  CHECK(seen.size() == kCount);
  CHECK(pages >= kCount / 300);

  size_t via_list_all = 0;
  ListOptions all;
  all.limit = 450;
  StatusOr<std::string> rv =
      client->ListAll(resources::kConfigMaps, ns.name(), all, [&](const json::Value&) {
        ++via_list_all;
        return Status::Ok();
      });
  REQUIRE(rv.ok());
  CHECK_FALSE(rv->empty());
  CHECK(via_list_all >= kCount);
}

TEST_CASE("a watch delivers added, modified and deleted events in order") {
  const ClusterEnv& env = ClusterEnv::Get();
  Kubectl kubectl(env.kubeconfig);
  TestNamespace ns(kubectl, "kc-watch");
  auto client = ClientFor(env.kubeconfig);
  StatusOr<ListPage> start = client->List(resources::kConfigMaps, ns.name());
  REQUIRE(start.ok());
  WatchOptions wo;
  wo.resource_version = start->resource_version();
  wo.timeout_seconds = 30;
  auto watch = client->StartWatch(resources::kConfigMaps, ns.name(), wo);
  REQUIRE(watch.ok());

  REQUIRE(client->Create(resources::kConfigMaps, ns.name(), ConfigMap("w", "1")).ok());
  REQUIRE(client
              ->Patch(resources::kConfigMaps, ns.name(), "w", PatchType::kMerge,
                      R"({"data":{"key":"2"}})")
              .ok());
  REQUIRE(client->Delete(resources::kConfigMaps, ns.name(), "w").ok());

  std::vector<std::string> seen;
  while (seen.size() < 3) {
    auto ev = (*watch)->Next();
    REQUIRE(ev.ok());
    REQUIRE(ev->has_value());
    if ((*ev)->type == WatchEventType::kBookmark) continue;
    json::Errors e;
    json::Reader obj(&(*ev)->object(), &e);
    if (obj["metadata"]["name"].String() != "w") continue;
    seen.push_back(std::string(WatchEventTypeName((*ev)->type)) + ":" +
                   obj["data"]["key"].String());
  }
  CHECK(seen == std::vector<std::string>{"ADDED:1", "MODIFIED:2", "DELETED:2"});

  // Stop() from another thread unblocks a waiting Next(). Events already in flight (the
  // namespace's kube-root-ca.crt, bookmarks) may still come first; the stream must end after them.
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    (*watch)->Stop();
  });
  auto ev = (*watch)->Next();
  for (int drained = 0; ev.ok() && ev->has_value() && drained < 16; ++drained) {
    ev = (*watch)->Next();
  }
  stopper.join();
  CHECK_FALSE(ev.ok());
}

TEST_CASE("a watch from a compacted resourceVersion fails with Gone") {
  const ClusterEnv& env = ClusterEnv::Get();
  Kubectl kubectl(env.kubeconfig);
  TestNamespace ns(kubectl, "kc-gone");
  auto client = ClientFor(env.kubeconfig);
  auto first = client->Create(resources::kConfigMaps, ns.name(), ConfigMap("g", "1"));
  REQUIRE(first.ok());
  std::string old_rv = FieldOf(*first, "metadata", "resourceVersion");
  REQUIRE(client
              ->Patch(resources::kConfigMaps, ns.name(), "g", PatchType::kMerge,
                      R"({"data":{"key":"2"}})")
              .ok());
  // One more write, so the compaction lands past the first change: a watch from old_rv starts
  // at that change, and etcd keeps the compaction revision itself (watching from it would fail
  // with "PrevKv=nil", a 500, instead of the 410 under test).
  REQUIRE(client->Create(resources::kConfigMaps, ns.name(), ConfigMap("h", "1")).ok());
  REQUIRE(testing::CompactEtcd().ok());
  WatchOptions wo;
  wo.resource_version = old_rv;
  wo.timeout_seconds = 5;
  auto watch = client->StartWatch(resources::kConfigMaps, ns.name(), wo);
  // The server either refuses at once or sends an ERROR event with code 410.
  if (watch.ok()) {
    auto ev = (*watch)->Next();
    REQUIRE_FALSE(ev.ok());
    CHECK(ev.status().code() == StatusCode::kGone);
  } else {
    CHECK(watch.status().code() == StatusCode::kGone);
  }
}

TEST_CASE("custom resources: CRD, CRUD and the status subresource") {
  const ClusterEnv& env = ClusterEnv::Get();
  Kubectl kubectl(env.kubeconfig);
  auto client = ClientFor(env.kubeconfig);
  const std::string group = "kc" + testing::RandomSuffix() + ".tests.tephra.dev";
  std::string crd = R"({"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
    "metadata":{"name":"widgets.)" +
                    group + R"("},
    "spec":{"group":")" +
                    group + R"(","scope":"Namespaced",
      "names":{"plural":"widgets","singular":"widget","kind":"Widget"},
      "versions":[{"name":"v1","served":true,"storage":true,"subresources":{"status":{}},
        "schema":{"openAPIV3Schema":{"type":"object","properties":{
          "spec":{"type":"object","properties":{"size":{"type":"integer","minimum":0}}},
          "status":{"type":"object","properties":{"phase":{"type":"string"}}}}}}}]}})";
  REQUIRE(client->Create(resources::kCustomResourceDefinitions, "", crd).ok());
  struct Cleanup {
    std::shared_ptr<Client> c;
    std::string name;
    ~Cleanup() { (void)c->Delete(resources::kCustomResourceDefinitions, "", name); }
  } cleanup{client, "widgets." + group};
  REQUIRE(testing::Eventually(
      [&] {
        auto got = client->Get(resources::kCustomResourceDefinitions, "", "widgets." + group);
        return got.ok() &&
               got->find(R"("type":"Established","status":"True")") != std::string::npos;
      },
      std::chrono::seconds(30)));

  Resource widgets{group, "v1", "widgets", true, "Widget"};
  TestNamespace ns(kubectl, "kc-crd");
  std::string w = R"({"apiVersion":")" + group + R"(/v1","kind":"Widget",
      "metadata":{"name":"w1"},"spec":{"size":3},"status":{"phase":"ignored"}})";
  // Establishment is observed by the discovery cache a little later than the condition.
  StatusOr<std::string> created = InvalidArgument("not tried");
  REQUIRE(testing::Eventually(
      [&] {
        created = client->Create(widgets, ns.name(), w);
        return created.ok();
      },
      std::chrono::seconds(20)));
  CHECK(FieldOf(*created, "spec", "size") == "3");
  // With a status subresource, status in a create is dropped.
  CHECK(created->find("ignored") == std::string::npos);

  auto status = client->Patch(widgets, ns.name(), "w1", PatchType::kMerge,
                              R"({"status":{"phase":"Ready"}})", {}, "status");
  REQUIRE(status.ok());
  CHECK(FieldOf(*status, "status", "phase") == "Ready");
  auto bad = client->Patch(widgets, ns.name(), "w1", PatchType::kMerge, R"({"spec":{"size":-1}})");
  CHECK(bad.status().code() == StatusCode::kInvalid);
  CHECK(bad.status().message().find("spec.size") != std::string::npos);
  CHECK(client->Delete(widgets, ns.name(), "w1").ok());
}

TEST_CASE("pods/binding binds through a subresource") {
  const ClusterEnv& env = ClusterEnv::Get();
  Kubectl kubectl(env.kubeconfig);
  TestNamespace ns(kubectl, "kc-bind");
  auto client = ClientFor(env.kubeconfig);
  std::string node = kubectl.MustRun(
      {"get", "nodes", "-l", "type=kwok", "-o", "jsonpath={.items[0].metadata.name}"});
  REQUIRE_FALSE(node.empty());
  REQUIRE(client
              ->Create(resources::kPods, ns.name(), R"({"apiVersion":"v1","kind":"Pod",
      "metadata":{"name":"p"},"spec":{"schedulerName":"tephra-test",
      "containers":[{"name":"c","image":"busybox"}]}})")
              .ok());
  auto bound = client->CreateSubresource(resources::kPods, ns.name(), "p", "binding",
                                         R"({"apiVersion":"v1","kind":"Binding",
      "metadata":{"name":"p"},"target":{"apiVersion":"v1","kind":"Node","name":")" +
                                             node + R"("}})");
  REQUIRE(bound.ok());
  auto pod = client->Get(resources::kPods, ns.name(), "p");
  REQUIRE(pod.ok());
  CHECK(FieldOf(*pod, "spec", "nodeName") == node);
  // Binding twice is refused by the server.
  auto twice = client->CreateSubresource(resources::kPods, ns.name(), "p", "binding",
                                         R"({"apiVersion":"v1","kind":"Binding",
      "metadata":{"name":"p"},"target":{"apiVersion":"v1","kind":"Node","name":")" +
                                             node + R"("}})");
  CHECK(twice.status().code() == StatusCode::kConflict);
}

TEST_CASE("an RBAC-forbidden request carries the server's message") {
  const ClusterEnv& env = ClusterEnv::Get();
  // The scheduler identity has no RBAC until the chart grants it some.
  auto client = ClientFor(env.kubeconfig_scheduler);
  StatusOr<ListPage> secrets = client->List(resources::kSecrets, "kube-system");
  REQUIRE_FALSE(secrets.ok());
  CHECK(secrets.status().code() == StatusCode::kForbidden);
  CHECK(secrets.status().message().find("cannot list resource \"secrets\"") != std::string::npos);
  CHECK(secrets.status().message().find("system:serviceaccount:") != std::string::npos);
}

TEST_CASE("a kubeconfig pointing at nothing fails fast with Unavailable") {
  RestConfig cfg;
  cfg.server = "https://127.0.0.1:1";
  cfg.timeout = std::chrono::milliseconds(2000);
  auto transport = NewHttpTransport(cfg);
  REQUIRE(transport.ok());
  ClientOptions options;
  options.max_retries = 1;
  options.retry_base_delay = std::chrono::milliseconds(10);
  Client client(*transport, options);
  auto r = client.Get(resources::kNodes, "", "x");
  CHECK(r.status().code() == StatusCode::kUnavailable);
}

}  // namespace
}  // namespace tephra::kube

namespace tephra::kube {
namespace {

TEST_CASE("recorded events show up in kubectl describe") {
  const ClusterEnv& env = ClusterEnv::Get();
  Kubectl kubectl(env.kubeconfig);
  TestNamespace ns(kubectl, "kc-events");
  auto client = ClientFor(env.kubeconfig);
  auto created = client->Create(resources::kConfigMaps, ns.name(), ConfigMap("subject", "1"));
  REQUIRE(created.ok());
  json::Document doc;
  REQUIRE(json::Parse(*created, &doc).ok());
  json::Errors errors;
  RawObject obj;
  DecodeObjectHeader(json::Reader(&doc, &errors), &obj);
  EventRecorder recorder(client, {"tephra-test", "host"});
  for (int i = 0; i < 3; ++i) {
    recorder.Record(ObjectReference::To(obj), EventType::kWarning, "GangUnschedulable",
                    "3/4 tasks in gang unschedulable: 3 Insufficient cpu");
  }
  REQUIRE(recorder.Flush(std::chrono::seconds(10)));
  std::string describe = kubectl.MustRun({"-n", ns.name(), "describe", "configmap", "subject"});
  CHECK(describe.find("GangUnschedulable") != std::string::npos);
  CHECK(describe.find("3/4 tasks in gang unschedulable") != std::string::npos);
  CHECK(describe.find("(x3 over") != std::string::npos);
}

}  // namespace
}  // namespace tephra::kube
