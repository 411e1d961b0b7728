// One admission endpoint's logic: an AdmissionRequest in, an AdmissionResponse out. Handlers
// are pure functions of the request and the informer caches they read, so dry-run requests get
// exactly the answer a real request would, and they are safe to call from many threads.
#pragma once

#include <memory>
#include <string_view>

#include "api/json_patch.h"
#include "api/validation.h"
#include "base/status.h"
#include "webhooks/admission/admission_review.h"

namespace tephra::webhooks {

class AdmissionHandler {
 public:
  virtual ~AdmissionHandler() = default;
  // Never throws; every problem with the request is a denial naming it.
  virtual AdmissionResponse Admit(const AdmissionRequest& request) const = 0;
};

// Denials in the shape the API server passes on to kubectl.
// 422 Invalid: the object breaks rules; the message lists the problems as "path: message", the
// first 20 of them and how many more.
AdmissionResponse DenyInvalid(const AdmissionRequest& request, const api::FieldErrors& errors);
// Allowed when there are no errors, else DenyInvalid.
AdmissionResponse AllowUnlessInvalid(const AdmissionRequest& request,
                                     const api::FieldErrors& errors);
// 400 BadRequest: the object could not be read (the status names the field).
AdmissionResponse DenyBadRequest(const AdmissionRequest& request, const Status& status);
// Allowed, with the patch when it has operations.
AdmissionResponse AllowWithPatch(const AdmissionRequest& request, const api::JsonPatch& patch);

// request.object / request.oldObject, or InvalidArgument naming the missing one.
StatusOr<const json::Value*> RequestObject(const AdmissionRequest& request);
StatusOr<const json::Value*> RequestOldObject(const AdmissionRequest& request);

enum class Side { kNew, kOld };
template <typename T>
using ObjectDecoder = StatusOr<std::shared_ptr<T>> (*)(const json::Value&,
                                                       const api::DecodeOptions&);

// The review's object (or old object) decoded with an api/ decoder, e.g.
// DecodeRequestObject<api::Job>(request, api::DecodeJob). InvalidArgument when it is missing or
// cannot be read; the message names the field.
template <typename T>
StatusOr<std::shared_ptr<T>> DecodeRequestObject(const AdmissionRequest& request,
                                                 ObjectDecoder<T> decode, Side side = Side::kNew,
                                                 api::DecodeOptions options = {}) {
  StatusOr<const json::Value*> value =
      side == Side::kNew ? RequestObject(request) : RequestOldObject(request);
  if (!value.ok()) return value.status();
  return decode(**value, options);
}

}  // namespace tephra::webhooks
