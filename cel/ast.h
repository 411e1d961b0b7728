// The parsed form of a CEL expression: a flat list of nodes, children before their parents
// (the parser appends a node when it is complete), the root last. Passes over it walk with an
// explicit stack, so no pass recurses as deep as the expression nests.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cel/value.h"

namespace tephra::cel {

enum class ExprKind : uint8_t {
  kConst,          // constant
  kIdent,          // name (a leading "." marks a name from the root namespace)
  kSelect,         // args[0].name; test_only for has()
  kCall,           // name(args...), or args[0].name(args[1]...) when has_target
  kList,           // [args...]
  kMap,            // {args[0]: args[1], args[2]: args[3], ...}
  kComprehension,  // a macro: see MacroKind
};

// The macros CEL defines, Kubernetes' two-variable comprehensions and cel.bind. Each names
// its iteration variables (var1, var2) and children:
//   kAll, kExists, kExistsOne         range, predicate                 (var1 = element)
//   kAll2, kExists2, kExistsOne2      range, predicate                 (var1 = index/key, var2)
//   kMap                              range, transform
//   kMapFilter                        range, filter, transform
//   kFilter                           range, predicate
//   kTransformList, kTransformMap, kTransformMapEntry
//                                     range, transform                 (two variables)
//   kTransformListFilter, kTransformMapFilter, kTransformMapEntryFilter
//                                     range, filter, transform         (two variables)
//   kBind                             initial value, body              (var1 = the name)
enum class MacroKind : uint8_t {
  kNone,
  kAll,
  kExists,
  kExistsOne,
  kAll2,
  kExists2,
  kExistsOne2,
  kMap,
  kMapFilter,
  kFilter,
  kTransformList,
  kTransformListFilter,
  kTransformMap,
  kTransformMapFilter,
  kTransformMapEntry,
  kTransformMapEntryFilter,
  kBind,
};

// all, exists and exists_one, of one or two variables: a predicate folded into a bool.
inline bool IsPredicateMacro(MacroKind m) {
  return m == MacroKind::kAll || m == MacroKind::kExists || m == MacroKind::kExistsOne ||
         m == MacroKind::kAll2 || m == MacroKind::kExists2 || m == MacroKind::kExistsOne2;
}

// The macros whose children are range, filter[, transform].
inline bool HasFilter(MacroKind m) {
  return m == MacroKind::kFilter || m == MacroKind::kMapFilter ||
         m == MacroKind::kTransformListFilter || m == MacroKind::kTransformMapFilter ||
         m == MacroKind::kTransformMapEntryFilter;
}

struct Expr {
  ExprKind kind = ExprKind::kConst;
  MacroKind macro = MacroKind::kNone;
  bool test_only = false;   // kSelect: has(x.f)
  bool has_target = false;  // kCall: receiver-style call, args[0] is the receiver
  uint32_t position = 0;    // byte offset into the source of the token that made the node
  std::string name;         // identifier, field, function, or first iteration variable
  std::string var2;         // second iteration variable
  Value constant;           // kConst
  std::vector<uint32_t> args;
};

struct Ast {
  std::vector<Expr> nodes;
  uint32_t root = 0;
};

// "line:column" (both from 1, columns in code points) of a byte offset into source.
std::string SourceLocation(std::string_view source, uint32_t offset);

}  // namespace tephra::cel
