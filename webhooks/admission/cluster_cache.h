// The cluster state admission decisions read — queues (with a parent → children index) and
// namespaces — kept by informers, so that no request waits for an API call. Only the informers
// the enabled paths need are created.
#pragma once

#include <memory>

#include "api/validation.h"
#include "kube/client.h"
#include "kube/informer.h"
#include "metrics/metrics.h"
#include "webhooks/admission/handlers.h"

namespace tephra::webhooks {

// api::QueueLookup over a Queue informer's store. The informer must decode with
// api::QueueDecoder() and carry the parent index (AddParentIndex, before it starts).
class InformerQueueLookup final : public api::QueueLookup {
 public:
  static constexpr const char* kParentIndex = "parent";
  static void AddParentIndex(kube::Informer& informer);

  explicit InformerQueueLookup(std::shared_ptr<kube::Informer> informer)
      : informer_(std::move(informer)) {}

  std::shared_ptr<const api::Queue> Get(std::string_view name) const override;
  std::vector<std::shared_ptr<const api::Queue>> Children(std::string_view parent) const override;
  std::vector<std::shared_ptr<const api::Queue>> List() const override;

 private:
  std::shared_ptr<kube::Informer> informer_;
};

// api::NamespaceLookup over a Namespace informer (decoding with api::NamespaceDecoder()).
class InformerNamespaceLookup final : public api::NamespaceLookup {
 public:
  explicit InformerNamespaceLookup(std::shared_ptr<kube::Informer> informer)
      : informer_(std::move(informer)) {}

  std::shared_ptr<const api::Namespace> Get(std::string_view name) const override;

 private:
  std::shared_ptr<kube::Informer> informer_;
};

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
  std::unique_ptr<InformerQueueLookup> queues_;
  std::unique_ptr<InformerNamespaceLookup> namespaces_;
};

}  // namespace tephra::webhooks
