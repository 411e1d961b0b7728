// Regular expressions for the functions that take a pattern (matches, find, findAll): the
// call's constant pattern compiled once by Compile, or a computed one compiled per call.
#pragma once

#include <re2/re2.h>
#include <string>
#include <string_view>

#include "api/regex.h"
#include "cel/functions.h"

namespace tephra::cel {

// Calls use(re) with the call's compiled pattern; an invalid computed pattern is an error.
template <typename Use>
Value WithRegex(std::string_view pattern, CallContext& ctx, Use&& use) {
  if (ctx.regex != nullptr) return use(*ctx.regex);
  std::string problem;
  std::unique_ptr<re2::RE2> re = api::CompileRegex(pattern, &problem);
  if (re == nullptr) return Value::Error("invalid regular expression: " + problem);
  return use(*re);
}

// cel-go's cost of a match: a tenth of the text's length times a quarter of the pattern's.
inline uint64_t RegexCost(std::string_view text, std::string_view pattern) {
  return TraversalCost(text.size()) * ((pattern.size() + 3) / 4);
}

}  // namespace tephra::cel
