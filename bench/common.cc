#include "bench/common.h"

#include <cerrno>  // program_invocation_short_name
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <thread>
#include <time.h>

#include "kube/config.h"

namespace tephra::bench {

double Millis(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

double ThreadCpuMillis() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

std::string Arg(int argc, char** argv, const std::string& name, const std::string& def) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (argv[i] == name) return argv[i + 1];
  }
  return def;
}

void Die(const std::string& what) {
  // Not /proc/self/comm: the kernel cuts that to 15 characters.
  std::cerr << program_invocation_short_name << ": " << what << "\n";
  std::exit(2);
}

std::shared_ptr<kube::Client> UnthrottledClient(const std::string& kubeconfig) {
  auto cfg = kube::LoadKubeconfig({kubeconfig, ""});
  if (!cfg.ok()) Die(cfg.status().ToString());
  cfg->qps = 1e6;
  cfg->burst = 1000000;
  cfg->user_agent = "tephra-bench";
  auto client = kube::Client::FromConfig(*cfg);
  if (!client.ok()) Die(client.status().ToString());
  return *client;
}

double ProcStatusMiB(const std::string& pid, const char* key) {
  std::ifstream in("/proc/" + pid + "/status");
  std::string line;
  const size_t n = std::strlen(key);
  while (std::getline(in, line)) {
    if (line.compare(0, n, key) == 0 && line.size() > n && line[n] == ':') {
      return std::strtod(line.c_str() + n + 1, nullptr) / 1024.0;
    }
  }
  return 0;
}

ListWatcher::ListWatcher(std::shared_ptr<kube::Client> client, const kube::Resource& resource,
                         std::string ns, std::string field_selector, Callback each)
    : client_(std::move(client)),
      resource_(resource),
      ns_(std::move(ns)),
      field_selector_(std::move(field_selector)),
      each_(std::move(each)) {
  thread_ = std::thread([this] { Loop(); });
}

ListWatcher::~ListWatcher() {
  Stop();
}

void ListWatcher::Stop() {
  stop_ = true;
  {
    sync::MutexLock l(mu_);
    if (watch_ != nullptr) watch_->Stop();
  }
  if (thread_.joinable()) thread_.join();
}

void ListWatcher::Loop() {
  while (!stop_) {
    kube::ListOptions lo;
    lo.field_selector = field_selector_;
    auto rv = client_->ListAll(resource_, ns_, lo, [&](const json::Value& object) {
      each_(object, true);
      return Status::Ok();
    });
    if (!rv.ok()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    kube::WatchOptions wo;
    wo.resource_version = *rv;
    wo.field_selector = field_selector_;
    auto watch = client_->StartWatch(resource_, ns_, wo);
    if (!watch.ok()) continue;
    {
      sync::MutexLock l(mu_);
      if (stop_) return;
      watch_ = watch->get();
    }
    while (!stop_) {
      auto ev = (*watch)->Next();
      if (!ev.ok() || !ev->has_value()) break;
      auto type = (*ev)->type;
      if (type == kube::WatchEventType::kAdded || type == kube::WatchEventType::kModified) {
        each_((*ev)->object(), type == kube::WatchEventType::kAdded);
      }
    }
    sync::MutexLock l(mu_);
    watch_ = nullptr;
  }
}

void Parallel(int64_t n, int threads, const std::function<void(int64_t)>& fn) {
  std::atomic<int64_t> next{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (int64_t i = next++; i < n; i = next++) fn(i);
    });
  }
  for (auto& t : pool) t.join();
}

PodWatcher::PodWatcher(std::shared_ptr<kube::Client> client, const std::string& ns,
                       std::chrono::steady_clock::time_point t0)
    : t0_(t0),
      watch_(std::move(client), kube::resources::kPods, ns, "",
             [this](const json::Value& pod, bool) { Observe(pod); }) {}

double SecondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::vector<PodTimes> PodWatcher::Times() {
  sync::MutexLock l(mu_);
  std::vector<PodTimes> out;
  out.reserve(pods_.size());
  for (const auto& [name, t] : pods_) out.push_back(t);
  return out;
}

void PodWatcher::Observe(const json::Value& pod) {
  json::Errors e;
  json::Reader r(&pod, &e);
  const std::string name = r["metadata"]["name"].String();
  const bool bound = !r["spec"]["nodeName"].String().empty();
  const bool running = r["status"]["phase"].String() == "Running";
  const double now = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  sync::MutexLock l(mu_);
  auto [it, fresh] = pods_.try_emplace(name);
  if (fresh) {
    it->second.name = name;
    it->second.seen = now;
    ++seen_;
  }
  if (bound && it->second.bound < 0) {
    it->second.bound = now;
    ++bound_;
  }
  if (running && it->second.running < 0) {
    it->second.running = now;
    ++running_;
  }
}

}  // namespace tephra::bench
