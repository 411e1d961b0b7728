// Helpers shared by the fuzz targets.
#pragma once

#include <cstdlib>
#include <set>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "json/json.h"

namespace tephra::fuzz {

// An invariant the code under test must keep; a violation is a crash libFuzzer reports.
inline void Check(bool invariant) {
  if (!invariant) std::abort();
}

// JSON with a repeated member name is ambiguous (Go keeps the last, RapidJSON finds the first)
// and never comes from the API server, which re-serialises every object; round-trip and patch
// invariants only hold for documents without repeats. Iterative, like everything else.
inline bool HasRepeatedKeys(const json::Value& root) {
  std::vector<const json::Value*> pending{&root};
  while (!pending.empty()) {
    const json::Value* v = pending.back();
    pending.pop_back();
    if (v->IsArray()) {
      for (const auto& e : v->GetArray()) pending.push_back(&e);
    } else if (v->IsObject()) {
      std::set<std::string_view> names;
      for (auto m = v->MemberBegin(); m != v->MemberEnd(); ++m) {
        if (!names.insert({m->name.GetString(), m->name.GetStringLength()}).second) return true;
        pending.push_back(&m->value);
      }
    }
  }
  return false;
}

// Valid JSON without repeated member names.
inline bool WellFormed(std::string_view text) {
  json::Document doc;
  return json::Parse(text, &doc).ok() && !HasRepeatedKeys(doc);
}

}  // namespace tephra::fuzz
