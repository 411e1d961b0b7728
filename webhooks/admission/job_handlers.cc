// /jobs/mutate and /jobs/validate (docs/compatibility.md §3.2, §3.3).
#include "api/batch.h"
#include "webhooks/admission/handlers.h"

namespace tephra::webhooks {
namespace {

class JobMutator : public AdmissionHandler {
 public:
  explicit JobMutator(api::JobDefaultingOptions options) : options_(std::move(options)) {}

  // Defaults apply on CREATE only, as in Volcano: an update keeps what the user wrote.
  AdmissionResponse Admit(const AdmissionRequest& request) const override {
    if (request.operation != Operation::kCreate) return AdmissionResponse::Allow(request);
    auto job =
        DecodeRequestObject<api::Job>(request, api::DecodeJob, Side::kNew, {.keep_raw = true});
    if (!job.ok()) return DenyBadRequest(request, job.status());
    return AllowWithPatch(request, api::DefaultJob(job->get(), options_));
  }

 private:
  const api::JobDefaultingOptions options_;
};

class JobValidator : public AdmissionHandler {
 public:
  explicit JobValidator(const api::QueueLookup& queues) : queues_(queues) {}

  AdmissionResponse Admit(const AdmissionRequest& request) const override {
    if (!request.sub_resource.empty()) return AdmissionResponse::Allow(request);
    switch (request.operation) {
      case Operation::kCreate: {
        auto job = DecodeRequestObject<api::Job>(request, api::DecodeJob);
        if (!job.ok()) return DenyBadRequest(request, job.status());
        return AllowUnlessInvalid(request, api::ValidateJobCreate(**job, &queues_));
      }
      case Operation::kUpdate: {
        auto job = DecodeRequestObject<api::Job>(request, api::DecodeJob);
        if (!job.ok()) return DenyBadRequest(request, job.status());
        auto old_job = DecodeRequestObject<api::Job>(request, api::DecodeJob, Side::kOld);
        if (!old_job.ok()) return DenyBadRequest(request, old_job.status());
        return AllowUnlessInvalid(request, api::ValidateJobUpdate(**old_job, **job));
      }
      default:
        return AdmissionResponse::Allow(request);
    }
  }

 private:
  const api::QueueLookup& queues_;
};

}  // namespace

std::shared_ptr<const AdmissionHandler> NewJobMutator(api::JobDefaultingOptions options) {
  return std::make_shared<JobMutator>(std::move(options));
}

std::shared_ptr<const AdmissionHandler> NewJobValidator(const api::QueueLookup& queues) {
  return std::make_shared<JobValidator>(queues);
}

}  // namespace tephra::webhooks
