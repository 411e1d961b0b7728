// Fuzzes one kind's admission as the API server drives it: the input is the object (a Job,
// Queue or PodGroup, per TEPHRA_FUZZ_KIND); it is mutated on CREATE, the patch applied, the
// result validated on CREATE and on UPDATE from the original. Besides "never crash":
//   * every answer is an AdmissionReview echoing the uid; a denial has a code and a message;
//   * the mutation's patch applies to the request it was computed from;
//   * mutating the mutated object again changes nothing (for JSON without repeated names).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <glog/logging.h>

#include "api/json_patch.h"
#include "tests/fuzz/admission_world.h"
#include "webhooks/admission/admission_review.h"

namespace {

using namespace tephra;  // NOLINT(build/namespaces): a fuzz target's own file
using fuzz::Check;

constexpr std::string_view kKind = TEPHRA_FUZZ_KIND;

webhooks::AdmissionRequest Request(webhooks::Operation op) {
  webhooks::AdmissionRequest r;
  r.uid = "fuzz";
  r.operation = op;
  r.namespace_ = "science";
  r.name = "x";
  if (kKind == "Job") {
    r.kind = {"batch.volcano.sh", "v1alpha1", "Job"};
    r.resource = {"batch.volcano.sh", "v1alpha1", "jobs"};
  } else {
    r.kind = {"scheduling.volcano.sh", "v1beta1", std::string(kKind)};
    r.resource = {"scheduling.volcano.sh", "v1beta1", kKind == "Queue" ? "queues" : "podgroups"};
  }
  return r;
}

std::string_view PathFor(bool mutate) {
  if (kKind == "Job") return mutate ? webhooks::kJobsMutate : webhooks::kJobsValidate;
  if (kKind == "Queue") return mutate ? webhooks::kQueuesMutate : webhooks::kQueuesValidate;
  return mutate ? webhooks::kPodGroupsMutate : webhooks::kPodGroupsValidate;
}

// The answer to a review of `object` (and `old_object`); nullopt when the body is not a review
// (the object is not JSON), which the router must answer with HTTP 400.
std::optional<webhooks::AdmissionResponse> Call(bool mutate, webhooks::Operation op,
                                                std::string_view object,
                                                std::string_view old_object = {}) {
  base::HttpRequest request;
  request.method = "POST";
  request.path = std::string(PathFor(mutate));
  request.body = webhooks::EncodeAdmissionRequest(Request(op), object, old_object);
  base::HttpResponse http = fuzz::TheWorld().router.Serve(request.path, request);
  Check(http.status == 200 || http.status == 400);
  if (http.status == 400) return std::nullopt;
  auto answer = webhooks::DecodeAdmissionResponse(http.body);
  Check(answer.ok());
  Check(answer->uid == "fuzz");
  Check(answer->allowed || (answer->code != 0 && !answer->message.empty()));
  return *answer;
}

// The patch of a mutating answer as operations.
api::JsonPatch PatchOf(const webhooks::AdmissionResponse& answer) {
  api::JsonPatch patch;
  if (answer.patch.empty()) return patch;
  json::Document ops;
  Check(json::Parse(answer.patch, &ops).ok() && ops.IsArray());
  for (const auto& op : ops.GetArray()) {
    patch.push_back({op["op"].GetString(), op["path"].GetString(),
                     op.HasMember("value") ? json::Write(op["value"]) : ""});
  }
  return patch;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  FLAGS_minloglevel = google::GLOG_FATAL;
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view object(reinterpret_cast<const char*>(data), size);
  if (!fuzz::WellFormed(object)) {
    // Still served without crashing; no invariant to check beyond the answer's shape.
    (void)Call(true, webhooks::Operation::kCreate, object);
    (void)Call(false, webhooks::Operation::kCreate, object);
    return 0;
  }
  json::Document doc;
  Check(json::Parse(object, &doc).ok());
  if (!doc.IsObject()) return 0;  // not an object: the review would carry no object
  auto mutated = Call(true, webhooks::Operation::kCreate, object);
  Check(mutated.has_value());
  std::string patched(object);
  if (mutated->allowed) {
    auto applied = api::ApplyJsonPatch(object, PatchOf(*mutated));
    Check(applied.ok());
    patched = *applied;
    auto again = Call(true, webhooks::Operation::kCreate, patched);
    Check(again.has_value() && again->allowed && again->patch.empty());
  }
  (void)Call(false, webhooks::Operation::kCreate, patched);
  (void)Call(false, webhooks::Operation::kUpdate, patched, object);
  return 0;
}
