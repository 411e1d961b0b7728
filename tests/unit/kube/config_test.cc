#include "kube/config.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "base/base64.h"
#include "base/token_bucket.h"

namespace tephra::kube {
namespace {

namespace fs = std::filesystem;

// A scratch directory removed at the end of the test.
struct TempDir {
  TempDir() {
    char tmpl[] = "/tmp/tephra-config-test-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string Write(const std::string& name, const std::string& text) const {
    fs::create_directories((fs::path(path) / name).parent_path());
    std::ofstream(fs::path(path) / name) << text;
    return (fs::path(path) / name).string();
  }
  std::string path;
};

// Restores an environment variable when the test ends.
struct ScopedEnv {
  ScopedEnv(const char* n, const std::string& v) : name(n) {
    const char* old = std::getenv(n);
    if (old) previous = old;
    had = old != nullptr;
    setenv(n, v.c_str(), 1);
  }
  ~ScopedEnv() {
    if (had) {
      setenv(name, previous.c_str(), 1);
    } else {
      unsetenv(name);
    }
  }
  const char* name;
  std::string previous;
  bool had = false;
};

const std::string kCa = "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n";

std::string Kubeconfig(const std::string& extra_user = "", const std::string& current = "dev") {
  return R"(apiVersion: v1
kind: Config
current-context: )" +
         current + R"(
clusters:
- name: local
  cluster:
    server: https://127.0.0.1:6443
    certificate-authority-data: )" +
         base::Base64Encode(kCa) + R"(
- name: insecure
  cluster:
    server: https://10.0.0.1
    insecure-skip-tls-verify: true
users:
- name: admin
  user:
    client-certificate: certs/admin.crt
    client-key: certs/admin.key
- name: bot
  user:
    token: s3cret
- name: rotating
  user:
    tokenFile: token
)" + extra_user +
         R"(
contexts:
- name: dev
  context: {cluster: local, user: admin, namespace: team-a}
- name: ci
  context: {cluster: insecure, user: bot}
- name: rotate
  context: {cluster: local, user: rotating}
- name: broken
  context: {cluster: missing, user: bot}
)";
}

TEST_CASE("base64 round-trips and rejects garbage") {
  for (std::string s : {"", "a", "ab", "abc", "abcd", "\x00\xff\x10 binary"}) {
    auto d = base::Base64Decode(base::Base64Encode(s));
    REQUIRE(d);
    CHECK(*d == s);
  }
  CHECK(base::Base64Encode("abc") == "YWJj");
  CHECK(base::Base64Encode("ab") == "YWI=");
  CHECK(*base::Base64Decode("YW\nJj") == "abc");
  CHECK_FALSE(base::Base64Decode("YW*j"));
  CHECK_FALSE(base::Base64Decode("YQ==YQ=="));
}

TEST_CASE("kubeconfig: current context with file credentials resolved relative to the file") {
  TempDir dir;
  dir.Write("certs/admin.crt", "CERT");
  dir.Write("certs/admin.key", "KEY");
  std::string path = dir.Write("config", Kubeconfig());
  auto cfg = LoadKubeconfig({path, ""});
  REQUIRE(cfg.ok());
  CHECK(cfg->server == "https://127.0.0.1:6443");
  CHECK(cfg->ca_pem == kCa);
  CHECK(cfg->client_cert_pem == "CERT");
  CHECK(cfg->client_key_pem == "KEY");
  CHECK(cfg->namespace_ == "team-a");
  CHECK_FALSE(cfg->insecure_skip_tls_verify);
}

TEST_CASE("kubeconfig: --context, tokens, token files and insecure clusters") {
  TempDir dir;
  std::string path = dir.Write("config", Kubeconfig());
  dir.Write("token", "rotated-token\n");
  auto ci = LoadKubeconfig({path, "ci"});
  REQUIRE(ci.ok());
  CHECK(ci->bearer_token == "s3cret");
  CHECK(ci->insecure_skip_tls_verify);
  auto rotate = LoadKubeconfig({path, "rotate"});
  REQUIRE(rotate.ok());
  CHECK(rotate->bearer_token_file == dir.path + "/token");
}

TEST_CASE("kubeconfig: errors name what is missing") {
  TempDir dir;
  std::string path = dir.Write("config", Kubeconfig());
  auto missing_ctx = LoadKubeconfig({path, "nope"});
  CHECK(missing_ctx.status().code() == StatusCode::kNotFound);
  CHECK(missing_ctx.status().message() == "kubeconfig: context \"nope\" does not exist");
  auto broken = LoadKubeconfig({path, "broken"});
  CHECK(broken.status().message().find("names cluster \"missing\"") != std::string::npos);
  auto no_file = LoadKubeconfig({dir.path + "/absent", ""});
  CHECK(no_file.status().code() == StatusCode::kNotFound);
  // The admin user's certificate files do not exist in this directory.
  auto dev = LoadKubeconfig({path, "dev"});
  CHECK(dev.status().code() == StatusCode::kNotFound);
  CHECK(dev.status().message().find("client-certificate") != std::string::npos);
  auto bad_yaml = ParseKubeconfig("clusters: [", "");
  CHECK(bad_yaml.status().code() == StatusCode::kInvalidArgument);
  auto bad_b64 = ParseKubeconfig(R"(
current-context: c
clusters: [{name: x, cluster: {server: "https://a", certificate-authority-data: "!!"}}]
contexts: [{name: c, context: {cluster: x}}]
)",
                                 "");
  CHECK(bad_b64.status().message().find("certificate-authority-data: not valid base64") !=
        std::string::npos);
}

TEST_CASE("kubeconfig: exec plugins and basic auth are refused clearly") {
  auto exec = ParseKubeconfig(R"(
current-context: c
clusters: [{name: x, cluster: {server: "https://a"}}]
users: [{name: u, user: {exec: {command: aws}}}]
contexts: [{name: c, context: {cluster: x, user: u}}]
)",
                              "");
  CHECK(exec.status().code() == StatusCode::kFailedPrecondition);
  CHECK(exec.status().message().find("credential plugin") != std::string::npos);
}

TEST_CASE("KUBECONFIG merges files: the first definition of a name wins") {
  TempDir dir;
  std::string first = dir.Write("one", R"(
current-context: mine
clusters: [{name: shared, cluster: {server: "https://first"}}]
contexts: [{name: mine, context: {cluster: shared}}]
)");
  std::string second = dir.Write("two", R"(
current-context: theirs
clusters:
- {name: shared, cluster: {server: "https://second"}}
- {name: other, cluster: {server: "https://other"}}
contexts: [{name: theirs, context: {cluster: other}}]
)");
  ScopedEnv env("KUBECONFIG", first + ":" + dir.path + "/missing:" + second);
  auto cfg = LoadKubeconfig({});
  REQUIRE(cfg.ok());
  CHECK(cfg->context_name == "mine");
  CHECK(cfg->server == "https://first");
  auto theirs = LoadKubeconfig({"", "theirs"});
  REQUIRE(theirs.ok());
  CHECK(theirs->server == "https://other");
}

TEST_CASE("in-cluster config reads the service account files") {
  TempDir dir;
  InClusterOptions o;
  o.token_file = dir.Write("token", "tok");
  o.ca_file = dir.Write("ca.crt", kCa);
  o.namespace_file = dir.Write("namespace", "tephra-system\n");
  {
    ScopedEnv host("KUBERNETES_SERVICE_HOST", "127.0.0.1");
    ScopedEnv port("KUBERNETES_SERVICE_PORT", "6443");
    auto cfg = InClusterConfig(o);
    REQUIRE(cfg.ok());
    CHECK(cfg->server == "https://127.0.0.1:6443");
    CHECK(cfg->bearer_token_file == o.token_file);
    CHECK(cfg->ca_pem == kCa);
    CHECK(cfg->namespace_ == "tephra-system");
  }
  {
    ScopedEnv host("KUBERNETES_SERVICE_HOST", "fd00::1");
    ScopedEnv port("KUBERNETES_SERVICE_PORT", "443");
    CHECK(InClusterConfig(o)->server == "https://[fd00::1]:443");
  }
  unsetenv("KUBERNETES_SERVICE_HOST");
  CHECK(InClusterConfig(o).status().code() == StatusCode::kNotFound);
}

TEST_CASE("BuildConfig applies --master, --kube-api-qps and --kube-api-burst") {
  TempDir dir;
  std::string path = dir.Write("config", Kubeconfig("", "ci"));
  ClientFlags flags;
  flags.kubeconfig = path;
  flags.master = "https://127.0.0.1:9999";
  flags.qps = 2000;
  flags.burst = 3000;
  auto cfg = BuildConfig(flags);
  REQUIRE(cfg.ok());
  CHECK(cfg->server == "https://127.0.0.1:9999");
  CHECK(cfg->qps == 2000);
  CHECK(cfg->burst == 3000);
}

TEST_CASE("TokenBucket allows a burst, then paces at qps") {
  base::FakeClock clock;
  base::TokenBucket bucket(10, 3, clock);
  CHECK(bucket.TryAccept());
  CHECK(bucket.TryAccept());
  CHECK(bucket.TryAccept());
  CHECK_FALSE(bucket.TryAccept());
  clock.Advance(std::chrono::milliseconds(100));
  CHECK(bucket.TryAccept());
  CHECK_FALSE(bucket.TryAccept());
  // Reserve hands out future tokens: the second caller waits one interval more.
  auto d1 = bucket.Reserve();
  auto d2 = bucket.Reserve();
  CHECK(d1 == std::chrono::milliseconds(100));
  CHECK(d2 == std::chrono::milliseconds(200));
  base::TokenBucket unlimited(0, 1, clock);
  for (int i = 0; i < 100; ++i) CHECK(unlimited.TryAccept());
}

}  // namespace
}  // namespace tephra::kube
