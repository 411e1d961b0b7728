// Inputs that attack a parser's time or memory, shared by the tests that check they are refused.
#pragma once

#include <string>

namespace tephra::testing {

// YAML mapping entries x0..x<levels> defining anchors a0..a<levels>, each a map of two aliases of
// the one before: a few hundred bytes that expand to 2^levels values. Refer to the last as
// "*a<levels>".
inline std::string YamlAliasBomb(int levels) {
  std::string yaml = "x0: &a0 {k: v}\n";
  for (int i = 1; i <= levels; ++i) {
    std::string prev = "*a" + std::to_string(i - 1);
    yaml += "x" + std::to_string(i) + ": &a" + std::to_string(i) + " {l: " + prev + ", r: " + prev +
            "}\n";
  }
  return yaml;
}

}  // namespace tephra::testing
