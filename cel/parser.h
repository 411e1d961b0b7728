// Parses CEL source text into an Ast (docs/cel.md, "Language"), expanding the macros.
//
// The parser is an operator-precedence machine over explicit stacks: its time is linear in the
// source, and no recursion follows the expression's nesting. Nesting (parentheses, calls, list
// and map literals, indexes, unary operators, conditionals) is limited to kMaxNesting levels,
// as cel-go limits its parser's recursion, so values built from literals stay shallow too.
#pragma once

#include <cstddef>
#include <string_view>

#include "base/status.h"
#include "cel/ast.h"

namespace tephra::cel {

inline constexpr size_t kMaxNesting = 250;

struct ParseOptions {
  // Longest accepted source, in code points.
  size_t max_length = 100'000;
  bool enable_macros = true;
};

// The error names the place and the rule: "1:5: Syntax error: unexpected ')'".
StatusOr<Ast> Parse(std::string_view source, const ParseOptions& options = {});

}  // namespace tephra::cel
