// In-process preemption benchmark: no API server, the cache fed directly.
//
//   bench_preempt [--nodes 5000] [--running 100000] [--gang 100] [--instances 300] [--seed 1]
//                 [--json FILE]
//
// (1) Decision time: a cluster of `nodes` full nodes running `running` low-priority pods in
//     gangs of 10, and one high-priority gang of `gang` pods that fits only by preemption. One
//     session (enqueue, allocate, preempt, reclaim, backfill; default tiers): how long preempt
//     takes and how many pods it evicts — once with elastic victims (minAvailable 5 of 10:
//     tasks above the minimum may go) and once with rigid ones (minAvailable 10: only whole
//     gangs may go).
// (2) Quality: `instances` small random clusters (4 nodes, up to 14 running pods of 1–4 CPU
//     in up to 5 gangs, a preemptor gang of 1–3 tasks) where the fewest victims is found by
//     trying every subset of running pods under the same rules the planner follows (victims
//     are preemptable lower-priority pods; a gang loses only tasks above its minimum or all of
//     them; the preemptor's tasks must then all fit). Reports how often the planner found a
//     plan when one exists and how many more victims it chose than the optimum.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <sys/resource.h>
#include <time.h>
#include <vector>

#include "bench/common.h"
#include "scheduler/builtins.h"
#include "scheduler/cache/cache.h"
#include "scheduler/framework/cycle.h"

namespace {

using namespace tephra;
using namespace tephra::scheduler;
using tephra::bench::Arg;
using tephra::bench::Millis;
using tephra::bench::ThreadCpuMillis;
using Clock = std::chrono::steady_clock;

const char* kConf = R"(actions: "enqueue, allocate, preempt, reclaim, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: overcommit}, {name: drf}, {name: predicates}, {name: proportion}, {name: nodeorder}]
)";

// Counts evictions; nothing reaches an API server.
class CountingEvictor : public Evictor {
 public:
  void Evict(const TaskInfo& task, const std::string&) override {
    victims.push_back(task.uid());
    jobs.insert(task.job());
  }
  std::vector<std::string> victims;
  std::set<std::string> jobs;
};

class NullBinder : public Binder {
 public:
  void Bind(const BindUnit& unit) override { bound += unit.binds.size(); }
  size_t bound = 0;
};

// Builds cluster objects straight into a cache.
class ClusterBuilder {
 public:
  explicit ClusterBuilder(SchedulerCache& cache) : cache_(cache) {
    auto queue = std::make_shared<api::Queue>();
    queue->metadata.name = "default";
    queue->spec.weight = 1;
    cache_.UpsertQueue(queue);
    AddPriorityClass("low", 10);
    AddPriorityClass("high", 1000);
  }

  void AddNode(const std::string& name, const std::string& resources) {
    auto node = std::make_shared<api::Node>();
    node->metadata.name = name;
    node->metadata.labels = {{"kubernetes.io/hostname", name}};
    node->status.allocatable = api::Resources::FromString(resources)->ToList();
    node->status.capacity = node->status.allocatable;
    node->status.conditions.push_back({"Ready", "True", "", ""});
    cache_.UpsertNode(node);
  }

  // A gang; pod i runs on nodes[i] (empty string: pending).
  void AddGang(const std::string& name, const std::string& priority_class, int min_member,
               const std::vector<std::string>& requests, const std::vector<std::string>& nodes) {
    auto pg = std::make_shared<api::PodGroup>();
    pg->metadata.namespace_ = "bench";
    pg->metadata.name = name;
    pg->metadata.uid = "pg-" + name;
    pg->spec.queue = "default";
    pg->spec.min_member = min_member;
    pg->spec.priority_class_name = priority_class;
    bool running = !nodes.empty() && !nodes[0].empty();
    pg->status.phase = running ? "Running" : "Inqueue";
    cache_.UpsertPodGroup(pg);
    for (size_t i = 0; i < requests.size(); ++i) {
      api::PodSpec spec;
      spec.scheduler_name = "volcano";
      spec.priority_class_name = priority_class;
      spec.priority = priority_class == "high" ? 1000 : 10;
      api::Container c;
      c.name = "worker";
      c.resources.requests = api::Resources::FromString(requests[i])->ToList();
      spec.containers.push_back(c);
      auto pod = std::make_shared<PodInfo>();
      pod->metadata.namespace_ = "bench";
      pod->metadata.name = name + "-" + std::to_string(i);
      pod->metadata.uid = "uid-" + name + "-" + std::to_string(i);
      pod->group_name = name;
      pod->task_role = "worker";
      pod->phase = "Pending";
      if (i < nodes.size() && !nodes[i].empty()) {
        pod->phase = "Running";
        pod->node_name = nodes[i];
      }
      pod->spec = interner_.Intern(MakeSchedulingSpec(spec));
      cache_.UpsertPod(pod);
    }
  }

 private:
  void AddPriorityClass(const std::string& name, int32_t value) {
    auto pc = std::make_shared<api::PriorityClass>();
    pc->metadata.name = name;
    pc->value = value;
    cache_.UpsertPriorityClass(pc);
  }

  SchedulerCache& cache_;
  SpecInterner interner_;
};

struct Decision {
  double preempt_ms = 0;
  double cycle_ms = 0;
  double cycle_cpu_ms = 0;  // this thread's CPU time: stable when the machine is busy
  size_t victims = 0;
  size_t victim_gangs = 0;
};

// One session whose binds and evictions are only counted.
CycleResult RunCounted(SchedulerCache& cache, const SchedulerConf& conf, const Registry& registry,
                       NullBinder& binder, CountingEvictor& evictor,
                       const std::function<void(const Session&)>& inspect = nullptr) {
  SessionOptions options;
  options.uid = "bench";
  options.binder = &binder;
  options.evictor = &evictor;
  return RunCycle(cache.TakeSnapshot(), conf, registry, options, inspect);
}

Decision RunOne(SchedulerCache& cache, const SchedulerConf& conf, const Registry& registry) {
  CountingEvictor evictor;
  NullBinder binder;
  auto t0 = Clock::now();
  double cpu0 = ThreadCpuMillis();
  CycleResult r = RunCounted(cache, conf, registry, binder, evictor);
  Decision d;
  d.cycle_ms = Millis(Clock::now() - t0);
  d.cycle_cpu_ms = ThreadCpuMillis() - cpu0;
  for (const auto& [name, took] : r.actions) {
    if (name == "preempt") d.preempt_ms = Millis(took);
  }
  d.victims = evictor.victims.size();
  d.victim_gangs = evictor.jobs.size();
  return d;
}

// (1) one 100-pod gang on a full cluster.
Decision AtScale(const SchedulerConf& conf, const Registry& registry, int nodes, int running,
                 int gang, int victim_min) {
  SchedulerCache cache(CacheOptions{});
  ClusterBuilder b(cache);
  const int per_node = running / nodes;
  const int milli = 32000 / per_node;  // running pods fill every node's 32 CPUs
  const std::string request = "cpu=" + std::to_string(milli) + "m,memory=1Gi";
  for (int n = 0; n < nodes; ++n)
    b.AddNode("node-" + std::to_string(n), "cpu=32,memory=256Gi,pods=110");
  for (int g = 0; g < running / 10; ++g) {
    std::vector<std::string> on;
    for (int i = 0; i < 10; ++i) on.push_back("node-" + std::to_string((g * 10 + i) % nodes));
    b.AddGang("low-" + std::to_string(g), "low", victim_min, std::vector<std::string>(10, request),
              on);
  }
  b.AddGang("preemptor", "high", gang, std::vector<std::string>(static_cast<size_t>(gang), request),
            {});
  return RunOne(cache, conf, registry);
}

// (2) small random instances against an exhaustive optimum.
struct SmallGang {
  int min_member;
  std::vector<int> cpu;   // per running pod
  std::vector<int> node;  // per running pod
};
struct Instance {
  int nodes = 4;
  int node_cpu = 8;
  std::vector<SmallGang> gangs;
  std::vector<int> preemptor;  // cpu per task
};

Instance RandomInstance(std::mt19937& rng) {
  Instance in;
  std::vector<int> free(static_cast<size_t>(in.nodes), in.node_cpu);
  std::uniform_int_distribution<int> cpu(1, 4), gangs(2, 5), size(1, 4);
  int pods = 0;
  for (int g = gangs(rng); g > 0 && pods < 14; --g) {
    SmallGang sg;
    for (int k = size(rng); k > 0 && pods < 14; --k) {
      int c = cpu(rng);
      int n = static_cast<int>(rng() % static_cast<unsigned>(in.nodes));
      if (free[static_cast<size_t>(n)] < c) continue;
      free[static_cast<size_t>(n)] -= c;
      sg.cpu.push_back(c);
      sg.node.push_back(n);
      ++pods;
    }
    if (sg.cpu.empty()) continue;
    sg.min_member = 1 + static_cast<int>(rng() % sg.cpu.size());
    in.gangs.push_back(sg);
  }
  std::uniform_int_distribution<int> tasks(1, 3), need(2, 6);
  for (int t = tasks(rng); t > 0; --t) in.preemptor.push_back(need(rng));
  return in;
}

// Can every preemptor task be placed on `free` (backtracking; at most 3 tasks)?
bool Fits(std::vector<int>& free, const std::vector<int>& tasks, size_t k) {
  if (k == tasks.size()) return true;
  for (auto& f : free) {
    if (f < tasks[k]) continue;
    f -= tasks[k];
    bool ok = Fits(free, tasks, k + 1);
    f += tasks[k];
    if (ok) return true;
  }
  return false;
}

// Fewest victims over all subsets of running pods; -1 when no subset works.
int Optimum(const Instance& in) {
  struct Pod {
    size_t gang;
    int cpu, node;
  };
  std::vector<Pod> pods;
  for (size_t g = 0; g < in.gangs.size(); ++g) {
    for (size_t i = 0; i < in.gangs[g].cpu.size(); ++i)
      pods.push_back({g, in.gangs[g].cpu[i], in.gangs[g].node[i]});
  }
  int best = -1;
  for (uint32_t mask = 0; mask < (1u << pods.size()); ++mask) {
    int count = __builtin_popcount(mask);
    if (best >= 0 && count >= best) continue;
    std::vector<int> free(static_cast<size_t>(in.nodes), in.node_cpu);
    std::vector<int> taken(in.gangs.size(), 0);
    for (size_t p = 0; p < pods.size(); ++p) {
      if (mask & (1u << p)) {
        ++taken[pods[p].gang];
      } else {
        free[static_cast<size_t>(pods[p].node)] -= pods[p].cpu;
      }
    }
    bool gangs_ok = true;
    for (size_t g = 0; g < in.gangs.size(); ++g) {
      int left = static_cast<int>(in.gangs[g].cpu.size()) - taken[g];
      if (left != 0 && left < in.gangs[g].min_member) gangs_ok = false;
    }
    if (gangs_ok && Fits(free, in.preemptor, 0)) best = count;
  }
  return best;
}

void Print(const Instance& in, int optimum) {
  std::printf("  missed (optimum %d victims): %d nodes x %d CPU; preemptor", optimum, in.nodes,
              in.node_cpu);
  for (int c : in.preemptor) std::printf(" %d", c);
  std::printf("\n");
  for (size_t g = 0; g < in.gangs.size(); ++g) {
    std::printf("    g%zu min %d:", g, in.gangs[g].min_member);
    for (size_t i = 0; i < in.gangs[g].cpu.size(); ++i)
      std::printf(" %dcpu@n%d", in.gangs[g].cpu[i], in.gangs[g].node[i]);
    std::printf("\n");
  }
}

size_t PlannerVictims(const Instance& in, const SchedulerConf& conf, const Registry& registry,
                      bool* placed) {
  SchedulerCache cache(CacheOptions{});
  ClusterBuilder b(cache);
  for (int n = 0; n < in.nodes; ++n) {
    b.AddNode("n" + std::to_string(n),
              "cpu=" + std::to_string(in.node_cpu) + ",memory=64Gi,pods=110");
  }
  for (size_t g = 0; g < in.gangs.size(); ++g) {
    std::vector<std::string> req, on;
    for (size_t i = 0; i < in.gangs[g].cpu.size(); ++i) {
      req.push_back("cpu=" + std::to_string(in.gangs[g].cpu[i]) + ",memory=1Gi");
      on.push_back("n" + std::to_string(in.gangs[g].node[i]));
    }
    b.AddGang("g" + std::to_string(g), "low", in.gangs[g].min_member, req, on);
  }
  std::vector<std::string> req;
  for (int c : in.preemptor) req.push_back("cpu=" + std::to_string(c) + ",memory=1Gi");
  b.AddGang("preemptor", "high", static_cast<int>(req.size()), req, {});
  CountingEvictor evictor;
  NullBinder binder;
  bool pipelined = false;
  RunCounted(cache, conf, registry, binder, evictor, [&](const Session& ssn) {
    for (size_t j = 0; j < ssn.job_count(); ++j) {
      const JobInfo& job = ssn.job(j);
      if (job.name != "preemptor") continue;
      pipelined = job.Count(TaskStatus::kPipelined) + job.Count(TaskStatus::kAllocated) +
                      job.Count(TaskStatus::kBinding) >=
                  static_cast<int32_t>(in.preemptor.size());
    }
  });
  *placed = pipelined || binder.bound == in.preemptor.size();
  return evictor.victims.size();
}

}  // namespace

int main(int argc, char** argv) {
  const int nodes = std::stoi(Arg(argc, argv, "--nodes", "5000"));
  const int running = std::stoi(Arg(argc, argv, "--running", "100000"));
  const int gang = std::stoi(Arg(argc, argv, "--gang", "100"));
  const int instances = std::stoi(Arg(argc, argv, "--instances", "300"));
  const unsigned seed = static_cast<unsigned>(std::stoul(Arg(argc, argv, "--seed", "1")));
  const std::string json_path = Arg(argc, argv, "--json", "");
  const bool show_misses = Arg(argc, argv, "--show-misses", "false") == "true";

  Registry registry;
  if (!RegisterBuiltins(registry).ok()) return 1;
  auto conf = ParseSchedulerConf(kConf, registry.Names());
  if (!conf.ok()) {
    std::fprintf(stderr, "bench_preempt: %s\n", conf.status().message().c_str());
    return 1;
  }

  Decision elastic = AtScale(*conf, registry, nodes, running, gang, 5);
  Decision rigid = AtScale(*conf, registry, nodes, running, gang, 10);
  std::printf(
      "decision: one %d-pod high-priority gang, %d full nodes, %d running pods in gangs of 10\n",
      gang, nodes, running);
  for (const auto& [label, d] :
       {std::pair{"elastic victims (min 5/10)", elastic}, {"rigid victims (min 10/10) ", rigid}}) {
    std::printf("  %s: preempt %.1f ms, cycle %.1f ms (%.1f ms CPU), %zu victims in %zu gangs\n",
                label, d.preempt_ms, d.cycle_ms, d.cycle_cpu_ms, d.victims, d.victim_gangs);
  }

  std::mt19937 rng(seed);
  int solvable = 0, found = 0, optimal = 0, spurious = 0;
  long extra = 0, optimum_total = 0;
  for (int i = 0; i < instances; ++i) {
    Instance in = RandomInstance(rng);
    int best = Optimum(in);
    bool placed = false;
    size_t chosen = PlannerVictims(in, *conf, registry, &placed);
    if (best < 0) {
      if (placed) ++spurious;  // would mean the exhaustive rules and the planner disagree
      continue;
    }
    ++solvable;
    if (!placed) {
      if (show_misses) Print(in, best);
      continue;
    }
    ++found;
    optimum_total += best;
    extra += static_cast<long>(chosen) - best;
    if (static_cast<int>(chosen) == best) ++optimal;
  }
  std::printf("quality: %d random small instances (seed %u), %d solvable by preemption\n",
              instances, seed, solvable);
  std::printf(
      "  planner found a plan for %d/%d; optimal victim count in %d/%d; %ld victims over the "
      "optimum's "
      "%ld in total\n",
      found, solvable, optimal, found, extra, optimum_total);
  if (spurious > 0)
    std::printf("  %d instances placed although the exhaustive search found no plan\n", spurious);
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  std::printf("peak RSS %.0f MiB\n", static_cast<double>(ru.ru_maxrss) / 1024);

  if (!json_path.empty()) {
    std::ofstream out(json_path);
    out << "{\n  \"nodes\": " << nodes << ", \"running\": " << running << ", \"gang\": " << gang
        << ",\n"
        << "  \"elastic\": {\"preempt_ms\": " << elastic.preempt_ms
        << ", \"cycle_ms\": " << elastic.cycle_ms << ", \"cycle_cpu_ms\": " << elastic.cycle_cpu_ms
        << ", \"victims\": " << elastic.victims << ", \"victim_gangs\": " << elastic.victim_gangs
        << "},\n"
        << "  \"rigid\": {\"preempt_ms\": " << rigid.preempt_ms
        << ", \"cycle_ms\": " << rigid.cycle_ms << ", \"cycle_cpu_ms\": " << rigid.cycle_cpu_ms
        << ", \"victims\": " << rigid.victims << ", \"victim_gangs\": " << rigid.victim_gangs
        << "},\n"
        << "  \"quality\": {\"instances\": " << instances << ", \"seed\": " << seed
        << ", \"solvable\": " << solvable << ", \"found\": " << found
        << ", \"optimal\": " << optimal << ", \"extra_victims\": " << extra
        << ", \"optimum_victims\": " << optimum_total << ", \"spurious\": " << spurious << "},\n"
        << "  \"peak_rss_mib\": " << ru.ru_maxrss / 1024 << "\n}\n";
  }
  return 0;
}
