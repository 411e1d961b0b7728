// Fuzzes tephra-admission's request path: the first byte picks one of the eight admission paths,
// the rest is the HTTP body, served by the router over every handler with an in-memory queue
// tree, namespaces and resource groups. Besides "never crash", the answer must have the shape
// the API server relies on:
//   * HTTP 200 with an AdmissionReview, or 400 for a body that is not one;
//   * the response echoes the request's uid;
//   * a denial carries a code and a message; a patch comes only with an allowed answer, and it
//     is a JSON array.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include <glog/logging.h>
#include <rapidjson/document.h>

#include "tests/fuzz/admission_world.h"

namespace {

using namespace tephra;  // NOLINT(build/namespaces): a fuzz target's own file
using fuzz::Check;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  FLAGS_minloglevel = google::GLOG_FATAL;  // malformed inputs would log a warning each
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::World* world = [] {
    FLAGS_minloglevel = google::GLOG_FATAL;
    return &fuzz::TheWorld();
  }();
  if (size == 0) return 0;
  constexpr size_t kPaths = std::size(webhooks::kAllPaths);
  std::string_view path = webhooks::kAllPaths[data[0] % kPaths];
  base::HttpRequest request;
  request.method = "POST";
  request.path = std::string(path);
  request.body.assign(reinterpret_cast<const char*>(data + 1), size - 1);

  base::HttpResponse http = world->router.Serve(path, request);
  Check(http.status == 200 || http.status == 400);
  if (http.status == 400) return 0;
  auto asked = webhooks::DecodeAdmissionRequest(request.body);
  Check(asked.ok());
  auto answer = webhooks::DecodeAdmissionResponse(http.body);
  Check(answer.ok());
  Check(answer->uid == asked->uid);
  if (!answer->allowed) {
    Check(answer->code != 0 && !answer->message.empty() && answer->patch.empty());
  }
  if (!answer->patch.empty()) {
    json::Document patch;
    Check(json::Parse(answer->patch, &patch).ok() && patch.IsArray());
  }
  return 0;
}
