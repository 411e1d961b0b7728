// The fake API server (tests/fakes) with a quickly retrying client, an event recorder and a
// metrics registry, for the tests of the scheduler's writers (binder, status writer).
#pragma once

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>

#include <catch2/catch.hpp>

#include "kube/client.h"
#include "kube/events.h"
#include "metrics/metrics.h"
#include "tests/fakes/fake_apiserver.h"

namespace tephra::scheduler::testing {

inline constexpr auto kWait = std::chrono::seconds(30);

struct FakeApi {
  static std::shared_ptr<kube::Client> ClientOn(
      std::shared_ptr<tephra::testing::FakeApiServer> fake) {
    kube::ClientOptions o;
    o.qps = 0;
    o.max_retries = 3;
    o.retry_base_delay = std::chrono::milliseconds(1);
    o.retry_max_delay = std::chrono::milliseconds(5);
    return std::make_shared<kube::Client>(std::move(fake), o);
  }

  // How many times the server saw `request` ("METHOD target").
  size_t Requests(const std::string& request) {
    auto all = fake->requests();
    return static_cast<size_t>(std::count(all.begin(), all.end(), request));
  }
  // Whether the registry renders `line` (e.g. "tephra_pods_bound_total 1").
  bool HasMetric(const std::string& line) const {
    return registry.Render().find(line) != std::string::npos;
  }
  // Every Event written in namespace `ns`, as JSON, one per line.
  std::string Events(const std::string& ns = "ns") {
    REQUIRE(events.Flush(kWait));
    auto page = client->List(kube::resources::kEvents, ns);
    REQUIRE(page.ok());
    std::string out;
    for (size_t i = 0; i < page->size(); ++i) out += json::Write(page->item(i)) + "\n";
    return out;
  }

  std::shared_ptr<tephra::testing::FakeApiServer> fake =
      std::make_shared<tephra::testing::FakeApiServer>();
  std::shared_ptr<kube::Client> client = ClientOn(fake);
  metrics::Registry registry;
  kube::EventRecorder events{client, {"tephra-scheduler", "test"}};
};

}  // namespace tephra::scheduler::testing
