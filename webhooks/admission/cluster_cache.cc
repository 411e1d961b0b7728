#include "webhooks/admission/cluster_cache.h"

#include "api/core.h"
#include "api/informers/informers.h"
#include "api/kinds.h"
#include "api/scheduling.h"

namespace tephra::webhooks {

namespace {

Status InformerSynced(const std::shared_ptr<kube::Informer>& informer, std::string_view what) {
  if (informer == nullptr || informer->HasSynced()) return Status::Ok();
  return Unavailable("waiting for the " + std::string(what) + " cache to sync");
}

}  // namespace

ClusterCache::ClusterCache(kube::InformerFactory& factory, PathNeeds needs,
                           metrics::Registry& registry) {
  if (needs.queues) {
    queue_informer_ = factory.For(api::kQueues, api::QueueDecoder());
    api::InformerQueueLookup::AddParentIndex(*queue_informer_);
    queues_ = std::make_unique<api::InformerQueueLookup>(queue_informer_);
    registry.AddGaugeFunc(
        "tephra_admission_queue_cache_synced", "1 once the Queue informer has synced.",
        [informer = queue_informer_] { return informer->HasSynced() ? 1.0 : 0.0; });
  }
  if (needs.namespaces) {
    namespace_informer_ = factory.For(kube::resources::kNamespaces, api::NamespaceDecoder());
    namespaces_ = std::make_unique<api::InformerNamespaceLookup>(namespace_informer_);
    registry.AddGaugeFunc(
        "tephra_admission_namespace_cache_synced", "1 once the Namespace informer has synced.",
        [informer = namespace_informer_] { return informer->HasSynced() ? 1.0 : 0.0; });
  }
}

ClusterView ClusterCache::view() const {
  return {queues_.get(), namespaces_.get()};
}

Status ClusterCache::QueuesSynced() const {
  return InformerSynced(queue_informer_, "queue");
}

Status ClusterCache::NamespacesSynced() const {
  return InformerSynced(namespace_informer_, "namespace");
}

Status ClusterCache::Synced() const {
  TEPHRA_RETURN_IF_ERROR(QueuesSynced());
  return NamespacesSynced();
}

}  // namespace tephra::webhooks
