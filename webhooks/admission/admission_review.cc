#include "webhooks/admission/admission_review.h"

#include <rapidjson/document.h>

#include "base/base64.h"

namespace tephra::webhooks {
namespace {

constexpr std::string_view kAdmissionApiVersionBeta = "admission.k8s.io/v1beta1";

// The review's header: a supported apiVersion and kind AdmissionReview.
Status CheckHeader(const json::Reader& root, std::string* api_version) {
  if (!root.is_object()) return InvalidArgument("expected an AdmissionReview JSON object");
  *api_version = root["apiVersion"].String();
  std::string kind = root["kind"].String();
  if (kind != kAdmissionReviewKind) {
    return InvalidArgument("kind: expected AdmissionReview, got \"" + kind + "\"");
  }
  if (*api_version != kAdmissionApiVersion && *api_version != kAdmissionApiVersionBeta) {
    return InvalidArgument("apiVersion: expected admission.k8s.io/v1, got \"" + *api_version +
                           "\"");
  }
  return Status::Ok();
}

bool ParseOperation(std::string_view text, Operation* op) {
  if (text == "CREATE") {
    *op = Operation::kCreate;
  } else if (text == "UPDATE") {
    *op = Operation::kUpdate;
  } else if (text == "DELETE") {
    *op = Operation::kDelete;
  } else if (text == "CONNECT") {
    *op = Operation::kConnect;
  } else {
    return false;
  }
  return true;
}

// An embedded object: absent or null gives nullptr; anything but an object is an error.
const json::Value* EmbeddedObject(const json::Reader& r) {
  if (!r.present()) return nullptr;
  if (!r.is_object()) {
    r.Fail("expected an object");
    return nullptr;
  }
  return r.value();
}

// The denial of a review cut at `path`: the object's own path and depth when the cut is in it.
std::string TooDeepMessage(std::vector<std::string> path) {
  // Enough of the path to find the place; the middle of a long descent repeats itself.
  constexpr size_t kShownSegments = 14;
  std::string prefix;
  size_t limit = kMaxJsonDepth;
  std::string_view what = "reviews";
  if (path.size() > kReviewLevelsAboveObject && path[0] == "request" &&
      (path[1] == "object" || path[1] == "oldObject")) {
    if (path[1] == "oldObject") prefix = "oldObject.";
    path.erase(path.begin(), path.begin() + kReviewLevelsAboveObject);
    limit -= kReviewLevelsAboveObject;
    what = "objects";
  }
  return prefix + json::JoinPath(path, kShownSegments) + ": nested more than " +
         std::to_string(limit) + " levels deep; tephra-admission reads " + std::string(what) +
         " up to " + std::to_string(limit) + " levels deep";
}

}  // namespace

std::string_view OperationName(Operation op) {
  switch (op) {
    case Operation::kCreate:
      return "CREATE";
    case Operation::kUpdate:
      return "UPDATE";
    case Operation::kDelete:
      return "DELETE";
    case Operation::kConnect:
      return "CONNECT";
  }
  return "UNKNOWN";
}

AdmissionResponse AdmissionResponse::Allow(const AdmissionRequest& request) {
  AdmissionResponse r;
  if (!request.api_version.empty()) r.api_version = request.api_version;
  r.uid = request.uid;
  return r;
}

AdmissionResponse AdmissionResponse::Deny(const AdmissionRequest& request, int32_t code,
                                          std::string reason, std::string message) {
  AdmissionResponse r = Allow(request);
  r.allowed = false;
  r.code = code;
  r.reason = std::move(reason);
  r.message = std::move(message);
  return r;
}

bool JsonDeeperThan(std::string_view text, size_t max_depth) {
  size_t depth = 0;
  bool deeper = false;
  json::ForEachOutsideStrings(text, [&](size_t, char c) {
    if (c == '{' || c == '[') {
      deeper = deeper || ++depth > max_depth;
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    }
  });
  return deeper;
}

StatusOr<AdmissionRequest> DecodeAdmissionRequest(std::string_view body) {
  if (body.empty()) return InvalidArgument("empty body; expected an AdmissionReview");
  auto doc = std::make_shared<json::Document>();
  std::vector<std::string> cut;
  if (JsonDeeperThan(body, kMaxJsonDepth)) {
    // Read it as far as the limit, so the answer can still be a review that names the place.
    TEPHRA_RETURN_IF_ERROR(json::ParsePruned(body, kMaxJsonDepth, doc.get(), &cut));
  } else {
    TEPHRA_RETURN_IF_ERROR(json::Parse(body, doc.get()));
  }

  AdmissionRequest out;
  json::Errors errors;
  json::Reader root(doc.get(), &errors);
  TEPHRA_RETURN_IF_ERROR(CheckHeader(root, &out.api_version));
  json::Reader req = root["request"];
  if (!req.is_object()) return InvalidArgument("request: expected an object");

  out.uid = req["uid"].String();
  json::Reader kind = req["kind"];
  out.kind = {kind["group"].String(), kind["version"].String(), kind["kind"].String()};
  json::Reader resource = req["resource"];
  out.resource = {resource["group"].String(), resource["version"].String(),
                  resource["resource"].String()};
  out.sub_resource = req["subResource"].String();
  out.namespace_ = req["namespace"].String();
  out.name = req["name"].String();
  out.dry_run = req["dryRun"].Bool();
  json::Reader user = req["userInfo"];
  out.user_info = {user["username"].String(), user["uid"].String(), user["groups"].StringList()};
  out.object = EmbeddedObject(req["object"]);
  out.old_object = EmbeddedObject(req["oldObject"]);
  std::string operation = req["operation"].String();
  if (!ParseOperation(operation, &out.operation)) {
    errors.Add("request.operation",
               "expected CREATE, UPDATE, DELETE or CONNECT, got \"" + operation + "\"");
  }
  if (out.uid.empty()) errors.Add("request.uid", "is required");
  TEPHRA_RETURN_IF_ERROR(errors.ToStatus("AdmissionReview"));
  if (!cut.empty()) out.too_deep = TooDeepMessage(std::move(cut));
  out.document = std::move(doc);
  return out;
}

std::string EncodeAdmissionResponse(const AdmissionResponse& response) {
  json::Writer w;
  w.StartObject()
      .Field("apiVersion", response.api_version)
      .Field("kind", kAdmissionReviewKind)
      .Key("response")
      .StartObject()
      .Field("uid", response.uid)
      .Field("allowed", response.allowed);
  if (!response.allowed || response.code != 0 || !response.message.empty()) {
    w.Key("status").StartObject();
    w.Key("metadata").StartObject().EndObject();
    w.Field("status", response.allowed ? "Success" : "Failure");
    if (!response.message.empty()) w.Field("message", response.message);
    if (!response.reason.empty()) w.Field("reason", response.reason);
    if (response.code != 0) w.Field("code", response.code);
    w.EndObject();
  }
  if (!response.patch.empty()) {
    w.Field("patchType", "JSONPatch").Field("patch", base::Base64Encode(response.patch));
  }
  if (!response.warnings.empty()) w.StringList("warnings", response.warnings);
  w.EndObject().EndObject();
  return w.Take();
}

std::string EncodeAdmissionRequest(const AdmissionRequest& request, std::string_view object_json,
                                   std::string_view old_object_json) {
  json::Writer w;
  w.StartObject()
      .Field("apiVersion", request.api_version.empty() ? kAdmissionApiVersion : request.api_version)
      .Field("kind", kAdmissionReviewKind)
      .Key("request")
      .StartObject()
      .Field("uid", request.uid);
  w.Key("kind")
      .StartObject()
      .Field("group", request.kind.group)
      .Field("version", request.kind.version)
      .Field("kind", request.kind.kind)
      .EndObject();
  w.Key("resource")
      .StartObject()
      .Field("group", request.resource.group)
      .Field("version", request.resource.version)
      .Field("resource", request.resource.resource)
      .EndObject();
  if (!request.sub_resource.empty()) w.Field("subResource", request.sub_resource);
  if (!request.name.empty()) w.Field("name", request.name);
  if (!request.namespace_.empty()) w.Field("namespace", request.namespace_);
  w.Field("operation", OperationName(request.operation));
  w.Key("userInfo").StartObject().Field("username", request.user_info.username);
  if (!request.user_info.uid.empty()) w.Field("uid", request.user_info.uid);
  if (!request.user_info.groups.empty()) w.StringList("groups", request.user_info.groups);
  w.EndObject();
  if (!object_json.empty()) w.Key("object").Raw(object_json);
  if (!old_object_json.empty()) w.Key("oldObject").Raw(old_object_json);
  w.Field("dryRun", request.dry_run);
  w.EndObject().EndObject();
  return w.Take();
}

StatusOr<AdmissionResponse> DecodeAdmissionResponse(std::string_view body) {
  if (JsonDeeperThan(body, kMaxJsonDepth)) {
    return InvalidArgument("JSON nested more than " + std::to_string(kMaxJsonDepth) +
                           " levels deep");
  }
  json::Document doc;
  TEPHRA_RETURN_IF_ERROR(json::Parse(body, &doc));
  AdmissionResponse out;
  json::Errors errors;
  json::Reader root(&doc, &errors);
  TEPHRA_RETURN_IF_ERROR(CheckHeader(root, &out.api_version));
  json::Reader resp = root["response"];
  if (!resp.is_object()) return InvalidArgument("response: expected an object");
  out.uid = resp["uid"].String();
  out.allowed = resp["allowed"].Bool();
  json::Reader status = resp["status"];
  out.code = status["code"].Int32();
  out.reason = status["reason"].String();
  out.message = status["message"].String();
  out.warnings = resp["warnings"].StringList();
  std::string patch = resp["patch"].String();
  if (!patch.empty()) {
    std::string type = resp["patchType"].String();
    if (type != "JSONPatch") {
      errors.Add("response.patchType", "expected JSONPatch, got \"" + type + "\"");
    }
    std::optional<std::string> decoded = base::Base64Decode(patch);
    if (!decoded) {
      errors.Add("response.patch", "invalid base64");
    } else {
      out.patch = std::move(*decoded);
    }
  }
  TEPHRA_RETURN_IF_ERROR(errors.ToStatus("AdmissionReview"));
  return out;
}

}  // namespace tephra::webhooks
