// The bind ceiling: a scheduler that does no scheduling. It watches pending pods that name
// it (spec.schedulerName) and POSTs pods/binding to the nodes in round-robin with concurrent
// workers, as fast as the API server accepts — the physical limit on binds per second for
// this machine and control plane, against which the real schedulers are compared.
//
// --contract adds the writes a scheduler's users are promised, and nothing else (README.md,
// Benchmarks), so that no scheduler keeping that promise can place pods faster on the same
// control plane:
//   events   each pod's Scheduled Event after its bind (what kube-scheduler writes);
//   volcano  what Volcano's API promises for a bare pod: its PodGroup (podgroup-<uid>, created
//            before the bind, as Volcano's controller does), the bind naming that group, the
//            group's status Running with its Scheduled condition, the pod's Scheduled Event and,
//            once the pod runs, the group's running count.
//
//   bench_binder --kubeconfig FILE [--scheduler-name bench-binder] [--workers 32]
//                [--contract none|events|volcano] [--max-seconds 3600]
//
// Runs until SIGTERM/SIGINT or --max-seconds.
#include <atomic>
#include <chrono>
#include <csignal>
#include <deque>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "api/core.h"
#include "api/kinds.h"
#include "api/labels.h"
#include "api/scheduling.h"
#include "base/time.h"
#include "bench/common.h"
#include "json/json.h"
#include "kube/events.h"
#include "sync/mutex.h"

namespace {

using namespace tephra;

std::atomic<bool> g_stop{false};
void OnSignal(int) {
  g_stop = true;
}

struct PodRef {
  std::string namespace_, name, uid;
  std::shared_ptr<api::Pod> pod;  // with a contract: the pending pod
  bool running = false;           // the pod runs: its group's running count is due
};

enum class Contract { kNone, kEvents, kVolcano };

// The contract's writes around one pod's bind.
class ContractWriter {
 public:
  ContractWriter(std::shared_ptr<kube::Client> client, Contract contract)
      : client_(std::move(client)), contract_(contract) {}

  // Before the bind: the pod's group exists, and the annotation the binding carries names it.
  Status BeforeBind(const api::Pod& pod, std::map<std::string, std::string>* annotations) {
    if (contract_ != Contract::kVolcano) return Status::Ok();
    api::PodGroup pg = api::ImplicitPodGroup(pod, {}, "default");
    auto created =
        client_->Create(api::kPodGroups, pod.metadata.namespace_, api::EncodePodGroup(pg));
    if (!created.ok() && created.status().code() != StatusCode::kAlreadyExists)
      return created.status();
    (*annotations)[std::string(api::kGroupNameAnnotation)] = pg.metadata.name;
    return Status::Ok();
  }

  // After the bind: the pod's Scheduled Event; under Volcano's contract first its group's status
  // Running (allocated ≥ minMember 1) with the Scheduled condition.
  Status AfterBind(const api::Pod& pod, const std::string& node) {
    const base::Time when = base::Clock::now();
    if (contract_ == Contract::kVolcano) {
      json::Writer status;
      status.StartObject().Key("status").StartObject();
      status.Field("phase", "Running");
      status.Key("conditions").StartArray().StartObject();
      status.Field("type", "Scheduled").Field("status", "True");
      status.Field("reason", "tasks in gang are ready to be scheduled");
      status.Field("transitionID", pod.metadata.uid)
          .Field("lastTransitionTime", base::FormatTime(when));
      status.EndObject().EndArray();
      status.EndObject().EndObject();
      auto patched = client_->Patch(api::kPodGroups, pod.metadata.namespace_,
                                    api::ImplicitPodGroupName(pod.metadata),
                                    kube::PatchType::kMerge, status.Take());
      if (!patched.ok()) return patched.status();
    }
    kube::EventBody event;
    event.object = {"v1", "Pod", pod.metadata.namespace_, pod.metadata.name, pod.metadata.uid, ""};
    event.name = pod.metadata.name + "." + pod.metadata.uid;
    event.namespace_ = pod.metadata.namespace_;
    event.reason = "Scheduled";
    event.message = "Successfully assigned " + pod.metadata.namespace_ + "/" + pod.metadata.name +
                    " to " + node;
    event.source = event.component = "bench-binder";
    event.when = when;
    return client_->Create(kube::resources::kEvents, pod.metadata.namespace_, EncodeEvent(event))
        .status();
  }

  // Under Volcano's contract, a running pod's group counts it.
  Status Running(const PodRef& ref) {
    return client_
        ->Patch(api::kPodGroups, ref.namespace_, api::ImplicitPodGroupNameOf(ref.uid),
                kube::PatchType::kMerge, R"({"status":{"running":1}})")
        .status();
  }

 private:
  std::shared_ptr<kube::Client> client_;
  const Contract contract_;
};

class Binder {
 public:
  Binder(std::shared_ptr<kube::Client> client, std::vector<std::string> nodes, int workers,
         Contract contract)
      : client_(std::move(client)), nodes_(std::move(nodes)) {
    if (contract != Contract::kNone) contract_.emplace(client_, contract);
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
      Status s = pod.running ? contract_->Running(pod) : Bind(pod, nodes_[slot]);
      if (s.ok()) {
        if (!pod.running) ++bound_;
      } else {
        ++failed_;
        if (failed_ <= 10)
          std::cerr << "bench_binder: " << pod.name << ": " << s.ToString() << "\n";
      }
    }
  }

  Status Bind(const PodRef& pod, const std::string& node) {
    std::map<std::string, std::string> annotations;
    if (contract_) {
      if (Status s = contract_->BeforeBind(*pod.pod, &annotations); !s.ok()) return s;
    }
    std::string body = api::EncodePodBinding(pod.namespace_, pod.name, pod.uid, node, annotations);
    auto r = client_->CreateSubresource(kube::resources::kPods, pod.namespace_, pod.name, "binding",
                                        body);
    if (!r.ok() || !contract_) return r.status();
    return contract_->AfterBind(*pod.pod, node);
  }

  std::shared_ptr<kube::Client> client_;
  std::vector<std::string> nodes_;
  std::optional<ContractWriter> contract_;
  sync::Mutex mu_;
  sync::CondVar cv_;
  std::deque<PodRef> queue_ GUARDED_BY(mu_);
  size_t next_ GUARDED_BY(mu_) = 0;
  bool done_ GUARDED_BY(mu_) = false;
  std::atomic<int64_t> bound_{0}, failed_{0};
  std::vector<std::thread> threads_;
};

Contract ParseContract(const std::string& name) {
  if (name == "none") return Contract::kNone;
  if (name == "events") return Contract::kEvents;
  if (name == "volcano") return Contract::kVolcano;
  bench::Die("bad --contract " + name + " (none, events or volcano)");
}

PodRef RefOf(const json::Value& pod) {
  json::Errors errors;
  json::Reader meta = json::Reader(&pod, &errors)["metadata"];
  PodRef ref;
  ref.namespace_ = meta["namespace"].String();
  ref.name = meta["name"].String();
  ref.uid = meta["uid"].String();
  return ref;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string kubeconfig = bench::Arg(argc, argv, "--kubeconfig", "");
  const std::string scheduler_name = bench::Arg(argc, argv, "--scheduler-name", "bench-binder");
  const int workers = std::stoi(bench::Arg(argc, argv, "--workers", "32"));
  const int max_seconds = std::stoi(bench::Arg(argc, argv, "--max-seconds", "3600"));
  const Contract contract = ParseContract(bench::Arg(argc, argv, "--contract", "none"));
  std::signal(SIGTERM, OnSignal);
  std::signal(SIGINT, OnSignal);
  auto client = bench::UnthrottledClient(kubeconfig);

  std::vector<std::string> nodes;
  auto listed = client->ListAll(kube::resources::kNodes, "", {}, [&](const json::Value& node) {
    nodes.push_back(RefOf(node).name);
    return Status::Ok();
  });
  if (!listed.ok() || nodes.empty()) bench::Die("no nodes to bind to");

  Binder binder(client, nodes, workers, contract);
  bench::ListWatcher pending(client, kube::resources::kPods, "",
                             "spec.schedulerName=" + scheduler_name + ",spec.nodeName=",
                             [&](const json::Value& pod, bool added) {
                               if (!added) return;
                               PodRef ref = RefOf(pod);
                               if (contract != Contract::kNone) {
                                 auto decoded = api::DecodePod(pod);
                                 if (!decoded.ok()) bench::Die(decoded.status().ToString());
                                 ref.pod = std::move(*decoded);
                               }
                               binder.Add(std::move(ref));
                             });
  // Under Volcano's contract a pod seen running is its group's running count to write.
  std::optional<bench::ListWatcher> running;
  if (contract == Contract::kVolcano) {
    running.emplace(client, kube::resources::kPods, "",
                    "spec.schedulerName=" + scheduler_name + ",status.phase=Running",
                    [&](const json::Value& pod, bool added) {
                      if (!added) return;
                      PodRef ref = RefOf(pod);
                      ref.running = true;
                      binder.Add(std::move(ref));
                    });
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(max_seconds);
  while (!g_stop && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  pending.Stop();
  if (running) running->Stop();
  std::cerr << "bench_binder: bound " << binder.bound() << ", failed " << binder.failed() << "\n";
  return 0;
}
