#include "scheduler/binder/binder.h"

#include <map>

#include <glog/logging.h>
#include <rapidjson/document.h>

#include "api/core.h"
#include "api/kinds.h"
#include "api/labels.h"
#include "api/scheduling.h"

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

void KubeBinder::Bind(const TaskInfo& task, const std::string& node) {
  // Assume first: from now on the cache counts the pod on the node.
  Status assumed = cache_.AssumeBinding(task.job(), task.uid(), node);
  if (!assumed.ok()) {
    VLOG(1) << "binder: not binding " << task.pod->metadata.Key() << ": " << assumed.message();
    return;
  }
  Work w;
  w.job = task.job();
  w.namespace_ = task.namespace_();
  w.name = task.name();
  w.uid = task.uid();
  w.node = node;
  w.created = task.pod->metadata.creation_timestamp;
  w.pod = task.pod;
  Enqueue(std::move(w));
}

void KubeBinder::Evict(const TaskInfo& task, const std::string& reason) {
  Status marked = cache_.MarkReleasing(task.job(), task.uid());
  if (!marked.ok())
    VLOG(1) << "binder: evicting " << task.pod->metadata.Key() << ": " << marked.message();
  Work w;
  w.evict = true;
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
    work_.emplace(key, std::move(w));
  }
  queue_.Add(key);
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
  if (w.evict) {
    DoEvict(w);
  } else {
    DoBind(w);
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

}  // namespace tephra::scheduler
