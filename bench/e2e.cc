// End-to-end benchmark driver on a real control plane (started by bench/run.sh).
//
//   bench_e2e setup --kubeconfig F --nodes N [--shape uniform] [--queues 4]
//       creates priority classes, queues (when the CRDs exist) and N kwok nodes, and waits
//       until they are Ready.
//   bench_e2e run --kubeconfig F --namespace NS --mode pods|grouped|jobs --scheduler-name S
//                 --pods P [--gang-size 10] [--queues 4] [--shape uniform] [--creators 16]
//                 [--create-qps 0] [--pids name=PID,...] [--json OUT] [--series OUT.csv]
//                 [--timeout 900] [--stall 60] [--settle-seconds 20] [--settle-max 180]
//                 [--idle-seconds 10]
//       creates the workload in a fresh namespace with concurrent creators (pods: bare pods,
//       one per job; grouped: PodGroups and their annotated pods; jobs: Volcano Jobs whose
//       pods the controller-manager makes), watches every pod of the namespace and records
//       when it was first seen and when it was first seen bound. Stops when all P pods are
//       bound, when binding stalls, or after --timeout. Binding has stalled when no pod was
//       bound for --stall seconds and for ten times the longest gap between binds so far, so
//       a slow contender that keeps binding is measured rather than cut. Then, with every pod
//       placed, waits until every pod runs (at most --settle-max 180 s; kwok starts pods well
//       behind the binds on a loaded machine, and each start is work for a Volcano-style
//       scheduler: the PodGroup's running count) and at least --settle-seconds (status writes),
//       records each --pids process's CPU over that wait, and measures it for --idle-seconds
//       (the CPU it burns with nothing to do). Writes a summary
//       (first create → last bind, pods/s, creation → bind latency percentiles, per-second bind
//       rates, CPU seconds, peak RSS, idle cores and RSS of each
//       --pids process, the load average before and after) and a per-second series.
//   bench_e2e manifests [--nodes 10] [--shape uniform|mixed|taints] [--mode pods|grouped|jobs]
//                       [--pods 100] [--gang-size 10] [--plain-fraction 0.2] [--queues 4]
//       prints the cluster and the workload as one v1 List of JSON objects (no server needed).
//   bench_e2e reset --kubeconfig F --namespace NS
//       force-deletes the namespace's Jobs, pods and PodGroups, then the namespace, and waits
//       until it is gone.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <numeric>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>
#include <unordered_map>
#include <vector>

#include "api/kinds.h"
#include "base/token_bucket.h"
#include "bench/common.h"
#include "bench/workload.h"
#include "json/json.h"
#include "sync/mutex.h"

namespace {

using namespace tephra;
using bench::Arg;
using bench::Die;
using bench::Parallel;
using bench::PodWatcher;
using Clock = std::chrono::steady_clock;

bool CreateIgnoringExists(kube::Client& client, const kube::Resource& r, const std::string& ns,
                          const std::string& body) {
  auto res = client.Create(r, ns, body);
  return res.ok() || res.status().code() == StatusCode::kAlreadyExists;
}

// ---------------------------------------------------------------------------------- setup

int Setup(int argc, char** argv) {
  auto client = bench::UnthrottledClient(Arg(argc, argv, "--kubeconfig", ""));
  bench::ClusterSpec cluster;
  bench::WorkloadSpec work;
  cluster.nodes = std::stoi(Arg(argc, argv, "--nodes", "500"));
  if (!bench::ParseNodeShape(Arg(argc, argv, "--shape", "uniform"), &cluster.shape))
    Die("bad --shape");
  work.queues = std::stoi(Arg(argc, argv, "--queues", "4"));
  auto t0 = Clock::now();
  for (const auto& pc : bench::PriorityClassJsons(work)) {
    if (!CreateIgnoringExists(*client, kube::resources::kPriorityClasses, "", pc))
      Die("creating priority classes");
  }
  for (const auto& q : bench::QueueJsons(work)) {
    auto res = client->Create(api::kQueues, "", q);
    if (!res.ok() && res.status().code() != StatusCode::kAlreadyExists) {
      std::cerr << "bench_e2e: queues not created (" << res.status().ToString() << ")\n";
      break;
    }
  }
  std::atomic<int> failures{0};
  Parallel(cluster.nodes, 16, [&](int64_t i) {
    if (!CreateIgnoringExists(*client, kube::resources::kNodes, "",
                              bench::NodeJson(cluster, static_cast<int>(i)))) {
      ++failures;
    }
  });
  if (failures > 0) Die(std::to_string(failures.load()) + " nodes could not be created");
  // kwok marks them Ready (and keeps them so); the node lifecycle controller then lifts the
  // node.kubernetes.io/not-ready taint every new node is born with, at its own pace (about 4
  // nodes a second here). Until it has, schedulers that respect taints see a smaller cluster
  // than the bind ceiling does: the run waits for schedulable nodes, not just Ready ones.
  for (int attempt = 0; attempt < 1200; ++attempt) {
    int ready = 0, schedulable = 0;
    auto listed = client->ListAll(kube::resources::kNodes, "", {}, [&](const json::Value& node) {
      json::Errors e;
      json::Reader n(&node, &e);
      bool is_ready = false, tainted = false;
      n["status"]["conditions"].ForEach([&](const json::Reader& c) {
        if (c["type"].String() == "Ready" && c["status"].String() == "True") is_ready = true;
      });
      n["spec"]["taints"].ForEach([&](const json::Reader& t) {
        if (t["key"].String().starts_with("node.kubernetes.io/")) tainted = true;
      });
      ready += is_ready;
      schedulable += is_ready && !tainted;
      return Status::Ok();
    });
    if (listed.ok() && schedulable >= cluster.nodes) {
      std::cerr << "bench_e2e: " << schedulable << " nodes Ready and untainted after "
                << bench::SecondsSince(t0) << " s\n";
      return 0;
    }
    if (attempt % 20 == 0) {
      std::cerr << "bench_e2e: " << ready << " nodes Ready, " << schedulable
                << " of them untainted\n";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  Die("nodes did not become Ready and untainted");
}

// ---------------------------------------------------------------------------------- reset

// Deletes every object of the resource in the namespace, without grace, 32 at a time: the
// API server's DELETE collection works through one object at a time (--delete-collection-
// workers=1) and times out on thousands of pods.
void DeleteAll(kube::Client& client, const kube::Resource& r, const std::string& ns) {
  std::vector<std::string> names;
  auto listed = client.ListAll(r, ns, {}, [&](const json::Value& object) {
    json::Errors e;
    names.push_back(json::Reader(&object, &e)["metadata"]["name"].String());
    return Status::Ok();
  });
  if (!listed.ok()) {
    if (listed.status().code() != StatusCode::kNotFound) {
      std::cerr << "bench_e2e: listing " << r.plural << ": " << listed.status().ToString() << "\n";
    }
    return;
  }
  kube::DeleteOptions options;
  options.grace_period_seconds = 0;
  std::atomic<int> errors{0};
  Parallel(static_cast<int64_t>(names.size()), 32, [&](int64_t i) {
    Status st = client.Delete(r, ns, names[static_cast<size_t>(i)], options);
    if (!st.ok() && st.code() != StatusCode::kNotFound && ++errors <= 3) {
      std::cerr << "bench_e2e: deleting " << r.plural << ": " << st.ToString() << "\n";
    }
  });
}

int Reset(int argc, char** argv) {
  auto client = bench::UnthrottledClient(Arg(argc, argv, "--kubeconfig", ""));
  const std::string ns = Arg(argc, argv, "--namespace", "");
  auto t0 = Clock::now();
  DeleteAll(*client, api::kJobs, ns);
  DeleteAll(*client, kube::resources::kPods, ns);
  DeleteAll(*client, api::kPodGroups, ns);
  (void)client->Delete(kube::resources::kNamespaces, "", ns);
  for (int i = 0; i < 1200; ++i) {
    auto got = client->Get(kube::resources::kNamespaces, "", ns);
    if (!got.ok() && got.status().code() == StatusCode::kNotFound) {
      std::cerr << "bench_e2e: namespace " << ns << " gone after " << bench::SecondsSince(t0)
                << " s\n";
      return 0;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  Die("namespace " + ns + " still there after 600 s");
}

// CPU seconds (user + system) of a process, from /proc/PID/stat; -1 when unreadable.
// The 1, 5 and 15 minute load averages ("3.20 2.65 2.02").
std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

double CpuSeconds(const std::string& pid) {
  std::ifstream in("/proc/" + pid + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return -1;
  std::istringstream fields(stat.substr(paren + 2));
  std::string f;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; fields >> f; ++i) {  // field 3 is the state
    if (i == 14) utime = std::stoull(f);
    if (i == 15) {
      stime = std::stoull(f);
      break;
    }
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t k = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())));
  return v[std::min(v.size() - 1, k == 0 ? 0 : k - 1)];
}

struct Item {
  const kube::Resource* resource;
  std::string body;
};

// The objects a run creates, in order: bare pods, PodGroups with their pods, or Volcano Jobs.
std::vector<Item> CreationStream(const bench::WorkloadSpec& work, const std::string& mode) {
  std::vector<Item> items;
  for (const auto& job : bench::PlanJobs(work)) {
    if (mode == "jobs") {
      items.push_back({&api::kJobs, bench::VolcanoJobJson(work, job)});
      continue;
    }
    if (mode == "grouped")
      items.push_back({&api::kPodGroups, bench::PodGroupJson(work, job, "Pending")});
    for (int i = 0; i < job.size; ++i) {
      items.push_back({&kube::resources::kPods,
                       bench::PodJson(work, job, i, mode == "grouped", work.scheduler_name)});
    }
  }
  return items;
}

// ---------------------------------------------------------------------------------- manifests

// Writes the cluster and the workload as one v1 List (for kubectl create -f, or to read).
int Manifests(int argc, char** argv) {
  bench::ClusterSpec cluster;
  bench::WorkloadSpec work;
  cluster.nodes = std::stoi(Arg(argc, argv, "--nodes", "10"));
  if (!bench::ParseNodeShape(Arg(argc, argv, "--shape", "uniform"), &cluster.shape))
    Die("bad --shape");
  const std::string mode = Arg(argc, argv, "--mode", "grouped");
  if (mode != "pods" && mode != "grouped" && mode != "jobs") Die("bad --mode " + mode);
  work.shape = cluster.shape;
  work.namespace_ = Arg(argc, argv, "--namespace", "bench");
  work.scheduler_name = Arg(argc, argv, "--scheduler-name", "volcano");
  work.pods = std::stoll(Arg(argc, argv, "--pods", "100"));
  work.gang_size = std::stoi(Arg(argc, argv, "--gang-size", "10"));
  work.queues = std::stoi(Arg(argc, argv, "--queues", "4"));
  work.plain_fraction =
      mode == "pods" ? 1.0 : std::stod(Arg(argc, argv, "--plain-fraction", "0.2"));
  std::vector<std::string> objects = bench::PriorityClassJsons(work);
  for (auto& q : bench::QueueJsons(work)) objects.push_back(std::move(q));
  for (int i = 0; i < cluster.nodes; ++i) objects.push_back(bench::NodeJson(cluster, i));
  objects.push_back(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":)" +
                    json::Quote(work.namespace_) + "}}");
  for (auto& item : CreationStream(work, mode)) objects.push_back(std::move(item.body));
  std::cout << R"({"apiVersion":"v1","kind":"List","items":[)";
  for (size_t i = 0; i < objects.size(); ++i) std::cout << (i ? ",\n" : "\n") << objects[i];
  std::cout << "\n]}\n";
  return 0;
}

// ---------------------------------------------------------------------------------- run

int Run(int argc, char** argv) {
  const std::string kubeconfig = Arg(argc, argv, "--kubeconfig", "");
  const std::string mode = Arg(argc, argv, "--mode", "pods");
  const std::string scheduler_name = Arg(argc, argv, "--scheduler-name", "volcano");
  const int creators = std::stoi(Arg(argc, argv, "--creators", "16"));
  const double create_qps = std::stod(Arg(argc, argv, "--create-qps", "0"));
  const double timeout = std::stod(Arg(argc, argv, "--timeout", "900"));
  const double stall = std::stod(Arg(argc, argv, "--stall", "60"));
  const double settle_seconds = std::stod(Arg(argc, argv, "--settle-seconds", "20"));
  const double settle_max = std::stod(Arg(argc, argv, "--settle-max", "180"));
  const double idle_seconds = std::stod(Arg(argc, argv, "--idle-seconds", "10"));
  const std::string json_path = Arg(argc, argv, "--json", "");
  const std::string series_path = Arg(argc, argv, "--series", "");
  bench::WorkloadSpec work;
  work.namespace_ = Arg(argc, argv, "--namespace", "bench");
  work.scheduler_name = scheduler_name;
  work.pods = std::stoll(Arg(argc, argv, "--pods", "1000"));
  work.gang_size = std::stoi(Arg(argc, argv, "--gang-size", "10"));
  work.queues = std::stoi(Arg(argc, argv, "--queues", "4"));
  work.plain_fraction = mode == "pods" ? 1.0 : std::stod(Arg(argc, argv, "--plain-fraction", "0"));
  if (!bench::ParseNodeShape(Arg(argc, argv, "--shape", "uniform"), &work.shape))
    Die("bad --shape");
  if (mode != "pods" && mode != "grouped" && mode != "jobs") Die("bad --mode " + mode);
  // Processes to account: name=pid pairs.
  std::vector<std::pair<std::string, std::string>> pids;
  {
    std::istringstream in(Arg(argc, argv, "--pids", ""));
    std::string kv;
    while (std::getline(in, kv, ',')) {
      auto eq = kv.find('=');
      if (eq != std::string::npos) pids.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
    }
  }

  auto client = bench::UnthrottledClient(kubeconfig);
  auto ns_res = client->Create(kube::resources::kNamespaces, "",
                               R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":)" +
                                   json::Quote(work.namespace_) + "}}");
  if (!ns_res.ok()) Die("creating namespace: " + ns_res.status().ToString());

  // The creation stream, planned before the clock starts.
  const std::vector<Item> items = CreationStream(work, mode);

  const std::string load_before = LoadAverage();
  std::map<std::string, double> cpu0;
  for (const auto& [name, pid] : pids) cpu0[name] = CpuSeconds(pid);
  const auto t0 = Clock::now();
  PodWatcher watcher(client, work.namespace_, t0);
  std::atomic<int64_t> created{0}, create_errors{0};
  std::atomic<double> last_create{0};
  base::TokenBucket bucket(create_qps > 0 ? create_qps : 1e9, create_qps > 0 ? creators : 1000000);
  std::thread creator([&] {
    Parallel(static_cast<int64_t>(items.size()), creators, [&](int64_t i) {
      if (create_qps > 0) bucket.Wait();
      const Item& item = items[static_cast<size_t>(i)];
      auto res = client->Create(*item.resource, work.namespace_, item.body);
      if (res.ok()) {
        ++created;
      } else if (++create_errors <= 5) {
        std::cerr << "bench_e2e: create: " << res.status().ToString() << "\n";
      }
      last_create = bench::SecondsSince(t0);
    });
  });

  // One line per second: time, objects created, pods seen, pods bound, then CPU s and RSS MiB
  // of each process.
  std::ostringstream series;
  series << "# t created seen bound";
  for (const auto& [name, pid] : pids) series << " " << name << "_cpu_s " << name << "_rss_mib";
  series << "\n";
  int64_t last_bound_count = -1;
  double last_progress = 0, longest_gap = 0;
  std::string outcome = "complete";
  for (int tick = 1;; ++tick) {
    auto wake = t0 + std::chrono::milliseconds(250 * tick);
    std::this_thread::sleep_until(wake);
    const double now = bench::SecondsSince(t0);
    const int64_t bound = watcher.bound();
    if (tick % 4 == 0) {
      series << now << " " << created.load() << " " << watcher.seen() << " " << bound;
      for (const auto& [name, pid] : pids) {
        series << " " << CpuSeconds(pid) - cpu0[name] << " " << bench::ProcStatusMiB(pid, "VmRSS");
      }
      series << "\n";
    }
    if (bound != last_bound_count) {
      if (last_bound_count > 0) longest_gap = std::max(longest_gap, now - last_progress);
      last_bound_count = bound;
      last_progress = now;
    }
    if (bound >= work.pods) break;
    if (now - last_progress > std::max(stall, 10 * longest_gap)) {
      outcome = "stalled";
      break;
    }
    if (now > timeout) {
      outcome = "timeout";
      break;
    }
  }
  const double end = bench::SecondsSince(t0);
  std::map<std::string, double> cpu, hwm, rss;
  for (const auto& [name, pid] : pids) {
    cpu[name] = CpuSeconds(pid) - cpu0[name];
    hwm[name] = bench::ProcStatusMiB(pid, "VmHWM");
    rss[name] = bench::ProcStatusMiB(pid, "VmRSS");
  }
  creator.join();
  // What each process costs once its work is done (only when it finished: a stalled run's
  // daemons are still busy). First the pods start: until then the cluster is still changing.
  std::map<std::string, double> idle_cores, idle_rss, settle_cpu;
  double all_running_s = -1;  // last bind → every pod Running
  if (outcome == "complete" && idle_seconds > 0) {
    const auto settle_start = std::chrono::steady_clock::now();
    for (const auto& [name, pid] : pids) settle_cpu[name] = CpuSeconds(pid);
    while (bench::SecondsSince(settle_start) < settle_max) {
      if (all_running_s < 0 && watcher.running() >= work.pods) {
        all_running_s = bench::SecondsSince(settle_start);
      }
      if (all_running_s >= 0 && bench::SecondsSince(settle_start) >= settle_seconds) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    for (const auto& [name, pid] : pids) settle_cpu[name] = CpuSeconds(pid) - settle_cpu[name];
    std::map<std::string, double> before;
    for (const auto& [name, pid] : pids) before[name] = CpuSeconds(pid);
    std::this_thread::sleep_for(std::chrono::duration<double>(idle_seconds));
    for (const auto& [name, pid] : pids) {
      idle_cores[name] = (CpuSeconds(pid) - before[name]) / idle_seconds;
      idle_rss[name] = bench::ProcStatusMiB(pid, "VmRSS");
    }
  }
  watcher.Stop();
  const std::string load_after = LoadAverage();

  const std::vector<bench::PodTimes> times = watcher.Times();
  std::vector<double> latencies, binds;
  for (const auto& t : times) {
    if (t.bound < 0) continue;
    binds.push_back(t.bound);
    latencies.push_back(t.bound - t.seen);
  }
  std::sort(binds.begin(), binds.end());
  const double last_bind = binds.empty() ? 0 : binds.back();
  const double first_bind = binds.empty() ? 0 : binds.front();
  // Binds per whole second between the first and the last bind (scheduler_perf's sampling).
  std::vector<double> per_second;
  if (!binds.empty()) {
    const auto first = static_cast<int64_t>(first_bind), last = static_cast<int64_t>(last_bind);
    per_second.assign(static_cast<size_t>(last - first + 1), 0);
    for (double b : binds) per_second[static_cast<size_t>(static_cast<int64_t>(b) - first)] += 1;
    if (per_second.size() > 2) {  // partial first and last seconds say little
      per_second.erase(per_second.begin());
      per_second.pop_back();
    }
  }
  const double throughput = last_bind > 0 ? static_cast<double>(binds.size()) / last_bind : 0;
  std::ostringstream out;
  out << "{\"mode\":\"" << mode << "\",\"scheduler_name\":\"" << scheduler_name
      << "\",\"namespace\":\"" << work.namespace_ << "\",\"outcome\":\"" << outcome
      << "\",\"pods\":" << work.pods << ",\"objects\":" << items.size()
      << ",\"created\":" << created.load() << ",\"create_errors\":" << create_errors.load()
      << ",\"creators\":" << creators << ",\"create_qps\":" << create_qps
      << ",\"last_create_s\":" << last_create.load() << ",\"create_rate\":"
      << (last_create.load() > 0 ? static_cast<double>(created.load()) / last_create.load() : 0)
      << ",\"bound\":" << binds.size() << ",\"first_bind_s\":" << first_bind
      << ",\"first_create_to_last_bind_s\":" << last_bind << ",\"pods_per_second\":" << throughput
      << ",\"bind_rate_per_s\":{\"mean\":"
      << (per_second.empty() ? 0
                             : std::accumulate(per_second.begin(), per_second.end(), 0.0) /
                                   static_cast<double>(per_second.size()))
      << ",\"p50\":" << Percentile(per_second, 50) << ",\"p90\":" << Percentile(per_second, 90)
      << ",\"max\":" << Percentile(per_second, 100)
      << "},\"latency_s\":{\"p50\":" << Percentile(latencies, 50)
      << ",\"p90\":" << Percentile(latencies, 90) << ",\"p99\":" << Percentile(latencies, 99)
      << ",\"max\":" << Percentile(latencies, 100) << "},\"processes\":{";
  bool first = true;
  for (const auto& [name, pid] : pids) {
    out << (first ? "" : ",") << "\"" << name << "\":{\"cpu_seconds\":" << cpu[name]
        << ",\"cpu_cores_avg\":" << (last_bind > 0 ? cpu[name] / end : 0)
        << ",\"peak_rss_mib\":" << hwm[name] << ",\"rss_mib\":" << rss[name];
    if (idle_cores.count(name) != 0) {
      out << ",\"settle_cpu_seconds\":" << settle_cpu[name]
          << ",\"idle_cores\":" << idle_cores[name] << ",\"idle_rss_mib\":" << idle_rss[name];
    }
    out << "}";
    first = false;
  }
  out << "},\"measured_s\":" << end << ",\"settle_seconds\":" << settle_seconds
      << ",\"all_running_after_s\":" << all_running_s << ",\"idle_seconds\":" << idle_seconds
      << ",\"load_before\":" << json::Quote(load_before)
      << ",\"load_after\":" << json::Quote(load_after) << "}\n";
  std::cout << out.str();
  if (!json_path.empty()) std::ofstream(json_path) << out.str();
  if (!series_path.empty()) {
    std::ofstream(series_path) << series.str();
    // Each pod's timeline, to see where a pod's time went (e.g. waiting for the rest of its gang).
    std::ofstream timeline(series_path + ".pods");
    timeline << "# pod seen bound running\n";
    for (const auto& t : times) {
      timeline << t.name << " " << t.seen << " " << t.bound << " " << t.running << "\n";
    }
  }
  if (!latencies.empty()) {
    // The latency distribution, sorted, for plots (one value per line).
    std::sort(latencies.begin(), latencies.end());
    if (!series_path.empty()) {
      std::ofstream lat(series_path + ".latency");
      const size_t step = std::max<size_t>(1, latencies.size() / 2000);
      for (size_t i = 0; i < latencies.size(); i += step) {
        lat << 100.0 * static_cast<double>(i + 1) / static_cast<double>(latencies.size()) << " "
            << latencies[i] << "\n";
      }
      lat << "100 " << latencies.back() << "\n";
    }
  }
  return outcome == "complete" ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string cmd = argc > 1 ? argv[1] : "";
  if (cmd == "setup") return Setup(argc, argv);
  if (cmd == "run") return Run(argc, argv);
  if (cmd == "reset") return Reset(argc, argv);
  if (cmd == "manifests") return Manifests(argc, argv);
  std::cerr
      << "usage: bench_e2e setup|run|reset|manifests --kubeconfig FILE ... (see bench/e2e.cc)\n";
  return 2;
}
