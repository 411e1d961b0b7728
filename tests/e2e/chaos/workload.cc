#include "tests/e2e/chaos/workload.h"

#include <algorithm>

namespace tephra::chaos {
namespace {

struct Task {
  std::string name;
  int replicas;
  std::string result;  // Succeeded or Failed
  int seconds;
};

std::string TaskJson(const Task& t, const std::string& cpu) {
  return R"({"name":")" + t.name + R"(","replicas":)" + std::to_string(t.replicas) +
         R"(,"template":{"metadata":{"annotations":{"sim.tephra.dev/result":")" + t.result +
         R"(","sim.tephra.dev/duration":")" + std::to_string(t.seconds) +
         R"(s"}},"spec":{"restartPolicy":"Never","containers":[{"name":"main","image":"busybox",)"
         R"("resources":{"requests":{"cpu":")" +
         cpu + R"(","memory":"256Mi"}}}]}}})";
}

}  // namespace

std::vector<JobPlan> PlanJobs(const WorkloadOptions& o, std::mt19937_64& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  auto any = [&](const std::vector<std::string>& v) {
    return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)];
  };
  std::vector<JobPlan> plans;
  for (int i = 0; i < o.jobs; ++i) {
    JobPlan p;
    p.name = "job-" + std::to_string(i);
    int roll = pick(0, 99);
    p.kind = roll < 45   ? "complete"
             : roll < 65 ? "ttl"
             : roll < 77 ? "abort"
             : roll < 89 ? "restart"
                         : "fail";
    std::vector<Task> tasks{{"worker", pick(1, 4), "Succeeded", pick(3, 12)}};
    if (pick(0, 1) == 1) tasks.insert(tasks.begin(), {"master", 1, "Succeeded", tasks[0].seconds});
    std::string policies, extra;
    if (p.kind == "complete" || p.kind == "ttl") {
      p.expected = p.kind == "ttl" ? "deleted" : "Completed";
      if (p.kind == "ttl") extra = R"(,"ttlSecondsAfterFinished":)" + std::to_string(o.ttl_seconds);
    } else {
      // One failing task; what the failure leads to is the kind's policy.
      tasks.push_back({"flaky", 1, "Failed", pick(2, 6)});
      if (p.kind == "abort") {
        p.expected = "Aborted";
        policies = R"(,"policies":[{"event":"PodFailed","action":"AbortJob"}])";
      } else if (p.kind == "restart") {
        p.expected = "Failed";  // every attempt fails: retries run out
        policies = R"(,"policies":[{"event":"PodFailed","action":"RestartJob"}])";
        extra = R"(,"maxRetry":2)";
      } else {
        p.expected = "Failed";  // no policy: finished with fewer successes than minAvailable
      }
    }
    int total = 0;
    std::string task_json;
    std::string cpu = pick(0, 1) ? "500m" : "1";
    for (const Task& t : tasks) {
      total += t.replicas;
      task_json += (task_json.empty() ? "" : ",") + TaskJson(t, cpu);
    }
    p.manifest = R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{"name":")" +
                 p.name + R"(","namespace":")" + o.namespace_ + R"("},"spec":{"schedulerName":")" +
                 o.scheduler_name + R"(","queue":")" + any(o.queues) +
                 R"(","priorityClassName":")" + any(o.priority_classes) + R"(","minAvailable":)" +
                 std::to_string(total) + policies + extra + R"(,"tasks":[)" + task_json + "]}}";
    p.submit_at = std::uniform_real_distribution<double>(0, o.spread_seconds)(rng);
    plans.push_back(std::move(p));
  }
  std::sort(plans.begin(), plans.end(),
            [](const JobPlan& a, const JobPlan& b) { return a.submit_at < b.submit_at; });
  return plans;
}

}  // namespace tephra::chaos
