// Small file helpers for configuration the daemon re-reads when it changes.
#pragma once

#include <string>

#include "base/status.h"

namespace tephra::webhooks {

// The whole file; NotFound naming the path and the reason when it cannot be read.
StatusOr<std::string> ReadWholeFile(const std::string& path);

// Inode, size and modification time as text ("" when the file is missing): it changes when
// the file is rewritten or replaced, as a ConfigMap or Secret volume does by swapping a symlink.
std::string FileStamp(const std::string& path);

}  // namespace tephra::webhooks
