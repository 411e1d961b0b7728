// Test helper: compares JSON texts by value (member order and whitespace do not matter).
#pragma once

#include <iostream>
#include <string_view>

#include <rapidjson/document.h>

#include "kube/json.h"

namespace tephra::api::testing {

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
