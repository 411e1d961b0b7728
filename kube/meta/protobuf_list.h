// Kubernetes' protobuf encoding of LIST responses, as far as a client that does not know the
// item type needs it. The body is the 4-byte magic "k8s\0" followed by a runtime.Unknown whose
// field 2 holds the list. Every *List type shares its first two fields: metadata = 1 (ListMeta:
// resourceVersion = 2, continue = 3) and items = 2. Items stay encoded: decoding them is the
// caller's, as with JSON items.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace tephra::kube {

// What a client asks for to get protobuf. Only built-in types have it; for custom resources the
// API server answers JSON, so clients also accept that.
inline constexpr std::string_view kProtobufContentType = "application/vnd.kubernetes.protobuf";

struct ProtobufList {
  std::string resource_version;
  std::string continue_token;
  std::vector<std::string_view> items;  // views into the body that was split
};

// Splits an encoded list into its items, in time linear in the body's size. Errors name the
// part that is malformed.
StatusOr<ProtobufList> SplitProtobufList(std::string_view body);

}  // namespace tephra::kube
