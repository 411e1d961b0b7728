#include "webhooks/admission/handler.h"

#include "webhooks/admission/handlers.h"

namespace tephra::webhooks {
namespace {

// Enough to show what is wrong; a Job with thousands of bad tasks would otherwise get (and log)
// a denial of megabytes.
constexpr size_t kMaxListedErrors = 20;

}  // namespace

AdmissionResponse DenyInvalid(const AdmissionRequest& request, const api::FieldErrors& errors) {
  return AdmissionResponse::Deny(request, 422, "Invalid",
                                 api::FormatFieldErrors(errors, kMaxListedErrors));
}

AdmissionResponse AllowUnlessInvalid(const AdmissionRequest& request,
                                     const api::FieldErrors& errors) {
  return errors.empty() ? AdmissionResponse::Allow(request) : DenyInvalid(request, errors);
}

AdmissionResponse DenyBadRequest(const AdmissionRequest& request, const Status& status) {
  return AdmissionResponse::Deny(request, 400, "BadRequest", status.message());
}

AdmissionResponse AllowWithPatch(const AdmissionRequest& request, const api::JsonPatch& patch) {
  AdmissionResponse response = AdmissionResponse::Allow(request);
  if (!patch.empty()) response.patch = api::RenderJsonPatch(patch);
  return response;
}

StatusOr<const json::Value*> RequestObject(const AdmissionRequest& request) {
  if (request.object == nullptr) return InvalidArgument("request.object: is required");
  return request.object;
}

StatusOr<const json::Value*> RequestOldObject(const AdmissionRequest& request) {
  if (request.old_object == nullptr) return InvalidArgument("request.oldObject: is required");
  return request.old_object;
}

StatusOr<PathNeeds> NeedsOf(std::string_view path) {
  if (path == kJobsValidate || path == kQueuesValidate || path == kPodGroupsValidate) {
    PathNeeds needs;
    needs.queues = true;
    return needs;
  }
  if (path == kPodGroupsMutate) {
    PathNeeds needs;
    needs.namespaces = true;
    return needs;
  }
  if (path == kJobsMutate || path == kQueuesMutate || path == kPodsMutate ||
      path == kPodsValidate || path == kHyperNodesValidate) {
    return PathNeeds{};
  }
  std::string known;
  for (std::string_view p : kAllPaths) known += (known.empty() ? "" : ", ") + std::string(p);
  return InvalidArgument("unknown admission path \"" + std::string(path) + "\"; known: " + known);
}

StatusOr<std::shared_ptr<const AdmissionHandler>> NewHandler(std::string_view path,
                                                             const HandlerOptions& options,
                                                             const ClusterView& view) {
  TEPHRA_ASSIGN_OR_RETURN(PathNeeds needs, NeedsOf(path));
  if ((needs.queues && view.queues == nullptr) ||
      (needs.namespaces && view.namespaces == nullptr)) {
    return FailedPrecondition(std::string(path) + " needs a cache that was not provided");
  }
  if (path == kJobsMutate) return NewJobMutator(options.job_defaults);
  if (path == kJobsValidate) return NewJobValidator(*view.queues);
  if (path == kQueuesMutate) return NewQueueMutator();
  if (path == kQueuesValidate) return NewQueueValidator(*view.queues, options.queue_validation);
  if (path == kPodGroupsMutate) return NewPodGroupMutator(*view.namespaces);
  if (path == kPodGroupsValidate) return NewPodGroupValidator(*view.queues);
  if (path == kPodsMutate) return NewPodMutator(options.resource_groups);
  if (path == kHyperNodesValidate) return NewHyperNodeValidator();
  return NewPodValidator(options.scheduler_names);
}

}  // namespace tephra::webhooks
