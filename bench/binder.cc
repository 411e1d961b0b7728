// The bind ceiling: a scheduler that does no scheduling. It watches pending pods that name
// it (spec.schedulerName) and POSTs pods/binding to the nodes in round-robin with concurrent
// workers, as fast as the API server accepts — the physical limit on binds per second for
// this machine and control plane, against which the real schedulers are compared.
//
// --contract adds the writes a scheduler's users are promised, and nothing else (README.md,
// Benchmarks), so that no scheduler keeping that promise can place pods faster on the same
// control plane:
//   events       each pod's Scheduled Event after its bind (what kube-scheduler writes);
//   volcano      what Volcano's API promises for a bare pod: its PodGroup (podgroup-<uid>,
//                created before the bind, as Volcano's controller does), the bind naming that
//                group, the group's status Running with its Scheduled condition, the pod's
//                Scheduled Event and, once the pod runs, the group's running count;
//   jobs         an idealised Job controller as well, for gang Jobs (batch.volcano.sh Jobs
//                naming this scheduler): per Job, one write for each state Volcano's API shows —
//                the Job's status Pending and its PodGroup (<job>-<uid>) as soon as the Job is
//                seen, the group's status Inqueue (Volcano's enqueue, which its controller waits
//                for before it makes pods), the pods; once the gang is bound the group's status
//                Running with its Scheduled condition; once the gang runs, the group's running
//                count and the Job's status Running. No Event (Volcano's own event writer drops
//                most of them under load), so this bounds every Volcano-style gang scheduler;
//   jobs-events  the same with each pod's Scheduled Event, as Tephra writes it.
//
//   bench_binder --kubeconfig FILE [--scheduler-name bench-binder] [--workers 32]
//                [--contract none|events|volcano|jobs|jobs-events] [--max-seconds 3600]
//
// Runs until SIGTERM/SIGINT or --max-seconds.
#include <atomic>
#include <chrono>
#include <csignal>
#include <deque>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "api/batch.h"
#include "api/core.h"
#include "api/kinds.h"
#include "api/labels.h"
#include "api/scheduling.h"
#include "base/time.h"
#include "bench/common.h"
#include "controllers/job/builders.h"
#include "json/json.h"
#include "kube/events.h"
#include "sync/mutex.h"

namespace {

using namespace tephra;

std::atomic<bool> g_stop{false};
void OnSignal(int) {
  g_stop = true;
}

// Which promised writes accompany the binds.
struct Contract {
  bool events = false;       // each pod's Scheduled Event
  bool bare_groups = false;  // a PodGroup per bare pod, its status and running count
  bool jobs = false;         // the idealised Job controller and its gangs' statuses
};

Contract ParseContract(const std::string& name) {
  if (name == "none") return {};
  if (name == "events") return {.events = true};
  if (name == "volcano") return {.events = true, .bare_groups = true};
  if (name == "jobs") return {.jobs = true};
  if (name == "jobs-events") return {.events = true, .jobs = true};
  bench::Die("bad --contract " + name + " (none, events, volcano, jobs or jobs-events)");
}

// Requests run by concurrent workers; each request of a chain is made one after another.
class WorkQueue {
 public:
  explicit WorkQueue(int workers) {
    for (int i = 0; i < workers; ++i) threads_.emplace_back([this] { Loop(); });
  }
  ~WorkQueue() {
    {
      sync::MutexLock l(mu_);
      done_ = true;
    }
    cv_.NotifyAll();
    for (auto& t : threads_) t.join();
  }
  // `what` names the work in the first few failures printed.
  void Add(std::string what, std::function<Status()> work) {
    {
      sync::MutexLock l(mu_);
      queue_.push_back({std::move(what), std::move(work)});
    }
    cv_.NotifyOne();
  }
  int64_t failed() const { return failed_; }

 private:
  struct Item {
    std::string what;
    std::function<Status()> work;
  };
  void Loop() {
    while (true) {
      Item item;
      {
        sync::MutexLock l(mu_);
        cv_.Wait(mu_, [this]() REQUIRES(mu_) { return done_ || !queue_.empty(); });
        if (done_) return;
        item = std::move(queue_.front());
        queue_.pop_front();
      }
      if (Status s = item.work(); !s.ok() && ++failed_ <= 10)
        std::cerr << "bench_binder: " << item.what << ": " << s.ToString() << "\n";
    }
  }

  sync::Mutex mu_;
  sync::CondVar cv_;
  std::deque<Item> queue_ GUARDED_BY(mu_);
  bool done_ GUARDED_BY(mu_) = false;
  std::atomic<int64_t> failed_{0};
  std::vector<std::thread> threads_;
};

// A gang Job as the idealised controller follows it: the counts that make its next write due.
struct Gang {
  std::string namespace_, job, group;
  int32_t size = 0, bound = 0, running = 0;
};

class Gangs {
 public:
  void Add(Gang gang) {
    sync::MutexLock l(mu_);
    std::string key = gang.namespace_ + "/" + gang.group;
    by_group_.emplace(std::move(key), std::move(gang));
  }
  // Counts one more pod of `group` bound (or running); returns the gang when it is whole now.
  std::optional<Gang> CountBound(const std::string& ns, const std::string& group) {
    return Count(ns, group, &Gang::bound);
  }
  std::optional<Gang> CountRunning(const std::string& ns, const std::string& group) {
    return Count(ns, group, &Gang::running);
  }

 private:
  std::optional<Gang> Count(const std::string& ns, const std::string& group, int32_t Gang::*count) {
    sync::MutexLock l(mu_);
    auto it = by_group_.find(ns + "/" + group);
    if (it == by_group_.end()) return std::nullopt;
    if (++(it->second.*count) != it->second.size) return std::nullopt;
    return it->second;
  }

  sync::Mutex mu_;
  std::unordered_map<std::string, Gang> by_group_ GUARDED_BY(mu_);
};

struct PodRef {
  std::string namespace_, name, uid, group;  // group: the pod's group annotation
  std::shared_ptr<api::Pod> pod;             // for a bare pod's PodGroup: the pending pod
};

PodRef RefOf(const json::Value& pod) {
  json::Errors errors;
  json::Reader meta = json::Reader(&pod, &errors)["metadata"];
  PodRef ref;
  ref.namespace_ = meta["namespace"].String();
  ref.name = meta["name"].String();
  ref.uid = meta["uid"].String();
  ref.group = meta["annotations"][std::string(api::kGroupNameAnnotation)].String();
  return ref;
}

// {"status":{"phase":"Running","conditions":[Scheduled]}}: a group whose gang is bound.
std::string GroupScheduledStatus(const std::string& transition_id) {
  json::Writer status;
  status.StartObject().Key("status").StartObject();
  status.Field("phase", "Running");
  status.Key("conditions").StartArray().StartObject();
  status.Field("type", "Scheduled").Field("status", "True");
  status.Field("reason", "tasks in gang are ready to be scheduled");
  status.Field("transitionID", transition_id)
      .Field("lastTransitionTime", base::FormatTime(base::Clock::now()));
  status.EndObject().EndArray();
  status.EndObject().EndObject();
  return status.Take();
}

std::string JobPhaseStatus(std::string_view phase, int32_t min_available, int32_t running) {
  json::Writer status;
  status.StartObject().Key("status").StartObject();
  status.Key("state").StartObject().Field("phase", phase);
  status.Field("lastTransitionTime", base::FormatTime(base::Clock::now())).EndObject();
  status.Field("minAvailable", min_available).Field("running", running);
  status.EndObject().EndObject();
  return status.Take();
}

// The writes: binds with what the contract adds to each, and the idealised Job controller.
class Binder {
 public:
  Binder(std::shared_ptr<kube::Client> client, std::vector<std::string> nodes, int workers,
         Contract contract)
      : client_(std::move(client)),
        nodes_(std::move(nodes)),
        contract_(contract),
        binds_(workers),
        controller_(contract.jobs ? workers : 0) {}

  int64_t bound() const { return bound_; }
  int64_t failed() const { return binds_.failed() + controller_.failed(); }

  void Pending(PodRef pod) {
    // A re-list after a watch ends shows pods whose binds are still queued.
    {
      sync::MutexLock l(seen_mu_);
      if (!seen_.insert(pod.uid).second) return;
    }
    const std::string node = nodes_[next_node_++ % nodes_.size()];
    std::string what = pod.name;
    binds_.Add(std::move(what), [this, pod = std::move(pod), node] { return Bind(pod, node); });
  }

  void Running(const PodRef& pod) {
    // A bare pod's group counts it (the bind put the group's name on the pod).
    if (contract_.bare_groups && pod.group == api::ImplicitPodGroupNameOf(pod.uid)) {
      binds_.Add(pod.name, [this, ns = pod.namespace_, group = pod.group] {
        return client_
            ->Patch(api::kPodGroups, ns, group, kube::PatchType::kMerge,
                    R"({"status":{"running":1}})")
            .status();
      });
    }
    if (!contract_.jobs || pod.group.empty()) return;
    std::optional<Gang> gang = gangs_.CountRunning(pod.namespace_, pod.group);
    if (!gang) return;
    controller_.Add(gang->job, [this, gang = *gang] {
      std::string count = R"({"status":{"running":)" + std::to_string(gang.size) + "}}";
      auto patched = client_->Patch(api::kPodGroups, gang.namespace_, gang.group,
                                    kube::PatchType::kMerge, count);
      if (!patched.ok()) return patched.status();
      return client_
          ->Patch(api::kJobs, gang.namespace_, gang.job, kube::PatchType::kMerge,
                  JobPhaseStatus(api::job_phase::kRunning, gang.size, gang.size), {}, "status")
          .status();
    });
  }

  // The idealised Job controller: the Job's status Pending, its PodGroup, the group admitted
  // (Inqueue, a scheduler's write), then its pods, each pod's create a request of its own
  // (Volcano's controller creates them concurrently too).
  void JobSeen(std::shared_ptr<api::Job> job) {
    if (job->spec.queue.empty()) job->spec.queue = "default";  // the webhook's default
    int32_t size = job->spec.min_available > 0 ? job->spec.min_available : job->TotalReplicas();
    gangs_.Add(
        {job->metadata.namespace_, job->metadata.name, controllers::job::PodGroupName(*job), size});
    std::string name = job->metadata.name;  // before the job moves into the work
    controller_.Add(std::move(name), [this, job = std::move(job), size] {
      const std::string& ns = job->metadata.namespace_;
      auto pending =
          client_->Patch(api::kJobs, ns, job->metadata.name, kube::PatchType::kMerge,
                         JobPhaseStatus(api::job_phase::kPending, size, 0), {}, "status");
      if (!pending.ok()) return pending.status();
      api::PodGroup group = controllers::job::BuildPodGroup(
          *job, [](std::string_view) { return std::optional<int32_t>(); });
      auto created = client_->Create(api::kPodGroups, ns, api::EncodePodGroup(group));
      if (!created.ok()) return created.status();
      auto admitted = client_->Patch(api::kPodGroups, ns, group.metadata.name,
                                     kube::PatchType::kMerge, R"({"status":{"phase":"Inqueue"}})");
      if (!admitted.ok()) return admitted.status();
      for (const api::TaskSpec& task : job->spec.tasks) {
        for (int32_t i = 0; i < task.replicas; ++i) {
          auto draft = controllers::job::BuildPod(*job, task, i);
          if (!draft.ok()) return draft.status();
          controller_.Add(draft->Name(), [this, ns, body = draft->Json()] {
            return client_->Create(kube::resources::kPods, ns, body).status();
          });
        }
      }
      return Status::Ok();
    });
  }

 private:
  Status Bind(const PodRef& pod, const std::string& node) {
    std::map<std::string, std::string> annotations;
    if (contract_.bare_groups && pod.group.empty()) {
      // Before the bind: the pod's group exists, and the annotation the binding carries names it.
      api::PodGroup pg = api::ImplicitPodGroup(*pod.pod, {}, "default");
      auto created = client_->Create(api::kPodGroups, pod.namespace_, api::EncodePodGroup(pg));
      if (!created.ok() && created.status().code() != StatusCode::kAlreadyExists)
        return created.status();
      annotations[std::string(api::kGroupNameAnnotation)] = pg.metadata.name;
    }
    std::string body = api::EncodePodBinding(pod.namespace_, pod.name, pod.uid, node, annotations);
    auto r = client_->CreateSubresource(kube::resources::kPods, pod.namespace_, pod.name, "binding",
                                        body);
    if (!r.ok()) return r.status();
    ++bound_;
    if (!annotations.empty()) {
      auto patched = client_->Patch(api::kPodGroups, pod.namespace_, annotations.begin()->second,
                                    kube::PatchType::kMerge, GroupScheduledStatus(pod.uid));
      if (!patched.ok()) return patched.status();
    }
    if (contract_.events) {
      if (Status s = ScheduledEvent(pod, node); !s.ok()) return s;
    }
    if (contract_.jobs && !pod.group.empty()) {
      if (std::optional<Gang> gang = gangs_.CountBound(pod.namespace_, pod.group)) {
        return client_
            ->Patch(api::kPodGroups, gang->namespace_, gang->group, kube::PatchType::kMerge,
                    GroupScheduledStatus(gang->group))
            .status();
      }
    }
    return Status::Ok();
  }

  Status ScheduledEvent(const PodRef& pod, const std::string& node) {
    kube::EventBody event;
    event.object = {"v1", "Pod", pod.namespace_, pod.name, pod.uid, ""};
    event.name = pod.name + "." + pod.uid;
    event.namespace_ = pod.namespace_;
    event.reason = "Scheduled";
    event.message = "Successfully assigned " + pod.namespace_ + "/" + pod.name + " to " + node;
    event.source = event.component = "bench-binder";
    event.when = base::Clock::now();
    return client_->Create(kube::resources::kEvents, pod.namespace_, EncodeEvent(event)).status();
  }

  std::shared_ptr<kube::Client> client_;
  const std::vector<std::string> nodes_;
  const Contract contract_;
  std::atomic<size_t> next_node_{0};
  std::atomic<int64_t> bound_{0};
  Gangs gangs_;
  sync::Mutex seen_mu_;
  std::unordered_set<std::string> seen_ GUARDED_BY(seen_mu_);  // pods whose bind is queued
  // The scheduler's requests and the Job controller's, each with its own workers as the two
  // daemons have. Last: their workers stop before what they use goes.
  WorkQueue binds_, controller_;
};

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
                               if (contract.bare_groups && ref.group.empty()) {
                                 auto decoded = api::DecodePod(pod);
                                 if (!decoded.ok()) bench::Die(decoded.status().ToString());
                                 ref.pod = std::move(*decoded);
                               }
                               binder.Pending(std::move(ref));
                             });
  // A pod seen running may make its group's running count (and its Job's status) due.
  std::optional<bench::ListWatcher> running;
  if (contract.bare_groups || contract.jobs) {
    running.emplace(client, kube::resources::kPods, "",
                    "spec.schedulerName=" + scheduler_name + ",status.phase=Running",
                    [&](const json::Value& pod, bool added) {
                      if (added) binder.Running(RefOf(pod));
                    });
  }
  // Custom resources have no field selector on spec: the Jobs naming this scheduler are picked
  // here.
  std::optional<bench::ListWatcher> jobs;
  if (contract.jobs) {
    jobs.emplace(client, api::kJobs, "", "", [&](const json::Value& value, bool added) {
      if (!added) return;
      auto job = api::DecodeJob(value);
      if (!job.ok()) bench::Die(job.status().ToString());
      if ((*job)->spec.scheduler_name == scheduler_name && (*job)->status.state.phase.empty())
        binder.JobSeen(std::move(*job));
    });
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(max_seconds);
  while (!g_stop && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  pending.Stop();
  if (running) running->Stop();
  if (jobs) jobs->Stop();
  std::cerr << "bench_binder: bound " << binder.bound() << ", failed " << binder.failed() << "\n";
  return 0;
}
