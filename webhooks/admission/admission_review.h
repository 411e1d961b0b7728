// The admission.k8s.io/v1 AdmissionReview wire format: the request the API server sends to a
// webhook and the response the webhook returns (a verdict, a status explaining a denial, an
// optional RFC 6902 patch for mutating webhooks, and warnings).
//
// Decoding treats the body as hostile: it is checked for nesting depth before it is parsed
// (RapidJSON and everything walking a document recurse), every field is read through
// json::Reader, and a malformed review is an InvalidArgument naming the field.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "json/json.h"

namespace tephra::webhooks {

inline constexpr std::string_view kAdmissionApiVersion = "admission.k8s.io/v1";
inline constexpr std::string_view kAdmissionReviewKind = "AdmissionReview";
// How deep a review is read. Kubernetes objects stay far below this (a Job with pod templates
// and affinities is about 15 levels deep); a deeper review is read only this far, and denied
// naming where it goes deeper (AdmissionRequest::too_deep).
inline constexpr size_t kMaxJsonDepth = 128;
// The review's own levels above its object: the review, request.
inline constexpr size_t kReviewLevelsAboveObject = 2;

enum class Operation { kCreate, kUpdate, kDelete, kConnect };
std::string_view OperationName(Operation op);

struct GroupVersionKind {
  std::string group;
  std::string version;
  std::string kind;
  bool operator==(const GroupVersionKind&) const = default;
};

struct GroupVersionResource {
  std::string group;
  std::string version;
  std::string resource;
  bool operator==(const GroupVersionResource&) const = default;
};

struct UserInfo {
  std::string username;
  std::string uid;
  std::vector<std::string> groups;
  bool operator==(const UserInfo&) const = default;
};

// One decoded request. `object` and `old_object` point into the parsed body, which the request
// owns; they are null when the review carries no such object (DELETE has no object, CREATE no
// old object) or carries JSON null.
struct AdmissionRequest {
  std::string api_version;  // the review's apiVersion, echoed in the response
  std::string uid;
  GroupVersionKind kind;
  GroupVersionResource resource;
  std::string sub_resource;
  Operation operation = Operation::kCreate;
  std::string namespace_;
  std::string name;
  bool dry_run = false;
  UserInfo user_info;
  const json::Value* object = nullptr;
  const json::Value* old_object = nullptr;
  // Set when the review nests deeper than kMaxJsonDepth: the denial, naming the path of the
  // first value too deep and the limit. What lies deeper was read as null, so no handler may
  // judge the request.
  std::string too_deep;

  std::shared_ptr<const json::Document> document;  // owns object and old_object
};

// A webhook's answer. A denial carries `code` (HTTP semantics: 400 malformed object, 403
// forbidden, 422 invalid, 503 not ready), `reason` (a metav1.StatusReason such as "Invalid")
// and `message`, which kubectl prints after "denied the request: ".
struct AdmissionResponse {
  std::string api_version = std::string(kAdmissionApiVersion);
  std::string uid;
  bool allowed = true;
  int32_t code = 0;
  std::string reason;
  std::string message;
  // A JSON Patch document (RFC 6902 array) for mutating webhooks; empty when there is none.
  std::string patch;
  std::vector<std::string> warnings;

  static AdmissionResponse Allow(const AdmissionRequest& request);
  static AdmissionResponse Deny(const AdmissionRequest& request, int32_t code, std::string reason,
                                std::string message);
  bool operator==(const AdmissionResponse&) const = default;
};

// Whether `text` nests arrays and objects deeper than `max_depth` (strings are skipped, so
// brackets inside them do not count). Linear, no allocation.
bool JsonDeeperThan(std::string_view text, size_t max_depth);

// Parses the body of a webhook call. InvalidArgument when the body is not an AdmissionReview of
// a supported version, or a field has the wrong type, or request.uid is missing. A review
// nested deeper than kMaxJsonDepth is read that far, without recursion, and comes back with
// `too_deep` set.
StatusOr<AdmissionRequest> DecodeAdmissionRequest(std::string_view body);
// The response review: {"apiVersion","kind","response":{uid, allowed, status, patchType,
// patch (base64), warnings}}.
std::string EncodeAdmissionResponse(const AdmissionResponse& response);

// The other direction, for tests, the fuzz target and the benchmark client: a request review
// with `request`'s fields and the objects given as JSON text (empty: left out; request.object
// and old_object are ignored), and a response review decoded (the patch base64-decoded).
std::string EncodeAdmissionRequest(const AdmissionRequest& request, std::string_view object_json,
                                   std::string_view old_object_json = {});
StatusOr<AdmissionResponse> DecodeAdmissionResponse(std::string_view body);

}  // namespace tephra::webhooks
