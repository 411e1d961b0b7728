// Regular expressions in Go's syntax, which Kubernetes and Volcano use (HyperNode regexMatch,
// CEL's matches() and Kubernetes' find()). RE2 reads the same syntax in time linear in the
// pattern and matches in time linear in the text; this is the one place patterns are checked.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace re2 {
class RE2;
}

namespace tephra::api {

// The compiled pattern, or nullptr with *problem saying what is wrong with it. Groups nested
// deeper than Go's regexp allows (1000) are refused, as Go refuses them.
std::unique_ptr<re2::RE2> CompileRegex(std::string_view pattern, std::string* problem);

// What is wrong with pattern, or "" when it compiles.
std::string RegexProblem(const std::string& pattern);

}  // namespace tephra::api
