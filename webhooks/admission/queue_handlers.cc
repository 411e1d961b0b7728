// /queues/mutate and /queues/validate (docs/compatibility.md §3.4).
#include "api/scheduling.h"
#include "webhooks/admission/handlers.h"

namespace tephra::webhooks {
namespace {

class QueueMutator : public AdmissionHandler {
 public:
  AdmissionResponse Admit(const AdmissionRequest& request) const override {
    if (request.operation != Operation::kCreate) return AdmissionResponse::Allow(request);
    auto queue =
        DecodeRequestObject<api::Queue>(request, api::DecodeQueue, Side::kNew, {.keep_raw = true});
    if (!queue.ok()) return DenyBadRequest(request, queue.status());
    return AllowWithPatch(request, api::DefaultQueue(queue->get()));
  }
};

class QueueValidator : public AdmissionHandler {
 public:
  QueueValidator(const api::QueueLookup& queues, api::QueueValidationOptions options)
      : queues_(queues), options_(options) {}

  AdmissionResponse Admit(const AdmissionRequest& request) const override {
    if (!request.sub_resource.empty()) return AdmissionResponse::Allow(request);
    switch (request.operation) {
      case Operation::kCreate: {
        auto queue = DecodeRequestObject<api::Queue>(request, api::DecodeQueue);
        if (!queue.ok()) return DenyBadRequest(request, queue.status());
        return AllowUnlessInvalid(request, api::ValidateQueueCreate(**queue, queues_, options_));
      }
      case Operation::kUpdate: {
        auto queue = DecodeRequestObject<api::Queue>(request, api::DecodeQueue);
        if (!queue.ok()) return DenyBadRequest(request, queue.status());
        auto old_queue = DecodeRequestObject<api::Queue>(request, api::DecodeQueue, Side::kOld);
        if (!old_queue.ok()) return DenyBadRequest(request, old_queue.status());
        return AllowUnlessInvalid(
            request, api::ValidateQueueUpdate(**old_queue, **queue, queues_, options_));
      }
      case Operation::kDelete:
        return AdmitDelete(request);
      default:
        return AdmissionResponse::Allow(request);
    }
  }

 private:
  // The queue being deleted: the review's oldObject, else the cached queue, else just its name
  // (enough to protect root and default).
  AdmissionResponse AdmitDelete(const AdmissionRequest& request) const {
    std::shared_ptr<const api::Queue> queue;
    if (request.old_object != nullptr) {
      auto decoded = api::DecodeQueue(*request.old_object);
      if (!decoded.ok()) return DenyBadRequest(request, decoded.status());
      queue = *std::move(decoded);
    } else if ((queue = queues_.Get(request.name)) == nullptr) {
      auto named = std::make_shared<api::Queue>();
      named->metadata.name = request.name;
      queue = std::move(named);
    }
    return AllowUnlessInvalid(request, api::ValidateQueueDelete(*queue, queues_, options_));
  }

  const api::QueueLookup& queues_;
  const api::QueueValidationOptions options_;
};

}  // namespace

std::shared_ptr<const AdmissionHandler> NewQueueMutator() {
  return std::make_shared<QueueMutator>();
}

std::shared_ptr<const AdmissionHandler> NewQueueValidator(const api::QueueLookup& queues,
                                                          api::QueueValidationOptions options) {
  return std::make_shared<QueueValidator>(queues, options);
}

}  // namespace tephra::webhooks
