#include "api/informers.h"

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
kube::ObjectDecoder PriorityClassDecoder() {
  return Typed<PriorityClass>(DecodePriorityClass);
}
kube::ObjectDecoder QueueDecoder() {
  return Typed<Queue>(DecodeQueue);
}
kube::ObjectDecoder PodGroupDecoder() {
  return Typed<PodGroup>(DecodePodGroup);
}
kube::ObjectDecoder SchedPluginsPodGroupDecoder() {
  return Typed<SchedPluginsPodGroup>(DecodeSchedPluginsPodGroup);
}

}  // namespace tephra::api
