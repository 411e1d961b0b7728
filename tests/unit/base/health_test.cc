#include "base/health.h"

#include <arpa/inet.h>
#include <atomic>
#include <netinet/in.h>
#include <stdexcept>
#include <string>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "metrics/metrics.h"

namespace tephra::base {
namespace {

HttpRequest Request(std::string query = "") {
  HttpRequest r;
  r.method = "GET";
  r.query = std::move(query);
  return r;
}

TEST_CASE("All checks passing answer ok, and verbose lists them") {
  HealthChecks checks;
  REQUIRE(checks.AddHealthCheck("log", [] { return Status::Ok(); }).ok());
  REQUIRE(checks.AddReadinessCheck("informers-synced", [] { return Status::Ok(); }).ok());

  HttpResponse healthz = checks.Healthz(Request());
  CHECK(healthz.status == 200);
  CHECK(healthz.body == "ok");

  HttpResponse verbose = checks.Readyz(Request("verbose"));
  CHECK(verbose.status == 200);
  CHECK(verbose.body == "[+]ping ok\n[+]log ok\n[+]informers-synced ok\nreadyz check passed\n");
  // Liveness does not run readiness checks.
  CHECK(checks.Healthz(Request("verbose")).body == "[+]ping ok\n[+]log ok\nhealthz check passed\n");
}

TEST_CASE("A failing check answers 500 naming the check and its message") {
  HealthChecks checks;
  std::atomic<bool> synced{false};
  REQUIRE(checks
              .AddReadinessCheck(
                  "informers-synced",
                  [&] { return synced ? Status::Ok() : Unavailable("waiting for pods, nodes"); })
              .ok());
  REQUIRE(checks.AddReadinessCheck("leader", [] { return Status::Ok(); }).ok());

  CHECK(checks.Healthz(Request()).status == 200);  // readiness does not affect liveness
  HttpResponse not_ready = checks.Readyz(Request());
  CHECK(not_ready.status == 500);
  CHECK(not_ready.body ==
        "[+]ping ok\n[-]informers-synced failed: waiting for pods, nodes\n[+]leader ok\n"
        "readyz check failed\n");
  synced = true;
  CHECK(checks.Readyz(Request()).status == 200);
}

TEST_CASE("Health checks gate readiness too, and a throwing check fails") {
  HealthChecks checks;
  REQUIRE(checks.AddHealthCheck("deadlock", []() -> Status { throw std::runtime_error("stuck"); })
              .ok());
  HttpResponse healthz = checks.Healthz(Request());
  CHECK(healthz.status == 500);
  CHECK(healthz.body.find("[-]deadlock failed: check threw: stuck\n") != std::string::npos);
  CHECK(checks.Readyz(Request()).status == 500);
}

TEST_CASE("Excluded checks are skipped and unknown exclusions are reported") {
  HealthChecks checks;
  REQUIRE(checks.AddReadinessCheck("etcd", [] { return Unavailable("down"); }).ok());
  HttpResponse r = checks.Readyz(Request("exclude=etcd&exclude=nope&verbose"));
  CHECK(r.status == 200);
  CHECK(r.body ==
        "[+]ping ok\n[+]etcd excluded: ok\n"
        "warn: some health checks cannot be excluded: no matches for \"nope\"\n"
        "readyz check passed\n");
}

TEST_CASE("Check names are validated and unique across both kinds") {
  HealthChecks checks;
  CHECK(checks.AddHealthCheck("", [] { return Status::Ok(); }).code() ==
        StatusCode::kInvalidArgument);
  CHECK(checks.AddHealthCheck("has space", [] { return Status::Ok(); }).code() ==
        StatusCode::kInvalidArgument);
  CHECK(checks.AddReadinessCheck("ping", [] { return Status::Ok(); }).code() ==
        StatusCode::kAlreadyExists);
}

// One GET over a fresh loopback connection; returns the raw response.
std::string RawGet(uint16_t port, const std::string& target) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string out;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
    const std::string req = "GET " + target + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    if (send(fd, req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size())) {
      char buf[4096];
      ssize_t n;
      while ((n = recv(fd, buf, sizeof(buf), 0)) > 0) out.append(buf, static_cast<size_t>(n));
    }
  }
  close(fd);
  return out;
}

TEST_CASE("The endpoints are served over HTTP") {
  HealthChecks checks;
  std::atomic<bool> leader{false};
  REQUIRE(checks
              .AddReadinessCheck("leader",
                                 [&] { return leader ? Status::Ok() : Unavailable("not leading"); })
              .ok());
  metrics::Registry registry;
  registry.AddCounter("tephra_test_total", "A test counter.").Inc(5);

  HttpServerOptions options;
  options.threads = 1;
  HttpServer server(options);
  REQUIRE(MountHealthEndpoints(server, checks, registry).ok());
  REQUIRE(server.Start().ok());

  std::string healthz = RawGet(server.port(), "/healthz");
  CHECK(healthz.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  CHECK(healthz.substr(healthz.size() - 4) == "\r\nok");
  CHECK(RawGet(server.port(), "/livez").rfind("HTTP/1.1 200", 0) == 0);

  std::string readyz = RawGet(server.port(), "/readyz");
  CHECK(readyz.rfind("HTTP/1.1 500", 0) == 0);
  CHECK(readyz.find("[-]leader failed: not leading\n") != std::string::npos);
  leader = true;
  CHECK(RawGet(server.port(), "/readyz?verbose").find("readyz check passed") != std::string::npos);

  std::string metrics = RawGet(server.port(), "/metrics");
  CHECK(metrics.find("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n") !=
        std::string::npos);
  CHECK(metrics.find("\ntephra_test_total 5\n") != std::string::npos);
  server.Stop();
}

}  // namespace
}  // namespace tephra::base
