// /pods/mutate and /pods/validate (docs/compatibility.md §3.6). Both are opt-in: a
// webhook on every pod in the cluster is what made Volcano's admission a single point of failure.
// They read the few fields they need straight from the review instead of decoding whole pods.
#include <algorithm>
#include <cstdlib>

#include <rapidjson/document.h>

#include "api/labels.h"
#include "webhooks/admission/handlers.h"

namespace tephra::webhooks {
namespace {

// A positive integer, or a percentage from 1% to 99%.
bool ValidBudget(const std::string& value) {
  std::string number = value;
  bool percent = !number.empty() && number.back() == '%';
  if (percent) number.pop_back();
  if (number.empty() || number.size() > 9 ||
      !std::all_of(number.begin(), number.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return false;
  }
  long n = std::strtol(number.c_str(), nullptr, 10);
  return percent ? n >= 1 && n <= 99 : n > 0;
}

std::string AnnotationPath(std::string_view key) {
  return "metadata.annotations[" + std::string(key) + "]";
}

class PodValidator : public AdmissionHandler {
 public:
  explicit PodValidator(std::vector<std::string> scheduler_names)
      : scheduler_names_(std::move(scheduler_names)) {}

  AdmissionResponse Admit(const AdmissionRequest& request) const override {
    if (request.operation != Operation::kCreate || !request.sub_resource.empty()) {
      return AdmissionResponse::Allow(request);
    }
    StatusOr<const json::Value*> object = RequestObject(request);
    if (!object.ok()) return DenyBadRequest(request, object.status());
    json::Errors read_errors;
    json::Reader pod(*object, &read_errors);
    std::string scheduler = pod["spec"]["schedulerName"].String();
    auto annotations = pod["metadata"]["annotations"].StringMap();
    if (!read_errors.empty()) return DenyBadRequest(request, read_errors.ToStatus("Pod"));
    if (std::find(scheduler_names_.begin(), scheduler_names_.end(), scheduler) ==
        scheduler_names_.end()) {
      return AdmissionResponse::Allow(request);
    }
    api::FieldErrors errors;
    bool both = true;
    for (std::string_view key : {api::kJdbMinAvailableKey, api::kJdbMaxUnavailableKey}) {
      auto it = annotations.find(std::string(key));
      if (it == annotations.end()) {
        both = false;
      } else if (!ValidBudget(it->second)) {
        errors.push_back({AnnotationPath(key),
                          "must be a positive integer or a percentage from 1% to 99%, not \"" +
                              it->second + "\""});
      }
    }
    if (both) {
      errors.push_back({"metadata.annotations", std::string(api::kJdbMinAvailableKey) + " and " +
                                                    std::string(api::kJdbMaxUnavailableKey) +
                                                    " are mutually exclusive; set only one"});
    }
    return AllowUnlessInvalid(request, errors);
  }

 private:
  const std::vector<std::string> scheduler_names_;
};

class PodMutator : public AdmissionHandler {
 public:
  explicit PodMutator(std::shared_ptr<const ResourceGroupSource> groups)
      : groups_(std::move(groups)) {}

  AdmissionResponse Admit(const AdmissionRequest& request) const override {
    if (request.operation != Operation::kCreate || !request.sub_resource.empty() ||
        groups_ == nullptr) {
      return AdmissionResponse::Allow(request);
    }
    std::shared_ptr<const ResourceGroups> groups = groups_->Current();
    if (groups == nullptr || groups->groups.empty()) return AdmissionResponse::Allow(request);
    StatusOr<const json::Value*> object = RequestObject(request);
    if (!object.ok()) return DenyBadRequest(request, object.status());
    json::Errors read_errors;
    json::Reader pod(*object, &read_errors);
    auto annotations = pod["metadata"]["annotations"].StringMap();
    std::string ns =
        request.namespace_.empty() ? pod["metadata"]["namespace"].String() : request.namespace_;
    if (!read_errors.empty()) return DenyBadRequest(request, read_errors.ToStatus("Pod"));
    const ResourceGroup* group = MatchResourceGroup(*groups, ns, annotations);
    if (group == nullptr) return AdmissionResponse::Allow(request);
    return AllowWithPatch(request, ResourceGroupPatch(*group, pod));
  }

 private:
  const std::shared_ptr<const ResourceGroupSource> groups_;
};

}  // namespace

std::shared_ptr<const AdmissionHandler> NewPodMutator(
    std::shared_ptr<const ResourceGroupSource> groups) {
  return std::make_shared<PodMutator>(std::move(groups));
}

std::shared_ptr<const AdmissionHandler> NewPodValidator(std::vector<std::string> scheduler_names) {
  return std::make_shared<PodValidator>(std::move(scheduler_names));
}

}  // namespace tephra::webhooks
