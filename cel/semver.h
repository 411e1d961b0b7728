// Semantic versions (semver.org 2.0.0), the values of Kubernetes' CEL semver library and of
// device attributes of type version (docs/cel.md).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace tephra::cel {

class Semver {
 public:
  // Strict semver 2.0.0: MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD], no leading zeros in numbers.
  static StatusOr<Semver> Parse(std::string_view text);
  // Kubernetes' normalising form (semver(s, true)): a leading "v" is dropped, leading zeros are
  // removed and a missing minor or patch number is taken as 0 ("v1.02" reads as 1.2.0).
  static StatusOr<Semver> ParseNormalized(std::string_view text);

  uint64_t major() const { return major_; }
  uint64_t minor() const { return minor_; }
  uint64_t patch() const { return patch_; }

  // Precedence as semver.org defines it: build metadata does not take part; a pre-release
  // sorts before its release; pre-release identifiers compare numerically when both are
  // numbers, numbers sort before words, and a shorter list of equal identifiers sorts first.
  int Compare(const Semver& other) const;

  std::string String() const;

 private:
  uint64_t major_ = 0;
  uint64_t minor_ = 0;
  uint64_t patch_ = 0;
  std::vector<std::string> prerelease_;
  std::string build_;
};

}  // namespace tephra::cel
