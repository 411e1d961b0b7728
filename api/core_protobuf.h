// Decoders from Kubernetes' protobuf encoding (the subset in proto/k8s/core/v1/pod.proto) into
// the same api types the JSON codecs fill, so that a pod read either way is the same value.
#pragma once

#include "api/core.h"
#include "base/status.h"
#include "k8s/core/v1/pod.pb.h"
#include "kube/meta/object.h"

namespace tephra::api {

// Optional times are absent when unset or zero (a zero metav1.Time is encoded empty).
std::optional<base::Time> DecodeTime(const k8s::v1::Time& time);
void DecodeObjectMeta(const k8s::v1::ObjectMeta& meta, kube::ObjectMeta* out);
// Fails on a quantity that does not parse, naming its field.
Status DecodePodSpec(const k8s::v1::PodSpec& spec, PodSpec* out);

}  // namespace tephra::api
