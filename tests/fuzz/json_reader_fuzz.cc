// Fuzzes json::Reader over arbitrary documents: whatever the input, reading typed fields must
// never crash or assert, only record errors. Also json::ParsePruned: it reads whatever Parse
// reads, and the same document when it cuts nothing.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "json/json.h"
#include "kube/meta/object.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  tephra::json::Document doc;
  const bool parsed = tephra::json::Parse(text, &doc).ok();
  tephra::json::Document pruned;
  std::vector<std::string> cut;
  const bool pruned_ok = tephra::json::ParsePruned(text, 4, &pruned, &cut).ok();
  if (parsed && !pruned_ok) __builtin_trap();
  if (parsed && cut.empty() && !tephra::json::Equal(doc, pruned)) __builtin_trap();
  if (!parsed) return 0;
  tephra::json::Errors errors;
  tephra::json::Reader r(&doc, &errors);
  tephra::kube::Object obj;
  tephra::kube::DecodeObjectHeader(r, &obj);
  r["spec"]["replicas"].Int32();
  r["spec"]["tasks"].ForEach([](const tephra::json::Reader& t) {
    t["name"].String();
    t["template"]["spec"]["containers"][0]["resources"].StringMap();
  });
  r["status"].ForEachMember([](std::string_view, const tephra::json::Reader& v) { v.Double(); });
  (void)errors.ToStatus("fuzz");
  return 0;
}
