// /hypernodes/validate (docs/compatibility.md §3.8).
#include "api/topology.h"
#include "webhooks/admission/handlers.h"

namespace tephra::webhooks {
namespace {

class HyperNodeValidator : public AdmissionHandler {
 public:
  AdmissionResponse Admit(const AdmissionRequest& request) const override {
    if ((request.operation != Operation::kCreate && request.operation != Operation::kUpdate) ||
        !request.sub_resource.empty()) {
      return AdmissionResponse::Allow(request);
    }
    auto hn = DecodeRequestObject<api::HyperNode>(request, api::DecodeHyperNode);
    if (!hn.ok()) return DenyBadRequest(request, hn.status());
    return AllowUnlessInvalid(request, api::ValidateHyperNode(**hn));
  }
};

}  // namespace

std::shared_ptr<const AdmissionHandler> NewHyperNodeValidator() {
  return std::make_shared<HyperNodeValidator>();
}

}  // namespace tephra::webhooks
