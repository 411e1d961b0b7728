// Text helpers the libraries share, so each rule is written once.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tephra::base {

// `text` without the whitespace (space, tab, newline, ...) at either end.
std::string_view TrimSpace(std::string_view text);

// "a, b,,c " -> {"a", "b", "c"}: items between commas, with the whitespace around each removed
// and empty ones dropped. The one reading of a comma list: flags (--x=a,b), the scheduler
// configuration's actions, plugin arguments such as binpack.resources.
std::vector<std::string> SplitCommaList(std::string_view text);

// The items with `separator` between each two: Join({"a", "b"}, ", ") is "a, b".
std::string Join(const std::vector<std::string>& items, std::string_view separator);

}  // namespace tephra::base
