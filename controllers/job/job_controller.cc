#include "controllers/job/job_controller.h"

#include <atomic>
#include <charconv>
#include <functional>

#include <glog/logging.h>

#include "api/defaulting.h"
#include "api/informers/informers.h"
#include "api/kinds.h"
#include "api/labels.h"
#include "base/flags.h"
#include "controllers/framework/commands.h"
#include "controllers/job/builders.h"
#include "controllers/job/plugins/plugin.h"
#include "controllers/job/status.h"
#include "controllers/job/verdict.h"
#include "json/json.h"
#include "metrics/metrics.h"

namespace tephra::controllers::job {
namespace {

namespace ev = api::job_event;

constexpr int kParallelWrites = 16;
// A pod this process created but the cache does not show yet is assumed pending for this long.
constexpr auto kCreationExpectationTtl = std::chrono::seconds(30);
// Back-off after a write conflict (a stale cache): short, and not counted as a failure.
constexpr auto kConflictRetry = std::chrono::milliseconds(50);
// Pods starting (Pending, then Running) change only the job's counts. A gang's pods do so
// within moments of each other: one sync a little later writes the status once for all of
// them instead of once per pod.
constexpr auto kPodProgressCoalesce = std::chrono::milliseconds(250);

std::string JobKeyOfPod(const api::Pod& pod) {
  std::string job = pod.metadata.Label(api::kJobNameKey);
  if (job.empty()) job = pod.metadata.Annotation(api::kJobNameKey);
  if (job.empty()) return "";
  return kube::ObjectKey(pod.metadata.namespace_, job);
}

// Runs fn(i) for i in [0, n) on up to kParallelWrites threads, each call holding one of the
// process's pod-write slots; the first error wins.
Status ParallelFor(sync::FifoSemaphore& slots, size_t n, const std::function<Status(size_t)>& fn) {
  if (n == 0) return Status::Ok();
  auto call = [&](size_t i) {
    sync::FifoSemaphore::Slot slot(slots);
    return fn(i);
  };
  if (n == 1) return call(0);
  std::atomic<size_t> next{0};
  sync::Mutex mu;
  Status first;
  auto run = [&] {
    for (size_t i = next++; i < n; i = next++) {
      Status s = call(i);
      if (!s.ok()) {
        sync::MutexLock l(mu);
        if (first.ok()) first = s;
      }
    }
  };
  std::vector<std::thread> threads;
  size_t count = std::min<size_t>(n, kParallelWrites);
  for (size_t t = 1; t < count; ++t) threads.emplace_back(run);
  run();
  for (auto& t : threads) t.join();
  return first;
}

int32_t TaskIndexOf(const api::Pod& pod) {
  const std::string text = pod.metadata.Label(api::kTaskIndexKey);
  int32_t v = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || v < 0) return -1;
  return v;
}

bool PodReady(const api::Pod& pod) {
  if (pod.status.phase == api::pod_phase::kSucceeded) return true;
  if (pod.status.phase != api::pod_phase::kRunning) return false;
  if (const api::PodCondition* ready = pod.Condition("Ready")) return ready->status == "True";
  if (pod.status.container_statuses.empty()) return false;
  for (const auto& c : pod.status.container_statuses) {
    if (!c.ready) return false;
  }
  return true;
}

// Index of the jobs waiting for their queue, by the queue's name.
constexpr const char* kWaitingForQueueIndex = "waiting-for-queue";

Request RequestFor(std::string_view event) {
  Request r;
  r.event = std::string(event);
  return r;
}

}  // namespace

JobController::JobController() = default;

JobController::~JobController() {
  Stop();
}

Status JobController::Initialize(ControllerContext& context) {
  ctx_ = context;
  pod_writes_ = std::make_unique<sync::FifoSemaphore>(
      static_cast<size_t>(std::max(1, ctx_.options.max_pod_writes_in_flight)));
  const kube::InformerScope scope = NamespacedScope(ctx_.options);
  const auto resync = ctx_.options.resync_period;
  jobs_ = ctx_.informers->For(api::kJobs, api::JobDecoder(), scope, resync);
  pods_ = ctx_.informers->For(kube::resources::kPods, api::PodDecoder(), scope);
  pods_->AddIndex("job", [](const kube::Object& o) {
    std::string key = JobKeyOfPod(static_cast<const api::Pod&>(o));
    return key.empty() ? std::vector<std::string>{} : std::vector<std::string>{key};
  });
  podgroups_ = ctx_.informers->For(api::kPodGroups, api::PodGroupDecoder(), scope);
  commands_ = ctx_.informers->For(api::kCommands, api::CommandDecoder(), scope);
  priority_classes_ =
      ctx_.informers->For(kube::resources::kPriorityClasses, api::PriorityClassDecoder());
  // The webhook's queue rules need every queue (parents, children), whatever slice of the
  // queues this manager's queue controller looks after.
  queues_ = ctx_.informers->For(api::kQueues, api::QueueDecoder());
  api::InformerQueueLookup::AddParentIndex(*queues_);
  queue_lookup_ = std::make_unique<api::InformerQueueLookup>(queues_);
  jobs_->AddIndex(kWaitingForQueueIndex,
                  [default_queue = ctx_.options.default_queue](
                      const kube::Object& o) -> std::vector<std::string> {
                    const auto& job = static_cast<const api::Job&>(o);
                    if (job.status.state.reason != kQueueNotFoundReason) return {};
                    return {job.spec.queue.empty() ? default_queue : job.spec.queue};
                  });

  base::WorkQueueOptions qo = QueueOptions(ctx_, "job-controller");
  queue_ = std::make_unique<base::ShardedWorkQueue>(
      static_cast<size_t>(std::max(1, ctx_.options.worker_threads)), qo);
  delayed_ = std::make_unique<DelayedActions>(*ctx_.clock);

  metrics::Registry& reg = *ctx_.metrics;
  reconcile_seconds_ = &reg.AddHistogram("tephra_job_reconcile_duration_seconds",
                                         "Time one job controller pass took.",
                                         metrics::ExponentialBuckets(0.0005, 2, 16));
  pod_creation_seconds_ =
      &reg.AddHistogram("tephra_job_to_pod_creation_latency_seconds",
                        "Time from a Job's creation to the creation of each of its pods.",
                        metrics::ExponentialBuckets(0.01, 2, 16));
  metrics::FamilyOptions bounded;
  bounded.max_label_sets = 2000;
  phase_count_ = &reg.AddGaugeVec("tephra_job_phase_count", "Jobs per queue and phase.",
                                  {"queue", "phase"}, bounded);
  finished_total_ = &reg.AddCounterVec(
      "tephra_job_finished_total", "Jobs that reached Completed, Failed, Terminated or Aborted.",
      {"queue", "phase"}, bounded);

  kube::EventHandlers job_handlers;
  job_handlers.on_add = [this](const kube::ObjectPtr& o) {
    Enqueue(o->metadata.Key(), InboxItem::For(RequestFor(ev::kOutOfSync)));
  };
  job_handlers.on_update = [this](const kube::ObjectPtr&, const kube::ObjectPtr& o) {
    Enqueue(o->metadata.Key(), InboxItem::For(RequestFor(ev::kOutOfSync)));
  };
  job_handlers.on_delete = [this](const kube::ObjectPtr& o, bool) {
    queue_->Add(o->metadata.Key());
  };
  jobs_->AddEventHandler(job_handlers);

  kube::EventHandlers pod_handlers;
  pod_handlers.on_add = [this](const kube::ObjectPtr& o) {
    const auto& pod = static_cast<const api::Pod&>(*o);
    OnPod(pod, RequestForPodAdd(pod));
  };
  pod_handlers.on_update = [this](const kube::ObjectPtr& old, const kube::ObjectPtr& o) {
    const auto& pod = static_cast<const api::Pod&>(*o);
    OnPod(pod, RequestForPodUpdate(static_cast<const api::Pod&>(*old), pod));
  };
  pod_handlers.on_delete = [this](const kube::ObjectPtr& o, bool) {
    const auto& pod = static_cast<const api::Pod&>(*o);
    OnPod(pod, RequestForPodDelete(pod));
  };
  pods_->AddEventHandler(pod_handlers);

  auto pg_job_key = [](const kube::Object& pg) -> std::string {
    const kube::OwnerReference* owner = pg.metadata.ControllerRef();
    if (owner == nullptr || owner->kind != api::kJobKind) return "";
    return kube::ObjectKey(pg.metadata.namespace_, owner->name);
  };
  kube::EventHandlers pg_handlers;
  pg_handlers.on_add = [this, pg_job_key](const kube::ObjectPtr& o) {
    std::string key = pg_job_key(*o);
    if (!key.empty()) queue_->Add(key);
  };
  pg_handlers.on_update = [this, pg_job_key](const kube::ObjectPtr& old, const kube::ObjectPtr& o) {
    std::string key = pg_job_key(*o);
    const auto& before = static_cast<const api::PodGroup&>(*old);
    const auto& now = static_cast<const api::PodGroup&>(*o);
    if (key.empty() || before.status.phase == now.status.phase) return;
    Request r;
    if (now.status.phase == api::podgroup_phase::kUnknown) r.event = std::string(ev::kJobUnknown);
    Enqueue(key, InboxItem::For(std::move(r)));
  };
  pg_handlers.on_delete = [this, pg_job_key](const kube::ObjectPtr& o, bool) {
    std::string key = pg_job_key(*o);
    if (!key.empty()) queue_->Add(key);
  };
  podgroups_->AddEventHandler(pg_handlers);

  // Jobs waiting for a queue start once it is created.
  kube::EventHandlers queue_handlers;
  queue_handlers.on_add = [this](const kube::ObjectPtr& o) { WakeJobsOfQueue(o->metadata.name); };
  queues_->AddEventHandler(queue_handlers);

  kube::EventHandlers command_handlers;
  command_handlers.on_add = [this](const kube::ObjectPtr& o) {
    const auto& cmd = static_cast<const api::Command&>(*o);
    if (!cmd.target || cmd.target->api_version != api::kBatchApiVersion ||
        cmd.target->kind != api::kJobKind) {
      return;
    }
    InboxItem item;
    item.request.action = cmd.action;
    item.command_name = cmd.metadata.name;
    item.command_uid = cmd.metadata.uid;
    item.command_seen = ctx_.clock->Monotonic();
    Enqueue(kube::ObjectKey(cmd.metadata.namespace_, cmd.target->name), std::move(item));
  };
  commands_->AddEventHandler(command_handlers);
  return Status::Ok();
}

void JobController::Enqueue(const std::string& key, InboxItem item,
                            std::chrono::milliseconds delay) {
  inbox_.Add(key, std::move(item));
  if (delay.count() > 0) {
    queue_->AddAfter(key, delay);
  } else {
    queue_->Add(key);
  }
}

void JobController::WakeJobsOfQueue(const std::string& queue) {
  if (queue.empty()) return;
  for (const auto& o : jobs_->store().ByIndex(kWaitingForQueueIndex, queue)) {
    queue_->Add(o->metadata.Key());
  }
}

void JobController::OnPod(const api::Pod& pod, Request request) {
  const kube::OwnerReference* owner = pod.metadata.ControllerRef();
  if (owner == nullptr || owner->kind != api::kJobKind) return;
  std::string key = JobKeyOfPod(pod);
  if (key.empty()) return;
  const bool progress = request.event == ev::kPodPending || request.event == ev::kPodRunning;
  Enqueue(key, InboxItem::For(std::move(request)),
          progress ? kPodProgressCoalesce : std::chrono::milliseconds(0));
}

void JobController::Start() {
  for (size_t i = 0; i < queue_->size(); ++i) workers_.emplace_back([this, i] { Worker(i); });
}

void JobController::Stop() {
  if (!queue_) return;
  queue_->ShutDown();
  for (auto& t : workers_) {
    if (t.joinable()) t.join();
  }
  workers_.clear();
}

void JobController::Worker(size_t shard) {
  base::WorkQueue& q = queue_->Shard(shard);
  while (auto key = q.Get()) {
    auto start = std::chrono::steady_clock::now();
    Status s;
    try {
      s = Sync(*key);
    } catch (const std::exception& e) {
      s = Internal(std::string("unexpected exception: ") + e.what());
    }
    reconcile_seconds_->Observe(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    HandleResult(*key, s);
    q.Done(*key);
  }
}

void JobController::HandleResult(const std::string& key, const Status& status) {
  base::WorkQueue& q = queue_->ForKey(key);
  if (status.ok()) {
    q.Forget(key);
    if (auto due = delayed_->NextDue(key)) q.AddAfter(key, *due);
    return;
  }
  if (status.code() == StatusCode::kConflict) {
    VLOG(2) << "job " << key << ": stale cache, retrying: " << status.message();
    q.AddAfter(key, kConflictRetry);
    return;
  }
  const int max = ctx_.options.max_requeue_num;
  if (max >= 0 && q.NumRequeues(key) >= max) {
    LOG(WARNING) << "job " << key << ": " << max
                 << " failed passes, terminating it; last error: " << status.ToString();
    q.Forget(key);
    if (auto obj = jobs_->store().Get(key)) {
      RecordEvent(static_cast<const api::Job&>(*obj), true, "TooManyRetries",
                  "giving up after " + std::to_string(max) + " failed passes (" +
                      status.ToString() + "); terminating the job");
    }
    InboxItem terminate;
    terminate.request.action = std::string(ActionName(Action::kTerminateJob));
    inbox_.PutBack(key, {terminate});
    q.AddRateLimited(key);
    return;
  }
  LOG(WARNING) << "job " << key << ": " << status.ToString();
  q.AddRateLimited(key);
}

JobController::Expectations& JobController::ExpectationsFor(const std::string& key) {
  sync::MutexLock l(mu_);
  return expectations_[key];
}

void JobController::Forget(const std::string& key) {
  delayed_->Forget(key);
  sync::MutexLock l(mu_);
  expectations_.erase(key);
  auto it = phases_.find(key);
  if (it != phases_.end()) {
    phase_count_->WithLabels({it->second.first, it->second.second}).Dec();
    phases_.erase(it);
  }
}

void JobController::TrackPhase(const std::string& key, const std::string& queue,
                               const std::string& phase) {
  sync::MutexLock l(mu_);
  auto& slot = phases_[key];
  if (slot.first == queue && slot.second == phase) return;
  if (!slot.second.empty()) phase_count_->WithLabels({slot.first, slot.second}).Dec();
  slot = {queue, phase};
  phase_count_->WithLabels({queue, phase}).Inc();
}

std::vector<std::shared_ptr<const api::Pod>> JobController::OwnedPods(const api::Job& job) const {
  std::vector<std::shared_ptr<const api::Pod>> pods;
  for (const auto& o : pods_->store().ByIndex("job", job.metadata.Key())) {
    const kube::OwnerReference* owner = o->metadata.ControllerRef();
    // Pods of an earlier Job with the same name belong to the garbage collector, not to us.
    if (owner == nullptr || owner->uid != job.metadata.uid) continue;
    pods.push_back(kube::As<api::Pod>(o));
  }
  return pods;
}

void JobController::RecordEvent(const api::Job& job, bool warning, const std::string& reason,
                                const std::string& message) {
  if (ctx_.recorder == nullptr) return;
  ctx_.recorder->Record(kube::ObjectReference::To(job),
                        warning ? kube::EventType::kWarning : kube::EventType::kNormal, reason,
                        message);
}

Status JobController::Sync(const std::string& key) {
  kube::ObjectPtr obj = jobs_->store().Get(key);
  if (!obj) return SettleCommandsWithoutJob(key);
  api::Job job = static_cast<const api::Job&>(*obj);
  if (job.metadata.deletion_timestamp) return Status::Ok();
  api::JobDefaultingOptions defaults;
  if (!ctx_.options.scheduler_names.empty())
    defaults.scheduler_name = ctx_.options.scheduler_names[0];
  defaults.default_queue = ctx_.options.default_queue;
  api::ApplyJobDefaults(&job, defaults);

  std::deque<InboxItem> items = inbox_.Take(key);
  // Items from `from` on wait for the next pass.
  auto put_back = [&](std::deque<InboxItem>::iterator from) {
    items.erase(items.begin(), from);
    inbox_.PutBack(key, std::move(items));
  };

  {
    // A pod event means the cache has seen the pod: it is no longer "created, not yet seen",
    // even if it is gone again by now (and must then be recreated).
    Expectations& exp = ExpectationsFor(key);
    for (const InboxItem& item : items) {
      if (!item.request.pod_name.empty()) exp.created.erase(item.request.pod_name);
    }
  }
  const auto pods = OwnedPods(job);
  Action action = Action::kSyncJob;
  Request action_request;
  std::string reason;
  bool acted = false;
  for (auto it = items.begin(); it != items.end(); ++it) {
    InboxItem& item = *it;
    if (!item.command_name.empty() && !item.command_consumed) {
      kube::DeleteOptions once;
      once.precondition_uid = item.command_uid;
      Status s =
          ctx_.client->Delete(api::kCommands, job.metadata.namespace_, item.command_name, once);
      if (s.code() == StatusCode::kNotFound || s.code() == StatusCode::kConflict) {
        continue;  // someone consumed it already
      }
      if (!s.ok()) {
        put_back(it);
        return s.WithContext("deleting command " + item.command_name);
      }
      item.command_consumed = true;
      RecordEvent(job, false, std::string(ev::kCommandIssued),
                  "command " + item.command_name + " asks for " + item.request.action);
    }
    Request req = ConfirmTaskEvent(job, pods, item.request);
    delayed_->OnRequest(key, req);
    Resolution res = ResolveAction(job, req);
    if (res.stale) {
      VLOG(3) << "job " << key << ": ignoring stale " << req.event << " of pod " << req.pod_name;
      continue;
    }
    std::optional<std::chrono::nanoseconds> backoff = RestartBackoff(job, res.action);
    const bool backing_off = backoff && (!res.delay || *res.delay < *backoff);
    if (backing_off) res.delay = *backoff;
    if (res.delay && res.action != Action::kSyncJob) {
      if (delayed_->Add(key, req, res.action, *res.delay, res.reason)) {
        std::string what = backing_off
                               ? "restart " + std::to_string(job.status.retry_count + 1) + "/" +
                                     std::to_string(job.spec.max_retry) + ", " + res.reason
                               : res.reason;
        RecordEvent(
            job, false, "ActionDelayed",
            what + " in " + base::FormatDuration(*res.delay) + " (pod " + req.pod_name + ")");
      }
      continue;
    }
    if (res.action == Action::kSyncJob) continue;
    action = res.action;
    action_request = req;
    reason = res.reason;
    acted = true;
    // One action per pass: the rest waits for a pass that sees this one's effects.
    if (std::next(it) != items.end()) {
      put_back(std::next(it));
      queue_->Add(key);
    }
    break;
  }
  if (!acted) {
    std::vector<DelayedActions::Entry> due = delayed_->TakeDue(key);
    if (!due.empty()) {
      action = due.front().action;
      action_request = due.front().request;
      reason = due.front().reason + " after its timeout";
      acted = true;
      for (size_t i = 1; i < due.size(); ++i) {
        delayed_->Add(key, due[i].request, due[i].action, std::chrono::nanoseconds(0),
                      due[i].reason);
      }
    }
  }
  Status s = Execute(job, pods, action, action_request, reason);
  if (!s.ok() && acted) {
    // The action did not complete: run it again on the retry.
    InboxItem again = InboxItem::For(action_request);
    again.request.action = std::string(ActionName(action));
    inbox_.PutBack(key, {again});
  }
  if (s.ok() && acted) delayed_->OnActionExecuted(key, action, action_request);
  return s;
}

Status JobController::SettleCommandsWithoutJob(const std::string& key) {
  Forget(key);
  const auto [ns, name] = kube::SplitObjectKey(key);
  // Pod events of a job that is gone need nothing; a consumed Command is done.
  auto command_of = [&ns = ns](const InboxItem& item) { return item.Command(ns); };
  std::deque<InboxItem> items = inbox_.Take(key);
  std::optional<std::chrono::milliseconds> again;
  Status s = SettleOrphanCommandItems(ctx_, items, command_of, api::kJobs, ns, name, &again);
  inbox_.PutBack(key, std::move(items));
  if (again) queue_->AddAfter(key, *again);
  return s;
}

Status JobController::Execute(api::Job& job,
                              const std::vector<std::shared_ptr<const api::Pod>>& pods,
                              Action action, const Request& request, const std::string& reason) {
  const std::string key = job.metadata.Key();
  Expectations& exp = ExpectationsFor(key);
  // Forget expectations the cache has caught up with.
  {
    std::set<std::string> live_uids;
    for (const auto& p : pods) {
      live_uids.insert(p->metadata.uid);
      exp.created.erase(p->metadata.name);
    }
    for (auto it = exp.deleted_pod_uids.begin(); it != exp.deleted_pod_uids.end();) {
      it = live_uids.count(*it) ? std::next(it) : exp.deleted_pod_uids.erase(it);
    }
    const auto now = ctx_.clock->Now();
    for (auto it = exp.created.begin(); it != exp.created.end();) {
      it = now - it->second > kCreationExpectationTtl ? exp.created.erase(it) : std::next(it);
    }
  }

  api::JobStatus status = job.status;
  const bool initiating = status.state.phase.empty();
  std::optional<Phase> parsed = ParsePhase(status.state.phase);
  Phase phase = parsed.value_or(Phase::kPending);
  if (initiating) status.min_available = job.spec.min_available;

  // Admission may never have checked this job (docs/controllers.md): when the controller takes
  // it up, and while it waits for its queue, the controller applies the webhook's rules itself.
  // A job that breaks its own rules fails; one whose queue does not exist waits without a
  // PodGroup. A job already under way is never judged again (an older version's rules let it in).
  JobVerdict verdict;
  const bool unchecked = initiating || status.state.reason == kQueueNotFoundReason;
  if (unchecked && pods.empty() && exp.created.empty()) verdict = CheckJob(job, *queue_lookup_);
  const bool invalid = !verdict.invalid.empty();
  // A pass whose status write failed may have made one.
  if (invalid) TEPHRA_RETURN_IF_ERROR(DeletePodGroup(job, exp));

  Transition cell = invalid ? Transition{} : Lookup(phase, action);
  const bool waiting_for_queue = cell.sync_pods && !verdict.missing_queue.empty();
  Kill kill = EffectiveKill(cell, status.retry_count, job.spec.max_retry);

  std::set<std::string> deleted;
  std::vector<std::pair<std::string, std::string>> created;
  if (kill != Kill::kNone) {
    TEPHRA_ASSIGN_OR_RETURN(deleted, KillPods(job, pods, kill, action, request, exp));
    const bool full = kill == Kill::kSoft || kill == Kill::kHard;
    if (full) TEPHRA_RETURN_IF_ERROR(DeletePodGroup(job, exp));
    // A new version makes events of the pods just killed stale.
    if (full && (!deleted.empty() || cell.increment_retry)) ++status.version;
  }
  if (cell.increment_retry) ++status.retry_count;

  std::string plugin_error;
  if (cell.sync_pods && !waiting_for_queue) {
    Status plugins = RunPluginsOnJob(job, status, exp, initiating);
    if (plugins.code() == StatusCode::kInvalidArgument) {
      plugin_error = plugins.message();
    } else {
      TEPHRA_RETURN_IF_ERROR(plugins);
    }
    if (plugin_error.empty()) {
      TEPHRA_RETURN_IF_ERROR(EnsureVolumes(job, status));
      TEPHRA_ASSIGN_OR_RETURN(std::string pg_phase, EnsurePodGroup(job, exp));
      if (pg_phase.empty() || pg_phase == api::podgroup_phase::kPending) {
        VLOG(3) << "job " << key << ": PodGroup not admitted yet, no pods";
      } else {
        api::Job versioned = job;
        versioned.status = status;
        TEPHRA_RETURN_IF_ERROR(SyncPods(versioned, pods, exp, &created, &deleted));
      }
    }
  }
  // Pods this process created or deleted that the cache does not show yet.
  std::set<std::string> listed;
  for (const auto& c : created) listed.insert(c.first);
  for (const auto& [name, when] : exp.created) {
    (void)when;
    if (!listed.count(name)) {
      for (const auto& t : job.spec.tasks) {
        if (name.rfind(job.metadata.name + "-" + t.name + "-", 0) == 0) {
          created.emplace_back(name, t.name);
          break;
        }
      }
    }
  }
  for (const auto& p : pods) {
    if (exp.deleted_pod_uids.count(p->metadata.uid)) deleted.insert(p->metadata.name);
  }

  PodCounts counts = CountPods(pods, deleted, created);
  PhaseInputs inputs = MakePhaseInputs(job, counts, status.retry_count);
  inputs.status_min_available = status.min_available;
  // A delayed action (a policy timeout, a restart back-off) decides how the job goes on: until
  // it runs, pods that finished do not finish the job (docs/compatibility.md §2.1).
  if (inputs.running_verdict && IsFinished(*inputs.running_verdict) && delayed_->Size(key) > 0) {
    inputs.running_verdict.reset();
  }
  Phase next = invalid ? Phase::kFailed : Evaluate(phase, cell.next, inputs);
  // A finished or aborted job keeps no pod counters (docs/compatibility.md §2.3, step 5).
  SetCounts(IsFinished(next) || next == Phase::kAborted ? PodCounts{} : counts, &status);
  const std::string old_phase = job.status.state.phase;
  std::string state_reason =
      action == Action::kSyncJob ? std::string() : std::string(ActionName(action));
  std::string state_message = reason;
  if (invalid) {
    state_reason = std::string(kInvalidJobReason);
    state_message = DescribeErrors(verdict.invalid);
  }
  bool phase_changed = SetPhase(next, state_reason, state_message, ctx_.clock->Now(),
                                job.metadata.creation_timestamp, &status);
  if (!plugin_error.empty()) {
    status.state.reason = "PluginError";
    status.state.message = plugin_error;
  }
  if (waiting_for_queue && next == Phase::kPending) {
    status.state.reason = std::string(kQueueNotFoundReason);
    status.state.message =
        DescribeErrors(verdict.missing_queue) + "; the job starts once the queue is created";
  } else if (status.state.reason == kQueueNotFoundReason) {
    status.state.reason.clear();
    status.state.message.clear();
  }
  if (!(status == job.status)) TEPHRA_RETURN_IF_ERROR(WriteStatus(job, status));

  if (invalid && phase_changed) {
    RecordEvent(job, true, std::string(kInvalidJobReason),
                status.state.message +
                    "; admission did not check this job, and it fails "
                    "without a PodGroup or pods");
  }
  if (status.state.reason == kQueueNotFoundReason &&
      status.state.message != job.status.state.message) {
    RecordEvent(job, true, std::string(kQueueNotFoundReason), status.state.message);
  }

  if (action != Action::kSyncJob) {
    RecordEvent(job, false, std::string(ActionName(action)),
                reason.empty() ? std::string(ActionName(action)) : reason);
  }
  if (!plugin_error.empty() && job.status.state.reason != "PluginError") {
    RecordEvent(job, true, "PluginError", plugin_error);
  }
  if (phase_changed) {
    // A normal lifecycle writes no Job event, as in Volcano (docs/architecture.md, Events); only
    // a job that ended badly says so.
    if (next == Phase::kFailed || next == Phase::kAborted) {
      RecordEvent(job, true, std::string(PhaseName(next)),
                  "job phase " + (old_phase.empty() ? std::string("(new)") : old_phase) + " -> " +
                      std::string(PhaseName(next)) + (reason.empty() ? "" : ": " + reason));
    }
    if (IsFinished(next) || next == Phase::kAborted) {
      finished_total_->WithLabels({job.spec.queue, std::string(PhaseName(next))}).Inc();
    }
  }
  TrackPhase(key, job.spec.queue, status.state.phase);
  return Status::Ok();
}

StatusOr<std::set<std::string>> JobController::KillPods(
    const api::Job& /*job*/, const std::vector<std::shared_ptr<const api::Pod>>& pods, Kill kill,
    Action action, const Request& request, Expectations& exp) {
  std::vector<const api::Pod*> victims;
  for (const auto& p : pods) {
    if (p->metadata.deletion_timestamp || exp.deleted_pod_uids.count(p->metadata.uid)) continue;
    const std::string& phase = p->status.phase;
    const bool finished = phase == api::pod_phase::kSucceeded || phase == api::pod_phase::kFailed;
    bool kill_it = false;
    switch (kill) {
      case Kill::kNone:
        break;
      case Kill::kSoft:
        kill_it = !finished;
        break;
      case Kill::kHard:
        kill_it = true;
        break;
      case Kill::kTarget: {
        const bool same_task = p->metadata.Label(api::kTaskSpecKey) == request.task;
        if (action == Action::kRestartPod) {
          kill_it = p->metadata.uid == request.pod_uid || p->metadata.name == request.pod_name;
        } else if (action == Action::kRestartPartition) {
          kill_it = same_task && p->metadata.Label(api::kPartitionIdLabel) == request.partition;
        } else {
          kill_it = same_task;
        }
        break;
      }
    }
    victims.push_back(kill_it ? p.get() : nullptr);
  }
  victims.erase(std::remove(victims.begin(), victims.end(), nullptr), victims.end());
  TEPHRA_RETURN_IF_ERROR(
      ParallelFor(*pod_writes_, victims.size(), [&](size_t i) { return DeletePod(*victims[i]); }));
  std::set<std::string> names;
  for (const api::Pod* p : victims) {
    names.insert(p->metadata.name);
    exp.deleted_pod_uids.insert(p->metadata.uid);
  }
  return names;
}

Status JobController::DeletePod(const api::Pod& pod) {
  const std::string& ns = pod.metadata.namespace_;
  const std::string& name = pod.metadata.name;
  // Marked first, so the deletion event reads as the controller's doing, not an eviction.
  if (pod.metadata.annotations.count(std::string(api::kControllerOutOfSyncAnnotation)) == 0) {
    auto patched =
        ctx_.client->Patch(kube::resources::kPods, ns, name, kube::PatchType::kMerge,
                           R"({"metadata":{"annotations":{")" +
                               std::string(api::kControllerOutOfSyncAnnotation) + R"(":"true"}}})");
    if (patched.status().code() == StatusCode::kNotFound) return Status::Ok();
    if (!patched.ok()) return patched.status().WithContext("marking pod " + name);
  }
  kube::DeleteOptions options;
  options.precondition_uid = pod.metadata.uid;
  Status s = ctx_.client->Delete(kube::resources::kPods, ns, name, options);
  if (s.ok() || s.code() == StatusCode::kNotFound) return Status::Ok();
  // A UID mismatch means the pod was replaced already: nothing of ours to delete.
  if (s.code() == StatusCode::kConflict) return Status::Ok();
  return s.WithContext("deleting pod " + name);
}

Status JobController::DeletePodGroup(const api::Job& job, Expectations& exp) {
  const std::string name = PodGroupName(job);
  kube::ObjectPtr pg = podgroups_->store().Get(kube::ObjectKey(job.metadata.namespace_, name));
  if (!pg || pg->metadata.uid == exp.deleted_podgroup_uid) return Status::Ok();
  kube::DeleteOptions options;
  options.precondition_uid = pg->metadata.uid;
  Status s = ctx_.client->Delete(api::kPodGroups, job.metadata.namespace_, name, options);
  if (!s.ok() && s.code() != StatusCode::kNotFound && s.code() != StatusCode::kConflict) {
    return s.WithContext("deleting PodGroup " + name);
  }
  exp.deleted_podgroup_uid = pg->metadata.uid;
  exp.allocated_hypernode = pg->metadata.Annotation(api::kJobAllocatedHyperNodeAnnotation);
  return Status::Ok();
}

StatusOr<std::string> JobController::EnsurePodGroup(const api::Job& job, Expectations& exp) {
  auto priorities = [this](std::string_view name) -> std::optional<int32_t> {
    kube::ObjectPtr pc = priority_classes_->store().Get(std::string(name));
    if (!pc) return std::nullopt;
    return static_cast<const api::PriorityClass&>(*pc).value;
  };
  api::PodGroup want = BuildPodGroup(job, priorities);
  const std::string key = kube::ObjectKey(job.metadata.namespace_, want.metadata.name);
  kube::ObjectPtr cached = podgroups_->store().Get(key);
  if (cached && cached->metadata.uid == exp.deleted_podgroup_uid) {
    // Still the one this process deleted: wait for the cache before recreating it.
    return Conflict("PodGroup " + want.metadata.name + " is still being deleted");
  }
  if (!cached) {
    if (!exp.allocated_hypernode.empty()) {
      want.metadata.annotations[std::string(api::kJobAllocatedHyperNodeAnnotation)] =
          exp.allocated_hypernode;
    }
    StatusOr<std::string> created =
        ctx_.client->Create(api::kPodGroups, job.metadata.namespace_, api::EncodePodGroup(want));
    if (created.ok()) return std::string();
    if (created.status().code() == StatusCode::kAlreadyExists)
      return Conflict("PodGroup not cached yet");
    return created.status().WithContext("creating PodGroup " + want.metadata.name);
  }
  const auto& have = static_cast<const api::PodGroup&>(*cached);
  if (PodGroupSpecDrifted(have, want)) {
    api::PodGroup updated = have;
    updated.spec.min_member = want.spec.min_member;
    updated.spec.min_task_member = want.spec.min_task_member;
    updated.spec.min_resources = want.spec.min_resources;
    updated.spec.priority_class_name = want.spec.priority_class_name;
    updated.spec.sub_group_policy = want.spec.sub_group_policy;
    StatusOr<std::string> r = ctx_.client->Update(api::kPodGroups, job.metadata.namespace_,
                                                  have.metadata.name, api::EncodePodGroup(updated));
    if (!r.ok()) return r.status().WithContext("updating PodGroup " + have.metadata.name);
  }
  if (have.status.phase.empty() || have.status.phase == api::podgroup_phase::kPending) {
    for (auto it = have.status.conditions.rbegin(); it != have.status.conditions.rend(); ++it) {
      if (it->status == "True" && it->type != api::podgroup_condition::kScheduled) {
        RecordEvent(job, true, "PodGroupPending",
                    "PodGroup " + have.metadata.name + " is not admitted: " + it->reason +
                        (it->message.empty() ? "" : ": " + it->message));
        break;
      }
    }
  }
  return have.status.phase;
}

Status JobController::EnsureVolumes(api::Job& job, api::JobStatus& status) {
  for (size_t i = 0; i < job.spec.volumes.size(); ++i) {
    const api::VolumeSpec& v = job.spec.volumes[i];
    const std::string claim = VolumeClaimName(job, i);
    const std::string record = "volume-pvc-" + claim;
    if (status.controlled_resources.count(record)) continue;
    if (!v.volume_claim_json) {
      auto got = ctx_.client->Get(kube::resources::kPersistentVolumeClaims, job.metadata.namespace_,
                                  claim);
      if (got.status().code() == StatusCode::kNotFound) {
        return Unavailable("pvc " + claim + " not found");
      }
      if (!got.ok()) return got.status();
    } else {
      json::Writer w;
      w.StartObject().Field("apiVersion", "v1").Field("kind", "PersistentVolumeClaim");
      kube::EncodeObjectMeta(JobOwnedMetadata(job, claim), &w);
      w.Key("spec").Raw(*v.volume_claim_json).EndObject();
      auto created = ctx_.client->Create(kube::resources::kPersistentVolumeClaims,
                                         job.metadata.namespace_, w.str());
      if (!created.ok() && created.status().code() != StatusCode::kAlreadyExists) {
        return created.status().WithContext("creating pvc " + claim);
      }
    }
    status.controlled_resources[record] = claim;
  }
  return Status::Ok();
}

Status JobController::RunPluginsOnJob(const api::Job& job, api::JobStatus& status,
                                      Expectations& exp, bool initiating) {
  TEPHRA_ASSIGN_OR_RETURN(auto plugins, JobPlugins(job));
  ClientObjectWriter writer(*ctx_.client);
  bool updated_now = false;
  for (const auto& plugin : plugins) {
    const std::string record = "plugin-" + std::string(plugin->Name());
    if (initiating || status.controlled_resources.count(record) == 0) {
      TEPHRA_RETURN_IF_ERROR(
          plugin->OnJobAdd(job, writer).WithContext("job plugin " + std::string(plugin->Name())));
      status.controlled_resources[record] = std::string(plugin->Name());
    } else if (exp.plugins_updated_generation != job.metadata.generation) {
      TEPHRA_RETURN_IF_ERROR(plugin->OnJobUpdate(job, writer)
                                 .WithContext("job plugin " + std::string(plugin->Name())));
      updated_now = true;
    }
  }
  if (updated_now || exp.plugins_updated_generation < 0) {
    exp.plugins_updated_generation = job.metadata.generation;
  }
  return Status::Ok();
}

Status JobController::SyncPods(const api::Job& job,
                               const std::vector<std::shared_ptr<const api::Pod>>& pods,
                               Expectations& exp,
                               std::vector<std::pair<std::string, std::string>>* created,
                               std::set<std::string>* deleted) {
  std::map<std::string, const api::Pod*> by_name;
  for (const auto& p : pods) by_name[p->metadata.name] = p.get();

  // Surplus pods: scaled down, of a task that no longer exists, or marked out-of-sync.
  std::vector<const api::Pod*> surplus;
  for (const auto& p : pods) {
    if (p->metadata.deletion_timestamp || exp.deleted_pod_uids.count(p->metadata.uid)) continue;
    const api::TaskSpec* task = job.Task(p->metadata.Label(api::kTaskSpecKey));
    const int32_t index = TaskIndexOf(*p);
    const bool out_of_sync =
        p->metadata.annotations.count(std::string(api::kControllerOutOfSyncAnnotation)) != 0;
    if (task == nullptr || index < 0 || index >= task->replicas || out_of_sync) {
      surplus.push_back(p.get());
    }
  }
  TEPHRA_RETURN_IF_ERROR(
      ParallelFor(*pod_writes_, surplus.size(), [&](size_t i) { return DeletePod(*surplus[i]); }));
  for (const api::Pod* p : surplus) {
    deleted->insert(p->metadata.name);
    exp.deleted_pod_uids.insert(p->metadata.uid);
  }

  // Which tasks may start: dependsOn waits for its dependencies to be ready.
  auto task_ready = [&](const std::string& name) {
    const api::TaskSpec* t = job.Task(name);
    if (t == nullptr) return false;
    int32_t ready = 0;
    for (const auto& p : pods) {
      if (p->metadata.Label(api::kTaskSpecKey) == name && PodReady(*p)) ++ready;
    }
    return ready >= t->min_available.value_or(t->replicas);
  };

  struct ToCreate {
    const api::TaskSpec* task;
    int32_t index;
    std::string name;
  };
  std::vector<ToCreate> missing;
  for (const api::TaskSpec& task : job.spec.tasks) {
    if (task.depends_on && !task.depends_on->names.empty()) {
      size_t ready = 0;
      for (const std::string& dep : task.depends_on->names) ready += task_ready(dep) ? 1u : 0u;
      const bool any = task.depends_on->iteration == "any";
      if (any ? ready == 0 : ready < task.depends_on->names.size()) continue;
    }
    for (int32_t i = 0; i < task.replicas; ++i) {
      std::string name = PodName(job.metadata.name, task.name, i);
      if (by_name.count(name) || exp.created.count(name)) continue;
      missing.push_back({&task, i, std::move(name)});
    }
  }
  if (missing.empty()) return Status::Ok();

  TEPHRA_ASSIGN_OR_RETURN(auto plugins, JobPlugins(job));
  std::vector<std::string> bodies(missing.size());
  for (size_t i = 0; i < missing.size(); ++i) {
    TEPHRA_ASSIGN_OR_RETURN(PodDraft draft, BuildPod(job, *missing[i].task, missing[i].index));
    PodInfo info{missing[i].task, missing[i].index};
    for (const auto& plugin : plugins) {
      TEPHRA_RETURN_IF_ERROR(plugin->OnPodCreate(job, info, &draft)
                                 .WithContext("job plugin " + std::string(plugin->Name())));
    }
    bodies[i] = draft.Json();
  }
  std::vector<char> done(missing.size(), 0);
  Status s = ParallelFor(*pod_writes_, missing.size(), [&](size_t i) -> Status {
    auto r = ctx_.client->Create(kube::resources::kPods, job.metadata.namespace_, bodies[i]);
    if (r.ok() || r.status().code() == StatusCode::kAlreadyExists) {
      done[i] = 1;
      return Status::Ok();
    }
    return r.status().WithContext("creating pod " + missing[i].name);
  });
  const auto now = ctx_.clock->Now();
  for (size_t i = 0; i < missing.size(); ++i) {
    if (!done[i]) continue;
    created->emplace_back(missing[i].name, missing[i].task->name);
    exp.created[missing[i].name] = now;
    if (job.metadata.creation_timestamp) {
      pod_creation_seconds_->Observe(
          std::chrono::duration<double>(now - *job.metadata.creation_timestamp).count());
    }
  }
  return s;
}

Status JobController::WriteStatus(const api::Job& job, const api::JobStatus& status) {
  api::Job copy = job;
  copy.status = status;
  // The status subresource with the cached resourceVersion: a pass that worked from a stale
  // cache gets 409 and re-derives instead of overwriting (it might count a retry twice).
  StatusOr<std::string> r = ctx_.client->Update(
      api::kJobs, job.metadata.namespace_, job.metadata.name, api::EncodeJob(copy), {}, "status");
  if (!r.ok()) return r.status().WithContext("updating status of job " + job.metadata.Key());
  return Status::Ok();
}

}  // namespace tephra::controllers::job
