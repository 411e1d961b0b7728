// Scaling: every admission path and every decoder must take time linear (or n log n) in its
// input. Each case times the work at n, 2n, 4n and 8n (the thread's CPU time, fastest of a few
// runs, against a shared machine's noise) and requires t(8n) to stay within n log n growth plus
// half again for noise and caches (about 12-15x for the sizes here), far below the 64x of a
// quadratic step; the curve is printed ("scaling: ...") for the record. Inputs are built
// before timing; n is chosen so that 8n stays well under a second.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <functional>
#include <string>

#include <catch2/catch.hpp>

#include "api/batch.h"
#include "api/core.h"
#include "api/scheduling.h"
#include "scheduler/framework/conf.h"
#include "scheduler/replay/snapshot_io.h"
#include "tests/support/hostile_inputs.h"
#include "tests/unit/webhooks/testing.h"

namespace tephra {
namespace {

using webhooks::Operation;

constexpr int kRuns = 5;
// t(8n)/t(n) is about 8 for linear work and 8·log(8n)/log(n) ≈ 10 for n log n; quadratic work
// gives 64. Inputs that outgrow the CPU caches between n and 8n add up to ~1.5× on top (seen on
// an idle 2-core machine, where 1.5 failed one run in three), so the bound is twice n log n:
// still far below what any quadratic step produces.
constexpr double kSlack = 2.0;
// Below this a time is mostly noise; t(n) is floored to it before the ratio is taken.
constexpr double kFloorSeconds = 1e-3;

// CPU time of this thread: unlike wall time, it does not count the time other processes of a
// loaded machine hold the CPU.
double ThreadSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double Fastest(const std::function<void()>& fn) {
  double best = 1e9;
  for (int i = 0; i < kRuns; ++i) {
    double start = ThreadSeconds();
    fn();
    best = std::min(best, ThreadSeconds() - start);
  }
  return best;
}

// Times run(make(k)) for k = n, 2n, 4n, 8n and checks the growth.
void CheckScales(const std::string& name, size_t n, const std::function<std::string(size_t)>& make,
                 const std::function<void(const std::string&)>& run) {
  double times[4];
  std::string line = "scaling: " + name + ":";
  for (int step = 0; step < 4; ++step) {
    size_t k = n << step;
    std::string input = make(k);
    times[step] = Fastest([&] { run(input); });
    char buf[96];
    std::snprintf(buf, sizeof buf, " n=%zu %.2fms", k, times[step] * 1e3);
    line += buf;
  }
  double ratio = times[3] / std::max(times[0], kFloorSeconds);
  double n_log_n = 8 * std::log(8.0 * static_cast<double>(n)) / std::log(static_cast<double>(n));
  char buf[64];
  std::snprintf(buf, sizeof buf, " ratio(8n/n)=%.1f (allowed %.1f)", times[3] / times[0],
                kSlack * n_log_n);
  std::printf("%s%s\n", line.c_str(), buf);
  INFO(line << buf);
  CHECK(ratio <= kSlack * n_log_n);
}

std::string Repeat(size_t n, const std::function<std::string(size_t)>& item) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += (i > 0 ? "," : "") + item(i);
  return out;
}

std::string Str(size_t i) {
  return std::to_string(i);
}

// ---------------------------------------------------------------------------------------------
// Inputs

struct JobShape {
  size_t tasks = 1;
  bool unnamed = false;  // tasks without names (defaulting names them)
  size_t labels = 0;
  size_t annotations = 0;
  size_t containers = 1;
  size_t env = 0;
  size_t policies = 0;
  bool chain = false;  // task i dependsOn task i+1
};

std::string Labels(size_t n) {
  return "{" +
         Repeat(n,
                [](size_t i) {
                  return R"("example.com/label-)" + Str(i) + R"(":"v)" + Str(i) + "\"";
                }) +
         "}";
}

std::string Container(size_t i, size_t env) {
  return R"({"name":"c)" + Str(i) + R"(","image":"busybox","command":["sh","-c","true"],)" +
         R"("resources":{"requests":{"cpu":"100m","memory":"64Mi"}},"env":[)" +
         Repeat(env, [](size_t e) { return R"({"name":"E)" + Str(e) + R"(","value":"x"})"; }) +
         "]}";
}

std::string JobText(const JobShape& s) {
  std::string tasks = Repeat(s.tasks, [&](size_t t) {
    std::string task =
        s.unnamed ? R"({"replicas":1,)" : R"({"name":"t)" + Str(t) + R"(","replicas":1,)";
    if (s.chain && t + 1 < s.tasks) task += R"("dependsOn":{"name":["t)" + Str(t + 1) + R"("]},)";
    if (s.policies > 0) {
      task += R"("policies":[)" +
              Repeat(s.policies,
                     [](size_t p) {
                       return R"({"exitCode":)" + Str(p + 1) + R"(,"action":"RestartTask"})";
                     }) +
              "],";
    }
    return task + R"("template":{"spec":{"containers":[)" +
           Repeat(s.containers, [&](size_t c) { return Container(c, s.env); }) + "]}}}";
  });
  return R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{"name":"big",)"
         R"("namespace":"team","labels":)" +
         Labels(s.labels) + R"(,"annotations":)" + Labels(s.annotations) +
         R"(},"spec":{"queue":"default","tasks":[)" + tasks + "]}}";
}

std::string QueueText(size_t keys, size_t labels) {
  std::string list =
      "{" + Repeat(keys, [](size_t i) { return R"("example.com/r)" + Str(i) + R"(":"2")"; }) + "}";
  std::string guarantee =
      "{" + Repeat(keys, [](size_t i) { return R"("example.com/r)" + Str(i) + R"(":"1")"; }) + "}";
  return R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","metadata":{"name":"big",)"
         R"("labels":)" +
         Labels(labels) + R"(,"annotations":)" + Labels(labels) +
         R"(},"spec":{"weight":1,"capability":)" + list + R"(,"deserved":)" + list +
         R"(,"guarantee":{"resource":)" + guarantee + "}}}";
}

std::string PodGroupText(size_t keys, size_t labels) {
  return R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":{"name":"big",)"
         R"("namespace":"team","labels":)" +
         Labels(labels) +
         R"(},"spec":{"minMember":1,"queue":"default",)"
         R"("minResources":{)" +
         Repeat(keys, [](size_t i) { return R"("example.com/r)" + Str(i) + R"(":"1")"; }) +
         R"(},"minTaskMember":{)" +
         Repeat(keys, [](size_t i) { return R"("t)" + Str(i) + R"(":1)"; }) +
         R"(},"subGroupPolicy":[)" +
         Repeat(keys,
                [](size_t i) { return R"({"name":"s)" + Str(i) + R"(","subGroupSize":1})"; }) +
         "]}}";
}

std::string PodText(size_t containers, size_t env, size_t labels) {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"big","namespace":"team","labels":)" +
         Labels(labels) + R"(},"spec":{"schedulerName":"volcano","containers":[)" +
         Repeat(containers, [&](size_t c) { return Container(c, env); }) + "]}}";
}

// ---------------------------------------------------------------------------------------------
// Admission paths

struct World {
  api::StaticQueueLookup queues = webhooks::testing::TestQueues();
  webhooks::testing::StaticNamespaces namespaces;
  webhooks::testing::TestRouter router{queues, namespaces};
};

World& TheWorld() {
  static World* world = new World();
  return *world;
}

// Serves a review body on `path`; the answer must be a review (HTTP 200).
std::function<void(const std::string&)> Admits(std::string_view path) {
  return [path](const std::string& body) {
    base::HttpResponse http = TheWorld().router.Http(path, body);
    REQUIRE(http.status == 200);
  };
}

// The review body of `op` on object(n) (an UPDATE's old object is the object itself).
std::function<std::string(size_t)> AsReview(std::string kind, Operation op,
                                            std::function<std::string(size_t)> object) {
  return [=](size_t n) {
    std::string text = object(n);
    return webhooks::testing::Review(kind, op, text, op == Operation::kUpdate ? text : "");
  };
}

TEST_CASE("Job admission scales linearly in tasks, chains, labels, containers, env and policies") {
  struct Dimension {
    const char* name;
    size_t n;
    std::function<JobShape(size_t)> shape;
  };
  const Dimension dims[] = {
      {"tasks", 500, [](size_t k) { return JobShape{.tasks = k}; }},
      {"unnamed tasks", 500, [](size_t k) { return JobShape{.tasks = k, .unnamed = true}; }},
      {"dependsOn chain", 2500, [](size_t k) { return JobShape{.tasks = k, .chain = true}; }},
      {"labels", 2500, [](size_t k) { return JobShape{.labels = k}; }},
      {"annotations", 2500, [](size_t k) { return JobShape{.annotations = k}; }},
      {"containers", 250, [](size_t k) { return JobShape{.containers = k}; }},
      {"env vars", 2500, [](size_t k) { return JobShape{.env = k}; }},
      {"policies", 1000, [](size_t k) { return JobShape{.policies = k}; }},
  };
  for (const Dimension& d : dims) {
    auto job = [&](size_t k) { return JobText(d.shape(k)); };
    CheckScales(std::string("/jobs/mutate ") + d.name, d.n,
                AsReview("Job", Operation::kCreate, job), Admits(webhooks::kJobsMutate));
    CheckScales(std::string("/jobs/validate create ") + d.name, d.n,
                AsReview("Job", Operation::kCreate, job), Admits(webhooks::kJobsValidate));
  }
  CheckScales("/jobs/validate update tasks", 500,
              AsReview("Job", Operation::kUpdate, [](size_t k) { return JobText({.tasks = k}); }),
              Admits(webhooks::kJobsValidate));
}

TEST_CASE("A dependsOn cycle through every task is refused, naming it, at any length") {
  for (size_t n : {3u, 42'000u}) {
    std::string job = JobText({.tasks = n, .chain = true});
    // Close the chain: the last task depends on the first.
    std::string last = R"({"name":"t)" + Str(n - 1) + R"(","replicas":1,)";
    job.replace(job.find(last), last.size(), last + R"("dependsOn":{"name":["t0"]},)");
    webhooks::AdmissionResponse r =
        TheWorld().router.Call(webhooks::kJobsValidate,
                               AsReview("Job", Operation::kCreate, [&](size_t) { return job; })(n));
    CHECK_FALSE(r.allowed);
    CHECK(r.message.find("spec.tasks: dependsOn forms a cycle: t0 -> t1 -> ") != std::string::npos);
  }
}

TEST_CASE("Queue admission scales linearly in resource keys and labels") {
  CheckScales("/queues/mutate capability keys", 500,
              AsReview("Queue", Operation::kCreate, [](size_t k) { return QueueText(k, 0); }),
              Admits(webhooks::kQueuesMutate));
  CheckScales("/queues/validate capability keys", 500,
              AsReview("Queue", Operation::kCreate, [](size_t k) { return QueueText(k, 0); }),
              Admits(webhooks::kQueuesValidate));
  CheckScales("/queues/mutate labels", 2500,
              AsReview("Queue", Operation::kCreate, [](size_t k) { return QueueText(1, k); }),
              Admits(webhooks::kQueuesMutate));
  CheckScales("/queues/validate update capability keys", 500,
              AsReview("Queue", Operation::kUpdate, [](size_t k) { return QueueText(k, 0); }),
              Admits(webhooks::kQueuesValidate));
}

TEST_CASE("PodGroup admission scales linearly in resource keys, task members and labels") {
  CheckScales("/podgroups/mutate keys", 500,
              AsReview("PodGroup", Operation::kCreate, [](size_t k) { return PodGroupText(k, 0); }),
              Admits(webhooks::kPodGroupsMutate));
  CheckScales("/podgroups/validate keys", 500,
              AsReview("PodGroup", Operation::kCreate, [](size_t k) { return PodGroupText(k, 0); }),
              Admits(webhooks::kPodGroupsValidate));
  CheckScales("/podgroups/mutate labels", 2500,
              AsReview("PodGroup", Operation::kCreate, [](size_t k) { return PodGroupText(1, k); }),
              Admits(webhooks::kPodGroupsMutate));
}

TEST_CASE("Pod admission scales linearly in containers, env vars and labels") {
  CheckScales("/pods/mutate containers", 250,
              AsReview("Pod", Operation::kCreate, [](size_t k) { return PodText(k, 0, 0); }),
              Admits(webhooks::kPodsMutate));
  CheckScales("/pods/validate labels", 2500,
              AsReview("Pod", Operation::kCreate, [](size_t k) { return PodText(1, 0, k); }),
              Admits(webhooks::kPodsValidate));
  CheckScales("/pods/mutate env vars", 2500,
              AsReview("Pod", Operation::kCreate, [](size_t k) { return PodText(1, k, 0); }),
              Admits(webhooks::kPodsMutate));
}

// ---------------------------------------------------------------------------------------------
// Decoders

template <typename Decode, typename Encode>
std::function<void(const std::string&)> RoundTrips(Decode decode, Encode encode) {
  return [=](const std::string& text) {
    auto decoded = decode(text, api::DecodeOptions{.keep_raw = true});
    REQUIRE(decoded.ok());
    (void)encode(**decoded);
  };
}

TEST_CASE("Object decoders and encoders scale linearly") {
  auto job = [](std::string_view t, const api::DecodeOptions& o) { return api::DecodeJob(t, o); };
  auto queue = [](std::string_view t, const api::DecodeOptions& o) {
    return api::DecodeQueue(t, o);
  };
  auto pg = [](std::string_view t, const api::DecodeOptions& o) {
    return api::DecodePodGroup(t, o);
  };
  auto pod = [](std::string_view t, const api::DecodeOptions& o) { return api::DecodePod(t, o); };
  CheckScales(
      "Job codec tasks", 500, [](size_t k) { return JobText({.tasks = k}); },
      RoundTrips(job, api::EncodeJob));
  CheckScales(
      "Job codec labels", 2500, [](size_t k) { return JobText({.labels = k}); },
      RoundTrips(job, api::EncodeJob));
  CheckScales(
      "Queue codec capability keys", 1000, [](size_t k) { return QueueText(k, 0); },
      RoundTrips(queue, api::EncodeQueue));
  CheckScales(
      "PodGroup codec keys", 1000, [](size_t k) { return PodGroupText(k, 0); },
      RoundTrips(pg, api::EncodePodGroup));
  CheckScales(
      "Pod codec containers", 250, [](size_t k) { return PodText(k, 0, 0); },
      RoundTrips(pod, api::EncodePod));
  CheckScales(
      "Pod codec env vars", 2500, [](size_t k) { return PodText(1, k, 0); },
      RoundTrips(pod, api::EncodePod));
}

TEST_CASE("The scheduler configuration parser scales linearly") {
  auto parses = [](const std::string& yaml) {
    REQUIRE(scheduler::ParseSchedulerConf(yaml, {}).ok());
  };
  CheckScales(
      "scheduler conf plugins", 500,
      [](size_t k) {
        std::string yaml = "actions: \"enqueue, allocate\"\ntiers:\n- plugins:\n";
        for (size_t i = 0; i < k; ++i)
          yaml += "  - name: p" + Str(i) + "\n    enableJobOrder: false\n";
        return yaml;
      },
      parses);
  CheckScales(
      "scheduler conf argument keys", 1000,
      [](size_t k) {
        std::string yaml =
            "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: binpack\n    arguments:\n";
        for (size_t i = 0; i < k; ++i)
          yaml += "      binpack.resources.example.com/r" + Str(i) + ": " + Str(i) + "\n";
        return yaml;
      },
      parses);
}

TEST_CASE("The scheduler configuration parser refuses alias bombs and deep arguments") {
  // 2^30 values once expanded, yet within the 32 levels arguments may nest.
  std::string yaml = "actions: \"allocate\"\n" + testing::YamlAliasBomb(30) +
                     "tiers:\n- plugins:\n  - name: binpack\n    arguments: *a30\n";
  auto conf = scheduler::ParseSchedulerConf(yaml, {});
  REQUIRE_FALSE(conf.ok());
  CHECK(conf.status().message() ==
        "tiers[0].plugins[0].arguments: too many values once aliases are expanded");

  std::string deep =
      "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: binpack\n    arguments: ";
  for (int i = 0; i < 40; ++i) deep += "{a: ";
  deep += "1" + std::string(40, '}') + "\n";
  conf = scheduler::ParseSchedulerConf(deep, {});
  REQUIRE_FALSE(conf.ok());
  CHECK(conf.status().message().find("nested more than 32 levels deep") != std::string::npos);
}

TEST_CASE("The JSON helpers scale linearly") {
  auto object = [](size_t k) {
    return "{" +
           Repeat(k, [](size_t i) { return R"("k)" + Str(i) + R"(":{"v":)" + Str(i) + "}"; }) + "}";
  };
  CheckScales("json Parse and Write", 20000, object, [](const std::string& text) {
    json::Document doc;
    REQUIRE(json::Parse(text, &doc).ok());
    REQUIRE(json::Write(doc).size() == text.size());
  });
  CheckScales("json Equal, members reversed", 20000, object, [](const std::string& text) {
    json::Document a;
    json::Document b;
    REQUIRE(json::Parse(text, &a).ok());
    REQUIRE(json::Parse(text, &b).ok());
    std::reverse(b.MemberBegin(), b.MemberEnd());
    REQUIRE(json::Equal(a, b));
  });
  // The target, a newline, then a patch changing, removing and adding members.
  auto target_and_patch = [&object](size_t k) {
    return object(k) + "\n{" +
           Repeat(k,
                  [](size_t i) {
                    std::string key = R"("k)" + Str(i) + R"(":)";
                    if (i % 3 == 0) return key + R"({"v":null,"w":1})";
                    if (i % 3 == 1) return key + "null";
                    return R"("new)" + Str(i) + R"(":{"v":1})";
                  }) +
           "}";
  };
  CheckScales("json ApplyMergePatch", 20000, target_and_patch, [](const std::string& text) {
    size_t split = text.find('\n');
    std::string out;
    REQUIRE(json::ApplyMergePatch(std::string_view(text).substr(0, split),
                                  std::string_view(text).substr(split + 1), &out)
                .ok());
  });
}

std::string SnapshotText(size_t pods, size_t labels) {
  std::string pod_list = Repeat(pods, [](size_t i) {
    return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p)" + Str(i) +
           R"(","namespace":"ns","uid":"u)" + Str(i) +
           R"("},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"1"}}}],)"
           R"("affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":)"
           R"({"nodeSelectorTerms":[{"matchFields":[{"key":"metadata.name","operator":"In",)"
           R"("values":["n)" +
           Str(i % 100) + R"("]}]}]}}}}})";
  });
  std::string nodes = Repeat(100, [&](size_t n) {
    std::string tasks;
    for (size_t i = n; i < pods; i += 100) {
      tasks += (tasks.empty() ? "" : ",") + std::string(R"({"uid":"u)") + Str(i) +
               R"(","status":"Running"})";
    }
    return R"({"name":"n)" + Str(n) + R"(","allocatable":{"cpu":"1000"},"ready":true,"tasks":[)" +
           tasks + "]}";
  });
  return R"({"apiVersion":"tephra.dev/v1alpha1","kind":"SchedulerSnapshot","pods":[)" + pod_list +
         R"(],"nodes":[)" + nodes +
         R"(],"queues":[{"name":"default","weight":1}],)"
         R"("jobs":[{"id":"ns/j","namespace":"ns","name":"j","queue":"default","minAvailable":1,)"
         R"("minTaskMember":{)" +
         Repeat(pods, [](size_t i) { return R"("r)" + Str(i) + R"(":1)"; }) + R"(},"tasks":[)" +
         Repeat(pods,
                [](size_t i) {
                  return R"({"uid":"u)" + Str(i) + R"(","status":"Running","node":"n1"})";
                }) +
         R"(]}],"namespaces":{"ns":)" + Labels(labels) + "}}";
}

TEST_CASE("The snapshot decoder scales linearly") {
  auto decodes = [](const std::string& text) {
    scheduler::SpecInterner interner;
    auto doc = scheduler::DecodeSnapshot(text, interner);
    INFO(doc.status().message());
    REQUIRE(doc.ok());
  };
  CheckScales(
      "snapshot pods", 500, [](size_t k) { return SnapshotText(k, 0); }, decodes);
  CheckScales(
      "snapshot namespace labels", 2500, [](size_t k) { return SnapshotText(1, k); }, decodes);
}

}  // namespace
}  // namespace tephra
