// The bind ceiling: a scheduler that does no scheduling. It watches pending pods that name
// it (spec.schedulerName) and POSTs pods/binding to the nodes in round-robin with concurrent
// workers, as fast as the API server accepts — the physical limit on binds per second for
// this machine and control plane, against which the real schedulers are compared.
//
//   bench_binder --kubeconfig FILE [--scheduler-name bench-binder] [--workers 32]
//                [--max-seconds 3600]
//
// Runs until SIGTERM/SIGINT or --max-seconds.
#include <atomic>
#include <chrono>
#include <csignal>
#include <deque>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "api/core.h"
#include "bench/common.h"
#include "json/json.h"
#include "sync/mutex.h"

namespace {

using namespace tephra;

std::atomic<bool> g_stop{false};
void OnSignal(int) {
  g_stop = true;
}

struct PodRef {
  std::string namespace_, name, uid;
};

class Binder {
 public:
  Binder(std::shared_ptr<kube::Client> client, std::vector<std::string> nodes, int workers)
      : client_(std::move(client)), nodes_(std::move(nodes)) {
    for (int i = 0; i < workers; ++i) threads_.emplace_back([this] { Loop(); });
  }
  ~Binder() {
    {
      sync::MutexLock l(mu_);
      done_ = true;
    }
    cv_.NotifyAll();
    for (auto& t : threads_) t.join();
  }
  void Add(PodRef pod) {
    {
      sync::MutexLock l(mu_);
      queue_.push_back(std::move(pod));
    }
    cv_.NotifyOne();
  }
  int64_t bound() const { return bound_; }
  int64_t failed() const { return failed_; }

 private:
  void Loop() {
    while (true) {
      PodRef pod;
      size_t slot = 0;
      {
        sync::MutexLock l(mu_);
        cv_.Wait(mu_, [this]() REQUIRES(mu_) { return done_ || !queue_.empty(); });
        if (done_) return;
        pod = std::move(queue_.front());
        queue_.pop_front();
        slot = next_++ % nodes_.size();
      }
      std::string body = api::EncodePodBinding(pod.namespace_, pod.name, pod.uid, nodes_[slot]);
      auto r = client_->CreateSubresource(kube::resources::kPods, pod.namespace_, pod.name,
                                          "binding", body);
      if (r.ok()) {
        ++bound_;
      } else {
        ++failed_;
        if (failed_ <= 10)
          std::cerr << "bench_binder: " << pod.name << ": " << r.status().ToString() << "\n";
      }
    }
  }

  std::shared_ptr<kube::Client> client_;
  std::vector<std::string> nodes_;
  sync::Mutex mu_;
  sync::CondVar cv_;
  std::deque<PodRef> queue_ GUARDED_BY(mu_);
  size_t next_ GUARDED_BY(mu_) = 0;
  bool done_ GUARDED_BY(mu_) = false;
  std::atomic<int64_t> bound_{0}, failed_{0};
  std::vector<std::thread> threads_;
};

PodRef RefOf(const json::Value& pod) {
  json::Errors errors;
  json::Reader meta = json::Reader(&pod, &errors)["metadata"];
  return {meta["namespace"].String(), meta["name"].String(), meta["uid"].String()};
}

}  // namespace

int main(int argc, char** argv) {
  const std::string kubeconfig = bench::Arg(argc, argv, "--kubeconfig", "");
  const std::string scheduler_name = bench::Arg(argc, argv, "--scheduler-name", "bench-binder");
  const int workers = std::stoi(bench::Arg(argc, argv, "--workers", "32"));
  const int max_seconds = std::stoi(bench::Arg(argc, argv, "--max-seconds", "3600"));
  std::signal(SIGTERM, OnSignal);
  std::signal(SIGINT, OnSignal);
  auto client = bench::UnthrottledClient(kubeconfig);

  std::vector<std::string> nodes;
  auto listed = client->ListAll(kube::resources::kNodes, "", {}, [&](const json::Value& node) {
    nodes.push_back(RefOf(node).name);
    return Status::Ok();
  });
  if (!listed.ok() || nodes.empty()) bench::Die("no nodes to bind to");

  Binder binder(client, nodes, workers);
  bench::ListWatcher pending(client, kube::resources::kPods, "",
                             "spec.schedulerName=" + scheduler_name + ",spec.nodeName=",
                             [&](const json::Value& pod, bool added) {
                               if (added) binder.Add(RefOf(pod));
                             });
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(max_seconds);
  while (!g_stop && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  pending.Stop();
  std::cerr << "bench_binder: bound " << binder.bound() << ", failed " << binder.failed() << "\n";
  return 0;
}
