// Helpers shared by the api/ unit tests: JSON comparison by value and readable Catch output
// for field errors and JSON patches.
#pragma once

#include <iostream>
#include <string>
#include <string_view>

#include <catch2/catch.hpp>
#include <rapidjson/document.h>

#include "api/json_patch.h"
#include "api/validation.h"
#include "json/json.h"

namespace tephra::api::testing {

// Compares JSON texts by value (member order and whitespace do not matter).
inline bool JsonEqual(std::string_view actual, std::string_view expected) {
  json::Document a;
  json::Document b;
  if (!json::Parse(actual, &a).ok() || !json::Parse(expected, &b).ok() || a != b) {
    std::cerr << "JSON differs\n  actual:   " << actual << "\n  expected: " << expected << "\n";
    return false;
  }
  return true;
}

}  // namespace tephra::api::testing

namespace Catch {

template <>
struct StringMaker<tephra::api::FieldErrors> {
  static std::string convert(const tephra::api::FieldErrors& errors) {
    std::string out = "[";
    for (const auto& e : errors) out += "\n  {" + e.path + ": " + e.message + "}";
    return out + "]";
  }
};

template <>
struct StringMaker<tephra::api::JsonPatch> {
  static std::string convert(const tephra::api::JsonPatch& patch) {
    return tephra::api::RenderJsonPatch(patch);
  }
};

}  // namespace Catch
