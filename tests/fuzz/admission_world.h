// The cluster the admission fuzz targets run against: a queue tree with a closed queue, a
// parent loop (for the hierarchy walks' cycle guards), a namespace with a default queue, a
// resource group, and tephra-admission's router serving every path over them.
#pragma once

#include <memory>
#include <string>

#include "api/scheduling.h"
#include "api/validation.h"
#include "metrics/metrics.h"
#include "tests/fuzz/fuzz_support.h"
#include "webhooks/admission/handlers.h"
#include "webhooks/server/router.h"

namespace tephra::fuzz {

inline std::shared_ptr<const api::Queue> Queue(const std::string& json) {
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

// One world per process (fuzz targets run inputs one after another).
inline World& TheWorld() {
  static World* world = new World();
  return *world;
}

}  // namespace tephra::fuzz
