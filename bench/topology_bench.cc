// In-process network-topology benchmark (issue 23 item 5): no API server, the cache fed
// directly. Prints numbers; asserts nothing.
//
//   bench_topology [--seed 1] [--steps 300] [--drain 300] [--rate 3] [--repeat 5]
//                  [--spines 4] [--racks 8] [--nodes 16]
//                  [--scale-spines 5] [--scale-racks 25] [--scale-nodes 40] [--scale-gangs 500]
//                  [--scale false] [--binpack true] [--json FILE]
//
// (1) Workload: spines × racks × nodes of 8 GPUs (nvidia.com/gpu: 8, cpu 96, memory 1024Gi);
//     racks are tier-1 HyperNodes (Node members by exactMatch), spines tier-2 HyperNodes
//     (HyperNode members). Gangs of 8–128 GPUs (pods of 8 GPUs, or of 1, 2 or 4 GPUs with cpu
//     and memory in proportion), 40% hard tier 1, 30% hard tier 2, 30% soft, arrive Poisson
//     (`rate` per step) for `steps` steps, then the run drains for at most `drain` more steps.
//     A step is: arrivals, one session ("allocate, backfill", the default tiers plus
//     network-topology-aware), completions. Binds are assumed in the cache and the pods
//     re-upserted Running on their node (as the informer would echo them); PodGroup statuses
//     written by the session are applied back. A gang runs `duration` steps (uniform 10–60)
//     from the step it was bound, then its pods and PodGroup are deleted.
//     Three variants on the same arrival sequence: tightest-fit (the plugin's default),
//     first-feasible (hypernode.choice: first-feasible), none (plugin absent: networkTopology
//     ignored). Repeated for seeds seed..seed+repeat-1 (one seed says little: the variants
//     differ by a few gangs), with means and per-seed wins summarised. --binpack adds the
//     binpack plugin to every variant.
//     Definitions:
//       placed tier: the lowest tier whose HyperNode holds every node the gang's pods were
//         bound to (1 = one rack, 2 = one spine, 3 = across spines: the virtual top).
//       best possible tier: the lowest tier having a HyperNode whose GPU capacity covers the
//         gang's GPUs in an empty cluster (pod sizes divide 8, cpu and memory scale with GPUs,
//         so GPU capacity decides); a rack holds 128 GPUs, so it is tier 1 for every gang of
//         the default workload. "Best tier" share = gangs placed at tier <= best possible
//         tier, over gangs that started.
//       utilisation: GPUs of running gangs / all GPUs, sampled after each session; "mean" is
//         over the arrival window (steps 0..steps-1), the timeline averages ten equal slices of
//         it.
//       wait: the step a gang was bound minus the step it arrived (0 = bound in the session of
//         its arrival step); "never started": gangs still pending when the run ended.
//       cycle cost: wall-clock ms (and this thread's CPU ms) per RunCycle.
// (2) Scale: scale-spines × scale-racks × scale-nodes (5,000) nodes, one burst of scale-gangs
//     gangs of 4–32 pods (half 8-GPU pods, half 1–4 GPU pods; same constraint mix), sessions
//     until one binds nothing: pods bound per second of session time with the plugin
//     (tightest-fit, and first-feasible) and without it, and the ratio without/with.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <sys/resource.h>
#include <time.h>
#include <vector>

#include "api/labels.h"
#include "api/topology.h"
#include "base/clock.h"
#include "bench/common.h"
#include "scheduler/builtins.h"
#include "scheduler/cache/cache.h"
#include "scheduler/framework/cycle.h"

namespace {

using namespace tephra;
using namespace tephra::scheduler;
using tephra::bench::Arg;
using tephra::bench::Die;
using tephra::bench::Millis;
using tephra::bench::ThreadCpuMillis;
using Clock = std::chrono::steady_clock;

// The default tiers (DefaultSchedulerConfYaml) with network-topology-aware; enqueue left out
// so admission is not what limits placement. `binpack` adds the binpack plugin to every
// variant (nodeorder alone spreads small pods over a HyperNode's nodes).
std::string Conf(const std::string& variant, bool binpack) {
  std::string conf = DefaultSchedulerConfYaml();
  const std::string actions = "enqueue, allocate, backfill";
  conf.replace(conf.find(actions), actions.size(), "allocate, backfill");
  if (binpack) conf += "  - name: binpack\n";
  if (variant == "tightest-fit") conf += "  - name: network-topology-aware\n";
  if (variant == "first-feasible") {
    conf +=
        "  - name: network-topology-aware\n"
        "    arguments: {hypernode.choice: first-feasible}\n";
  }
  return conf;
}

struct Topo {
  int spines, racks, nodes;  // racks per spine, nodes per rack
  int NodeCount() const { return spines * racks * nodes; }
  int64_t Gpus() const { return 8LL * NodeCount(); }
  std::string Node(int s, int r, int n) const {
    return "s" + std::to_string(s) + "-r" + std::to_string(r) + "-n" + std::to_string(n);
  }
  std::string Rack(int s, int r) const {
    return "s" + std::to_string(s) + "-r" + std::to_string(r);
  }
  std::string Spine(int s) const { return "s" + std::to_string(s); }
  // Lowest tier whose HyperNode holds `gpus` in an empty cluster; 3 = the virtual top.
  int BestTier(int gpus) const {
    if (gpus <= 8 * nodes) return 1;
    if (gpus <= 8 * nodes * racks) return 2;
    return 3;
  }
};

struct GangSpec {
  int arrival = 0;   // step
  int duration = 0;  // steps
  int pods = 0;
  int gpu_per_pod = 0;
  std::string mode;  // hard | soft
  int tier = -1;     // highestTierAllowed; -1 for soft
  int Gpus() const { return pods * gpu_per_pod; }
  std::string Class() const { return mode == "soft" ? "soft" : "hard-t" + std::to_string(tier); }
};

void Constraint(std::mt19937& rng, GangSpec& g) {
  double c = std::uniform_real_distribution<double>(0, 1)(rng);
  if (c < 0.4) {
    g.mode = "hard", g.tier = 1;
  } else if (c < 0.7) {
    g.mode = "hard", g.tier = 2;
  } else {
    g.mode = "soft", g.tier = -1;
  }
}

// The arrival sequence all variants share.
std::vector<GangSpec> Workload(unsigned seed, int steps, double rate) {
  std::mt19937 rng(seed);
  std::poisson_distribution<int> arrivals(rate);
  std::uniform_int_distribution<int> duration(10, 60);
  std::discrete_distribution<int> size({30, 25, 20, 15, 10});  // 8, 16, 32, 64, 128 GPUs
  const int sizes[] = {8, 16, 32, 64, 128};
  const int small[] = {1, 2, 4};
  std::vector<GangSpec> out;
  for (int s = 0; s < steps; ++s) {
    for (int k = arrivals(rng); k > 0; --k) {
      GangSpec g;
      g.arrival = s;
      g.duration = duration(rng);
      int gpus = sizes[size(rng)];
      g.gpu_per_pod = std::uniform_real_distribution<double>(0, 1)(rng) < 0.75
                          ? 8
                          : small[std::uniform_int_distribution<int>(0, 2)(rng)];
      g.pods = gpus / g.gpu_per_pod;
      Constraint(rng, g);
      out.push_back(g);
    }
  }
  return out;
}

std::vector<GangSpec> Burst(unsigned seed, int gangs) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> pods(4, 32);
  const int small[] = {1, 2, 4};
  std::vector<GangSpec> out;
  for (int k = 0; k < gangs; ++k) {
    GangSpec g;
    g.pods = pods(rng);
    g.gpu_per_pod = std::uniform_real_distribution<double>(0, 1)(rng) < 0.5
                        ? 8
                        : small[std::uniform_int_distribution<int>(0, 2)(rng)];
    Constraint(rng, g);
    out.push_back(g);
  }
  return out;
}

// Assumes binds in the cache, as the real binder does first, and remembers them.
class AssumingBinder : public Binder, public Evictor {
 public:
  explicit AssumingBinder(SchedulerCache& cache) : cache_(cache) {}
  void Bind(const BindUnit& unit) override {
    for (const BindRequest& b : unit.binds) {
      if (cache_.AssumeBinding(b.task->job(), b.task->uid(), b.node).ok())
        binds.emplace_back(b.task->uid(), b.node);
    }
  }
  void Evict(const TaskInfo& task, const std::string&) override {
    (void)cache_.MarkReleasing(task.job(), task.uid());
  }
  std::vector<std::pair<std::string, std::string>> binds;  // pod uid, node

 private:
  SchedulerCache& cache_;
};

// A cluster in a cache, with gangs added, confirmed Running when bound, and removed.
class Cluster {
 public:
  Cluster(const Topo& topo, base::ClockInterface& clock)
      : topo_(topo), cache_(CacheOptions{}, clock), binder_(cache_) {
    auto queue = std::make_shared<api::Queue>();
    queue->metadata.name = "default";
    queue->spec.weight = 1;
    queue->status.state = "Open";
    cache_.UpsertQueue(queue);
    const auto allocatable =
        api::Resources::FromString("cpu=96,memory=1024Gi,nvidia.com/gpu=8,pods=110")->ToList();
    for (int s = 0; s < topo.spines; ++s) {
      auto spine = std::make_shared<api::HyperNode>();
      spine->metadata.name = topo.Spine(s);
      spine->spec.tier = 2;
      for (int r = 0; r < topo.racks; ++r) {
        auto rack = std::make_shared<api::HyperNode>();
        rack->metadata.name = topo.Rack(s, r);
        rack->spec.tier = 1;
        for (int n = 0; n < topo.nodes; ++n) {
          const std::string name = topo.Node(s, r, n);
          auto node = std::make_shared<api::Node>();
          node->metadata.name = name;
          node->metadata.labels = {{"kubernetes.io/hostname", name}};
          node->status.allocatable = allocatable;
          node->status.capacity = allocatable;
          node->status.conditions.push_back({"Ready", "True", "", ""});
          cache_.UpsertNode(node);
          rack_of_[name] = s * topo.racks + r;
          api::HyperNodeMember m;
          m.type = api::kHyperNodeMemberNode;
          m.selector.exact_name = name;
          rack->spec.members.push_back(m);
        }
        cache_.UpsertHyperNode(rack);
        api::HyperNodeMember m;
        m.type = api::kHyperNodeMemberHyperNode;
        m.selector.exact_name = rack->metadata.name;
        spine->spec.members.push_back(m);
      }
      cache_.UpsertHyperNode(spine);
    }
  }

  // Gang `id` (its pods pending) created at `created`.
  void Add(int id, const GangSpec& g, base::Time created) {
    const std::string name = "g" + std::to_string(id);
    auto pg = std::make_shared<api::PodGroup>();
    pg->metadata.namespace_ = "bench";
    pg->metadata.name = name;
    pg->metadata.uid = "pg-" + name;
    pg->metadata.creation_timestamp = created;
    pg->spec.queue = "default";
    pg->spec.min_member = g.pods;
    api::NetworkTopologySpec nt;
    nt.mode = g.mode;
    if (g.tier > 0) nt.highest_tier_allowed = g.tier;
    pg->spec.network_topology = nt;
    pg->status.phase = "Inqueue";
    groups_["bench/" + name] = pg;
    cache_.UpsertPodGroup(pg);
    api::PodSpec spec;
    spec.scheduler_name = "volcano";
    api::Container c;
    c.name = "worker";
    const int gpu = g.gpu_per_pod;
    c.resources.requests = api::Resources::FromString("cpu=" + std::to_string(12 * gpu) +
                                                      ",memory=" + std::to_string(128 * gpu) +
                                                      "Gi,nvidia.com/gpu=" + std::to_string(gpu))
                               ->ToList();
    spec.containers.push_back(c);
    auto interned = interner_.Intern(MakeSchedulingSpec(spec));
    for (int i = 0; i < g.pods; ++i) {
      auto pod = std::make_shared<PodInfo>();
      pod->metadata.namespace_ = "bench";
      pod->metadata.name = name + "-" + std::to_string(i);
      pod->metadata.uid = "uid-" + name + "-" + std::to_string(i);
      pod->metadata.creation_timestamp = created;
      pod->group_name = name;
      pod->task_role = "worker";
      pod->phase = "Pending";
      pod->spec = interned;
      pods_[pod->metadata.uid] = {id, pod};
      gang_pods_[id].push_back(pod->metadata.uid);
      cache_.UpsertPod(pod);
    }
  }

  // Deletes gang `id`'s pods and PodGroup.
  void Remove(int id) {
    for (const std::string& uid : gang_pods_[id]) {
      cache_.DeletePod(*pods_.at(uid).pod);
      pods_.erase(uid);
    }
    gang_pods_.erase(id);
    const std::string name = "g" + std::to_string(id);
    groups_.erase("bench/" + name);
    cache_.DeletePodGroup("bench", name);
  }

  struct Outcome {
    double wall_ms = 0, cpu_ms = 0;
    std::map<int, std::vector<std::string>> bound;  // gang -> nodes of the pods bound
  };
  // One session; binds confirmed Running and PodGroup statuses applied afterwards.
  Outcome Run(const SchedulerConf& conf, const Registry& registry, base::ClockInterface& clock) {
    binder_.binds.clear();
    SessionOptions options;
    options.uid = "bench-" + std::to_string(++session_);
    options.binder = &binder_;
    options.evictor = &binder_;
    options.clock = &clock;
    auto t0 = Clock::now();
    double cpu0 = ThreadCpuMillis();
    CycleResult r = RunCycle(cache_.TakeSnapshot(), conf, registry, options);
    Outcome out;
    out.wall_ms = Millis(Clock::now() - t0);
    out.cpu_ms = ThreadCpuMillis() - cpu0;
    for (const auto& [uid, node] : binder_.binds) {
      auto& entry = pods_.at(uid);
      auto running = std::make_shared<PodInfo>(*entry.pod);
      running->node_name = node;
      running->phase = "Running";
      entry.pod = running;
      cache_.UpsertPod(running);
      out.bound[entry.gang].push_back(node);
    }
    for (const auto& u : r.outcome.pod_groups) {
      auto it = groups_.find(u.job);
      if (it == groups_.end()) continue;
      auto pg = std::make_shared<api::PodGroup>(WrittenPodGroup(*it->second, u));
      it->second = pg;
      cache_.UpsertPodGroup(pg);
    }
    return out;
  }

  // The tier of the lowest HyperNode holding all of `nodes`: 1 rack, 2 spine, 3 neither.
  int PlacedTier(const std::vector<std::string>& nodes) const {
    std::set<int> racks, spines;
    for (const std::string& n : nodes) {
      int rack = rack_of_.at(n);
      racks.insert(rack);
      spines.insert(rack / topo_.racks);
    }
    return racks.size() == 1 ? 1 : spines.size() == 1 ? 2 : 3;
  }

 private:
  struct Pod {
    int gang;
    PodInfoPtr pod;
  };
  const Topo topo_;
  SchedulerCache cache_;
  AssumingBinder binder_;
  SpecInterner interner_;
  std::map<std::string, int> rack_of_;
  std::map<std::string, Pod> pods_;  // by uid
  std::map<int, std::vector<std::string>> gang_pods_;
  std::map<std::string, std::shared_ptr<const api::PodGroup>> groups_;
  int session_ = 0;
};

base::Time StepTime(int step, int k) {
  return base::Time(std::chrono::seconds(1'800'000'000 + 60LL * step)) +
         std::chrono::milliseconds(k);
}

double Percentile(std::vector<int> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t rank = static_cast<size_t>(std::max(1.0, std::ceil(p * static_cast<double>(v.size()))));
  return v[std::min(rank, v.size()) - 1];
}

struct ClassStats {
  int started = 0, best = 0;
  int at_tier[4] = {0, 0, 0, 0};  // by placed tier 1..3
};

struct SimResult {
  std::string variant;
  int gangs = 0, started = 0, never_started = 0, best = 0;
  std::map<std::string, ClassStats> classes;
  double util_mean = 0;
  std::vector<double> timeline;
  double wait_mean = 0, wait_p90 = 0;
  int last_step = 0;  // the step after which nothing was running or pending (or the cap)
  double cycle_mean_ms = 0, cycle_max_ms = 0, cycle_cpu_mean_ms = 0;
  int sessions = 0;
};

SimResult Simulate(const std::string& variant, const Topo& topo, const std::vector<GangSpec>& gangs,
                   int steps, int drain, bool binpack, const Registry& registry) {
  auto conf = ParseSchedulerConf(Conf(variant, binpack), registry.Names());
  if (!conf.ok()) Die(conf.status().ToString());
  base::FakeClock clock;
  Cluster cluster(topo, clock);
  SimResult out;
  out.variant = variant;
  out.gangs = static_cast<int>(gangs.size());
  std::vector<int> start(gangs.size(), -1);
  std::vector<int> waits;
  std::multimap<int, int> ends;                    // step -> gang
  std::map<int, std::vector<std::string>> placed;  // gang -> nodes its pods were bound to
  std::vector<double> util;
  int64_t running_gpus = 0;
  size_t next = 0;
  int pending = 0;
  double cycle_total = 0, cpu_total = 0;
  int step = 0;
  for (; step < steps + drain; ++step) {
    if (step >= steps && pending == 0 && ends.empty()) break;
    for (; next < gangs.size() && gangs[next].arrival == step; ++next) {
      cluster.Add(static_cast<int>(next), gangs[next], StepTime(step, static_cast<int>(next)));
      ++pending;
    }
    Cluster::Outcome s = cluster.Run(*conf, registry, clock);
    ++out.sessions;
    cycle_total += s.wall_ms;
    cpu_total += s.cpu_ms;
    out.cycle_max_ms = std::max(out.cycle_max_ms, s.wall_ms);
    for (const auto& [id, nodes] : s.bound) {
      const GangSpec& g = gangs[static_cast<size_t>(id)];
      // min_member is every pod, so a gang binds whole; count across sessions all the same.
      std::vector<std::string>& on = placed[id];
      on.insert(on.end(), nodes.begin(), nodes.end());
      if (static_cast<int>(on.size()) < g.pods) continue;
      start[static_cast<size_t>(id)] = step;
      waits.push_back(step - g.arrival);
      --pending;
      running_gpus += g.Gpus();
      ends.emplace(step + g.duration, id);
      int tier = cluster.PlacedTier(on);
      bool best = tier <= topo.BestTier(g.Gpus());
      ClassStats& c = out.classes[g.Class()];
      ++c.started;
      c.best += best;
      ++c.at_tier[tier];
      ++out.started;
      out.best += best;
    }
    if (step < steps)
      util.push_back(static_cast<double>(running_gpus) / static_cast<double>(topo.Gpus()));
    for (auto it = ends.begin(); it != ends.end() && it->first <= step; it = ends.erase(it)) {
      running_gpus -= gangs[static_cast<size_t>(it->second)].Gpus();
      cluster.Remove(it->second);
    }
    clock.Advance(std::chrono::seconds(60));
  }
  out.last_step = step;
  out.never_started = out.gangs - out.started;
  for (double u : util) out.util_mean += u / static_cast<double>(util.size());
  for (int k = 0; k < 10; ++k) {
    size_t b = util.size() * static_cast<size_t>(k) / 10,
           e = util.size() * static_cast<size_t>(k + 1) / 10;
    double sum = 0;
    for (size_t i = b; i < e; ++i) sum += util[i];
    out.timeline.push_back(e > b ? sum / static_cast<double>(e - b) : 0);
  }
  for (int w : waits) out.wait_mean += static_cast<double>(w) / static_cast<double>(waits.size());
  out.wait_p90 = Percentile(waits, 0.9);
  out.cycle_mean_ms = cycle_total / out.sessions;
  out.cycle_cpu_mean_ms = cpu_total / out.sessions;
  return out;
}

struct ScaleResult {
  std::string variant;
  int sessions = 0;
  long pods = 0, gangs = 0;
  double wall_ms = 0, cpu_ms = 0, first_ms = 0, max_ms = 0;
  long first_pods = 0;
  double PodsPerSecond() const {
    return wall_ms > 0 ? 1000.0 * static_cast<double>(pods) / wall_ms : 0;
  }
};

ScaleResult Scale(const std::string& variant, const Topo& topo, const std::vector<GangSpec>& burst,
                  bool binpack, const Registry& registry) {
  auto conf = ParseSchedulerConf(Conf(variant, binpack), registry.Names());
  if (!conf.ok()) Die(conf.status().ToString());
  base::FakeClock clock;
  Cluster cluster(topo, clock);
  for (size_t k = 0; k < burst.size(); ++k)
    cluster.Add(static_cast<int>(k), burst[k], StepTime(0, static_cast<int>(k)));
  ScaleResult out;
  out.variant = variant;
  for (int s = 0; s < 100; ++s) {  // bounded; ends when a session binds nothing
    Cluster::Outcome r = cluster.Run(*conf, registry, clock);
    ++out.sessions;
    long pods = 0;
    for (const auto& [id, nodes] : r.bound) pods += static_cast<long>(nodes.size());
    out.pods += pods;
    out.gangs += static_cast<long>(r.bound.size());
    out.wall_ms += r.wall_ms;
    out.cpu_ms += r.cpu_ms;
    out.max_ms = std::max(out.max_ms, r.wall_ms);
    if (s == 0) out.first_ms = r.wall_ms, out.first_pods = pods;
    if (pods == 0) break;
    clock.Advance(std::chrono::seconds(1));
  }
  return out;
}

const char* Cmp(double tight, double first, bool higher_better) {
  if (tight == first) return "equal";
  return (tight > first) == higher_better ? "tightest-fit better" : "tightest-fit WORSE";
}

double BestShare(const SimResult& r) {
  return static_cast<double>(r.best) / std::max(1, r.started);
}

// Means over seeds, and on how many seeds tightest-fit beat first-feasible per metric.
void Summary(const std::vector<std::vector<SimResult>>& all, std::ostringstream& js) {
  struct Metric {
    const char* name;
    double (*get)(const SimResult&);
    bool higher_better;
    double scale;
  };
  const Metric metrics[] = {
      {"best_tier_share", BestShare, true, 100},
      {"util_mean", [](const SimResult& r) { return r.util_mean; }, true, 100},
      {"wait_mean_steps", [](const SimResult& r) { return r.wait_mean; }, false, 1},
      {"wait_p90_steps", [](const SimResult& r) { return r.wait_p90; }, false, 1},
      {"never_started", [](const SimResult& r) { return static_cast<double>(r.never_started); },
       false, 1},
      {"last_step", [](const SimResult& r) { return static_cast<double>(r.last_step); }, false, 1},
      {"cycle_mean_ms", [](const SimResult& r) { return r.cycle_mean_ms; }, false, 1},
      {"cycle_cpu_mean_ms", [](const SimResult& r) { return r.cycle_cpu_mean_ms; }, false, 1},
  };
  const double n = static_cast<double>(all.size());
  std::printf("\nsummary over %zu seeds (means; best-tier and util in %%):\n", all.size());
  std::printf("  %-16s %15s %15s %15s   tightest-fit vs first-feasible: better/equal/worse\n",
              "metric", "tightest-fit", "first-feasible", "none");
  js << ",\n  \"summary\": {\"seeds\": " << all.size();
  for (const Metric& m : metrics) {
    double mean[3] = {0, 0, 0};
    int better = 0, equal = 0, worse = 0;
    for (const auto& results : all) {
      for (size_t v = 0; v < 3; ++v) mean[v] += m.get(results[v]) / n;
      double t = m.get(results[0]), f = m.get(results[1]);
      if (t == f) {
        ++equal;
      } else if ((t > f) == m.higher_better) {
        ++better;
      } else {
        ++worse;
      }
    }
    std::printf("  %-16s %15.2f %15.2f %15.2f   %d/%d/%d\n", m.name, m.scale * mean[0],
                m.scale * mean[1], m.scale * mean[2], better, equal, worse);
    js << ",\n    \"" << m.name << "\": {\"tightest-fit\": " << mean[0]
       << ", \"first-feasible\": " << mean[1] << ", \"none\": " << mean[2]
       << ", \"tightest_better_equal_worse\": [" << better << ", " << equal << ", " << worse
       << "]}";
  }
  js << "}";
}

}  // namespace

int main(int argc, char** argv) {
  const unsigned seed = static_cast<unsigned>(std::stoul(Arg(argc, argv, "--seed", "1")));
  const int steps = std::stoi(Arg(argc, argv, "--steps", "300"));
  const int drain = std::stoi(Arg(argc, argv, "--drain", "300"));
  const double rate = std::stod(Arg(argc, argv, "--rate", "3"));
  const int repeat = std::stoi(Arg(argc, argv, "--repeat", "5"));
  const Topo topo{std::stoi(Arg(argc, argv, "--spines", "4")),
                  std::stoi(Arg(argc, argv, "--racks", "8")),
                  std::stoi(Arg(argc, argv, "--nodes", "16"))};
  const Topo big{std::stoi(Arg(argc, argv, "--scale-spines", "5")),
                 std::stoi(Arg(argc, argv, "--scale-racks", "25")),
                 std::stoi(Arg(argc, argv, "--scale-nodes", "40"))};
  const int scale_gangs = std::stoi(Arg(argc, argv, "--scale-gangs", "500"));
  const bool binpack = Arg(argc, argv, "--binpack", "false") == "true";
  const bool run_scale = Arg(argc, argv, "--scale", "true") == "true";
  const std::string json_path = Arg(argc, argv, "--json", "");

  Registry registry;
  if (!RegisterBuiltins(registry).ok()) Die("builtins");
  const std::vector<std::string> variants{"tightest-fit", "first-feasible", "none"};
  auto total0 = Clock::now();

  std::ostringstream js;
  js << "{\n  \"workload\": {\"spines\": " << topo.spines << ", \"racks_per_spine\": " << topo.racks
     << ", \"nodes_per_rack\": " << topo.nodes << ", \"gpus\": " << topo.Gpus()
     << ", \"steps\": " << steps << ", \"drain\": " << drain << ", \"rate\": " << rate
     << ", \"runs\": [";
  std::printf(
      "workload: %d spines x %d racks x %d nodes (%d nodes, %lld GPUs); gangs of 8-128 GPUs, "
      "40%% hard tier 1 / 30%% hard tier 2 / 30%% soft, Poisson %.1f per step for %d steps, "
      "drain <= %d steps\n"
      "  best possible tier = lowest tier with a HyperNode whose GPUs cover the gang in an empty "
      "cluster (here 1: a rack holds %d GPUs)\n",
      topo.spines, topo.racks, topo.nodes, topo.NodeCount(), static_cast<long long>(topo.Gpus()),
      rate, steps, drain, 8 * topo.nodes);
  std::vector<std::vector<SimResult>> all;
  for (int rep = 0; rep < repeat; ++rep) {
    const unsigned s = seed + static_cast<unsigned>(rep);
    std::vector<GangSpec> gangs = Workload(s, steps, rate);
    std::vector<SimResult> results;
    for (const std::string& v : variants)
      results.push_back(Simulate(v, topo, gangs, steps, drain, binpack, registry));
    std::printf("\nseed %u: %zu gangs\n", s, gangs.size());
    std::printf("  %-15s %9s %7s %9s %8s %6s %5s %8s %8s %8s\n", "variant", "best-tier", "util",
                "wait-mean", "wait-p90", "never", "end", "cyc-ms", "cyc-max", "cyc-cpu");
    for (const SimResult& r : results) {
      std::printf("  %-15s %8.1f%% %6.1f%% %9.2f %8.0f %6d %5d %8.2f %8.2f %8.2f\n",
                  r.variant.c_str(), 100 * BestShare(r), 100 * r.util_mean, r.wait_mean, r.wait_p90,
                  r.never_started, r.last_step, r.cycle_mean_ms, r.cycle_max_ms,
                  r.cycle_cpu_mean_ms);
    }
    std::printf("  placed tier by class (rack / spine / across spines) of started gangs:\n");
    for (const SimResult& r : results) {
      std::printf("    %-15s", r.variant.c_str());
      for (const auto& [cls, c] : r.classes)
        std::printf("  %s %d/%d/%d", cls.c_str(), c.at_tier[1], c.at_tier[2], c.at_tier[3]);
      std::printf("\n");
    }
    std::printf("  utilisation timeline (10 slices of the arrival window):\n");
    for (const SimResult& r : results) {
      std::printf("    %-15s", r.variant.c_str());
      for (double u : r.timeline) std::printf(" %5.1f", 100 * u);
      std::printf("\n");
    }
    const SimResult& t = results[0];
    const SimResult& f = results[1];
    std::printf("  tightest-fit vs first-feasible:\n");
    std::printf("    best-tier share %.1f%% vs %.1f%%: %s\n",
                100.0 * t.best / std::max(1, t.started), 100.0 * f.best / std::max(1, f.started),
                Cmp(static_cast<double>(t.best) / std::max(1, t.started),
                    static_cast<double>(f.best) / std::max(1, f.started), true));
    std::printf("    mean utilisation %.2f%% vs %.2f%%: %s\n", 100 * t.util_mean, 100 * f.util_mean,
                Cmp(t.util_mean, f.util_mean, true));
    std::printf("    mean wait %.2f vs %.2f steps: %s\n", t.wait_mean, f.wait_mean,
                Cmp(t.wait_mean, f.wait_mean, false));
    std::printf("    p90 wait %.0f vs %.0f steps: %s\n", t.wait_p90, f.wait_p90,
                Cmp(t.wait_p90, f.wait_p90, false));
    std::printf("    never started %d vs %d: %s\n", t.never_started, f.never_started,
                Cmp(t.never_started, f.never_started, false));
    std::printf("    run ended at step %d vs %d: %s\n", t.last_step, f.last_step,
                Cmp(t.last_step, f.last_step, false));
    // CPU time: wall time swings with whatever else the machine runs.
    std::printf("    mean cycle CPU %.2f vs %.2f ms: %s\n", t.cycle_cpu_mean_ms,
                f.cycle_cpu_mean_ms, Cmp(t.cycle_cpu_mean_ms, f.cycle_cpu_mean_ms, false));

    js << (rep ? ",\n" : "\n") << "    {\"seed\": " << s << ", \"gangs\": " << gangs.size()
       << ", \"variants\": [";
    for (size_t k = 0; k < results.size(); ++k) {
      const SimResult& r = results[k];
      js << (k ? ",\n" : "\n") << "      {\"variant\": \"" << r.variant
         << "\", \"started\": " << r.started << ", \"never_started\": " << r.never_started
         << ", \"best_tier_share\": " << static_cast<double>(r.best) / std::max(1, r.started)
         << ", \"util_mean\": " << r.util_mean << ", \"util_timeline\": [";
      for (size_t i = 0; i < r.timeline.size(); ++i) js << (i ? ", " : "") << r.timeline[i];
      js << "], \"wait_mean_steps\": " << r.wait_mean << ", \"wait_p90_steps\": " << r.wait_p90
         << ", \"last_step\": " << r.last_step << ", \"sessions\": " << r.sessions
         << ", \"cycle_mean_ms\": " << r.cycle_mean_ms << ", \"cycle_max_ms\": " << r.cycle_max_ms
         << ", \"cycle_cpu_mean_ms\": " << r.cycle_cpu_mean_ms << ", \"placed_tier\": {";
      bool first = true;
      for (const auto& [cls, c] : r.classes) {
        js << (first ? "" : ", ") << "\"" << cls << "\": [" << c.at_tier[1] << ", " << c.at_tier[2]
           << ", " << c.at_tier[3] << "]";
        first = false;
      }
      js << "}}";
    }
    js << "]}";
    all.push_back(results);
  }
  js << "]";
  if (repeat > 1) Summary(all, js);
  js << "}";

  if (run_scale) {
    std::vector<GangSpec> burst = Burst(seed, scale_gangs);
    long burst_pods = 0;
    for (const GangSpec& g : burst) burst_pods += g.pods;
    std::printf(
        "\nscale: %d spines x %d racks x %d nodes (%d nodes), one burst of %d gangs (%ld pods, "
        "4-32 pods each), sessions until one binds nothing\n",
        big.spines, big.racks, big.nodes, big.NodeCount(), scale_gangs, burst_pods);
    ScaleResult with = Scale("tightest-fit", big, burst, binpack, registry);
    ScaleResult first = Scale("first-feasible", big, burst, binpack, registry);
    ScaleResult without = Scale("none", big, burst, binpack, registry);
    const std::pair<const char*, const ScaleResult*> rows[] = {
        {"with", &with}, {"first_feasible", &first}, {"without", &without}};
    for (const auto& [label, r] : rows) {
      std::printf(
          "  %-15s %3d sessions, %6ld pods (%4ld gangs) bound, session time %8.1f ms (%8.1f ms "
          "CPU), first session %8.1f ms for %ld pods: %7.0f pods/s\n",
          r->variant == "none" ? "no topology" : r->variant.c_str(), r->sessions, r->pods, r->gangs,
          r->wall_ms, r->cpu_ms, r->first_ms, r->first_pods, r->PodsPerSecond());
    }
    double ratio = with.PodsPerSecond() > 0 ? without.PodsPerSecond() / with.PodsPerSecond() : 0;
    std::printf(
        "  rate without topology / rate with (tightest-fit): %.2fx (target: within 2x; %s)\n",
        ratio, ratio <= 2 ? "met" : "NOT met");
    js << ",\n  \"scale\": {\"nodes\": " << big.NodeCount() << ", \"gangs\": " << scale_gangs
       << ", \"pods\": " << burst_pods << ", \"ratio_without_over_with\": " << ratio;
    for (const auto& [label, r] : rows) {
      js << ",\n    \"" << label << "\": {\"sessions\": " << r->sessions
         << ", \"pods_bound\": " << r->pods << ", \"gangs_bound\": " << r->gangs
         << ", \"session_ms\": " << r->wall_ms << ", \"session_cpu_ms\": " << r->cpu_ms
         << ", \"first_session_ms\": " << r->first_ms << ", \"max_session_ms\": " << r->max_ms
         << ", \"pods_per_second\": " << r->PodsPerSecond() << "}";
    }
    js << "}";
  }
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  double total_s = Millis(Clock::now() - total0) / 1000;
  std::printf("\npeak RSS %.0f MiB, whole run %.1f s\n", static_cast<double>(ru.ru_maxrss) / 1024,
              total_s);
  js << ",\n  \"peak_rss_mib\": " << ru.ru_maxrss / 1024 << ", \"run_seconds\": " << total_s
     << "\n}\n";
  if (!json_path.empty()) {
    std::ofstream out(json_path);
    out << js.str();
  }
  return 0;
}
