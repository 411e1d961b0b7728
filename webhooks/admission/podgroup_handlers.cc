// /podgroups/mutate and /podgroups/validate (docs/compatibility.md §3.5).
#include "api/scheduling.h"
#include "webhooks/admission/handlers.h"

namespace tephra::webhooks {
namespace {

class PodGroupMutator : public AdmissionHandler {
 public:
  explicit PodGroupMutator(const api::NamespaceLookup& namespaces) : namespaces_(namespaces) {}

  AdmissionResponse Admit(const AdmissionRequest& request) const override {
    if (request.operation != Operation::kCreate) return AdmissionResponse::Allow(request);
    auto pg = DecodeRequestObject<api::PodGroup>(request, api::DecodePodGroup, Side::kNew,
                                                 {.keep_raw = true});
    if (!pg.ok()) return DenyBadRequest(request, pg.status());
    // The review always names the namespace; an object without one gets it for the lookup,
    // and the patch base includes it so that the patch only carries the defaults.
    if ((*pg)->metadata.namespace_.empty()) {
      (*pg)->metadata.namespace_ = request.namespace_;
      (*pg)->raw = std::make_shared<const std::string>(api::EncodePodGroup(**pg));
    }
    return AllowWithPatch(request, api::DefaultPodGroup(pg->get(), &namespaces_));
  }

 private:
  const api::NamespaceLookup& namespaces_;
};

class PodGroupValidator : public AdmissionHandler {
 public:
  explicit PodGroupValidator(const api::QueueLookup& queues) : queues_(queues) {}

  AdmissionResponse Admit(const AdmissionRequest& request) const override {
    if (request.operation != Operation::kCreate || !request.sub_resource.empty()) {
      return AdmissionResponse::Allow(request);
    }
    auto pg = DecodeRequestObject<api::PodGroup>(request, api::DecodePodGroup);
    if (!pg.ok()) return DenyBadRequest(request, pg.status());
    return AllowUnlessInvalid(request, api::ValidatePodGroupCreate(**pg, &queues_));
  }

 private:
  const api::QueueLookup& queues_;
};

}  // namespace

std::shared_ptr<const AdmissionHandler> NewPodGroupMutator(const api::NamespaceLookup& namespaces) {
  return std::make_shared<PodGroupMutator>(namespaces);
}

std::shared_ptr<const AdmissionHandler> NewPodGroupValidator(const api::QueueLookup& queues) {
  return std::make_shared<PodGroupValidator>(queues);
}

}  // namespace tephra::webhooks
