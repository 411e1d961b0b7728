// The rules both read-only listeners (the admin API, the dashboard) follow, asked directly:
// linked with scheduler_listener alone, which is also what keeps gRPC out of the dashboard.
#include "scheduler/listener/listener_options.h"

#include <catch2/catch.hpp>

namespace tephra::scheduler {
namespace {

AdminServerOptions Tls(std::string cert, std::string key, std::string client_ca) {
  AdminServerOptions options;
  options.tls_cert_file = std::move(cert);
  options.tls_key_file = std::move(key);
  options.tls_client_ca_file = std::move(client_ca);
  return options;
}

TEST_CASE("A loopback listener needs no certificates") {
  for (const std::string address : {"127.0.0.1:0", "127.1.2.3:8080", "localhost:0", "[::1]:0"}) {
    CAPTURE(address);
    CHECK(CheckListenerOptions("admin-address", address, AdminServerOptions()).ok());
  }
}

TEST_CASE("Beyond loopback a listener needs client certificates or --admin-allow-anonymous") {
  for (const std::string address : {"0.0.0.0:0", ":0", "[::]:0", "10.0.0.1:443"}) {
    CAPTURE(address);
    Status open = CheckListenerOptions("dashboard-address", address, AdminServerOptions());
    CHECK(open.code() == StatusCode::kInvalidArgument);
    CHECK(open.message().rfind("--dashboard-address " + address + ": beyond loopback", 0) == 0);
    CHECK(open.message().find("--admin-allow-anonymous") != std::string::npos);

    AdminServerOptions anonymous;
    anonymous.allow_anonymous = true;
    CHECK(CheckListenerOptions("dashboard-address", address, anonymous).ok());
    CHECK(CheckListenerOptions("dashboard-address", address, Tls("c.pem", "k.pem", "ca.pem")).ok());
  }
}

TEST_CASE("Certificate and key come together, and a client CA only with them") {
  CHECK(CheckListenerOptions("admin-address", "127.0.0.1:0", Tls("c.pem", "k.pem", "")).ok());
  CHECK(CheckListenerOptions("admin-address", "127.0.0.1:0", Tls("c.pem", "", "")).message() ==
        "--admin-tls-cert and --admin-tls-key must be given together");
  CHECK(CheckListenerOptions("admin-address", "127.0.0.1:0", Tls("", "k.pem", "")).message() ==
        "--admin-tls-cert and --admin-tls-key must be given together");
  CHECK(CheckListenerOptions("admin-address", "127.0.0.1:0", Tls("", "", "ca.pem")).message() ==
        "--admin-tls-client-ca needs --admin-tls-cert and --admin-tls-key");
}

TEST_CASE("A malformed address names the listener's flag") {
  Status bad = CheckListenerOptions("dashboard-address", "127.0.0.1", AdminServerOptions());
  CHECK(bad.code() == StatusCode::kInvalidArgument);
  CHECK(bad.message().rfind("--dashboard-address 127.0.0.1: want host:port", 0) == 0);
}

}  // namespace
}  // namespace tephra::scheduler
