// RFC 6902 JSON Patch: the answer format of mutating admission webhooks.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace tephra::api {

struct PatchOp {
  std::string op;          // add, remove, replace
  std::string path;        // JSON Pointer, e.g. /spec/tasks/0/minAvailable
  std::string value_json;  // serialised value; empty for remove
  bool operator==(const PatchOp&) const = default;
};
using JsonPatch = std::vector<PatchOp>;

// [{"op":"add","path":"/spec/queue","value":"default"}, ...]
std::string RenderJsonPatch(const JsonPatch& patch);

// One JSON Pointer reference token: '~' -> "~0", '/' -> "~1".
std::string EscapeJsonPointer(std::string_view token);

// The operations that turn JSON object `before` into `after`: members added, removed or
// replaced, recursing into objects and into arrays of equal length (other array changes replace
// the whole array). Changed object members use "replace" (they exist in `before`).
StatusOr<JsonPatch> DiffJson(std::string_view before, std::string_view after);

// Applies add, remove, replace and test operations to a document.
StatusOr<std::string> ApplyJsonPatch(std::string_view document, const JsonPatch& patch);

}  // namespace tephra::api
