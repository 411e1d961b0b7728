// tephra-controller-manager throughput and memory against a real control plane (started by
// bench/controllers.sh). The benchmark plays the scheduler's enqueue: it moves PodGroups to
// Inqueue and times how fast the controller creates the pods, counted by a watch.
//
//   bench_controllers --manager PATH --admin-kubeconfig A --manager-kubeconfig M --json OUT
//
// Scenarios: one job of 1,000 replicas; 100 jobs of 10 pods; then jobs up to 10,000 pods in
// total, after which the manager's resident memory is read from its /metrics.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <rapidjson/document.h>

#include "api/kinds.h"
#include "api/scheduling.h"
#include "base/flags.h"
#include "bench/common.h"
#include "json/json.h"
#include "kube/client.h"
#include "kube/config.h"
#include "tests/support/process.h"

namespace tephra::bench {
namespace {

using Clock = std::chrono::steady_clock;

using bench::Die;

std::string JobJson(const std::string& name, int replicas) {
  return R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{"name":")" + name +
         R"("},"spec":{"schedulerName":"volcano","minAvailable":)" + std::to_string(replicas) +
         R"(,"tasks":[{"name":"w","replicas":)" + std::to_string(replicas) +
         R"(,"template":{"metadata":{"labels":{"app":"bench"}},"spec":{"restartPolicy":"Never",)"
         R"("containers":[{"name":"main","image":"busybox","command":["sleep","3600"],)"
         R"("resources":{"requests":{"cpu":"100m","memory":"64Mi"}}}]}}}]}})";
}

// Counts pods added in a namespace through a watch, from the moment it is created.
class PodCounter {
 public:
  PodCounter(std::shared_ptr<kube::Client> client, std::string ns) : client_(std::move(client)) {
    auto list = client_->List(kube::resources::kPods, ns);
    if (!list.ok()) Die(list.status().ToString());
    kube::WatchOptions wo;
    wo.resource_version = list->resource_version();
    auto watch = client_->StartWatch(kube::resources::kPods, ns, wo);
    if (!watch.ok()) Die(watch.status().ToString());
    watch_ = std::move(*watch);
    thread_ = std::thread([this] {
      while (true) {
        auto ev = watch_->Next();
        if (!ev.ok() || !ev->has_value()) return;
        if ((*ev)->type == kube::WatchEventType::kAdded) {
          ++added_;
          last_ = Clock::now();
        }
      }
    });
  }
  ~PodCounter() {
    watch_->Stop();
    thread_.join();
  }
  // Waits until `n` pods were added; returns when the n-th arrived.
  Clock::time_point WaitFor(int64_t n, std::chrono::seconds timeout) {
    auto deadline = Clock::now() + timeout;
    while (added_.load() < n) {
      if (Clock::now() > deadline)
        Die("timed out waiting for " + std::to_string(n) + " pods (have " +
            std::to_string(added_.load()) + ")");
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return last_.load();
  }

 private:
  std::shared_ptr<kube::Client> client_;
  std::unique_ptr<kube::Watch> watch_;
  std::atomic<int64_t> added_{0};
  std::atomic<Clock::time_point> last_{Clock::time_point()};
  std::thread thread_;
};

// Waits until `count` PodGroups exist in ns and returns their names.
std::vector<std::string> WaitForPodGroups(kube::Client& client, const std::string& ns,
                                          size_t count) {
  auto deadline = Clock::now() + std::chrono::seconds(120);
  while (Clock::now() < deadline) {
    std::vector<std::string> names;
    auto rv = client.ListAll(api::kPodGroups, ns, {}, [&](const json::Value& v) {
      json::Errors e;
      names.push_back(json::Reader(&v, &e)["metadata"]["name"].String());
      return Status::Ok();
    });
    if (rv.ok() && names.size() >= count) return names;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  Die("PodGroups did not appear in " + ns);
}

void Admit(kube::Client& client, const std::string& ns, const std::vector<std::string>& pgs) {
  std::vector<std::thread> threads;
  std::atomic<size_t> next{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (size_t i = next++; i < pgs.size(); i = next++) {
        auto r = client.Patch(api::kPodGroups, ns, pgs[i], kube::PatchType::kMerge,
                              R"({"status":{"phase":"Inqueue"}})");
        if (!r.ok()) Die(r.status().ToString());
      }
    });
  }
  for (auto& t : threads) t.join();
}

void CreateNamespace(kube::Client& client, const std::string& ns) {
  auto r = client.Create(
      kube::resources::kNamespaces, "",
      R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":")" + ns + R"("}})");
  if (!r.ok() && r.status().code() != StatusCode::kAlreadyExists) Die(r.status().ToString());
}

void CreateJobs(kube::Client& client, const std::string& ns, int jobs, int replicas,
                const std::string& prefix) {
  for (int i = 0; i < jobs; ++i) {
    auto r = client.Create(api::kJobs, ns, JobJson(prefix + std::to_string(i), replicas));
    if (!r.ok()) Die(r.status().ToString());
  }
}

double Seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

// process_resident_memory_bytes from the manager's /metrics.
double ResidentBytes(int port) {
  testing::CommandResult r =
      testing::RunCommand({"curl", "-sf", "http://127.0.0.1:" + std::to_string(port) + "/metrics"});
  if (!r.ok()) Die("reading /metrics failed");
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("process_resident_memory_bytes ", 0) == 0) return std::stod(line.substr(30));
  }
  Die("no process_resident_memory_bytes in /metrics");
}

int HealthPort(const std::string& log) {
  for (int i = 0; i < 200; ++i) {
    std::ifstream in(log);
    for (std::string line; std::getline(in, line);) {
      auto at = line.find("/metrics on port ");
      if (at != std::string::npos) return std::stoi(line.substr(at + 17));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  Die("the manager did not start its health server");
}

int Run(int argc, char** argv) {
  std::string manager, admin_kubeconfig, manager_kubeconfig, json_out;
  int workers = 3;
  base::FlagSet flags("bench_controllers");
  flags.AddString("manager", &manager, "tephra-controller-manager binary");
  flags.AddString("admin-kubeconfig", &admin_kubeconfig, "admin kubeconfig");
  flags.AddString("manager-kubeconfig", &manager_kubeconfig, "the controller manager's kubeconfig");
  flags.AddString("json", &json_out, "where to write the results");
  flags.AddInt("worker-threads", &workers, "job controller workers");
  if (Status s = flags.Parse(argc, argv); !s.ok()) Die(s.message());
  auto admin = bench::UnthrottledClient(admin_kubeconfig);

  const std::string log = "/tmp/bench-controller-manager.log";
  std::remove(log.c_str());
  testing::BackgroundProcess process(
      {manager, "--kubeconfig=" + manager_kubeconfig, "--leader-elect=false",
       "--healthz-address=127.0.0.1:0", "--kube-api-qps=2000", "--kube-api-burst=4000",
       "--worker-threads=" + std::to_string(workers)},
      log);
  if (!process.started()) Die("cannot start " + manager);
  const int port = HealthPort(log);
  std::this_thread::sleep_for(std::chrono::seconds(2));  // caches synced
  const double rss_idle = ResidentBytes(port);
  std::map<std::string, double> results;
  results["rss_bytes_idle"] = rss_idle;

  // Creates `jobs` jobs of `replicas` pods in a fresh namespace, waits for their PodGroups,
  // admits them all and returns the seconds until the last pod was created.
  auto scenario = [&](const std::string& ns, int jobs, int replicas, const char* label) {
    CreateNamespace(*admin, ns);
    PodCounter counter(admin, ns);
    CreateJobs(*admin, ns, jobs, replicas, "job");
    auto pgs = WaitForPodGroups(*admin, ns, static_cast<size_t>(jobs));
    auto t0 = Clock::now();
    Admit(*admin, ns, pgs);
    const int64_t pods = int64_t{jobs} * replicas;
    double seconds = Seconds(counter.WaitFor(pods, std::chrono::seconds(600)) - t0);
    std::cout << label << ": " << seconds << " s, " << static_cast<double>(pods) / seconds
              << " pods/s\n";
    return static_cast<double>(pods) / seconds;
  };
  results["one_job_1000_pods_per_second"] = scenario("bench-one", 1, 1000, "1 job x 1000 pods");
  results["jobs_100x10_pods_per_second"] = scenario("bench-many", 100, 10, "100 jobs x 10 pods");
  // Up to 10,000 pods cached.
  results["jobs_8x1000_pods_per_second"] = scenario("bench-fill", 8, 1000, "8 jobs x 1000 pods");
  {
    std::this_thread::sleep_for(std::chrono::seconds(5));  // let statuses settle
    const double rss = ResidentBytes(port);
    results["rss_bytes_10000_pods"] = rss;
    results["rss_bytes_per_cached_pod"] = (rss - rss_idle) / 10000;
    std::cout << "resident memory: idle " << rss_idle / (1 << 20) << " MiB, with 10,000 pods "
              << rss / (1 << 20) << " MiB (" << (rss - rss_idle) / 10000 << " bytes/pod)\n";
  }
  {  // Baseline: the same pods created directly by 16 client threads, no controller involved.
    const std::string ns = "bench-direct";
    CreateNamespace(*admin, ns);
    std::vector<std::thread> threads;
    std::atomic<int> next{0};
    auto t0 = Clock::now();
    for (int t = 0; t < 16; ++t) {
      threads.emplace_back([&] {
        for (int i = next++; i < 1000; i = next++) {
          std::string pod =
              R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"direct-)" + std::to_string(i) +
              R"(","labels":{"app":"bench"}},"spec":{"schedulerName":"none",)"
              R"("restartPolicy":"Never","containers":[{"name":"main","image":"busybox",)"
              R"("command":["sleep","3600"],"resources":{"requests":{"cpu":"100m",)"
              R"("memory":"64Mi"}}}]}})";
          auto r = admin->Create(kube::resources::kPods, ns, pod);
          if (!r.ok()) Die(r.status().ToString());
        }
      });
    }
    for (auto& t : threads) t.join();
    double seconds = Seconds(Clock::now() - t0);
    results["baseline_direct_create_pods_per_second"] = 1000 / seconds;
    std::cout << "baseline, 1000 pods created directly by 16 threads: " << 1000 / seconds
              << " pods/s\n";
  }
  if (!json_out.empty()) {
    json::Writer w;
    w.StartObject();
    for (const auto& [k, v] : results) w.Key(k).Double(v);
    w.EndObject();
    std::ofstream(json_out) << w.str() << "\n";
  }
  process.Signal(15);
  process.Wait(std::chrono::seconds(10));
  return 0;
}

}  // namespace
}  // namespace tephra::bench

int main(int argc, char** argv) {
  return tephra::bench::Run(argc, argv);
}
