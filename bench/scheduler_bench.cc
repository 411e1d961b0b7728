// In-process scheduler benchmark: no API server, the cache fed directly.
//
//   bench_scheduler [--nodes 5000] [--gangs 5000] [--gang-size 10] [--running 100000]
//                   [--backlog 2000] [--conf default|binpack] [--explain on|off] [--json FILE]
//
// Measures (1) pods placed per second when `gangs` × `gang-size` pending pods arrive at once
// on `nodes` empty nodes, cycle by cycle until nothing more can be placed; (2) the time to open
// a session (snapshot + plugin setup) over `running` running pods when nothing changed; (3) the
// cycle time over a full cluster with `backlog` gangs that cannot be placed, with and without
// recording explanations (the most the recorder ever does); (4) that cluster as a dumped
// snapshot: its size, encode and decode time, and one replayed session; (5) peak resident memory.
//
// Every cycle records its explanations and decisions as tephra-scheduler does (--explain off
// turns that off in (1) and (2), for comparison).
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>

#include "scheduler/builtins.h"
#include "scheduler/cache/cache.h"
#include "scheduler/explain/recorder.h"
#include "scheduler/framework/cycle.h"
#include "scheduler/replay/decisions.h"
#include "scheduler/replay/replay.h"
#include "scheduler/replay/snapshot_io.h"

namespace {

using namespace tephra;
using namespace tephra::scheduler;
using Clock = std::chrono::steady_clock;

std::string Arg(int argc, char** argv, const std::string& name, const std::string& def) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (argv[i] == name) return argv[i + 1];
  }
  return def;
}

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

long PeakRssKb() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

// Binds by assuming in the cache, as the real binder does before its API call.
class AssumingBinder : public Binder {
 public:
  explicit AssumingBinder(SchedulerCache& cache) : cache_(cache) {}
  void Bind(const TaskInfo& task, const std::string& node) override {
    if (cache_.AssumeBinding(task.job, task.uid(), node).ok()) ++bound;
  }
  size_t bound = 0;

 private:
  SchedulerCache& cache_;
};

void AddNodes(SchedulerCache& cache, int n) {
  api::Resources r = *api::Resources::FromString("cpu=32,memory=256Gi,pods=110");
  for (int i = 0; i < n; ++i) {
    auto node = std::make_shared<api::Node>();
    node->metadata.name = "node-" + std::to_string(i);
    node->metadata.labels = {{"kubernetes.io/hostname", node->metadata.name},
                             {"topology.kubernetes.io/zone", "zone-" + std::to_string(i % 10)}};
    node->status.allocatable = r.ToList();
    node->status.capacity = node->status.allocatable;
    node->status.conditions.push_back({"Ready", "True", "", ""});
    cache.UpsertNode(node);
  }
}

std::shared_ptr<PodInfo> NewPod(SpecInterner& interner, const std::string& ns, const std::string& name,
                                const std::string& group, const api::PodSpec& spec) {
  auto pod = std::make_shared<PodInfo>();
  pod->metadata.namespace_ = ns;
  pod->metadata.name = name;
  pod->metadata.uid = ns + "-" + name;
  pod->metadata.labels = {{"volcano.sh/job-name", group}, {"volcano.sh/task-spec", "worker"}};
  pod->group_name = group;
  pod->task_role = "worker";
  pod->phase = "Pending";
  pod->spec = interner.Intern(MakeSchedulingSpec(spec));
  return pod;
}

api::PodSpec WorkerSpec(const char* request) {
  api::PodSpec spec;
  spec.scheduler_name = "volcano";
  api::Container c;
  c.name = "worker";
  c.resources.requests = api::Resources::FromString(request)->ToList();
  spec.containers.push_back(c);
  return spec;
}

void AddGangs(SchedulerCache& cache, SpecInterner& interner, const std::string& prefix, int gangs,
              int size, const char* request, const std::string& phase, int running_nodes) {
  api::PodSpec spec = WorkerSpec(request);
  for (int g = 0; g < gangs; ++g) {
    std::string group = prefix + std::to_string(g);
    auto pg = std::make_shared<api::PodGroup>();
    pg->metadata.namespace_ = "bench";
    pg->metadata.name = group;
    pg->metadata.uid = "pg-" + group;
    pg->spec.queue = "default";
    pg->spec.min_member = size;
    pg->status.phase = phase;
    cache.UpsertPodGroup(pg);
    for (int i = 0; i < size; ++i) {
      auto pod = NewPod(interner, "bench", group + "-worker-" + std::to_string(i), group, spec);
      if (running_nodes > 0) {
        pod->phase = "Running";
        pod->node_name = "node-" + std::to_string((g * size + i) % running_nodes);
      }
      cache.UpsertPod(pod);
    }
  }
}

// Runs one cycle as tephra-scheduler does: binds through a DecisionLog, and the closed session
// recorded for the admin API when `recorder` is set.
CycleResult Cycle(std::shared_ptr<const Snapshot> snapshot, const SchedulerConf& conf, const Registry& registry,
                  const std::string& uid, Binder* binder, SessionRecorder* recorder) {
  DecisionLog log(binder, nullptr);
  SessionOptions options;
  options.uid = uid;
  options.binder = &log;
  return RunCycle(std::move(snapshot), conf, registry, options, [&](const Session& ssn) {
    if (recorder != nullptr) recorder->Record(ssn, log.Take(ssn), ssn.Now());
  });
}

const char* kBinpackConf = R"(actions: "enqueue, allocate, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: overcommit}, {name: drf}, {name: predicates}, {name: proportion}, {name: binpack}]
)";

}  // namespace

int main(int argc, char** argv) {
  const int nodes = std::stoi(Arg(argc, argv, "--nodes", "5000"));
  const int gangs = std::stoi(Arg(argc, argv, "--gangs", "5000"));
  const int gang_size = std::stoi(Arg(argc, argv, "--gang-size", "10"));
  const int running = std::stoi(Arg(argc, argv, "--running", "100000"));
  const std::string conf_name = Arg(argc, argv, "--conf", "default");
  const std::string json_path = Arg(argc, argv, "--json", "");
  const int backlog = std::stoi(Arg(argc, argv, "--backlog", "2000"));
  const bool explain = Arg(argc, argv, "--explain", "on") != "off";
  SessionRecorder recorder({10000, true});
  SessionRecorder* rec = explain ? &recorder : nullptr;

  Registry registry;
  if (!RegisterBuiltins(registry).ok()) return 1;
  auto conf = ParseSchedulerConf(conf_name == "binpack" ? kBinpackConf : DefaultSchedulerConfYaml(),
                                 registry.ActionNames(), registry.PluginNames());
  if (!conf.ok()) return 1;
  auto default_queue = std::make_shared<api::Queue>();
  default_queue->metadata.name = "default";
  default_queue->spec.weight = 1;

  // ---- 1. placement throughput ----
  SchedulerCache cache(CacheOptions{});
  auto interner = std::make_shared<SpecInterner>();
  cache.UpsertQueue(default_queue);
  AddNodes(cache, nodes);
  AddGangs(cache, *interner, "gang-", gangs, gang_size, "cpu=1,memory=2Gi", "Inqueue", 0);
  AssumingBinder binder(cache);
  const size_t pending = static_cast<size_t>(gangs) * static_cast<size_t>(gang_size);
  auto t0 = Clock::now();
  int cycles = 0;
  double first_open = 0, first_allocate = 0;
  while (binder.bound < pending && cycles < 50) {
    size_t before = binder.bound;
    CycleResult r = Cycle(cache.TakeSnapshot(), *conf, registry, "bench-" + std::to_string(cycles), &binder, rec);
    if (cycles == 0) {
      first_open = Seconds(r.open);
      for (const auto& [name, d] : r.actions) {
        if (name == "allocate") first_allocate = Seconds(d);
      }
    }
    ++cycles;
    if (binder.bound == before) break;
  }
  double place_s = Seconds(Clock::now() - t0);
  double pods_per_s = static_cast<double>(binder.bound) / place_s;
  std::printf("placement: %d nodes, %d gangs x %d pods (conf %s, explanations %s)\n", nodes, gangs, gang_size,
              conf_name.c_str(), explain ? "on" : "off");
  std::printf("  placed %zu/%zu pods in %.3f s over %d cycles: %.0f pods/s\n", binder.bound, pending,
              place_s, cycles, pods_per_s);
  std::printf("  first cycle: open %.1f ms, allocate %.3f s\n", first_open * 1e3, first_allocate);

  // ---- 2. session open over many running pods, nothing changed ----
  SchedulerCache big(CacheOptions{});
  SpecInterner big_interner;
  big.UpsertQueue(default_queue);
  AddNodes(big, nodes);
  AddGangs(big, big_interner, "run-", running / gang_size, gang_size, "cpu=1,memory=2Gi", "Running", nodes);
  double snapshot_ms = 1e9, open_ms = 1e9, cycle_ms = 1e9;
  for (int i = 0; i < 5; ++i) {
    auto ts = Clock::now();
    auto snap = big.TakeSnapshot();
    snapshot_ms = std::min(snapshot_ms, Seconds(Clock::now() - ts) * 1e3);
    auto tc = Clock::now();
    CycleResult r = Cycle(std::move(snap), *conf, registry, "open-" + std::to_string(i), nullptr, rec);
    cycle_ms = std::min(cycle_ms, Seconds(Clock::now() - tc) * 1e3);
    open_ms = std::min(open_ms, Seconds(r.open) * 1e3 + Seconds(Clock::now() - ts) * 0);
  }
  std::printf("steady state: %d running pods on %d nodes, nothing changed\n", running, nodes);
  std::printf("  snapshot %.2f ms, session open %.2f ms, whole cycle %.2f ms\n", snapshot_ms, open_ms,
              cycle_ms);

  // ---- 3. a full cluster with a backlog of gangs that cannot be placed ----
  // Every node is full of running pods; `backlog` admitted gangs wait. Each cycle tries them
  // all and the recorder explains every one: its cost is the difference between the two.
  SchedulerCache full(CacheOptions{});
  SpecInterner full_interner;
  full.UpsertQueue(default_queue);
  const int backlog_nodes = std::max(1, nodes / 5);
  AddNodes(full, backlog_nodes);
  AddGangs(full, full_interner, "fill-", backlog_nodes * 32 / gang_size, gang_size, "cpu=1,memory=2Gi", "Running",
           backlog_nodes);
  AddGangs(full, full_interner, "wait-", backlog, gang_size, "cpu=1,memory=2Gi", "Inqueue", 0);
  auto best_cycle = [&](SessionRecorder* r) {
    double best = 1e9;
    for (int i = 0; i < 5; ++i) {
      auto t = Clock::now();
      Cycle(full.TakeSnapshot(), *conf, registry, "backlog-" + std::to_string(i), nullptr, r);
      best = std::min(best, Seconds(Clock::now() - t) * 1e3);
    }
    return best;
  };
  SessionRecorder backlog_recorder({static_cast<size_t>(backlog) + 16, true});
  double backlog_off_ms = best_cycle(nullptr);
  double backlog_on_ms = best_cycle(&backlog_recorder);
  std::printf("backlog: %d nodes full, %d gangs x %d pods waiting\n", backlog_nodes, backlog, gang_size);
  std::printf("  cycle %.2f ms without explanations, %.2f ms recording %zu explanations (+%.1f%%)\n",
              backlog_off_ms, backlog_on_ms, backlog_recorder.store().size(),
              (backlog_on_ms / backlog_off_ms - 1) * 100);

  // ---- 4. the backlog cluster as a snapshot: its size, and a replay of it ----
  SnapshotDocument doc;
  doc.snapshot = full.TakeSnapshot();
  auto te = Clock::now();
  std::string text = EncodeSnapshot(doc);
  double encode_ms = Seconds(Clock::now() - te) * 1e3;
  SpecInterner replay_interner;
  auto td = Clock::now();
  StatusOr<SnapshotDocument> decoded = DecodeSnapshot(text, replay_interner);
  double decode_ms = Seconds(Clock::now() - td) * 1e3;
  if (!decoded.ok()) {
    std::fprintf(stderr, "snapshot does not read back: %s\n", decoded.status().message().c_str());
    return 1;
  }
  auto tr = Clock::now();
  ReplayResult replayed = Replay(*decoded, *conf, registry);
  double replay_ms = Seconds(Clock::now() - tr) * 1e3;
  std::printf("snapshot: %zu nodes, %zu jobs: %.1f MiB JSON, encode %.0f ms, decode %.0f ms, replay session %.0f ms "
              "(%zu jobs left waiting)\n",
              doc.snapshot->nodes.size(), doc.snapshot->jobs.size(), static_cast<double>(text.size()) / (1 << 20),
              encode_ms, decode_ms, replay_ms, replayed.waiting.size());

  long rss_kb = PeakRssKb();
  std::printf("peak RSS %.0f MiB (all scenarios in one process)\n", static_cast<double>(rss_kb) / 1024);
  if (!json_path.empty()) {
    std::ofstream out(json_path);
    out << "{\"nodes\":" << nodes << ",\"pending_pods\":" << pending << ",\"bound\":" << binder.bound
        << ",\"place_seconds\":" << place_s << ",\"pods_per_second\":" << pods_per_s
        << ",\"cycles\":" << cycles << ",\"running_pods\":" << running
        << ",\"snapshot_ms\":" << snapshot_ms << ",\"session_open_ms\":" << open_ms
        << ",\"idle_cycle_ms\":" << cycle_ms << ",\"backlog_gangs\":" << backlog
        << ",\"backlog_cycle_ms\":" << backlog_off_ms << ",\"backlog_cycle_explained_ms\":" << backlog_on_ms
        << ",\"snapshot_bytes\":" << text.size() << ",\"snapshot_encode_ms\":" << encode_ms
        << ",\"snapshot_decode_ms\":" << decode_ms << ",\"replay_ms\":" << replay_ms
        << ",\"explanations\":" << (explain ? "true" : "false") << ",\"peak_rss_mib\":" << static_cast<double>(rss_kb) / 1024
        << ",\"conf\":\"" << conf_name << "\"}\n";
  }
  return binder.bound == pending ? 0 : 1;
}
