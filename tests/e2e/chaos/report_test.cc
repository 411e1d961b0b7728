// The chaos report's arithmetic: recovery to the next bind, memory trends per incarnation.
#include "tests/e2e/chaos/report.h"

#include <catch2/catch.hpp>

#include "tests/e2e/chaos/stats.h"

namespace tephra::chaos {
namespace {

TEST_CASE("recovery is the time from a fault's end to the first bind after it") {
  std::vector<FaultRecord> faults(3);
  faults[0].end = 10;
  faults[1].end = 20;
  faults[2].end = 50;
  FillRecovery({25.5, 3, 12, 20}, &faults);
  CHECK(*faults[0].recovery == Approx(2));
  CHECK(*faults[1].recovery == Approx(0));  // a bind at the same instant counts
  CHECK_FALSE(faults[2].recovery.has_value());
}

TEST_CASE("memory slope ignores the warm-up and short-lived incarnations") {
  std::vector<MemorySample> samples;
  for (int i = 0; i <= 10; ++i) {
    // 100 MiB at start, +50 MiB during the first minute, then flat at +1 MiB per minute.
    long kib = i == 0 ? 100 * 1024 : (150 + i) * 1024;
    samples.push_back({60.0 * i, "scheduler", 0, 1, kib});
  }
  CHECK(*MemorySlope(samples, 60, 300) == Approx(1));
  samples.resize(3);
  CHECK_FALSE(MemorySlope(samples, 60, 300).has_value());
}

TEST_CASE("the report names the seed to replay on failure and counts violations") {
  RunSummary s;
  s.seed = 77;
  s.violations = {{"overcommit", "node/n1", "cpu"}};
  FaultRecord f;
  f.kind = "kill-leader-scheduler";
  f.handover = 7.5;
  s.faults = {f};
  std::string failed = RenderReport(s, false);
  CHECK(failed.find("invariant violations: 1") != std::string::npos);
  CHECK(failed.find("leader hand-over scheduler (s): n=1 p50=7.50") != std::string::npos);
  CHECK(failed.find("FAIL (replay with --seed=77)") != std::string::npos);
  CHECK(FormatFixed(2.5, 2) == "2.50");
}

}  // namespace
}  // namespace tephra::chaos
