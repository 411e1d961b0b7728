// "Did you mean ...?": the known name closest to a mistyped one.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tephra::base {

// The candidate nearest to `name` by edit distance, if it is within two edits (and closer than
// the candidate's own length); "" otherwise. Linear in name's length: a candidate whose length
// differs by more than two is never compared.
std::string NearestName(std::string_view name, const std::vector<std::string>& candidates);

}  // namespace tephra::base
