#include "kube/daemon.h"

#include <catch2/catch.hpp>

#include "metrics/metrics.h"

// GCC 12 at -O3 (release preset) reports assigning a short literal to a std::string member as a
// read of uninitialised bytes (GCC bug 105562, a false positive).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace tephra::kube {
namespace {

TEST_CASE("SplitHostPort reads host and port and names the flag in errors") {
  auto plain = SplitHostPort("listen-address", "127.0.0.1:8080");
  REQUIRE(plain.ok());
  CHECK(plain->first == "127.0.0.1");
  CHECK(plain->second == 8080);
  auto all = SplitHostPort("listen-address", ":9090");
  REQUIRE(all.ok());
  CHECK(all->first == "0.0.0.0");
  auto v6 = SplitHostPort("listen-address", "[::1]:0");
  REQUIRE(v6.ok());
  CHECK(v6->first == "::1");
  CHECK(v6->second == 0);
  for (const char* bad : {"localhost", "127.0.0.1:", "127.0.0.1:http", "127.0.0.1:70000"}) {
    auto r = SplitHostPort("healthz-address", bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message().find("--healthz-address") == 0);
  }
}

TEST_CASE("leader-election flags refuse timings that would let two leaders overlap") {
  LeaderElectionFlags flags;
  flags.resource_name = "volcano";
  flags.resource_namespace = "ns";
  auto good = flags.Config("me");
  REQUIRE(good.ok());
  CHECK(good->namespace_ == "ns");
  CHECK(good->identity == "me");
  flags.renew_deadline = flags.lease_duration;
  CHECK_FALSE(flags.Config("me").ok());
  flags.renew_deadline = std::chrono::seconds(10);
  flags.resource_name.clear();
  auto unnamed = flags.Config("me");
  REQUIRE_FALSE(unnamed.ok());
  CHECK(unnamed.status().message().find("--leader-elect-resource-name") != std::string::npos);
}

TEST_CASE("ServeHealth serves on an ephemeral port, or not at all when told") {
  base::HealthChecks checks;
  metrics::Registry registry;
  auto none = ServeHealth({"listen-address", "0", true}, checks, registry);
  REQUIRE(none.ok());
  CHECK(*none == nullptr);
  auto skipped = ServeHealth({"listen-address", "127.0.0.1:0", false}, checks, registry);
  REQUIRE(skipped.ok());
  CHECK(*skipped == nullptr);
  auto served = ServeHealth({"listen-address", "127.0.0.1:0", true}, checks, registry);
  REQUIRE(served.ok());
  REQUIRE(*served != nullptr);
  CHECK((*served)->port() != 0);
  (*served)->Stop();
}

TEST_CASE("the process identity is stable and names the host") {
  CHECK(ProcessIdentity() == ProcessIdentity());
  CHECK(ProcessIdentity().find('_') != std::string::npos);
}

}  // namespace
}  // namespace tephra::kube
