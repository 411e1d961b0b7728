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

#include "api/scheduling.h"
#include "api/validation.h"
#include "kube/metrics.h"
#include "webhooks/handlers.h"
#include "webhooks/router.h"

namespace {

using namespace tephra;  // NOLINT(build/namespaces): a fuzz target's own file

void Check(bool invariant) {
  if (!invariant) std::abort();
}

std::shared_ptr<const api::Queue> Queue(const std::string& json) {
  auto q = api::DecodeQueue(json);
  Check(q.ok());
  return *q;
}

class Namespaces : public api::NamespaceLookup {
 public:
  std::shared_ptr<const api::Namespace> Get(std::string_view name) const override {
    if (name != "science") return nullptr;
    auto ns = std::make_shared<api::Namespace>();
    ns->metadata.name = "science";
    ns->metadata.annotations["scheduling.volcano.sh/queue-name"] = "physics";
    return ns;
  }
};

struct World {
  api::StaticQueueLookup queues{{
      Queue(R"({"metadata":{"name":"root"},"status":{"state":"Open"}})"),
      Queue(R"({"metadata":{"name":"default"},"status":{"state":"Open"}})"),
      Queue(R"({"metadata":{"name":"closed"},"status":{"state":"Closed"}})"),
      Queue(R"({"metadata":{"name":"p"},"spec":{"capability":{"cpu":"8"},"deserved":{"cpu":"4"}},
                "status":{"state":"Open"}})"),
      Queue(R"({"metadata":{"name":"c"},"spec":{"parent":"p","deserved":{"cpu":"2"}},
                "status":{"state":"Open","allocated":{"cpu":"1"}}})"),
      // A parent loop, for the hierarchy walks' cycle guards.
      Queue(R"({"metadata":{"name":"x"},"spec":{"parent":"y"},"status":{"state":"Open"}})"),
      Queue(R"({"metadata":{"name":"y"},"spec":{"parent":"x"},"status":{"state":"Open"}})"),
  }};
  Namespaces namespaces;
  metrics::Registry registry;
  webhooks::AdmissionRouter router{registry};

  World() {
    webhooks::HandlerOptions options;
    webhooks::ResourceGroups groups;
    webhooks::ResourceGroup gpu;
    gpu.name = "gpu";
    gpu.annotations.emplace_back("volcano.sh/resource-group", "gpu");
    gpu.node_selector["volcano.sh/nodetype"] = "gpu";
    gpu.tolerations_json = R"([{"key":"gpu","operator":"Exists"}])";
    gpu.affinity_json = R"({"nodeAffinity":{}})";
    gpu.scheduler_name = "volcano";
    groups.groups.push_back(gpu);
    options.resource_groups = std::make_shared<webhooks::StaticResourceGroups>(groups);
    for (std::string_view path : webhooks::kAllPaths) {
      auto handler = webhooks::NewHandler(path, options, {&queues, &namespaces});
      Check(handler.ok());
      Check(router.Add(std::string(path), *handler).ok());
    }
  }
};

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  FLAGS_minloglevel = google::GLOG_FATAL;  // malformed inputs would log a warning each
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static World* world = [] {
    FLAGS_minloglevel = google::GLOG_FATAL;
    return new World();
  }();
  if (size == 0) return 0;
  constexpr size_t kPaths = std::size(webhooks::kAllPaths);
  std::string_view path = webhooks::kAllPaths[data[0] % kPaths];
  kube::HttpRequest request;
  request.method = "POST";
  request.path = std::string(path);
  request.body.assign(reinterpret_cast<const char*>(data + 1), size - 1);

  kube::HttpResponse http = world->router.Serve(path, request);
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
