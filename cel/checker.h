// Resolves the names of a parsed expression and checks its types against an Environment
// (docs/cel.md, "Type checking"). One pass over the nodes with an explicit stack.
//
// Names: iteration and cel.bind variables first, then declared variables (a.b.c tries the
// longest declared prefix, relative to the container), then the type names (int, string, ...).
// Calls: member calls on a namespace (sets.contains(...)) become calls of the qualified
// function; each call keeps the library pieces whose overloads may take its arguments.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "cel/ast.h"
#include "cel/environment.h"
#include "cel/functions.h"
#include "cel/types.h"

namespace tephra::cel {

struct Reference {
  enum class Kind : uint8_t {
    kNone,      // not a name (or a select on a value)
    kVariable,  // index: the declared variable
    kLocal,     // index: the local slot of an iteration or bind variable
    kType,      // a type name; type_value is its value
    kUnbound,   // unchecked programs only: an error when evaluated
  };
  Kind kind = Kind::kNone;
  uint32_t index = 0;
  const TypeValue* type_value = nullptr;
};

struct CallTarget {
  std::string name;                          // the function's qualified name
  const Function* function = nullptr;        // nullptr: unbound (unchecked programs only)
  bool namespace_receiver = false;           // args[0] names the namespace and is not evaluated
  std::vector<const FunctionPiece*> pieces;  // in the order they are tried
};

struct CheckedAst {
  Ast ast;
  std::vector<TypeRef> types;         // per node
  std::vector<Reference> references;  // per node: identifiers and qualified selects
  std::vector<CallTarget> calls;      // per node: calls
  std::vector<uint32_t> slots;        // per node: a comprehension's first local slot
  uint32_t locals = 0;                // local slots the program needs
};

// Errors name the place and the rule: "1:17: undeclared reference to 'devce'".
StatusOr<CheckedAst> Check(Ast ast, std::string_view source, const Environment& env);

}  // namespace tephra::cel
