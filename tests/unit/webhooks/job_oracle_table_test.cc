// Every Job the admission oracle put to real Volcano (tests/oracle/volcano_admission/cases/
// job.py, its answers in results/volcano-job.json) through Tephra's /jobs/mutate and
// /jobs/validate: Tephra refuses what Volcano refuses (its webhook or its CRD schema) and
// accepts what it accepts (docs/admission.md).
#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "json/json.h"
#include "tests/unit/webhooks/testing.h"

namespace tephra::webhooks {
namespace {

TEST_CASE("Jobs: Tephra refuses what Volcano refuses and accepts what it accepts") {
  std::ifstream in(std::string(TEPHRA_SOURCE_DIR) +
                   "/tests/oracle/volcano_admission/results/volcano-job.json");
  std::stringstream text;
  text << in.rdbuf();
  json::Document cases;
  REQUIRE(json::Parse(text.str(), &cases).ok());
  REQUIRE(cases.GetArray().Size() > 50);
  api::StaticQueueLookup queues = testing::TestQueues();
  testing::StaticNamespaces namespaces;
  testing::TestRouter router(queues, namespaces);
  for (const auto& c : cases.GetArray()) {
    const std::string name = c["name"].GetString();
    const std::string volcano = c["volcano"].GetString();
    const std::string message = testing::Admit(router, json::Write(c["object"]));
    CAPTURE(name, volcano, message);
    CHECK(message.empty() == (volcano == "OK"));
  }
}

}  // namespace
}  // namespace tephra::webhooks
