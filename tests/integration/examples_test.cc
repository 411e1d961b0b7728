// The examples/ manifests, unchanged except for names, run to Completed on the real control
// plane with tephra-controller-manager and tephra-scheduler as processes.

// GCC 12 with the sanitizers (asan preset) reports std::regex's NFA states as read uninitialised
// where libstdc++ moves them: a false positive inside <regex>, so it is silenced before the
// include.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <fstream>
#include <regex>
#include <sstream>

#include <catch2/catch.hpp>

#include "tests/integration/controllers/harness.h"
#include "tests/integration/scheduler_fixture.h"
#include "tests/support/cluster.h"

namespace tephra::testing {
namespace {

std::string ReadExample(const std::string& file) {
  std::ifstream in(std::string(TEPHRA_SOURCE_DIR) + "/examples/" + file);
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The examples name the shared "volcano" scheduler and cluster-wide queues; a test running in
// parallel with others gets its own of both. Simulated work is shortened from 30s to 2s.
std::string Localise(std::string manifest, const SchedulerFixture& f) {
  const std::pair<std::string, std::string> renames[] = {
      {R"(schedulerName: volcano\b)", "schedulerName: " + f.name()},
      {R"(queue: default\b)", "queue: " + f.queue_name("default")},
      {R"(\bexample-research\b)", f.queue_name("research")},
      {R"(\bexample-production\b)", f.queue_name("production")},
      {R"(sim\.tephra\.dev/duration: 30s)", "sim.tephra.dev/duration: 2s"},
  };
  for (const auto& [from, to] : renames)
    manifest = std::regex_replace(manifest, std::regex(from), to);
  return manifest;
}

TEST_CASE("the examples run to Completed") {
  SchedulerFixture f;
  f.AddNodes(4, "8", "32Gi");
  InstallControllerPrerequisites(f.kubectl());
  TestNamespace ns(f.kubectl(), "examples");
  f.AddQueue("default", 1);
  f.kubectl().MustRun({"apply", "-f", "-"}, Localise(ReadExample("queues.yaml"), f));
  for (const char* q : {"research", "production"}) {
    f.kubectl().MustRun({"label", "queue", f.queue_name(q), "tephra.dev/test-pool=" + f.id()});
  }
  ControllerManager manager(ns.name(), {"--scheduler-name=" + f.name(),
                                        "--queue-label-selector=tephra.dev/test-pool=" + f.id(),
                                        "--default-queue=" + f.queue_name("default")});
  f.Start();

  const std::vector<std::string> jobs = {"job-single-task.yaml", "job-mpi.yaml", "job-pytorch.yaml",
                                         "job-tensorflow.yaml"};
  for (const auto& file : jobs) {
    f.kubectl().MustRun({"-n", ns.name(), "create", "-f", "-"}, Localise(ReadExample(file), f));
  }
  f.kubectl().MustRun({"-n", ns.name(), "create", "-f", "-"},
                      Localise(ReadExample("podgroup-plain-pods.yaml"), f));

  const std::vector<std::string> job_names = {"hello", "mpi-pi", "pytorch-mnist", "tf-dist-mnist"};
  auto phases = [&] {
    std::string out;
    for (const auto& j : job_names) {
      out +=
          j + "=" + Jsonpath(f.kubectl(), ns.name(), "vcjob/" + j, "{.status.state.phase}") + " ";
    }
    return out +
           "spark-pi=" + Jsonpath(f.kubectl(), ns.name(), "podgroup/spark-pi", "{.status.phase}");
  };
  bool completed = Eventually(
      [&] {
        for (const auto& j : job_names) {
          if (Jsonpath(f.kubectl(), ns.name(), "vcjob/" + j, "{.status.state.phase}") !=
              "Completed")
            return false;
        }
        return Jsonpath(f.kubectl(), ns.name(), "podgroup/spark-pi", "{.status.phase}") ==
               "Completed";
      },
      std::chrono::seconds(120));
  INFO(phases() << "\ncontroller-manager:\n" << manager.LogTail());
  REQUIRE(completed);
  // The plugins did their part: the MPI job's hostfile and the TensorFlow cluster spec.
  CHECK_FALSE(f.kubectl()
                  .MustRun({"-n", ns.name(), "get", "configmap", "mpi-pi-svc", "-o", "name"})
                  .empty());
  std::string tf_env =
      f.kubectl().MustRun({"-n", ns.name(), "get", "pod", "tf-dist-mnist-worker-0", "-o",
                           R"(jsonpath={.spec.containers[0].env[?(@.name=="TF_CONFIG")].value})"});
  CHECK(tf_env.find("tf-dist-mnist-ps-0") != std::string::npos);
}

}  // namespace
}  // namespace tephra::testing
