// Tephra's quantity canonicalisation against the API server's: pods created with server-side
// dry run come back with their requests in Kubernetes' canonical form.
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <rapidjson/document.h>

#include "api/core.h"
#include "json/json.h"
#include "tests/support/cluster.h"

namespace tephra::testing {
namespace {

TEST_CASE("quantities print exactly as kube-apiserver prints them") {
  Kubectl k(ClusterEnv::Get().kubeconfig);
  TestNamespace ns(k, "it-api-qty");
  // Inputs already at milli precision (pod defaulting rounds requests up to 1m) and spelled so
  // the server does not echo them verbatim (it keeps "+1k", "1.", "1e0" or "1E3" as written,
  // where Tephra prints the canonical "1k", "1", "1", "1e3").
  const std::vector<std::string> inputs = {"1000m",
                                           "1500m",
                                           "1",
                                           "0.1",
                                           ".5",
                                           "1.000",
                                           "1000k",
                                           "10k",
                                           "100k",
                                           "1M",
                                           "1G",
                                           "1T",
                                           "1P",
                                           "1E",
                                           "1e3",
                                           "12e6",
                                           "10e2",
                                           "1e19",
                                           "2e-1",
                                           "1000e-3",
                                           "1e1",
                                           "1e9999",
                                           "1024Mi",
                                           "1.5Gi",
                                           "0.5Ki",
                                           "1.5Ki",
                                           "0.001Ki",
                                           "0.9Gi",
                                           "1.1Ei",
                                           "7Ei",
                                           "8Ei",
                                           "10Ei",
                                           "1023Ki",
                                           "1000000000000000Ki",
                                           "9223372036854775808",
                                           "123456789012345678901234567890",
                                           "0",
                                           "0Ki",
                                           "0e5",
                                           "1m"};
  std::string pod = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"q"},"spec":{
      "schedulerName":"nobody","containers":[)";
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (i > 0) pod += ",";
    pod += R"({"name":"c)" + std::to_string(i) + R"(","image":"busybox","resources":{
        "requests":{"cpu":")" +
           inputs[i] + R"("}}})";
  }
  pod += "]}}";
  std::string out =
      k.MustRun({"create", "-n", ns.name(), "--dry-run=server", "-o", "json", "-f", "-"}, pod);
  auto decoded = api::DecodePod(out);
  REQUIRE(decoded.ok());
  const auto& containers = (*decoded)->spec.containers;
  REQUIRE(containers.size() == inputs.size());

  json::Document doc;
  REQUIRE(json::Parse(out, &doc).ok());
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::string server = doc["spec"]["containers"][static_cast<rapidjson::SizeType>(i)]["resources"]
                            ["requests"]["cpu"]
                                .GetString();
    auto ours = api::Quantity::Parse(inputs[i]);
    REQUIRE(ours.ok());
    INFO("input " << inputs[i] << ", server " << server);
    CHECK(ours->String() == server);
    CHECK(*containers[i].resources.requests.Find("cpu") == *ours);
  }
}

}  // namespace
}  // namespace tephra::testing
