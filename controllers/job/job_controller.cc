#include "controllers/job/job_controller.h"

#include <glog/logging.h>

#include "api/defaulting.h"
#include "api/informers/informers.h"
#include "api/kinds.h"
#include "api/labels.h"
#include "base/time.h"
#include "controllers/framework/commands.h"
#include "controllers/job/status.h"
#include "controllers/job/verdict.h"
#include "metrics/metrics.h"

namespace tephra::controllers::job {
namespace {

namespace ev = api::job_event;

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

Expectations& JobController::ExpectationsFor(const std::string& key) {
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

JobController::Pods JobController::OwnedPods(const api::Job& job) const {
  Pods pods;
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
  {
    // A pod event means the cache has seen the pod: it is no longer "created, not yet seen",
    // even if it is gone again by now (and must then be recreated).
    Expectations& exp = ExpectationsFor(key);
    for (const InboxItem& item : items) {
      if (!item.request.pod_name.empty()) exp.created.erase(item.request.pod_name);
    }
  }
  const Pods pods = OwnedPods(job);
  TEPHRA_ASSIGN_OR_RETURN(Choice choice, ChooseAction(key, job, pods, std::move(items)));
  Status s = Execute(job, pods, choice.action, choice.request, choice.reason);
  if (!s.ok() && choice.acted) {
    // The action did not complete: run it again on the retry.
    InboxItem again = InboxItem::For(choice.request);
    again.request.action = std::string(ActionName(choice.action));
    inbox_.PutBack(key, {again});
  }
  if (s.ok() && choice.acted) delayed_->OnActionExecuted(key, choice.action, choice.request);
  return s;
}

StatusOr<JobController::Choice> JobController::ChooseAction(const std::string& key,
                                                            const api::Job& job, const Pods& pods,
                                                            std::deque<InboxItem> items) {
  // Items from `from` on wait for the next pass.
  auto put_back = [&](std::deque<InboxItem>::iterator from) {
    items.erase(items.begin(), from);
    inbox_.PutBack(key, std::move(items));
  };
  Choice choice;
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
    choice.action = res.action;
    choice.request = req;
    choice.reason = res.reason;
    choice.acted = true;
    // One action per pass: the rest waits for a pass that sees this one's effects.
    if (std::next(it) != items.end()) {
      put_back(std::next(it));
      queue_->Add(key);
    }
    return choice;
  }
  std::vector<DelayedActions::Entry> due = delayed_->TakeDue(key);
  if (!due.empty()) {
    choice.action = due.front().action;
    choice.request = due.front().request;
    choice.reason = due.front().reason + " after its timeout";
    choice.acted = true;
    for (size_t i = 1; i < due.size(); ++i) {
      delayed_->Add(key, due[i].request, due[i].action, std::chrono::nanoseconds(0), due[i].reason);
    }
  }
  return choice;
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

Status JobController::Execute(const api::Job& job, const Pods& pods, Action action,
                              const Request& request, const std::string& reason) {
  const std::string key = job.metadata.Key();
  Expectations& exp = ExpectationsFor(key);
  exp.CatchUp(pods, ctx_.clock->Now());

  api::JobStatus status = job.status;
  const bool initiating = status.state.phase.empty();
  JobPass pass;
  pass.phase = ParsePhase(status.state.phase).value_or(Phase::kPending);
  pass.action = action;
  pass.reason = reason;
  if (initiating) status.min_available = job.spec.min_available;

  // Admission may never have checked this job (docs/controllers.md): when the controller takes
  // it up, and while it waits for its queue, the controller applies the webhook's rules itself.
  // A job that breaks its own rules fails; one whose queue does not exist waits without a
  // PodGroup. A job already under way is never judged again (an older version's rules let it in).
  const bool unchecked = initiating || status.state.reason == kQueueNotFoundReason;
  if (unchecked && pods.empty() && exp.created.empty()) {
    pass.verdict = CheckJob(job, *queue_lookup_);
  }
  const bool invalid = !pass.verdict.invalid.empty();
  // A pass whose status write failed may have made one.
  if (invalid) TEPHRA_RETURN_IF_ERROR(DeletePodGroup(job, exp));

  const Transition cell = invalid ? Transition{} : Lookup(pass.phase, action);
  pass.rule = cell.next;
  pass.waiting_for_queue = cell.sync_pods && !pass.verdict.missing_queue.empty();
  const Kill kill = EffectiveKill(cell, status.retry_count, job.spec.max_retry);

  PodWrites writes;
  if (kill != Kill::kNone) {
    TEPHRA_ASSIGN_OR_RETURN(writes.deleted, KillPods(pods, kill, action, request, exp));
    const bool full = kill == Kill::kSoft || kill == Kill::kHard;
    if (full) TEPHRA_RETURN_IF_ERROR(DeletePodGroup(job, exp));
    // A new version makes events of the pods just killed stale.
    if (full && (!writes.deleted.empty() || cell.increment_retry)) ++status.version;
  }
  if (cell.increment_retry) ++status.retry_count;

  if (cell.sync_pods && !pass.waiting_for_queue) {
    TEPHRA_RETURN_IF_ERROR(
        Converge(job, pods, initiating, exp, status, &writes, &pass.plugin_error));
  }
  exp.AddUnseen(job, pods, &writes);

  pass.action_waiting = delayed_->Size(key) > 0;
  const PhaseChange phase = AdvanceStatus(job, CountPods(pods, writes.deleted, writes.created),
                                          pass, ctx_.clock->Now(), &status);
  if (!(status == job.status)) TEPHRA_RETURN_IF_ERROR(WriteStatus(job, status));
  ReportPass(job, status, pass, phase);
  TrackPhase(key, job.spec.queue, status.state.phase);
  return Status::Ok();
}

void JobController::ReportPass(const api::Job& job, const api::JobStatus& status,
                               const JobPass& pass, const PhaseChange& phase) {
  if (!pass.verdict.invalid.empty() && phase.changed) {
    RecordEvent(job, true, std::string(kInvalidJobReason),
                status.state.message +
                    "; admission did not check this job, and it fails "
                    "without a PodGroup or pods");
  }
  if (status.state.reason == kQueueNotFoundReason &&
      status.state.message != job.status.state.message) {
    RecordEvent(job, true, std::string(kQueueNotFoundReason), status.state.message);
  }

  if (pass.action != Action::kSyncJob) {
    RecordEvent(job, false, std::string(ActionName(pass.action)),
                pass.reason.empty() ? std::string(ActionName(pass.action)) : pass.reason);
  }
  if (!pass.plugin_error.empty() && job.status.state.reason != "PluginError") {
    RecordEvent(job, true, "PluginError", pass.plugin_error);
  }
  if (phase.changed) {
    // A normal lifecycle writes no Job event, as in Volcano (docs/architecture.md, Events); only
    // a job that ended badly says so.
    const std::string& old_phase = job.status.state.phase;
    if (phase.next == Phase::kFailed || phase.next == Phase::kAborted) {
      RecordEvent(job, true, std::string(PhaseName(phase.next)),
                  "job phase " + (old_phase.empty() ? std::string("(new)") : old_phase) + " -> " +
                      std::string(PhaseName(phase.next)) +
                      (pass.reason.empty() ? "" : ": " + pass.reason));
    }
    if (IsFinished(phase.next) || phase.next == Phase::kAborted) {
      finished_total_->WithLabels({job.spec.queue, std::string(PhaseName(phase.next))}).Inc();
    }
  }
}

}  // namespace tephra::controllers::job
