// The pod informer's decoders: kube::Informer's JSON and protobuf decoder interfaces over
// DecodePodInfo and DecodePodInfoProtobuf (scheduler/model/pod_info.h). They live here, with the
// informers, because they name the client's types; the model decodes without the client, so
// that a session, which works on the model, links none (docs/architecture.md).
#pragma once

#include <memory>

#include "kube/informer.h"
#include "scheduler/model/pod_info.h"

namespace tephra::scheduler {

// Informer decoders producing PodInfo, from JSON and from one protobuf LIST item. Both encodings
// of a pod decode to the same PodInfo; its specs are interned in `interner`.
kube::ObjectDecoder PodInfoDecoder(std::shared_ptr<SpecInterner> interner);
kube::ProtobufDecoder PodInfoProtobufDecoder(std::shared_ptr<SpecInterner> interner);

}  // namespace tephra::scheduler
