// The chaos run's workload: seeded gang Jobs of several kinds, each with the terminal phase its
// policies imply. Pods finish through the kwok stages' sim.tephra.dev/* annotations.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace tephra::chaos {

struct JobPlan {
  std::string name;
  std::string kind;      // complete, ttl, abort, restart, fail
  std::string expected;  // Completed, Aborted, Failed, or "deleted" (removed by its TTL)
  std::string manifest;  // JSON
  double submit_at = 0;  // seconds after the run starts
};

struct WorkloadOptions {
  int jobs = 100;
  double spread_seconds = 60;  // submissions are spread over [0, spread)
  std::string namespace_;
  std::string scheduler_name;
  std::vector<std::string> queues;
  std::vector<std::string> priority_classes;
  int ttl_seconds = 10;
};

std::vector<JobPlan> PlanJobs(const WorkloadOptions& options, std::mt19937_64& rng);

}  // namespace tephra::chaos
