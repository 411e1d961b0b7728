// The Secret-backed certificate manager, the caBundle patch and patcher, and the informer-backed
// queue lookup, against the in-memory FakeApiServer.
#include "webhooks/certs/cert_manager.h"

#include <chrono>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <rapidjson/document.h>

#include "base/base64.h"
#include "tests/fakes/fake_apiserver.h"
#include "webhooks/admission/cluster_cache.h"
#include "webhooks/certs/ca_bundle_patcher.h"

namespace tephra::webhooks {
namespace {

using tephra::testing::FakeApiServer;
// Compares JSON texts by value.
bool JsonEqual(std::string_view actual, std::string_view expected) {
  json::Document a;
  json::Document b;
  bool ok = json::Parse(actual, &a).ok() && json::Parse(expected, &b).ok() && a == b;
  if (!ok) UNSCOPED_INFO("JSON differs\n  actual:   " << actual << "\n  expected: " << expected);
  return ok;
}

const std::string kSecrets = "/api/v1/namespaces/tephra-system/secrets";
const std::string kValidating =
    "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations";
const std::string kMutating = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations";

std::shared_ptr<kube::Client> ClientOn(const std::shared_ptr<FakeApiServer>& fake) {
  kube::ClientOptions options;
  options.qps = 0;
  options.retry_base_delay = std::chrono::milliseconds(1);
  options.retry_max_delay = std::chrono::milliseconds(2);
  return std::make_shared<kube::Client>(fake, options);
}

bool Soon(const std::function<bool()>& f) {
  for (int i = 0; i < 1000; ++i) {
    if (f()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return f();
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A scratch directory removed at the end of the test.
struct TempDir {
  TempDir() {
    std::string pattern = "/tmp/tephra-cm-test-XXXXXX";
    path = ::mkdtemp(pattern.data()) != nullptr ? pattern : "";
    REQUIRE(!path.empty());
  }
  ~TempDir() {
    for (const char* f : {"tls.crt", "tls.key", "ca.crt"}) ::unlink((path + "/" + f).c_str());
    ::rmdir(path.c_str());
  }
  std::string path;
};

CertManagerOptions Options(const std::string& dir) {
  CertManagerOptions o;
  o.namespace_ = "tephra-system";
  o.secret_name = "volcano-admission-secret";
  o.cert_dir = dir;
  o.policy.sans = ServiceDnsNames("volcano-admission-service", "tephra-system");
  o.retry_interval = std::chrono::milliseconds(10);
  return o;
}

TEST_CASE("The first replica creates the Secret and writes the files, the next reuses it") {
  auto fake = std::make_shared<FakeApiServer>();
  TempDir dir1;
  TempDir dir2;
  CertManager first(ClientOn(fake), Options(dir1.path));
  int notified = 0;
  first.AddListener([&](const CertificateMaterial&) { ++notified; });
  REQUIRE(first.Sync().ok());
  CHECK(notified == 1);
  auto stored = fake->Object(kSecrets, "tephra-system/volcano-admission-secret");
  REQUIRE(stored.has_value());
  auto material = MaterialFromSecret(*stored);
  REQUIRE(material.has_value());
  CHECK(*material == first.current());
  CHECK(ReadFile(first.cert_file()) == material->cert);
  CHECK(ReadFile(first.key_file()) == material->key);
  CHECK(ReadFile(first.ca_file()) == material->ca_bundle);
  CHECK(stored->find(R"("type":"Opaque")") != std::string::npos);

  // Syncing again changes nothing and tells no one.
  REQUIRE(first.Sync().ok());
  CHECK(notified == 1);

  CertManager second(ClientOn(fake), Options(dir2.path));
  REQUIRE(second.Sync().ok());
  CHECK(second.current() == first.current());
  CHECK(ReadFile(second.ca_file()) == ReadFile(first.ca_file()));
}

TEST_CASE("A Secret created meanwhile by another replica wins over ours") {
  auto fake = std::make_shared<FakeApiServer>();
  TempDir dir;
  auto theirs =
      PlanCertificates(std::nullopt, Options(dir.path).policy, std::chrono::system_clock::now());
  REQUIRE(theirs.ok());
  // Another replica's Secret appears between our read (NotFound) and our create, which then
  // fails with AlreadyExists: ours must read theirs back and use it.
  fake->Put(kSecrets,
            R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"volcano-admission-secret",
      "namespace":"tephra-system"},"type":"Opaque","data":)" +
                SecretDataJson(theirs->material) + "}");
  fake->FailNext(1, 404, "GET");
  CertManager manager(ClientOn(fake), Options(dir.path));
  REQUIRE(manager.Sync().ok());
  CHECK(manager.current() == theirs->material);
}

TEST_CASE("A broken Secret is repaired in place, keeping its other keys") {
  auto fake = std::make_shared<FakeApiServer>();
  fake->Put(kSecrets,
            R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"volcano-admission-secret",
      "namespace":"tephra-system","labels":{"team":"infra"}},"type":"Opaque",
      "data":{"tls.crt":"Z2FyYmFnZQ==","note":"a2VlcA=="}})");
  TempDir dir;
  CertManager manager(ClientOn(fake), Options(dir.path));
  REQUIRE(manager.Sync().ok());
  std::string stored = *fake->Object(kSecrets, "tephra-system/volcano-admission-secret");
  CHECK(stored.find(R"("note":"a2VlcA==")") != std::string::npos);
  CHECK(stored.find(R"("team":"infra")") != std::string::npos);
  CHECK(MaterialFromSecret(stored) == manager.current());
  CHECK(VerifyServingCertificate(manager.current().cert, manager.current().ca_bundle,
                                 std::chrono::system_clock::now())
            .ok());
}

TEST_CASE("A rotation by another replica reaches the files through the Secret watch") {
  auto fake = std::make_shared<FakeApiServer>();
  TempDir dir;
  CertManager manager(ClientOn(fake), Options(dir.path));
  REQUIRE(manager.Sync().ok());
  kube::InformerFactory factory(ClientOn(fake));
  manager.Start(factory);
  factory.Start();
  REQUIRE(factory.WaitForCacheSync(std::chrono::seconds(5)));

  auto other =
      PlanCertificates(std::nullopt, Options(dir.path).policy, std::chrono::system_clock::now());
  REQUIRE(other.ok());
  std::string stored = *fake->Object(kSecrets, "tephra-system/volcano-admission-secret");
  std::string rotated;
  REQUIRE(
      json::ApplyMergePatch(stored, R"({"data":)" + SecretDataJson(other->material) + "}", &rotated)
          .ok());
  fake->Put(kSecrets, rotated);
  // The files are written before the manager records them as current: wait for both.
  CHECK(Soon([&] { return ReadFile(manager.cert_file()) == other->material.cert; }));
  CHECK(Soon([&] { return manager.current() == other->material; }));
  manager.Stop();
  factory.Stop();
}

const std::string kConfig = R"({"apiVersion":"admissionregistration.k8s.io/v1",
  "kind":"ValidatingWebhookConfiguration","metadata":{"name":"volcano-admission-service-jobs-validate",
  "resourceVersion":"42"},
  "webhooks":[
    {"name":"validatejob.volcano.sh","clientConfig":{"url":"https://127.0.0.1:1/jobs/validate","caBundle":"T0xE"},
     "rules":[{"operations":["CREATE"],"apiGroups":["batch.volcano.sh"]}],"futureField":{"x":1},
     "sideEffects":"None","admissionReviewVersions":["v1"]},
    {"name":"second.volcano.sh","clientConfig":{"url":"https://127.0.0.1:1/jobs/validate","caBundle":"TkVX"},
     "sideEffects":"None","admissionReviewVersions":["v1"]},
    {"name":"third.volcano.sh","clientConfig":{"url":"https://127.0.0.1:1/jobs/validate"},
     "sideEffects":"None","admissionReviewVersions":["v1"]}]})";

TEST_CASE("The caBundle patch changes only differing webhooks and keeps every other field") {
  auto patch = CaBundlePatch(kConfig, "TkVX");
  REQUIRE(patch.ok());
  REQUIRE(patch->has_value());
  CHECK(JsonEqual(**patch, R"({"metadata":{"resourceVersion":"42"},"webhooks":[
    {"name":"validatejob.volcano.sh","clientConfig":{"url":"https://127.0.0.1:1/jobs/validate","caBundle":"TkVX"},
     "rules":[{"operations":["CREATE"],"apiGroups":["batch.volcano.sh"]}],"futureField":{"x":1},
     "sideEffects":"None","admissionReviewVersions":["v1"]},
    {"name":"second.volcano.sh","clientConfig":{"url":"https://127.0.0.1:1/jobs/validate","caBundle":"TkVX"},
     "sideEffects":"None","admissionReviewVersions":["v1"]},
    {"name":"third.volcano.sh","clientConfig":{"url":"https://127.0.0.1:1/jobs/validate","caBundle":"TkVX"},
     "sideEffects":"None","admissionReviewVersions":["v1"]}]})"));
  // Applied, every webhook carries the bundle and a second patch is not needed.
  std::string applied;
  REQUIRE(json::ApplyMergePatch(kConfig, **patch, &applied).ok());
  auto again = CaBundlePatch(applied, "TkVX");
  REQUIRE(again.ok());
  CHECK_FALSE(again->has_value());
  CHECK_FALSE(CaBundlePatch(R"({"metadata":{"name":"empty"}})", "TkVX")->has_value());
  CHECK(CaBundlePatch(R"({"webhooks":{}})", "x").status().message() ==
        "webhooks: expected an array");
  CHECK_FALSE(CaBundlePatch("[", "x").ok());
}

TEST_CASE("Configuration names follow Volcano's and the path decides the kind") {
  WebhookConfigSelector s = SelectorForPaths(
      "volcano-admission-service", {"/jobs/mutate", "/jobs/validate", "/queues/validate"}, "");
  CHECK(s.mutating_names == std::vector<std::string>{"volcano-admission-service-jobs-mutate"});
  CHECK(s.validating_names ==
        std::vector<std::string>{"volcano-admission-service-jobs-validate",
                                 "volcano-admission-service-queues-validate"});
  CHECK(s.Wants(true, "volcano-admission-service-jobs-mutate"));
  CHECK_FALSE(s.Wants(false, "volcano-admission-service-jobs-mutate"));
  CHECK_FALSE(s.Wants(true, "someone-elses"));
  s.label_selector = "app=tephra";
  CHECK(s.Wants(true, "someone-elses"));  // the informers filter by label then
}

TEST_CASE("The patcher fills in the caBundle of its configurations as they appear, not others'") {
  auto fake = std::make_shared<FakeApiServer>();
  fake->Put(kValidating, kConfig);
  std::string foreign =
      R"({"apiVersion":"admissionregistration.k8s.io/v1","kind":"MutatingWebhookConfiguration",
      "metadata":{"name":"someone-elses"},"webhooks":[{"name":"x.example.com","clientConfig":{"caBundle":"T0xE"}}]})";
  fake->Put(kMutating, foreign);
  CaBundlePatcher patcher(ClientOn(fake), SelectorForPaths("volcano-admission-service",
                                                           {"/jobs/mutate", "/jobs/validate"}, ""));
  kube::InformerFactory factory(ClientOn(fake));
  patcher.Start(factory);
  factory.Start();
  REQUIRE(factory.WaitForCacheSync(std::chrono::seconds(5)));
  patcher.SetCaBundle("NEW");  // base64 "TkVX"
  auto bundle_of = [&](const std::string& collection, const std::string& name) {
    auto object = fake->Object(collection, name);
    return object ? *object : std::string();
  };
  REQUIRE(Soon([&] {
    std::string v = bundle_of(kValidating, "volcano-admission-service-jobs-validate");
    return v.find("T0xE") == std::string::npos &&
           v.find("\"caBundle\":\"TkVX\"") != std::string::npos;
  }));
  CHECK(bundle_of(kValidating, "volcano-admission-service-jobs-validate").find("futureField") !=
        std::string::npos);

  // A configuration created later (a Helm install after the daemon) is patched too.
  fake->Put(
      kMutating,
      R"({"apiVersion":"admissionregistration.k8s.io/v1","kind":"MutatingWebhookConfiguration",
      "metadata":{"name":"volcano-admission-service-jobs-mutate"},
      "webhooks":[{"name":"mutatejob.volcano.sh","clientConfig":{"url":"https://127.0.0.1:1/jobs/mutate"}}]})");
  REQUIRE(Soon([&] {
    return bundle_of(kMutating, "volcano-admission-service-jobs-mutate")
               .find("\"caBundle\":\"TkVX\"") != std::string::npos;
  }));
  CHECK(bundle_of(kMutating, "someone-elses").find("T0xE") != std::string::npos);
  // The patch shows in the fake API server before the patcher's worker counts it.
  REQUIRE(Soon([&] { return patcher.patches() >= 2; }));
  CHECK(patcher.patches() == 2);
  patcher.Stop();
  factory.Stop();
}

TEST_CASE("The queue lookup answers from the informer, children by index") {
  auto fake = std::make_shared<FakeApiServer>();
  const std::string queues = "/apis/scheduling.volcano.sh/v1beta1/queues";
  auto put = [&](const std::string& name, const std::string& parent) {
    fake->Put(
        queues,
        R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","metadata":{"name":")" +
            name + R"("},"spec":{"parent":")" + parent + R"("},"status":{"state":"Open"}})");
  };
  put("root", "");
  put("a", "");
  put("a1", "a");
  put("a2", "a");
  kube::InformerFactory factory(ClientOn(fake));
  metrics::Registry registry;
  PathNeeds needs;
  needs.queues = true;
  ClusterCache cache(factory, needs, registry);
  CHECK(cache.view().namespaces == nullptr);
  CHECK(cache.Synced().message() == "waiting for the queue cache to sync");
  factory.Start();
  REQUIRE(factory.WaitForCacheSync(std::chrono::seconds(5)));
  CHECK(cache.Synced().ok());
  const api::QueueLookup& lookup = *cache.view().queues;
  REQUIRE(lookup.Get("a1") != nullptr);
  CHECK(lookup.Get("a1")->ParentName() == "a");
  CHECK(lookup.Get("missing") == nullptr);
  auto names = [](const std::vector<std::shared_ptr<const api::Queue>>& qs) {
    std::set<std::string> out;
    for (const auto& q : qs) out.insert(q->metadata.name);
    return out;
  };
  CHECK(names(lookup.Children("a")) == std::set<std::string>{"a1", "a2"});
  CHECK(names(lookup.Children("root")) == std::set<std::string>{"a"});
  CHECK(lookup.List().size() == 4);
  put("a3", "a");
  CHECK(Soon([&] { return lookup.Children("a").size() == 3; }));
  CHECK(registry.Render().find("tephra_admission_queue_cache_synced 1") != std::string::npos);
  factory.Stop();
}

}  // namespace
}  // namespace tephra::webhooks
