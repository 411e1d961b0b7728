#include "controllers/gc/gc_controller.h"

#include <glog/logging.h>

#include "api/informers/informers.h"
#include "api/kinds.h"

namespace tephra::controllers::gc {
namespace {

bool Finished(std::string_view phase) {
  return phase == api::job_phase::kCompleted || phase == api::job_phase::kFailed ||
         phase == api::job_phase::kTerminated || phase == api::job_phase::kAborted;
}

}  // namespace

std::optional<std::chrono::nanoseconds> TimeUntilExpiry(const api::Job& job, base::Time now) {
  if (!job.spec.ttl_seconds_after_finished || !Finished(job.status.state.phase))
    return std::nullopt;
  if (!job.status.state.last_transition_time) return std::nullopt;
  base::Time expiry = *job.status.state.last_transition_time +
                      std::chrono::seconds(*job.spec.ttl_seconds_after_finished);
  return std::chrono::duration_cast<std::chrono::nanoseconds>(expiry - now);
}

GarbageCollector::GarbageCollector() = default;
GarbageCollector::~GarbageCollector() {
  Stop();
}

Status GarbageCollector::Initialize(ControllerContext& context) {
  ctx_ = context;
  jobs_ = ctx_.informers->For(api::kJobs, api::JobDecoder(), NamespacedScope(ctx_.options),
                              ctx_.options.resync_period);
  base::WorkQueueOptions qo = QueueOptions(ctx_, "gc-controller");
  queue_ = std::make_unique<base::WorkQueue>(qo);
  auto consider = [this](const kube::ObjectPtr& o) {
    const auto& job = static_cast<const api::Job&>(*o);
    if (TimeUntilExpiry(job, ctx_.clock->Now())) queue_->Add(o->metadata.Key());
  };
  kube::EventHandlers h;
  h.on_add = consider;
  h.on_update = [consider](const kube::ObjectPtr&, const kube::ObjectPtr& o) { consider(o); };
  jobs_->AddEventHandler(h);
  return Status::Ok();
}

void GarbageCollector::Start() {
  workers_.Start(queue_.get(), ctx_.options.worker_threads_for_gc, "gc",
                 [this](const std::string& key) { return Sync(key); });
}

void GarbageCollector::Stop() {
  workers_.Stop();
}

Status GarbageCollector::Sync(const std::string& key) {
  kube::ObjectPtr obj = jobs_->store().Get(key);
  if (!obj) return Status::Ok();
  auto left = TimeUntilExpiry(static_cast<const api::Job&>(*obj), ctx_.clock->Now());
  if (!left) return Status::Ok();
  if (left->count() > 0) {
    queue_->AddAfter(key, *left);
    return Status::Ok();
  }
  // The cache may be behind (the job restarted, or its TTL changed): decide on the live object.
  auto [ns, name] = kube::SplitObjectKey(key);
  StatusOr<std::string> fresh = ctx_.client->Get(api::kJobs, ns, name);
  if (fresh.status().code() == StatusCode::kNotFound) return Status::Ok();
  if (!fresh.ok()) return fresh.status();
  TEPHRA_ASSIGN_OR_RETURN(auto job, api::DecodeJob(*fresh));
  left = TimeUntilExpiry(*job, ctx_.clock->Now());
  if (!left) return Status::Ok();
  if (left->count() > 0) {
    queue_->AddAfter(key, *left);
    return Status::Ok();
  }
  kube::DeleteOptions options;
  options.precondition_uid = job->metadata.uid;
  options.propagation_policy = "Foreground";
  Status s = ctx_.client->Delete(api::kJobs, ns, name, options);
  if (s.ok()) {
    LOG(INFO) << "deleted job " << key << ": " << job->status.state.phase << " for "
              << *job->spec.ttl_seconds_after_finished << "s";
    if (ctx_.recorder) {
      ctx_.recorder->Record(kube::ObjectReference::To(*job), kube::EventType::kNormal, "TTLExpired",
                            "deleting the job " +
                                std::to_string(*job->spec.ttl_seconds_after_finished) +
                                "s after it finished");
    }
    return Status::Ok();
  }
  if (s.code() == StatusCode::kNotFound || s.code() == StatusCode::kConflict) return Status::Ok();
  return s;
}

}  // namespace tephra::controllers::gc
