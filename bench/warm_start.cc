// Warm-start benchmark driver on a real control plane (started by bench/warm-start.sh): how long
// a scheduler takes to start scheduling in a cluster that is already full, and how long a
// standby takes to carry on once the leader dies.
//
//   bench_warm_start fill --kubeconfig F --namespace NS --nodes N --pods P [--gang-size 10]
//                         [--queues 4] [--creators 16]
//       creates P pods already bound to the N nodes of `bench_e2e setup` (placed first-fit by
//       their requests, as some scheduler did long ago), with their PodGroups, whose status
//       says Running, and waits until kwok runs every pod.
//   bench_warm_start measure --kubeconfig F --namespace NS --pods P --takeover-pods Q
//                            --leader "CMD" --standby "CMD" --standby-readyz URL
//                            --lease NAMESPACE/NAME [--gang-size 10] [--queues 4]
//                            [--creators 16] [--timeout 900] [--json OUT]
//       1. creates P pending pods (gangs and plain pods, with their PodGroups) while no
//          scheduler runs;
//       2. starts the leader (`sh -c CMD`) and records when the first and the last of them is
//          bound, counted from its start;
//       3. starts the standby and waits until its readyz says its caches are synced;
//       4. kills the leader (SIGKILL: it cannot hand the lease over), creates Q more pending
//          pods at once (in NS-takeover), and records when the lease changes hands and when the
//          first and the last of them is bound, counted from the kill.
//       Prints (and writes to --json) one summary; stops both schedulers before it returns.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include <rapidjson/document.h>

#include "api/kinds.h"
#include "bench/common.h"
#include "bench/workload.h"
#include "json/json.h"

namespace {

using namespace tephra;
using bench::Arg;
using bench::Die;
using Clock = std::chrono::steady_clock;

// The workload of one phase: `prefix` names its jobs, and the takeover's pods get a namespace
// of their own so that its watch sees only them.
bench::WorkloadSpec Workload(int argc, char** argv, const std::string& prefix) {
  bench::WorkloadSpec work;
  work.namespace_ = Arg(argc, argv, "--namespace", "warm");
  if (prefix == "takeover") work.namespace_ += "-takeover";
  work.pods =
      std::stoll(Arg(argc, argv, prefix == "takeover" ? "--takeover-pods" : "--pods", "1000"));
  work.gang_size = std::stoi(Arg(argc, argv, "--gang-size", "10"));
  work.queues = std::stoi(Arg(argc, argv, "--queues", "4"));
  work.prefix = prefix;
  return work;
}

void CreateNamespace(kube::Client& client, const std::string& ns) {
  auto res = client.Create(
      kube::resources::kNamespaces, "",
      R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":)" + json::Quote(ns) + "}}");
  if (!res.ok() && res.status().code() != StatusCode::kAlreadyExists)
    Die("creating namespace " + ns + ": " + res.status().ToString());
}

// Creates an object, trying again while the API server is unavailable for a moment (a
// 100,000-pod cluster's API server drops connections now and then); an object that a lost
// response had created already counts.
Status CreateRetrying(kube::Client& client, const kube::Resource& r, const std::string& ns,
                      const std::string& body) {
  Status last;
  for (int attempt = 0; attempt < 5; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(std::chrono::seconds(attempt));
    auto res = client.Create(r, ns, body);
    if (res.ok()) return Status::Ok();
    last = res.status();
    if (attempt > 0 && last.code() == StatusCode::kAlreadyExists) return Status::Ok();
    if (last.code() != StatusCode::kUnavailable) return last;
  }
  return last;
}

// Creates every job's PodGroup in `phase` and then its pods, `creators` at a time; `node_of(job,
// i)` binds pod i at creation ("" for a pending pod). Dies when anything cannot be created.
void CreateJobs(kube::Client& client, const bench::WorkloadSpec& work,
                const std::vector<bench::JobPlan>& jobs, int creators, const std::string& phase,
                const std::function<std::string(size_t, int)>& node_of) {
  std::atomic<int64_t> errors{0};
  auto fail = [&](const Status& s) {
    if (++errors <= 5) std::cerr << "bench_warm_start: " << s.ToString() << "\n";
  };
  bench::Parallel(static_cast<int64_t>(jobs.size()), creators, [&](int64_t j) {
    const bench::JobPlan& job = jobs[static_cast<size_t>(j)];
    std::string body = bench::PodGroupJson(work, job, phase);
    if (phase == "Running") {
      // As the scheduler left it: counts and the Scheduled condition (Volcano's PodGroup keeps
      // its status in the object, so it is created with it).
      body.insert(
          body.size() - 2,
          ",\"running\":" + std::to_string(job.size) +
              R"(,"conditions":[{"type":"Scheduled","status":"True",)"
              R"("reason":"tasks in gang are ready to be scheduled",)"
              R"("transitionID":"warm-start","lastTransitionTime":"2026-01-01T00:00:00Z"}])");
    }
    if (Status pg = CreateRetrying(client, api::kPodGroups, work.namespace_, body); !pg.ok())
      return fail(pg);
    for (int i = 0; i < job.size; ++i) {
      Status pod = CreateRetrying(client, kube::resources::kPods, work.namespace_,
                                  bench::PodJson(work, job, i, true, work.scheduler_name,
                                                 node_of(static_cast<size_t>(j), i)));
      if (!pod.ok()) return fail(pod);
    }
  });
  if (errors > 0) Die(std::to_string(errors.load()) + " objects could not be created");
}

// ---------------------------------------------------------------------------------- fill

int Fill(int argc, char** argv) {
  auto client = bench::UnthrottledClient(Arg(argc, argv, "--kubeconfig", ""));
  const int nodes = std::stoi(Arg(argc, argv, "--nodes", "500"));
  const int creators = std::stoi(Arg(argc, argv, "--creators", "16"));
  const bench::WorkloadSpec work = Workload(argc, argv, "running");
  const std::vector<bench::JobPlan> jobs = bench::PlanJobs(work);
  // First fit over uniform nodes (32 CPU, 256Gi, 110 pods), a whole job at a time so that its
  // pods' nodes are known before any is created.
  constexpr int64_t kNodeMilliCpu = 32000, kNodeMemory = int64_t{256} << 30, kNodePods = 110;
  std::vector<int64_t> cpu(static_cast<size_t>(nodes)), mem(cpu.size()), count(cpu.size());
  std::vector<std::vector<int>> placement(jobs.size());
  size_t first_open = 0;  // nodes before it are full for the smallest pod
  for (size_t j = 0; j < jobs.size(); ++j) {
    const int64_t c = bench::PodMilliCpu(jobs[j]), m = bench::PodMemoryBytes(jobs[j]);
    size_t n = first_open;
    for (int i = 0; i < jobs[j].size; ++i) {
      while (n < cpu.size() &&
             (cpu[n] + c > kNodeMilliCpu || mem[n] + m > kNodeMemory || count[n] + 1 > kNodePods)) {
        ++n;
      }
      if (n == cpu.size()) Die("the pods do not fit on " + std::to_string(nodes) + " nodes");
      cpu[n] += c, mem[n] += m, ++count[n];
      placement[j].push_back(static_cast<int>(n));
    }
    while (first_open < cpu.size() && cpu[first_open] + 500 > kNodeMilliCpu) ++first_open;
  }
  CreateNamespace(*client, work.namespace_);
  auto t0 = Clock::now();
  CreateJobs(*client, work, jobs, creators, "Running", [&](size_t j, int i) {
    return "node-" + std::to_string(placement[j][static_cast<size_t>(i)]);
  });
  std::cerr << "bench_warm_start: created " << work.pods << " bound pods and " << jobs.size()
            << " PodGroups in " << bench::SecondsSince(t0) << " s\n";
  // kwok runs them: wait until none is left that is not Running. The API server filters by
  // phase in its watch cache (resourceVersion 0), so only those left are sent back.
  kube::ListOptions not_running;
  not_running.field_selector = "status.phase!=Running";
  not_running.resource_version = "0";
  for (int attempt = 0; attempt < 720; ++attempt) {
    int64_t left = 0;
    auto listed = client->ListAll(kube::resources::kPods, work.namespace_, not_running,
                                  [&](const json::Value&) {
                                    ++left;
                                    return Status::Ok();
                                  });
    if (listed.ok() && left == 0) {
      std::cerr << "bench_warm_start: " << work.pods << " pods Running after "
                << bench::SecondsSince(t0) << " s\n";
      return 0;
    }
    std::cerr << "bench_warm_start: " << (listed.ok() ? std::to_string(left) : "?")
              << " pods not Running yet\n";
    std::this_thread::sleep_for(std::chrono::seconds(10));
  }
  Die("the pods did not all start");
}

// ---------------------------------------------------------------------------------- measure

// A scheduler process started with `sh -c`, in its own process group so that killing it kills
// whatever the command started. Daemons still running when the benchmark exits (Die() exits
// without unwinding) are killed then: none outlives the run.
class Daemon {
 public:
  explicit Daemon(const std::string& command) {
    // The set exists before the handler is registered, so it is destroyed only after the
    // handler has run (exit undoes both in reverse order).
    static const bool registered = (Running(), std::atexit(KillLeftovers) == 0);
    (void)registered;
    pid_ = fork();
    if (pid_ < 0) Die("fork failed");
    if (pid_ == 0) {
      setpgid(0, 0);
      execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    setpgid(pid_, pid_);
    Running().insert(pid_);
  }
  ~Daemon() { Kill(SIGTERM); }
  void Kill(int signal) {
    if (pid_ <= 0) return;
    kill(-pid_, signal);
    waitpid(pid_, nullptr, 0);
    Running().erase(pid_);
    pid_ = -1;
  }

 private:
  static std::set<pid_t>& Running() {
    static std::set<pid_t> running;
    return running;
  }
  static void KillLeftovers() {
    for (pid_t pid : Running()) kill(-pid, SIGKILL);
  }

  pid_t pid_ = -1;
};

// Who holds the lease now ("" when unreadable).
std::string LeaseHolder(kube::Client& client, const std::string& ns, const std::string& name) {
  auto got = client.Get(kube::resources::kLeases, ns, name);
  if (!got.ok()) return "";
  json::Document doc;
  if (!json::Parse(*got, &doc).ok()) return "";
  json::Errors e;
  json::Reader r(&doc, &e);
  return r["spec"]["holderIdentity"].String();
}

bool Ready(const std::string& url) {
  return std::system(("curl -skf -o /dev/null --max-time 2 '" + url + "'").c_str()) == 0;
}

struct BindTimes {
  double first = -1, all = -1;  // seconds; -1: never
};

// Waits until `want` pods of the watcher are bound (or `timeout` seconds since t0 passed).
BindTimes WaitBound(bench::PodWatcher& watcher, int64_t want, double timeout,
                    Clock::time_point t0) {
  while (watcher.bound() < want && bench::SecondsSince(t0) < timeout) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  BindTimes out;
  std::vector<double> binds;
  for (const auto& t : watcher.Times()) {
    if (t.bound >= 0) binds.push_back(t.bound);
  }
  std::sort(binds.begin(), binds.end());
  if (!binds.empty()) out.first = binds.front();
  if (static_cast<int64_t>(binds.size()) >= want) out.all = binds[static_cast<size_t>(want - 1)];
  return out;
}

int Measure(int argc, char** argv) {
  auto client = bench::UnthrottledClient(Arg(argc, argv, "--kubeconfig", ""));
  const int creators = std::stoi(Arg(argc, argv, "--creators", "16"));
  const double timeout = std::stod(Arg(argc, argv, "--timeout", "900"));
  const std::string leader_cmd = Arg(argc, argv, "--leader", "");
  const std::string standby_cmd = Arg(argc, argv, "--standby", "");
  const std::string standby_readyz = Arg(argc, argv, "--standby-readyz", "");
  const std::string lease = Arg(argc, argv, "--lease", "");
  const std::string json_path = Arg(argc, argv, "--json", "");
  const auto slash = lease.find('/');
  if (leader_cmd.empty() || standby_cmd.empty() || standby_readyz.empty() ||
      slash == std::string::npos) {
    Die("measure needs --leader, --standby, --standby-readyz and --lease NAMESPACE/NAME");
  }
  const std::string lease_ns = lease.substr(0, slash), lease_name = lease.substr(slash + 1);
  const bench::WorkloadSpec pending = Workload(argc, argv, "pending");
  const bench::WorkloadSpec takeover = Workload(argc, argv, "takeover");
  CreateNamespace(*client, pending.namespace_);
  CreateNamespace(*client, takeover.namespace_);

  // 1. Pending work, with no scheduler running.
  auto tc = Clock::now();
  const std::vector<bench::JobPlan> pending_jobs = bench::PlanJobs(pending);
  CreateJobs(*client, pending, pending_jobs, creators, "Pending",
             [](size_t, int) { return std::string(); });
  std::cerr << "bench_warm_start: " << pending.pods << " pending pods created in "
            << bench::SecondsSince(tc) << " s\n";

  // 2. The leader starts cold.
  const auto t_start = Clock::now();
  bench::PodWatcher watcher(client, pending.namespace_, t_start);
  Daemon leader(leader_cmd);
  BindTimes start = WaitBound(watcher, pending.pods, timeout, t_start);
  watcher.Stop();
  std::cerr << "bench_warm_start: leader: first bind " << start.first << " s, all " << pending.pods
            << " bound " << start.all << " s\n";
  // The lease as the leader holds it (a busy API server may fail a read now and then).
  std::string first_holder;
  for (int attempt = 0; first_holder.empty() && attempt < 50; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    first_holder = LeaseHolder(*client, lease_ns, lease_name);
  }
  if (first_holder.empty()) Die("cannot read the lease " + lease_ns + "/" + lease_name);

  // 3. A standby warms up.
  const auto t_standby = Clock::now();
  Daemon standby(standby_cmd);
  while (!Ready(standby_readyz) && bench::SecondsSince(t_standby) < timeout) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  const double standby_ready = bench::SecondsSince(t_standby);
  std::cerr << "bench_warm_start: standby ready after " << standby_ready << " s\n";

  // 4. The leader dies; new work arrives at once.
  const auto t_kill = Clock::now();
  leader.Kill(SIGKILL);
  bench::PodWatcher takeover_watcher(client, takeover.namespace_, t_kill);
  std::atomic<double> lease_moved{-1};
  std::thread lease_poll([&] {
    while (bench::SecondsSince(t_kill) < timeout) {
      std::string holder = LeaseHolder(*client, lease_ns, lease_name);
      if (!holder.empty() && holder != first_holder) {
        lease_moved = bench::SecondsSince(t_kill);
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  CreateJobs(*client, takeover, bench::PlanJobs(takeover), creators, "Pending",
             [](size_t, int) { return std::string(); });
  const double takeover_created = bench::SecondsSince(t_kill);
  BindTimes after = WaitBound(takeover_watcher, takeover.pods, timeout, t_kill);
  takeover_watcher.Stop();
  lease_poll.join();
  standby.Kill(SIGTERM);
  std::ostringstream out;
  out << "{\"pending_pods\":" << pending.pods << ",\"takeover_pods\":" << takeover.pods
      << ",\"start\":{\"first_bind_s\":" << start.first << ",\"all_bound_s\":" << start.all
      << "},\"standby_ready_s\":" << standby_ready
      << ",\"takeover\":{\"lease_moved_s\":" << lease_moved.load()
      << ",\"created_s\":" << takeover_created << ",\"first_bind_s\":" << after.first
      << ",\"all_bound_s\":" << after.all << "},\"leader\":" << json::Quote(first_holder) << "}\n";
  std::cout << out.str();
  if (!json_path.empty()) std::ofstream(json_path) << out.str();
  return start.all >= 0 && after.all >= 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string cmd = argc > 1 ? argv[1] : "";
  if (cmd == "fill") return Fill(argc, argv);
  if (cmd == "measure") return Measure(argc, argv);
  std::cerr << "usage: bench_warm_start fill|measure --kubeconfig FILE ... (see "
               "bench/warm_start.cc)\n";
  return 2;
}
