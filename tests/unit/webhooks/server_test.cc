// The daemon's HTTPS server: TLS with a certificate the way the daemon makes it, admission
// reviews answered, health endpoints, the 3 MiB body limit, and certificate reloads. curl is the
// client, as it checks the certificate the way the API server does (by IP SAN).
#include "webhooks/server/server.h"

#include <atomic>
#include <fstream>
#include <future>
#include <string>
#include <thread>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "api/scheduling.h"
#include "metrics/metrics.h"
#include "tests/support/process.h"
#include "webhooks/admission/handlers.h"
#include "webhooks/certs/certificates.h"

namespace tephra::webhooks {
namespace {

using tephra::testing::CommandResult;
using tephra::testing::RunCommand;

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  REQUIRE(out.good());
}

// A CA and a serving certificate for 127.0.0.1 in a scratch directory.
struct Certs {
  Certs() {
    std::string pattern = "/tmp/tephra-server-test-XXXXXX";
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    dir = pattern;
    Issue("tephra-admission");
  }
  ~Certs() {
    for (const char* f : {"/ca.crt", "/tls.crt", "/tls.key", "/body"}) ::unlink((dir + f).c_str());
    ::rmdir(dir.c_str());
  }
  void Issue(const std::string& common_name) {
    auto now = std::chrono::system_clock::now();
    if (ca.cert_pem.empty()) {
      auto made = GenerateCa("test-ca", std::chrono::hours(24), now);
      REQUIRE(made.ok());
      ca = *made;
      WriteFile(dir + "/ca.crt", ca.cert_pem);
    }
    SubjectAltNames sans;
    REQUIRE(AddSubjectAltName("IP:127.0.0.1", &sans).ok());
    auto serving = IssueServingCertificate(ca, common_name, sans, std::chrono::hours(24), now);
    REQUIRE(serving.ok());
    WriteFile(dir + "/tls.key.new", serving->key_pem);
    WriteFile(dir + "/tls.crt.new", serving->cert_pem);
    REQUIRE(std::rename((dir + "/tls.key.new").c_str(), (dir + "/tls.key").c_str()) == 0);
    REQUIRE(std::rename((dir + "/tls.crt.new").c_str(), (dir + "/tls.crt").c_str()) == 0);
  }
  std::string dir;
  CertificateAndKey ca;
};

// curl with the CA; returns "<status> <body>". Plain HTTP without `certs`.
// "<status> <body>" of a curl request, or "curl failed: <stderr>". No Catch assertion inside, so
// a second thread may call it (Catch's macros are for the test's own thread).
std::string CurlUnchecked(const Certs* certs, uint16_t port, const std::string& path,
                          const std::string& body_file = "") {
  std::vector<std::string> argv{"curl", "-sS", "--max-time",    "10", "-o",
                                "-",    "-w",  " %{http_code}", "-D", "/dev/stderr"};
  if (certs != nullptr) argv.insert(argv.end(), {"--cacert", certs->dir + "/ca.crt"});
  if (!body_file.empty()) {
    argv.insert(argv.end(),
                {"-H", "Content-Type: application/json", "--data-binary", "@" + body_file});
  }
  argv.push_back((certs != nullptr ? "https://127.0.0.1:" : "http://127.0.0.1:") +
                 std::to_string(port) + path);
  CommandResult r = RunCommand(argv);
  if (!r.ok()) return "curl failed: " + r.err;
  if (r.err.find("Retry-After: 1") != std::string::npos) r.out = "[retry-after 1]" + r.out;
  size_t space = r.out.rfind(' ');
  return r.out.substr(space + 1) + " " + r.out.substr(0, space);
}

std::string Curl(const Certs* certs, uint16_t port, const std::string& path,
                 const std::string& body_file = "") {
  std::string answer = CurlUnchecked(certs, port, path, body_file);
  INFO(answer);
  REQUIRE(answer.rfind("curl failed: ", 0) != 0);
  return answer;
}

TEST_CASE("The HTTPS server answers reviews and health checks and refuses oversized bodies") {
  Certs certs;
  api::StaticQueueLookup queues;
  metrics::Registry registry;
  AdmissionServerOptions options;
  options.address = "127.0.0.1";
  options.port = 0;
  options.threads = 2;
  options.cert_file = certs.dir + "/tls.crt";
  options.key_file = certs.dir + "/tls.key";
  AdmissionServer server(options, registry);
  REQUIRE(server.AddAdmission(std::string(kQueuesValidate), NewQueueValidator(queues, {})).ok());
  std::atomic<bool> ready = false;  // read by the server's handler thread
  REQUIRE(
      server
          .AddReadinessCheck("test", [&] { return ready ? Status::Ok() : Unavailable("not yet"); })
          .ok());
  REQUIRE(server.StartWebhooks().ok());
  CHECK(server.AddAdmission("/late", NewQueueMutator()).code() == StatusCode::kFailedPrecondition);
  const uint16_t port = server.webhook_port();
  REQUIRE(port != 0);

  CHECK(Curl(&certs, port, "/healthz") == "200 ok");
  CHECK(Curl(&certs, port, "/readyz").rfind("500 ", 0) == 0);
  ready = true;
  CHECK(Curl(&certs, port, "/readyz") == "200 ok");

  WriteFile(certs.dir + "/body", R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",
      "request":{"uid":"u","operation":"DELETE","name":"root","oldObject":{"metadata":{"name":"root"}}}})");
  std::string answer = Curl(&certs, port, "/queues/validate", certs.dir + "/body");
  CHECK(answer.rfind("200 ", 0) == 0);
  CHECK(answer.find(R"("message":"metadata.name: queue \"root\" cannot be deleted")") !=
        std::string::npos);

  // A review over the API server's 3 MiB object limit (defaults added, or an update's two
  // versions) is still read and answered; only one over 8 MiB is cut off.
  WriteFile(certs.dir + "/body", std::string(4 * 1024 * 1024, ' '));
  CHECK(Curl(&certs, port, "/queues/validate", certs.dir + "/body").rfind("400 ", 0) == 0);
  WriteFile(certs.dir + "/body", std::string(8 * 1024 * 1024 + 1, ' '));
  CHECK(Curl(&certs, port, "/queues/validate", certs.dir + "/body").rfind("413 ", 0) == 0);
  CHECK(registry.Render().find("tephra_admission_requests_total") != std::string::npos);

  // A renewed certificate is served after ReloadTls, without a restart.
  certs.Issue("renewed");
  REQUIRE(server.ReloadTls().ok());
  CommandResult subject =
      RunCommand({"sh", "-c",
                  "openssl s_client -connect 127.0.0.1:" + std::to_string(port) + " -CAfile " +
                      certs.dir + "/ca.crt </dev/null 2>/dev/null | grep subject="});
  CHECK(subject.out.find("CN = renewed") != std::string::npos);
  server.Stop(std::chrono::seconds(1));
}

// A review that blocks its worker until released.
class StuckHandler final : public AdmissionHandler {
 public:
  AdmissionResponse Admit(const AdmissionRequest& request) const override {
    ++*entered_;
    released_.wait();
    AdmissionResponse response;
    response.uid = request.uid;
    response.allowed = true;
    return response;
  }
  std::shared_ptr<std::atomic<int>> entered_ = std::make_shared<std::atomic<int>>(0);
  std::promise<void> release_;
  std::shared_future<void> released_ = release_.get_future().share();
};

TEST_CASE("Stuck reviews: probes answer, the deadline holds, excess gets 429, liveness fails") {
  Certs certs;
  metrics::Registry registry;
  AdmissionServerOptions options;
  options.address = "127.0.0.1";
  options.port = 0;
  options.threads = 1;
  options.max_queued_requests = 0;
  options.request_timeout = std::chrono::milliseconds(300);
  options.stall_timeout = std::chrono::milliseconds(500);
  options.health_address = "127.0.0.1:0";
  options.cert_file = certs.dir + "/tls.crt";
  options.key_file = certs.dir + "/tls.key";
  auto stuck = std::make_shared<StuckHandler>();
  AdmissionServer server(options, registry);
  REQUIRE(server.AddAdmission("/stuck", stuck).ok());
  REQUIRE(server.StartHealth().ok());
  REQUIRE(server.StartWebhooks().ok());
  const uint16_t port = server.webhook_port();
  WriteFile(certs.dir + "/body", R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",
      "request":{"uid":"u","operation":"CREATE","object":{"metadata":{"name":"a"}}}})");

  auto first = std::async(std::launch::async, [&] {
    return CurlUnchecked(&certs, port, "/stuck", certs.dir + "/body");
  });
  for (int i = 0; i < 500 && stuck->entered_->load() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  REQUIRE(stuck->entered_->load() == 1);
  CHECK(Curl(&certs, port, "/healthz") == "200 ok");
  std::string busy = Curl(&certs, port, "/stuck", certs.dir + "/body");
  CHECK(busy.rfind("429 [retry-after 1]", 0) == 0);
  CHECK(busy.find(R"("reason":"TooManyRequests")") != std::string::npos);
  CHECK(first.get().rfind("503 ", 0) == 0);  // the deadline, with the review still stuck

  // Liveness on the plain health port fails once the worker has been stuck long enough.
  std::string health;
  for (int i = 0; i < 100; ++i) {
    health = Curl(nullptr, server.health_port(), "/healthz?verbose");
    if (health.rfind("500 ", 0) == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  CHECK(health.rfind("500 ", 0) == 0);
  CHECK(health.find("[-]webhook-server failed") != std::string::npos);
  stuck->release_.set_value();
  server.Stop(std::chrono::seconds(1));
}

}  // namespace
}  // namespace tephra::webhooks
