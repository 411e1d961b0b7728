#include "api/regex.h"

#include <algorithm>
#include <re2/re2.h>

namespace tephra::api {
namespace {

// Go's regexp refuses groups nested deeper than this; RE2 has no such limit.
constexpr int kMaxNesting = 1000;

// The deepest group nesting of `pattern`, escapes and character classes skipped.
int GroupDepth(std::string_view pattern) {
  int depth = 0, deepest = 0;
  bool in_class = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\') {
      ++i;
    } else if (in_class) {
      in_class = c != ']';
    } else if (c == '[') {
      in_class = true;
      if (i + 1 < pattern.size() && pattern[i + 1] == '^') ++i;
      if (i + 1 < pattern.size() && pattern[i + 1] == ']') ++i;  // a leading ] is a member
    } else if (c == '(') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ')') {
      --depth;
    }
  }
  return deepest;
}

}  // namespace

std::unique_ptr<re2::RE2> CompileRegex(std::string_view pattern, std::string* problem) {
  if (GroupDepth(pattern) > kMaxNesting) {
    *problem = "expression nests too deeply";
    return nullptr;
  }
  RE2::Options options;
  options.set_log_errors(false);
  auto re = std::make_unique<re2::RE2>(re2::StringPiece(pattern.data(), pattern.size()), options);
  if (!re->ok()) {
    *problem = re->error();
    return nullptr;
  }
  return re;
}

std::string RegexProblem(const std::string& pattern) {
  std::string problem;
  return CompileRegex(pattern, &problem) ? "" : problem;
}

}  // namespace tephra::api
