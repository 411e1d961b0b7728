// In-process scheduler benchmark: no API server, the scheduler's cache fed directly with the
// objects of bench/workload.h, decoded by the scheduler's own informer decoders.
//
//   bench_scheduler [--nodes 5000] [--pods 100000] [--gang-size 10] [--plain-fraction 0.2]
//                   [--queues 4] [--priorities 1] [--shape uniform|mixed|taints]
//                   [--conf default|binpack|drf|proportion] [--max-cycles 100]
//                   [--steady-cycles 5] [--claim-fraction 0] [--json FILE]
//
// --claim-fraction F: that share of the pods mounts a claim of its own (docs/scheduler.md,
// "Storage"), every other one of them of a WaitForFirstConsumer class of static local PVs (a
// 10Gi PV made for it on a node picked by a hash, so its gang spreads where its PVs are), the
// rest of a WaitForFirstConsumer class that provisions anywhere. Compare pods/s with and without.
//
// One process per grid point, so its peak memory is that point's. Measures:
//   ingest     decoding + cache upserts of every object (what the informers do at start-up);
//   placement  cycles (enqueue → allocate → backfill) until every pending pod is placed or a
//              cycle places none; pods/s = placed / time to the end of the last cycle that
//              placed something (also per CPU second of the scheduling thread, which a busy
//              machine does not distort); the first cycle's open / per-action / close times;
//   steady     the placement's status writes fed back and the placed pods confirmed as
//              Running, then one more session's writes fed back (as the informers would
//              after the binds and status writes), then --steady-cycles cycles over the
//              unchanged cluster: snapshot, session open, each action, close, whole cycle
//              (best of them), and the writes the last one wanted (none when settled);
//   memory     peak resident set (VmHWM) and resident set at the end (VmRSS).
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <time.h>
#include <vector>

#include <rapidjson/document.h>

#include "api/core.h"
#include "api/scheduling.h"
#include "bench/common.h"
#include "bench/workload.h"
#include "json/json.h"
#include "scheduler/builtins.h"
#include "scheduler/cache/cache.h"
#include "scheduler/framework/cycle.h"

namespace {

using namespace tephra;
using namespace tephra::scheduler;
using Clock = std::chrono::steady_clock;
using bench::Arg;
using bench::Die;

// What the informers bring back once a session's status writes land: PodGroup statuses and
// queues' allocated resources.
void FeedBack(const SessionOutcome& outcome, SchedulerCache& cache) {
  for (const PodGroupUpdate& u : outcome.pod_groups) {
    auto job = cache.Job(u.job);
    if (!job || !job->pod_group) continue;
    cache.UpsertPodGroup(std::make_shared<api::PodGroup>(WrittenPodGroup(*job->pod_group, u)));
  }
  for (const QueueUpdate& u : outcome.queues) {
    auto info = cache.Queue(u.name);
    if (!info || !info->queue) continue;
    auto queue = std::make_shared<api::Queue>(*info->queue);
    queue->status.allocated = u.allocated;
    cache.UpsertQueue(std::move(queue));
  }
}

double Ms(Clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

// CPU time of this thread: scheduling cycles run on one thread, so on a busy machine this is
// what the placement would have taken with a core to itself.
double ThreadCpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}
double Ms(std::chrono::nanoseconds d, int) {
  return static_cast<double>(d.count()) / 1e6;
}

template <typename T>
T Must(StatusOr<T> v, const char* what) {
  if (!v.ok()) Die(std::string(what) + ": " + v.status().ToString());
  return std::move(*v);
}

// Binds by assuming in the cache, as the real binder does before its API call, and remembers
// where each pod went so the benchmark can later confirm it like the pod informer would.
class AssumingBinder : public Binder {
 public:
  explicit AssumingBinder(SchedulerCache& cache) : cache_(cache) {}
  void Bind(const BindUnit& unit) override {
    for (const BindRequest& b : unit.binds) {
      if (!cache_.AssumeBinding(b.task->job(), b.task->uid(), b.node).ok()) continue;
      cache_.AssumeVolumeSteps(b.steps);
      placed.push_back({b.task->job(), b.task->uid(), b.node});
    }
  }
  struct Placed {
    JobId job;
    std::string uid;
    std::string node;
  };
  std::vector<Placed> placed;

 private:
  SchedulerCache& cache_;
};

const char* ConfYaml(const std::string& name) {
  static const char* kBinpack = R"(actions: "enqueue, allocate, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: overcommit}, {name: drf}, {name: predicates}, {name: proportion}, {name: binpack}]
)";
  static const char* kDrf = R"(actions: "enqueue, allocate, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: overcommit}, {name: drf}, {name: predicates}, {name: nodeorder}]
)";
  static const char* kProportion = R"(actions: "enqueue, allocate, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: overcommit}, {name: predicates}, {name: proportion}, {name: nodeorder}]
)";
  if (name == "default") return DefaultSchedulerConfYaml();
  if (name == "binpack") return kBinpack;
  if (name == "drf") return kDrf;
  if (name == "proportion") return kProportion;
  Die("unknown --conf " + name + " (default, binpack, drf, proportion)");
}

json::Document ParseJson(const std::string& text) {
  json::Document doc;
  Status st = json::Parse(text, &doc);
  if (!st.ok()) Die("generated JSON: " + st.ToString());
  return doc;
}

base::Time CreatedAt(int64_t seconds) {
  return base::Time(std::chrono::seconds(1800000000 + seconds));
}

// The storage of --claim-fraction: two WaitForFirstConsumer classes, and for each pod that
// mounts a claim, the claim and (for `local`) a PV on one node.
class ClaimWorkload {
 public:
  ClaimWorkload(SchedulerCache& cache, double fraction, const bench::ClusterSpec& cluster)
      : cache_(cache), fraction_(fraction), cluster_(cluster) {
    if (fraction_ <= 0) return;
    for (auto [name, provisioner] : {std::pair{"local", "kubernetes.io/no-provisioner"},
                                     std::pair{"csi", "bench.tephra.dev/csi"}}) {
      auto klass = std::make_shared<api::StorageClass>();
      klass->metadata.name = name;
      klass->provisioner = provisioner;
      klass->volume_binding_mode = "WaitForFirstConsumer";
      cache_.UpsertStorageClass(klass);
    }
  }

  // Mounts a claim in the pod's JSON when the pod is one of those that do (the k-th pod).
  void MaybeMount(json::Document& pod, int64_t k) {
    // Exactly the fraction, spread evenly: pod k mounts one when k * fraction crosses an integer.
    const auto floor_at = [&](int64_t i) {
      return static_cast<int64_t>(static_cast<double>(i) * fraction_);
    };
    if (fraction_ <= 0 || floor_at(k + 1) == floor_at(k)) return;
    const bool local = mounted_++ % 2 == 0;
    auto& alloc = pod.GetAllocator();
    std::string ns = pod["metadata"]["namespace"].GetString();
    std::string name = std::string(pod["metadata"]["name"].GetString()) + "-data";
    rapidjson::Value claim(rapidjson::kObjectType);
    claim.AddMember("claimName", rapidjson::Value(name.c_str(), alloc), alloc);
    rapidjson::Value volume(rapidjson::kObjectType);
    volume.AddMember("name", "data", alloc);
    volume.AddMember("persistentVolumeClaim", claim, alloc);
    rapidjson::Value volumes(rapidjson::kArrayType);
    volumes.PushBack(volume, alloc);
    pod["spec"].AddMember("volumes", volumes, alloc);
    auto pvc = std::make_shared<api::PersistentVolumeClaim>();
    pvc->metadata.namespace_ = ns;
    pvc->metadata.name = name;
    pvc->metadata.uid = "uid-" + name;
    pvc->spec.access_modes = {"ReadWriteOnce"};
    pvc->spec.storage_class_name = local ? "local" : "csi";
    pvc->spec.storage_request =
        api::Quantity::FromInt(int64_t{5} << 30, api::QuantityFormat::kBinarySI);
    pvc->phase = "Pending";
    cache_.UpsertClaim(pvc);
    if (!local) return;
    auto pv = std::make_shared<api::PersistentVolume>();
    pv->metadata.name = "pv-" + name;
    pv->spec.capacity = api::Quantity::FromInt(int64_t{10} << 30, api::QuantityFormat::kBinarySI);
    pv->spec.access_modes = {"ReadWriteOnce"};
    pv->spec.storage_class_name = "local";
    api::NodeSelectorTerm term;
    term.match_expressions.push_back(
        {"kubernetes.io/hostname",
         "In",
         {cluster_.prefix + "-" + std::to_string((k * 7919) % cluster_.nodes)}});
    pv->spec.node_affinity = std::vector<api::NodeSelectorTerm>{term};
    pv->phase = "Available";
    cache_.UpsertVolume(pv);
  }

 private:
  SchedulerCache& cache_;
  const double fraction_;
  const bench::ClusterSpec& cluster_;
  int64_t mounted_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  bench::ClusterSpec cluster;
  bench::WorkloadSpec work;
  cluster.nodes = std::stoi(Arg(argc, argv, "--nodes", "5000"));
  work.pods = std::stoll(Arg(argc, argv, "--pods", "100000"));
  work.gang_size = std::stoi(Arg(argc, argv, "--gang-size", "10"));
  work.plain_fraction = std::stod(Arg(argc, argv, "--plain-fraction", "0.2"));
  work.queues = std::stoi(Arg(argc, argv, "--queues", "4"));
  work.priorities = Arg(argc, argv, "--priorities", "1") != "0";
  if (!bench::ParseNodeShape(Arg(argc, argv, "--shape", "uniform"), &cluster.shape))
    Die("bad --shape");
  work.shape = cluster.shape;
  const std::string conf_name = Arg(argc, argv, "--conf", "default");
  const int max_cycles = std::stoi(Arg(argc, argv, "--max-cycles", "100"));
  const int steady_cycles = std::max(1, std::stoi(Arg(argc, argv, "--steady-cycles", "5")));
  const std::string json_path = Arg(argc, argv, "--json", "");
  const double claim_fraction = std::stod(Arg(argc, argv, "--claim-fraction", "0"));

  Registry registry;
  if (!RegisterBuiltins(registry).ok()) Die("registering builtins");
  SchedulerConf conf = Must(ParseSchedulerConf(ConfYaml(conf_name), registry.Names()), "conf");
  const double rss_start = bench::ProcStatusMiB("self", "VmRSS");

  // ---- ingest: every object through the informer decoders into the cache ----
  SchedulerCache cache(CacheOptions{});
  auto interner = std::make_shared<SpecInterner>();
  auto t_ingest = Clock::now();
  {
    auto root = std::make_shared<api::Queue>();
    root->metadata.name = "root";
    root->spec.weight = 1;
    cache.UpsertQueue(root);
    auto def = std::make_shared<api::Queue>();
    def->metadata.name = "default";
    def->spec.weight = 1;
    cache.UpsertQueue(def);
  }
  for (const auto& q : bench::QueueJsons(work))
    cache.UpsertQueue(Must(api::DecodeQueue(q), "queue"));
  for (const auto& pc : bench::PriorityClassJsons(work)) {
    cache.UpsertPriorityClass(Must(api::DecodePriorityClass(pc), "priority class"));
  }
  for (int i = 0; i < cluster.nodes; ++i) {
    auto node = Must(api::DecodeNode(bench::NodeJson(cluster, i)), "node");
    node->metadata.uid = node->metadata.name;
    cache.UpsertNode(std::move(node));
  }
  const std::vector<bench::JobPlan> jobs = bench::PlanJobs(work);
  ClaimWorkload claims(cache, claim_fraction, cluster);
  int64_t pending = 0;
  for (const auto& job : jobs) {
    auto pg = Must(api::DecodePodGroup(bench::PodGroupJson(work, job, "Pending")), "podgroup");
    pg->metadata.uid = "pg-" + job.name;
    pg->metadata.creation_timestamp = CreatedAt(job.index);
    cache.UpsertPodGroup(std::move(pg));
    for (int i = 0; i < job.size; ++i) {
      json::Document doc = ParseJson(bench::PodJson(work, job, i, true, work.scheduler_name));
      claims.MaybeMount(doc, pending);
      auto pod = Must(DecodePodInfo(doc, *interner), "pod");
      pod->metadata.uid = pod->metadata.name;
      pod->metadata.creation_timestamp = CreatedAt(job.index);
      cache.UpsertPod(std::move(pod));
      ++pending;
    }
  }
  const double ingest_ms = Ms(Clock::now() - t_ingest);
  const double rss_ingested = bench::ProcStatusMiB("self", "VmRSS");

  // ---- placement ----
  AssumingBinder binder(cache);
  auto t0 = Clock::now();
  const double cpu0 = ThreadCpuMs();
  double productive_ms = 0, productive_cpu_ms = 0;
  int cycles = 0;
  double first_open_ms = 0, first_close_ms = 0;
  std::ostringstream first_actions;
  std::vector<double> cycle_ms;
  std::vector<size_t> cycle_placed;
  std::vector<SessionOutcome> placement_writes;  // fed back once placement is measured
  while (static_cast<int64_t>(binder.placed.size()) < pending && cycles < max_cycles) {
    SessionOptions options;
    options.uid = "bench-" + std::to_string(cycles);
    options.binder = &binder;
    const size_t before = binder.placed.size();
    auto tc = Clock::now();
    CycleResult r = RunCycle(cache.TakeSnapshot(), conf, registry, options);
    cycle_ms.push_back(Ms(Clock::now() - tc));
    cycle_placed.push_back(binder.placed.size() - before);
    placement_writes.push_back(std::move(r.outcome));
    if (cycles == 0) {
      first_open_ms = Ms(r.open, 0);
      first_close_ms = Ms(r.close, 0);
      for (const auto& [name, d] : r.actions) {
        first_actions << (first_actions.tellp() > 0 ? "," : "") << "\"" << name
                      << "_ms\":" << Ms(d, 0);
      }
    }
    ++cycles;
    if (binder.placed.size() == before) break;
    productive_ms = Ms(Clock::now() - t0);
    productive_cpu_ms = ThreadCpuMs() - cpu0;
  }
  const auto placed = static_cast<int64_t>(binder.placed.size());
  const double pods_per_s =
      productive_ms > 0 ? static_cast<double>(placed) / (productive_ms / 1e3) : 0;
  const double pods_per_cpu_s =
      productive_cpu_ms > 0 ? static_cast<double>(placed) / (productive_cpu_ms / 1e3) : 0;
  const double last_cycle_ms = cycle_ms.empty() ? 0 : cycle_ms.back();

  // ---- steady state: placed pods confirmed Running, nothing changes ----
  auto t_confirm = Clock::now();
  for (const auto& p : binder.placed) {
    auto job = cache.Job(p.job);
    if (!job) continue;
    auto it = job->tasks.find(p.uid);
    if (it == job->tasks.end()) continue;
    auto pod = std::make_shared<PodInfo>(*it->second.pod);
    pod->node_name = p.node;
    pod->phase = "Running";
    cache.UpsertPod(std::move(pod));
  }
  for (const SessionOutcome& outcome : placement_writes) FeedBack(outcome, cache);
  // A session over the running pods writes the PodGroups' counts; the informer brings them back,
  // and the cluster is then settled.
  {
    SessionOptions options;
    options.uid = "confirm";
    FeedBack(RunCycle(cache.TakeSnapshot(), conf, registry, options).outcome, cache);
  }
  const double confirm_ms = Ms(Clock::now() - t_confirm);
  double snapshot_ms = 1e18, open_ms = 1e18, close_ms = 1e18, idle_ms = 1e18;
  std::map<std::string, double> steady_actions;  // best time of each action
  size_t steady_writes = 0;                      // a settled cluster wants none
  for (int i = 0; i < steady_cycles; ++i) {
    auto ts = Clock::now();
    auto snap = cache.TakeSnapshot();
    snapshot_ms = std::min(snapshot_ms, Ms(Clock::now() - ts));
    SessionOptions options;
    options.uid = "steady-" + std::to_string(i);
    CycleResult r = RunCycle(std::move(snap), conf, registry, options);
    idle_ms = std::min(idle_ms, Ms(Clock::now() - ts));
    steady_writes = r.outcome.pod_groups.size() + r.outcome.pods.size() + r.outcome.queues.size();
    open_ms = std::min(open_ms, Ms(r.open, 0));
    close_ms = std::min(close_ms, Ms(r.close, 0));
    for (const auto& [name, d] : r.actions) {
      auto [it, fresh] = steady_actions.try_emplace(name, Ms(d, 0));
      if (!fresh) it->second = std::min(it->second, Ms(d, 0));
    }
  }
  const double peak_mib = bench::ProcStatusMiB("self", "VmHWM");
  const double rss_end = bench::ProcStatusMiB("self", "VmRSS");

  std::printf(
      "%-10s %-7s nodes=%-6d claims=%.2f pending=%-7lld placed=%-7lld %9.0f pods/s (%.0f per CPU "
      "s)  cycles=%-3d "
      "first open %.1f ms  steady open %.2f ms / cycle %.1f ms (%zu writes)  peak %.0f MiB\n",
      conf_name.c_str(), bench::NodeShapeName(cluster.shape), cluster.nodes, claim_fraction,
      static_cast<long long>(pending), static_cast<long long>(placed), pods_per_s, pods_per_cpu_s,
      cycles, first_open_ms, open_ms, idle_ms, steady_writes, peak_mib);
  if (!json_path.empty()) {
    std::ofstream out(json_path);
    out << "{\"conf\":\"" << conf_name << "\",\"shape\":\"" << bench::NodeShapeName(cluster.shape)
        << "\",\"nodes\":" << cluster.nodes << ",\"pending_pods\":" << pending
        << ",\"jobs\":" << jobs.size() << ",\"gang_size\":" << work.gang_size
        << ",\"plain_fraction\":" << work.plain_fraction << ",\"claim_fraction\":" << claim_fraction
        << ",\"queues\":" << work.queues
        << ",\"priorities\":" << (work.priorities ? "true" : "false")
        << ",\"ingest_ms\":" << ingest_ms << ",\"placed\":" << placed
        << ",\"placement_ms\":" << productive_ms << ",\"pods_per_second\":" << pods_per_s
        << ",\"placement_cpu_ms\":" << productive_cpu_ms
        << ",\"pods_per_cpu_second\":" << pods_per_cpu_s << ",\"cycles\":" << cycles
        << ",\"last_cycle_ms\":" << last_cycle_ms
        << ",\"first_cycle\":{\"open_ms\":" << first_open_ms << "," << first_actions.str()
        << ",\"close_ms\":" << first_close_ms << "},\"cycle_ms\":[";
    for (size_t i = 0; i < cycle_ms.size(); ++i) out << (i ? "," : "") << cycle_ms[i];
    out << "],\"cycle_placed\":[";
    for (size_t i = 0; i < cycle_placed.size(); ++i) out << (i ? "," : "") << cycle_placed[i];
    out << "],\"confirm_ms\":" << confirm_ms << ",\"steady\":{\"running_pods\":" << placed
        << ",\"snapshot_ms\":" << snapshot_ms << ",\"open_ms\":" << open_ms
        << ",\"close_ms\":" << close_ms << ",\"writes\":" << steady_writes;
    for (const auto& [name, ms] : steady_actions) out << ",\"" << name << "_ms\":" << ms;
    out << ",\"cycle_ms\":" << idle_ms << "},\"rss_start_mib\":" << rss_start
        << ",\"rss_ingested_mib\":" << rss_ingested << ",\"rss_end_mib\":" << rss_end
        << ",\"peak_rss_mib\":" << peak_mib << "}\n";
  }
  return 0;
}
