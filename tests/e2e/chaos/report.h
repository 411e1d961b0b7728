// What a chaos run measured and how it is reported: faults with their hand-over and recovery
// times, jobs by how they ended, violations, and each daemon incarnation's memory trend.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tests/e2e/chaos/invariants.h"

namespace tephra::chaos {

struct FaultRecord {
  std::string kind;
  double at = 0;                   // seconds into the run
  double end = 0;                  // when the fault was over (daemon back, API server up, ...)
  std::optional<double> handover;  // leader kills: seconds until another replica held the lease
  std::optional<double> recovery;  // seconds from `end` to the next successful bind
  std::string note;
};

struct MemorySample {
  double t = 0;  // seconds into the run
  std::string daemon;
  int replica = 0, incarnation = 0;
  long kib = 0;
};

struct RunSummary {
  uint64_t seed = 0;
  double seconds = 0;
  std::string namespace_;
  std::vector<FaultRecord> faults;
  std::map<std::string, int> daemon_exits;  // "scheduler exit 1" -> count
  size_t jobs_planned = 0, jobs_submitted = 0, jobs_as_expected = 0;
  int create_retries = 0;
  std::map<std::string, int> jobs_by_end;  // final phase, or "deleted"
  int samples = 0, unreadable_samples = 0;
  std::vector<Violation> violations;
  std::vector<MemorySample> memory;
  std::vector<std::string> problems;
};

// Sets each fault's recovery: from its end to the first bind at or after it (`binds` are
// seconds into the run, in any order). A fault with no later bind keeps none.
void FillRecovery(std::vector<double> binds, std::vector<FaultRecord>* faults);

// Least-squares RSS slope in MiB/min of one incarnation's samples after its first `warm_s`
// seconds; nullopt when it lived less than `min_life_s`.
std::optional<double> MemorySlope(const std::vector<MemorySample>& samples, double warm_s,
                                  double min_life_s);

// The human-readable report; ends in PASS or FAIL with the seed to replay.
std::string RenderReport(const RunSummary& s, bool pass);

// seconds,daemon,replica,incarnation,rss_kib
std::string MemoryCsv(const std::vector<MemorySample>& samples);

}  // namespace tephra::chaos
