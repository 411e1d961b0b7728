// Standard base64 (RFC 4648, with padding), as used by kubeconfig *-data fields, Secrets,
// webhook caBundles and admission patches.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tephra::base {

std::string Base64Encode(std::string_view data);
// nullopt on characters outside the alphabet or bad padding; whitespace is ignored.
std::optional<std::string> Base64Decode(std::string_view text);

}  // namespace tephra::base
