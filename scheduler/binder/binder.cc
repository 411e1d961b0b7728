#include "scheduler/binder/binder.h"

#include <map>

#include <glog/logging.h>
#include <rapidjson/document.h>

#include "api/core.h"
#include "api/kinds.h"
#include "api/labels.h"
#include "api/scheduling.h"
#include "api/storage.h"

namespace tephra::scheduler {

KubeBinder::KubeBinder(std::shared_ptr<kube::Client> client, SchedulerCache& cache,
                       kube::EventRecorder* events, metrics::Registry* registry,
                       BinderOptions options)
    : client_(std::move(client)), cache_(cache), events_(events), options_(options) {
  if (registry != nullptr) {
    bound_total_ = &registry->AddCounter("tephra_pods_bound_total", "Pods bound to nodes.");
    bind_errors_ = &registry->AddCounter("tephra_bind_errors_total", "Bind requests that failed.");
    evictions_ =
        &registry->AddCounter("volcano_pod_preemption_victims", "Pods evicted by the scheduler.");
    create_to_bind_ = &registry->AddHistogram("tephra_pod_creation_to_bind_seconds",
                                              "Time from pod creation to a successful bind.",
                                              metrics::ExponentialBuckets(0.01, 2, 16));
    bind_latency_ =
        &registry->AddHistogram("tephra_bind_request_seconds", "Latency of pods/binding requests.",
                                metrics::ExponentialBuckets(0.001, 2, 14));
  }
  workers_.Start(&queue_, options_.workers, "binder",
                 [this](const std::string& key) { return Process(key); });
}

KubeBinder::~KubeBinder() {
  Stop();
}

KubeBinder::Work KubeBinder::MakeBindWork(const TaskInfo& task, const std::string& node) const {
  Work w;
  w.job = task.job();
  w.namespace_ = task.namespace_();
  w.name = task.name();
  w.uid = task.uid();
  w.node = node;
  w.created = task.pod->metadata.creation_timestamp;
  w.pod = task.pod;
  return w;
}

void KubeBinder::Bind(const BindUnit& unit) {
  // Assume first: from now on the cache counts each pod on its node (and its volumes taken).
  Unit pending;
  for (const BindRequest& b : unit.binds) {
    Status assumed = cache_.AssumeBinding(b.task->job(), b.task->uid(), b.node);
    if (!assumed.ok()) {
      // Gone, or placed already: its steps go with it.
      VLOG(1) << "binder: not binding " << b.task->pod->metadata.Key() << ": " << assumed.message();
      continue;
    }
    pending.members.push_back(MakeBindWork(*b.task, b.node));
    for (const PreBindStep& step : b.steps) {
      pending.steps.push_back(step);
      pending.deadline =
          std::max(pending.deadline, std::chrono::steady_clock::now() + step.timeout);
    }
  }
  if (pending.steps.empty()) {
    // Nothing to write first: today's path, one bind per pod.
    for (Work& w : pending.members) Enqueue(std::move(w));
    return;
  }
  cache_.AssumeVolumeSteps(pending.steps);
  pending.written.assign(pending.steps.size(), false);
  Work w;
  w.kind = Kind::kUnit;
  {
    sync::MutexLock l(mu_);
    w.unit = next_unit_++;
    units_.emplace(w.unit, std::move(pending));
  }
  Enqueue(std::move(w));
}

void KubeBinder::Evict(const TaskInfo& task, const std::string& reason) {
  Status marked = cache_.MarkReleasing(task.job(), task.uid());
  if (!marked.ok())
    VLOG(1) << "binder: evicting " << task.pod->metadata.Key() << ": " << marked.message();
  Work w;
  w.kind = Kind::kEvict;
  w.job = task.job();
  w.namespace_ = task.namespace_();
  w.name = task.name();
  w.uid = task.uid();
  w.node = task.node;
  w.reason = reason;
  w.pod = task.pod;
  Enqueue(std::move(w));
}

void KubeBinder::Enqueue(Work w) {
  std::string key;
  {
    sync::MutexLock l(mu_);
    key = std::to_string(next_key_++);
  }
  EnqueueAs(key, std::move(w), std::chrono::milliseconds(0));
}

void KubeBinder::EnqueueAs(const std::string& key, Work w, std::chrono::milliseconds delay) {
  {
    sync::MutexLock l(mu_);
    work_.insert_or_assign(key, std::move(w));
  }
  if (delay.count() > 0) {
    queue_.AddAfter(key, delay);
  } else {
    queue_.Add(key);
  }
}

bool KubeBinder::Drain(std::chrono::milliseconds timeout) {
  sync::MutexLock lock(mu_);
  return idle_cv_.WaitFor(mu_, timeout,
                          [this]() REQUIRES(mu_) { return work_.empty() && in_flight_ == 0; });
}

// The workers finish what is queued, then stop.
void KubeBinder::Stop() {
  workers_.Stop();
}

int64_t KubeBinder::bound() const {
  sync::MutexLock l(mu_);
  return bound_;
}

int64_t KubeBinder::failed() const {
  sync::MutexLock l(mu_);
  return failed_;
}

Status KubeBinder::Process(const std::string& key) {
  Work w;
  {
    sync::MutexLock l(mu_);
    auto it = work_.find(key);
    if (it == work_.end()) return Status::Ok();
    w = std::move(it->second);
    work_.erase(it);
    ++in_flight_;
  }
  switch (w.kind) {
    case Kind::kEvict:
      DoEvict(w);
      break;
    case Kind::kBind:
      DoBind(w);
      break;
    case Kind::kUnit:
      AdvanceUnit(key, w.unit);
      break;
  }
  {
    sync::MutexLock l(mu_);
    --in_flight_;
  }
  idle_cv_.NotifyAll();
  return Status::Ok();
}

void KubeBinder::DoBind(const Work& w) {
  // The uid: never bind a pod recreated under the same name. A pod that names no group gets
  // the name of the one the PodGroup controller makes for it in the same write, so that the
  // controller need not annotate it separately (docs/scheduler.md, "Fewer writes per pod").
  std::map<std::string, std::string> annotations;
  if (w.pod && w.pod->implicit_group) {
    annotations.emplace(api::kGroupNameAnnotation, w.pod->group_name);
  }
  std::string body = api::EncodePodBinding(w.namespace_, w.name, w.uid, w.node, annotations);
  auto start = std::chrono::steady_clock::now();
  StatusOr<std::string> r =
      client_->CreateSubresource(kube::resources::kPods, w.namespace_, w.name, "binding", body);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (bind_latency_ != nullptr) bind_latency_->Observe(seconds);
  if (!r.ok()) {
    LOG(WARNING) << "binder: binding " << w.namespace_ << "/" << w.name << " to " << w.node
                 << " failed: " << r.status().ToString();
    // Roll back: the pod is Pending again (or whatever the API server last said).
    cache_.ForgetBinding(w.job, w.uid);
    if (bind_errors_ != nullptr) bind_errors_->Inc();
    if (events_ != nullptr && r.status().code() != StatusCode::kNotFound) {
      events_->Record(kube::ObjectReference::To(*w.pod), kube::EventType::kWarning,
                      "FailedScheduling",
                      "binding to " + w.node + " failed: " + r.status().message());
    }
    sync::MutexLock l(mu_);
    ++failed_;
    return;
  }
  if (bound_total_ != nullptr) bound_total_->Inc();
  if (create_to_bind_ != nullptr && w.created) {
    create_to_bind_->Observe(
        std::chrono::duration<double>(base::Clock::now() - *w.created).count());
  }
  if (events_ != nullptr && options_.record_scheduled_events) {
    events_->Record(kube::ObjectReference::To(*w.pod), kube::EventType::kNormal, "Scheduled",
                    "Successfully assigned " + w.namespace_ + "/" + w.name + " to " + w.node);
  }
  sync::MutexLock l(mu_);
  ++bound_;
}

void KubeBinder::DoEvict(const Work& w) {
  // Tell the pod's owners why before it goes (kube-scheduler's DisruptionTarget condition).
  json::Writer patch;
  patch.StartObject()
      .Key("status")
      .StartObject()
      .Key("conditions")
      .StartArray()
      .StartObject()
      .Field("type", "DisruptionTarget")
      .Field("status", "True")
      .Field("reason", "PreemptionByScheduler")
      .Field("message", w.reason)
      .Field("lastTransitionTime", base::FormatTime(base::Clock::now()))
      .EndObject()
      .EndArray()
      .EndObject()
      .EndObject();
  StatusOr<std::string> patched =
      client_->Patch(kube::resources::kPods, w.namespace_, w.name, kube::PatchType::kStrategicMerge,
                     patch.str(), {}, "status");
  if (!patched.ok() && patched.status().code() != StatusCode::kNotFound) {
    LOG(WARNING) << "binder: marking " << w.namespace_ << "/" << w.name
                 << " for eviction: " << patched.status().ToString();
  }
  kube::DeleteOptions del;
  del.precondition_uid = w.uid;
  Status deleted = client_->Delete(kube::resources::kPods, w.namespace_, w.name, del);
  if (!deleted.ok() && deleted.code() != StatusCode::kNotFound) {
    LOG(WARNING) << "binder: evicting " << w.namespace_ << "/" << w.name << ": "
                 << deleted.ToString();
    return;
  }
  if (evictions_ != nullptr) evictions_->Inc();
  if (events_ != nullptr) {
    events_->Record(kube::ObjectReference::To(*w.pod), kube::EventType::kWarning, "Evicted",
                    w.reason);
    if (!w.pod->group_name.empty()) {
      kube::ObjectReference pg;
      pg.api_version = "scheduling.volcano.sh/v1beta1";
      pg.kind = "PodGroup";
      pg.namespace_ = w.namespace_;
      pg.name = w.pod->group_name;
      // kubectl describe matches events by uid.
      if (auto job = cache_.Job(w.job); job != nullptr && job->pod_group != nullptr) {
        pg.uid = job->pod_group->metadata.uid;
        pg.resource_version = job->pod_group->metadata.resource_version;
      }
      events_->Record(pg, kube::EventType::kWarning, "Evicted", "pod " + w.name + " " + w.reason);
    }
  }
}

// ---- units with pre-bind steps ----

namespace {

// "namespace/name" into its parts.
std::pair<std::string, std::string> Split(const std::string& key) {
  return kube::SplitObjectKey(key);
}

// Whether an object the informer shows is still the version a step was decided on (so it
// cannot show the step's own write yet).
bool SameVersion(const kube::Object& object, const std::string& resource_version) {
  return !resource_version.empty() && object.metadata.resource_version == resource_version;
}

}  // namespace

void KubeBinder::AdvanceUnit(const std::string& key, uint64_t id) {
  Unit unit;
  {
    sync::MutexLock l(mu_);
    auto it = units_.find(id);
    if (it == units_.end()) return;
    unit = std::move(it->second);
    units_.erase(it);
  }
  if (!unit.writes_done) {
    for (size_t i = 0; i < unit.steps.size(); ++i) {
      Status written = WriteStep(unit.steps[i]);
      if (!written.ok()) {
        std::string why = unit.steps[i].Describe() + ": " + written.message();
        FailUnit(std::move(unit), why);
        return;
      }
      unit.written[i] = true;
    }
    unit.writes_done = true;
  }
  std::string waiting_for;
  for (const PreBindStep& step : unit.steps) {
    std::string why;
    switch (CheckStep(step, &why)) {
      case StepState::kFailed:
        FailUnit(std::move(unit), why);
        return;
      case StepState::kPending:
        if (waiting_for.empty()) waiting_for = step.Describe();
        break;
      case StepState::kComplete:
        break;
    }
  }
  for (const Work& m : unit.members) {
    if (!cache_.HasPod(m.uid)) {
      std::string why = "pod " + m.namespace_ + "/" + m.name + " was deleted";
      FailUnit(std::move(unit), why);
      return;
    }
  }
  if (waiting_for.empty()) {
    VLOG(1) << "binder: the pre-bind steps of " << unit.members.size()
            << " pod(s) are complete; binding them";
    for (Work& m : unit.members) Enqueue(std::move(m));
    return;
  }
  if (std::chrono::steady_clock::now() >= unit.deadline) {
    FailUnit(std::move(unit), "timed out waiting to " + waiting_for);
    return;
  }
  Work again;
  again.kind = Kind::kUnit;
  again.unit = id;
  {
    sync::MutexLock l(mu_);
    units_.emplace(id, std::move(unit));
  }
  EnqueueAs(key, std::move(again), options_.step_poll);
}

// The writes the PV controller expects of a scheduler (docs/scheduler.md, "Storage"), each
// guarded by the resourceVersion the session decided on: an object changed since is not ours to
// write over.
Status KubeBinder::WriteStep(const PreBindStep& step) {
  json::Writer patch;
  patch.StartObject().Key("metadata").StartObject();
  if (const auto* bind = std::get_if<BindVolumeStep>(&step.what)) {
    auto [ns, name] = Split(bind->claim);
    if (!bind->volume_resource_version.empty())
      patch.Field("resourceVersion", bind->volume_resource_version);
    patch.Key("annotations")
        .StartObject()
        .Field(api::storage::kBoundByControllerAnnotation, "yes")
        .EndObject();
    patch.EndObject().Key("spec").StartObject().Key("claimRef").StartObject();
    patch.Field("kind", "PersistentVolumeClaim").Field("namespace", ns).Field("name", name);
    patch.Field("uid", bind->claim_uid).Field("apiVersion", "v1");
    if (!bind->claim_resource_version.empty())
      patch.Field("resourceVersion", bind->claim_resource_version);
    patch.EndObject().EndObject().EndObject();
    return client_
        ->Patch(kube::resources::kPersistentVolumes, "", bind->volume, kube::PatchType::kMerge,
                patch.str())
        .status();
  }
  const auto& provision = std::get<ProvisionVolumeStep>(step.what);
  auto [ns, name] = Split(provision.claim);
  if (!provision.claim_resource_version.empty())
    patch.Field("resourceVersion", provision.claim_resource_version);
  patch.Key("annotations")
      .StartObject()
      .Field(api::storage::kSelectedNodeAnnotation, provision.node)
      .EndObject();
  patch.EndObject().EndObject();
  return client_
      ->Patch(kube::resources::kPersistentVolumeClaims, ns, name, kube::PatchType::kMerge,
              patch.str())
      .status();
}

// As kube-scheduler judges a claim it bound: complete once the PV controller has fully bound it
// (spec.volumeName and the bind-completed annotation); failed when the claim or PV is gone, the
// PV's claimRef was reset, the claim was bound elsewhere, or the provisioner removed (or
// changed) the selected node, which is how it says it cannot provision there.
KubeBinder::StepState KubeBinder::CheckStep(const PreBindStep& step, std::string* why) const {
  if (const auto* bind = std::get_if<BindVolumeStep>(&step.what)) {
    auto claim = cache_.ObservedClaim(bind->claim);
    auto volume = cache_.ObservedVolume(bind->volume);
    if (claim == nullptr || claim->metadata.uid != bind->claim_uid) {
      *why = "claim " + bind->claim + " was deleted";
      return StepState::kFailed;
    }
    if (volume == nullptr) {
      *why = "PersistentVolume " + bind->volume + " was deleted";
      return StepState::kFailed;
    }
    if (claim->FullyBound()) {
      if (claim->spec.volume_name == bind->volume) return StepState::kComplete;
      *why = "claim " + bind->claim + " was bound to PersistentVolume " + claim->spec.volume_name;
      return StepState::kFailed;
    }
    if (SameVersion(*volume, bind->volume_resource_version)) return StepState::kPending;
    if (!volume->spec.claim_ref || volume->spec.claim_ref->uid != bind->claim_uid) {
      *why = "the claimRef of PersistentVolume " + bind->volume + " was reset";
      return StepState::kFailed;
    }
    return StepState::kPending;
  }
  const auto& provision = std::get<ProvisionVolumeStep>(step.what);
  auto claim = cache_.ObservedClaim(provision.claim);
  if (claim == nullptr || claim->metadata.uid != provision.claim_uid) {
    *why = "claim " + provision.claim + " was deleted";
    return StepState::kFailed;
  }
  if (SameVersion(*claim, provision.claim_resource_version)) return StepState::kPending;
  if (claim->selected_node != provision.node) {
    *why = "provisioning failed for claim " + provision.claim + " on node " + provision.node;
    return StepState::kFailed;
  }
  return claim->FullyBound() ? StepState::kComplete : StepState::kPending;
}

// A claim the PV controller has bound stays bound: a bound claim is never taken back (it would
// be Lost), so only what is still incomplete is undone, on the API server's current objects.
void KubeBinder::UndoStep(const PreBindStep& step) {
  auto claim_now = [&](const std::string& key) -> std::shared_ptr<api::PersistentVolumeClaim> {
    auto [ns, name] = Split(key);
    StatusOr<std::string> got = client_->Get(kube::resources::kPersistentVolumeClaims, ns, name);
    if (!got.ok()) return nullptr;
    auto claim = api::DecodePersistentVolumeClaim(*got);
    return claim.ok() ? *claim : nullptr;
  };
  if (const auto* bind = std::get_if<BindVolumeStep>(&step.what)) {
    StatusOr<std::string> got = client_->Get(kube::resources::kPersistentVolumes, "", bind->volume);
    if (!got.ok()) return;
    auto volume = api::DecodePersistentVolume(*got);
    if (!volume.ok() || !(*volume)->spec.claim_ref ||
        (*volume)->spec.claim_ref->uid != bind->claim_uid)
      return;
    auto claim = claim_now(bind->claim);
    if (claim != nullptr && !claim->spec.volume_name.empty()) return;
    json::Writer patch;
    patch.StartObject().Key("metadata").StartObject();
    patch.Field("resourceVersion", (*volume)->metadata.resource_version);
    patch.Key("annotations")
        .StartObject()
        .Key(api::storage::kBoundByControllerAnnotation)
        .Null()
        .EndObject();
    patch.EndObject().Key("spec").StartObject().Key("claimRef").Null().EndObject().EndObject();
    Status undone = client_
                        ->Patch(kube::resources::kPersistentVolumes, "", bind->volume,
                                kube::PatchType::kMerge, patch.str())
                        .status();
    if (!undone.ok())
      LOG(WARNING) << "binder: undoing " << step.Describe() << ": " << undone.ToString();
    return;
  }
  const auto& provision = std::get<ProvisionVolumeStep>(step.what);
  auto claim = claim_now(provision.claim);
  if (claim == nullptr || claim->selected_node != provision.node ||
      !claim->spec.volume_name.empty())
    return;
  auto [ns, name] = Split(provision.claim);
  json::Writer patch;
  patch.StartObject().Key("metadata").StartObject();
  patch.Field("resourceVersion", claim->metadata.resource_version);
  patch.Key("annotations").StartObject().Key(api::storage::kSelectedNodeAnnotation).Null();
  patch.EndObject().EndObject().EndObject();
  Status undone = client_
                      ->Patch(kube::resources::kPersistentVolumeClaims, ns, name,
                              kube::PatchType::kMerge, patch.str())
                      .status();
  if (!undone.ok())
    LOG(WARNING) << "binder: undoing " << step.Describe() << ": " << undone.ToString();
}

void KubeBinder::FailUnit(Unit unit, const std::string& why) {
  LOG(WARNING) << "binder: binding the volumes of " << unit.members.size()
               << " pod(s) failed: " << why << "; none of them is bound";
  for (size_t i = 0; i < unit.steps.size(); ++i) {
    if (unit.written[i]) UndoStep(unit.steps[i]);
  }
  std::vector<std::pair<JobId, std::string>> binds;
  for (const Work& m : unit.members) binds.emplace_back(m.job, m.uid);
  cache_.ForgetUnit(binds, unit.steps);
  for (const Work& m : unit.members) {
    if (bind_errors_ != nullptr) bind_errors_->Inc();
    if (events_ != nullptr && cache_.HasPod(m.uid)) {
      events_->Record(kube::ObjectReference::To(*m.pod), kube::EventType::kWarning,
                      "FailedScheduling",
                      "binding volumes: " + why + "; the pod waits for the next session");
    }
  }
  sync::MutexLock l(mu_);
  failed_ += static_cast<int64_t>(unit.members.size());
}

}  // namespace tephra::scheduler
