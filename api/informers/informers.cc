#include "api/informers/informers.h"

#include "api/topology.h"

namespace tephra::api {
namespace {

// Picks the json::Value overload of an api Decode function, with default options.
template <typename T>
using DecodeFn = StatusOr<std::shared_ptr<T>> (*)(const json::Value&, const DecodeOptions&);

template <typename T>
kube::ObjectDecoder Typed(DecodeFn<T> decode) {
  return InformerDecoder<T>([decode](const json::Value& v) { return decode(v, DecodeOptions{}); });
}

}  // namespace

kube::ObjectDecoder JobDecoder() {
  return Typed<Job>(DecodeJob);
}
kube::ObjectDecoder CommandDecoder() {
  return Typed<Command>(DecodeCommand);
}
kube::ObjectDecoder PodDecoder() {
  return Typed<Pod>(DecodePod);
}
kube::ObjectDecoder NodeDecoder() {
  return Typed<Node>(DecodeNode);
}
kube::ObjectDecoder NamespaceDecoder() {
  return Typed<Namespace>(DecodeNamespace);
}
kube::ObjectDecoder ReplicaSetDecoder() {
  return Typed<ReplicaSet>(DecodeReplicaSet);
}
kube::ObjectDecoder PriorityClassDecoder() {
  return Typed<PriorityClass>(DecodePriorityClass);
}
kube::ObjectDecoder QueueDecoder() {
  return Typed<Queue>(DecodeQueue);
}
kube::ObjectDecoder HyperNodeDecoder() {
  return Typed<HyperNode>(DecodeHyperNode);
}
kube::ObjectDecoder PodGroupDecoder() {
  return Typed<PodGroup>(DecodePodGroup);
}
kube::ObjectDecoder SchedPluginsPodGroupDecoder() {
  return Typed<SchedPluginsPodGroup>(DecodeSchedPluginsPodGroup);
}

namespace {

template <typename T>
std::vector<std::shared_ptr<const T>> TypedList(const std::vector<kube::ObjectPtr>& objects) {
  std::vector<std::shared_ptr<const T>> out;
  out.reserve(objects.size());
  for (const auto& o : objects) out.push_back(kube::As<T>(o));
  return out;
}

}  // namespace

void InformerQueueLookup::AddParentIndex(kube::Informer& informer) {
  informer.AddIndex(kParentIndex, [](const kube::Object& object) -> std::vector<std::string> {
    const auto& queue = static_cast<const Queue&>(object);
    std::string parent = queue.ParentName();
    // root is its own hierarchy's top, never anyone's child.
    if (parent.empty() || queue.metadata.name == kRootQueue) return {};
    return {parent};
  });
}

std::shared_ptr<const Queue> InformerQueueLookup::Get(std::string_view name) const {
  kube::ObjectPtr object = informer_->store().Get(std::string(name));
  return object == nullptr ? nullptr : kube::As<Queue>(object);
}

std::vector<std::shared_ptr<const Queue>> InformerQueueLookup::Children(
    std::string_view parent) const {
  return TypedList<Queue>(informer_->store().ByIndex(kParentIndex, std::string(parent)));
}

std::vector<std::shared_ptr<const Queue>> InformerQueueLookup::List() const {
  return TypedList<Queue>(informer_->store().List());
}

std::shared_ptr<const Namespace> InformerNamespaceLookup::Get(std::string_view name) const {
  kube::ObjectPtr object = informer_->store().Get(std::string(name));
  return object == nullptr ? nullptr : kube::As<Namespace>(object);
}

}  // namespace tephra::api
