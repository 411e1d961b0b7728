#include "scheduler/app/pod_decoders.h"

#include <string_view>
#include <utility>

#include "api/informers/informers.h"

namespace tephra::scheduler {

kube::ObjectDecoder PodInfoDecoder(std::shared_ptr<SpecInterner> interner) {
  return api::InformerDecoder<PodInfo>(
      [interner](const json::Value& v) { return DecodePodInfo(v, *interner); });
}

kube::ProtobufDecoder PodInfoProtobufDecoder(std::shared_ptr<SpecInterner> interner) {
  return [interner](std::string_view bytes) -> StatusOr<kube::ObjectPtr> {
    StatusOr<std::shared_ptr<PodInfo>> pod = DecodePodInfoProtobuf(bytes, *interner);
    if (!pod.ok()) return pod.status();
    return kube::ObjectPtr(*std::move(pod));
  };
}

}  // namespace tephra::scheduler
