#include "webhooks/admission/cluster_cache.h"

#include "api/core.h"
#include "api/informers.h"
#include "api/kinds.h"
#include "api/scheduling.h"

namespace tephra::webhooks {

namespace {

template <typename T>
std::vector<std::shared_ptr<const T>> Typed(const std::vector<kube::ObjectPtr>& objects) {
  std::vector<std::shared_ptr<const T>> out;
  out.reserve(objects.size());
  for (const auto& o : objects) out.push_back(kube::As<T>(o));
  return out;
}

Status InformerSynced(const std::shared_ptr<kube::Informer>& informer, std::string_view what) {
  if (informer == nullptr || informer->HasSynced()) return Status::Ok();
  return Unavailable("waiting for the " + std::string(what) + " cache to sync");
}

}  // namespace

void InformerQueueLookup::AddParentIndex(kube::Informer& informer) {
  informer.AddIndex(kParentIndex, [](const kube::Object& object) -> std::vector<std::string> {
    const auto& queue = static_cast<const api::Queue&>(object);
    std::string parent = queue.ParentName();
    // root is its own hierarchy's top, never anyone's child.
    if (parent.empty() || queue.metadata.name == api::kRootQueue) return {};
    return {parent};
  });
}

std::shared_ptr<const api::Queue> InformerQueueLookup::Get(std::string_view name) const {
  kube::ObjectPtr object = informer_->store().Get(std::string(name));
  return object == nullptr ? nullptr : kube::As<api::Queue>(object);
}

std::vector<std::shared_ptr<const api::Queue>> InformerQueueLookup::Children(
    std::string_view parent) const {
  return Typed<api::Queue>(informer_->store().ByIndex(kParentIndex, std::string(parent)));
}

std::vector<std::shared_ptr<const api::Queue>> InformerQueueLookup::List() const {
  return Typed<api::Queue>(informer_->store().List());
}

std::shared_ptr<const api::Namespace> InformerNamespaceLookup::Get(std::string_view name) const {
  kube::ObjectPtr object = informer_->store().Get(std::string(name));
  return object == nullptr ? nullptr : kube::As<api::Namespace>(object);
}

ClusterCache::ClusterCache(kube::InformerFactory& factory, PathNeeds needs,
                           metrics::Registry& registry) {
  if (needs.queues) {
    queue_informer_ = factory.For(api::kQueues, api::QueueDecoder());
    InformerQueueLookup::AddParentIndex(*queue_informer_);
    queues_ = std::make_unique<InformerQueueLookup>(queue_informer_);
    registry.AddGaugeFunc(
        "tephra_admission_queue_cache_synced", "1 once the Queue informer has synced.",
        [informer = queue_informer_] { return informer->HasSynced() ? 1.0 : 0.0; });
  }
  if (needs.namespaces) {
    namespace_informer_ = factory.For(kube::resources::kNamespaces, api::NamespaceDecoder());
    namespaces_ = std::make_unique<InformerNamespaceLookup>(namespace_informer_);
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
