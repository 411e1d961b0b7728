// The cluster state admission decisions read — queues (with a parent → children index) and
// namespaces — kept by informers, so that no request waits for an API call. Only the informers
// the enabled paths need are created.
#pragma once

#include <memory>

#include "api/informers/informers.h"
#include "api/validation.h"
#include "kube/client.h"
#include "kube/informer.h"
#include "metrics/metrics.h"
#include "webhooks/admission/handlers.h"

namespace tephra::webhooks {

// The informers and lookups for a set of paths. Create it, then start the factory.
class ClusterCache {
 public:
  // Registers tephra_admission_queue_cache_synced and tephra_admission_namespace_cache_synced
  // (1 once synced) in `registry` for the informers it creates.
  ClusterCache(kube::InformerFactory& factory, PathNeeds needs, metrics::Registry& registry);

  ClusterView view() const;
  // OK once every informer created here has synced, else Unavailable naming the rest.
  Status Synced() const;
  // The same for one kind, for the readiness of the paths that read it.
  Status QueuesSynced() const;
  Status NamespacesSynced() const;

 private:
  std::shared_ptr<kube::Informer> queue_informer_;
  std::shared_ptr<kube::Informer> namespace_informer_;
  std::unique_ptr<api::InformerQueueLookup> queues_;
  std::unique_ptr<api::InformerNamespaceLookup> namespaces_;
};

}  // namespace tephra::webhooks
