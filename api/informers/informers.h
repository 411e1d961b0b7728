// Typed informers: kube::Informer holds type-erased objects and decodes them with a
// kube::ObjectDecoder. These adapters make an informer hold one api type (read it back with
// kube::As<T>), give typed handlers for the common "keep a store current" use, and serve the
// queue and namespace lookups validation reads from informer stores. The three daemons share them.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/batch.h"
#include "api/core.h"
#include "api/scheduling.h"
#include "api/validation.h"
#include "base/status.h"
#include "json/json.h"
#include "kube/informer.h"

namespace tephra::api {

// Adapts `decode` (json -> StatusOr<shared_ptr<T>>) to kube::Informer's decoder.
template <typename T, typename Decode>
kube::ObjectDecoder InformerDecoder(Decode decode) {
  return [decode = std::move(decode)](const json::Value& value) -> StatusOr<kube::ObjectPtr> {
    StatusOr<std::shared_ptr<T>> object = decode(value);
    if (!object.ok()) return object.status();
    return kube::ObjectPtr(*std::move(object));
  };
}

// Decoders of the API types the daemons watch, with default DecodeOptions.
kube::ObjectDecoder JobDecoder();
kube::ObjectDecoder CommandDecoder();
kube::ObjectDecoder PodDecoder();
kube::ObjectDecoder NodeDecoder();
kube::ObjectDecoder NamespaceDecoder();
kube::ObjectDecoder ReplicaSetDecoder();
kube::ObjectDecoder PriorityClassDecoder();
kube::ObjectDecoder QueueDecoder();
kube::ObjectDecoder PodGroupDecoder();
kube::ObjectDecoder SchedPluginsPodGroupDecoder();
kube::ObjectDecoder HyperNodeDecoder();

// Handlers for an informer whose objects are T: `upsert` for every add, update and resync
// (with the new object), `remove` for every delete (with the last object seen).
template <typename T>
kube::EventHandlers UpsertRemoveHandlers(std::function<void(std::shared_ptr<const T>)> upsert,
                                         std::function<void(const T&)> remove) {
  kube::EventHandlers h;
  h.on_add = [upsert](const kube::ObjectPtr& o) { upsert(kube::As<T>(o)); };
  h.on_update = [upsert](const kube::ObjectPtr&, const kube::ObjectPtr& o) {
    upsert(kube::As<T>(o));
  };
  h.on_delete = [remove = std::move(remove)](const kube::ObjectPtr& o, bool) {
    remove(*kube::As<T>(o));
  };
  return h;
}

// QueueLookup over a Queue informer's store. The informer must decode with
// QueueDecoder() and carry the parent index (AddParentIndex, before it starts).
class InformerQueueLookup final : public QueueLookup {
 public:
  static constexpr const char* kParentIndex = "parent";
  static void AddParentIndex(kube::Informer& informer);

  explicit InformerQueueLookup(std::shared_ptr<kube::Informer> informer)
      : informer_(std::move(informer)) {}

  std::shared_ptr<const Queue> Get(std::string_view name) const override;
  std::vector<std::shared_ptr<const Queue>> Children(std::string_view parent) const override;
  std::vector<std::shared_ptr<const Queue>> List() const override;

 private:
  std::shared_ptr<kube::Informer> informer_;
};

// NamespaceLookup over a Namespace informer (decoding with NamespaceDecoder()).
class InformerNamespaceLookup final : public NamespaceLookup {
 public:
  explicit InformerNamespaceLookup(std::shared_ptr<kube::Informer> informer)
      : informer_(std::move(informer)) {}

  std::shared_ptr<const Namespace> Get(std::string_view name) const override;

 private:
  std::shared_ptr<kube::Informer> informer_;
};

}  // namespace tephra::api
