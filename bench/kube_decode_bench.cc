// Benchmark for the kube/ client: how fast a LIST of realistic pods is fetched and decoded
// into typed objects, and what a cached pod costs in memory. Run by bench/kube-decode.sh,
// which starts a real control plane and measures `kubectl get -o json` as the baseline.
//
//   bench_kube_decode populate --namespace NS --pods N --nodes-prefix P --nodes K
//   bench_kube_decode measure  --namespace NS [--rounds R] [--json FILE]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <malloc.h>
#include <string>
#include <thread>
#include <vector>

#include <rapidjson/document.h>

#include "api/core.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kube/informer.h"

namespace {

using namespace tephra;
using Clock = std::chrono::steady_clock;

std::string Arg(int argc, char** argv, const std::string& name, const std::string& def) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (argv[i] == name) return argv[i + 1];
  }
  return def;
}

// A pod as a training job's worker looks: several labels and annotations, an owner, two
// containers with env, mounts, ports and resources, tolerations and node affinity.
std::string RealisticPod(const std::string& name, const std::string& node) {
  std::string env;
  for (int i = 0; i < 12; ++i) {
    if (i) env += ",";
    env += R"({"name":"VAR_)" + std::to_string(i) + R"(","value":"value-of-environment-variable-)" +
           std::to_string(i) + R"("})";
  }
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name + R"(",
  "labels":{"volcano.sh/job-name":"train","volcano.sh/job-namespace":"bench","volcano.sh/queue-name":"default",
    "volcano.sh/task-spec":"worker","volcano.sh/task-index":"3","app.kubernetes.io/part-of":"llm"},
  "annotations":{"scheduling.k8s.io/group-name":"train-0b5d2f7e","volcano.sh/job-version":"0",
    "volcano.sh/task-spec":"worker","volcano.sh/template-uid":"train-worker","volcano.sh/job-retry-count":"0"},
  "ownerReferences":[{"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","name":"train",
    "uid":"0b5d2f7e-1f7a-4c1e-9d25-5e6f0e7b8a90","controller":true,"blockOwnerDeletion":true}]},
 "spec":{"schedulerName":"volcano","priorityClassName":"","nodeName":")" +
         node + R"(",
  "containers":[{"name":"worker","image":"registry.example.com/ml/trainer:2026.11.3",
    "command":["python","-m","trainer.main"],"args":["--epochs=90","--batch-size=256","--lr=0.1"],
    "env":[)" +
         env + R"(],
    "ports":[{"name":"dist","containerPort":23456,"protocol":"TCP"}],
    "resources":{"requests":{"cpu":"4","memory":"16Gi"},"limits":{"cpu":"4","memory":"16Gi"}},
    "volumeMounts":[{"name":"data","mountPath":"/data"},{"name":"shm","mountPath":"/dev/shm"}]},
   {"name":"log-shipper","image":"registry.example.com/ops/fluent-bit:3.1","resources":{
    "requests":{"cpu":"100m","memory":"128Mi"}}}],
  "volumes":[{"name":"data","persistentVolumeClaim":{"claimName":"train-data"}},
    {"name":"shm","emptyDir":{"medium":"Memory","sizeLimit":"8Gi"}}],
  "tolerations":[{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"},
    {"key":"dedicated","operator":"Equal","value":"ml","effect":"NoSchedule"}],
  "affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
    {"matchExpressions":[{"key":"type","operator":"In","values":["kwok"]}]}]}}}}})";
}

int Populate(kube::Client& client, const std::string& ns, int pods, const std::string& prefix,
             int nodes) {
  std::atomic<int> next{0}, failed{0};
  std::vector<std::thread> workers;
  auto t0 = Clock::now();
  for (int w = 0; w < 8; ++w) {
    workers.emplace_back([&] {
      for (int i = next++; i < pods; i = next++) {
        std::string node = prefix + "-" + std::to_string(i % nodes);
        auto r = client.Create(kube::resources::kPods, ns,
                               RealisticPod("worker-" + std::to_string(i), node));
        if (!r.ok()) {
          if (++failed < 5) std::fprintf(stderr, "create: %s\n", r.status().ToString().c_str());
        }
      }
    });
  }
  for (auto& w : workers) w.join();
  double s = std::chrono::duration<double>(Clock::now() - t0).count();
  std::fprintf(stderr, "created %d pods in %.1fs (%d failed)\n", pods - failed.load(), s,
               failed.load());
  return failed == 0 ? 0 : 1;
}

size_t HeapInUse() {
  struct mallinfo2 mi = mallinfo2();
  return mi.uordblks + mi.hblkhd;
}

size_t RssBytes() {
  std::ifstream in("/proc/self/statm");
  size_t pages = 0, resident = 0;
  in >> pages >> resident;
  return resident * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int Measure(kube::Client& client, const std::string& ns, int rounds, const std::string& json_out) {
  // 1. Fetch the whole LIST once as text (paged like an informer) to measure pure decoding.
  std::vector<std::string> pages;
  size_t bytes = 0;
  size_t count = 0;
  {
    kube::ListOptions lo;
    lo.limit = 500;
    while (true) {
      kube::ApiRequest req;
      req.target =
          kube::resources::kPods.Path(ns) + "?limit=500" +
          (lo.continue_token.empty() ? "" : "&continue=" + kube::QueryEscape(lo.continue_token));
      auto resp = client.Do(req, true);
      if (!resp.ok() || resp->status != 200) {
        std::fprintf(stderr, "list failed\n");
        return 1;
      }
      bytes += resp->body.size();
      json::Document d;
      if (!json::Parse(resp->body, &d).ok()) return 1;
      count += d["items"].Size();
      json::Errors e;
      lo.continue_token = json::Reader(&d, &e)["metadata"]["continue"].String();
      pages.push_back(std::move(resp->body));
      if (lo.continue_token.empty()) break;
    }
  }
  std::fprintf(stderr, "LIST: %zu pods, %.1f MB in %zu pages\n", count,
               static_cast<double>(bytes) / 1e6, pages.size());

  // 2. Parse + typed decode throughput (no network).
  std::vector<double> decode_s;
  for (int r = 0; r < rounds; ++r) {
    auto t0 = Clock::now();
    size_t decoded = 0;
    for (const auto& page : pages) {
      json::Document d;
      (void)json::Parse(page, &d);
      const auto& items = d["items"];
      for (rapidjson::SizeType i = 0; i < items.Size(); ++i) {
        auto pod = api::DecodePod(items[i]);
        decoded += pod.ok() ? 1u : 0u;
      }
    }
    decode_s.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    if (decoded != count) {
      std::fprintf(stderr, "decoded %zu of %zu\n", decoded, count);
      return 1;
    }
  }

  // 3. End to end through the client (network + parse + decode), as an informer's list does.
  std::vector<double> list_s;
  for (int r = 0; r < rounds; ++r) {
    auto t0 = Clock::now();
    size_t n = 0;
    kube::ListOptions lo;
    lo.limit = 500;
    auto rv = client.ListAll(kube::resources::kPods, ns, lo, [&](const json::Value& v) {
      n += api::DecodePod(v).ok() ? 1u : 0u;
      return Status::Ok();
    });
    if (!rv.ok() || n != count) return 1;
    list_s.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }

  // 4. Memory per cached pod: decode into an informer Store and compare heap and RSS.
  malloc_trim(0);
  size_t heap0 = HeapInUse(), rss0 = RssBytes();
  kube::Store store;
  for (const auto& page : pages) {
    json::Document d;
    (void)json::Parse(page, &d);
    const auto& items = d["items"];
    for (rapidjson::SizeType i = 0; i < items.Size(); ++i) {
      auto pod = api::DecodePod(items[i]);
      if (pod.ok()) store.Upsert(std::move(*pod));
    }
  }
  malloc_trim(0);
  size_t heap1 = HeapInUse(), rss1 = RssBytes();
  double heap_per_pod = static_cast<double>(heap1 - heap0) / static_cast<double>(store.size());
  double rss_per_pod =
      static_cast<double>(rss1 > rss0 ? rss1 - rss0 : 0) / static_cast<double>(store.size());
  double avg_json = static_cast<double>(bytes) / static_cast<double>(count);

  double d = Median(decode_s), l = Median(list_s);
  std::printf("pods                      %zu\n", count);
  std::printf("LIST size                 %.1f MB (%.0f bytes/pod)\n",
              static_cast<double>(bytes) / 1e6, avg_json);
  std::printf("parse+decode (in memory)  %.3f s  %.0f pods/s  %.1f MB/s\n", d,
              static_cast<double>(count) / d, static_cast<double>(bytes) / 1e6 / d);
  std::printf("LIST+decode via client    %.3f s  %.0f pods/s  %.1f MB/s\n", l,
              static_cast<double>(count) / l, static_cast<double>(bytes) / 1e6 / l);
  std::printf("cached pod: heap          %.0f bytes/pod\n", heap_per_pod);
  std::printf("cached pod: RSS           %.0f bytes/pod\n", rss_per_pod);
  if (!json_out.empty()) {
    std::ofstream out(json_out);
    out << "{\"pods\":" << count << ",\"list_bytes\":" << bytes << ",\"decode_seconds\":" << d
        << ",\"decode_pods_per_second\":" << static_cast<double>(count) / d
        << ",\"decode_mb_per_second\":" << static_cast<double>(bytes) / 1e6 / d
        << ",\"list_decode_seconds\":" << l
        << ",\"list_decode_pods_per_second\":" << static_cast<double>(count) / l
        << ",\"heap_bytes_per_cached_pod\":" << heap_per_pod
        << ",\"rss_bytes_per_cached_pod\":" << rss_per_pod << "}\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s populate|measure [options]\n", argv[0]);
    return 2;
  }
  std::string mode = argv[1];
  auto cfg = kube::BuildConfig({Arg(argc, argv, "--kubeconfig", ""), "", "", 5000, 5000});
  if (!cfg.ok()) {
    std::fprintf(stderr, "%s\n", cfg.status().ToString().c_str());
    return 1;
  }
  auto client = kube::Client::FromConfig(*cfg);
  if (!client.ok()) return 1;
  std::string ns = Arg(argc, argv, "--namespace", "bench");
  if (mode == "populate") {
    return Populate(**client, ns, std::stoi(Arg(argc, argv, "--pods", "10000")),
                    Arg(argc, argv, "--nodes-prefix", "kwok-node"),
                    std::stoi(Arg(argc, argv, "--nodes", "50")));
  }
  if (mode == "measure") {
    return Measure(**client, ns, std::stoi(Arg(argc, argv, "--rounds", "5")),
                   Arg(argc, argv, "--json", ""));
  }
  std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
  return 2;
}
