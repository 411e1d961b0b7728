// The functions an expression may call: their declarations (overload signatures the checker
// matches) and implementations (docs/cel.md lists them by library).
//
// A function name may collect overloads from several libraries (compareTo is Kubernetes'
// quantity's and semver's; indexOf is the strings extension's and Kubernetes' lists'): each
// library contributes a Piece with its own implementation. An implementation receives
// arguments that are not errors (errors propagate before the call) and answers
// NoSuchOverload() for argument kinds it does not take, so the next piece may.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cel/types.h"
#include "cel/value.h"

namespace re2 {
class RE2;
}

namespace tephra::cel {

enum class Library : uint8_t {
  kStandard,    // CEL's standard definitions
  kStrings,     // cel-go's strings extension, version 2
  kLists,       // cel-go's lists extension, version 3
  kSets,        // cel-go's sets extension
  kKubernetes,  // Kubernetes' quantity, semver, lists and regex libraries
};

struct CallContext {
  // What the call costs beyond its base cost of 1 (functions over strings and lists add their
  // size); Evaluate refuses to go on once the total passes the program's limit.
  uint64_t cost = 0;
  // The call's constant regular expression, compiled (and checked) by Compile; nullptr when the
  // pattern is computed at evaluation.
  const re2::RE2* regex = nullptr;
};

using FunctionImpl = Value (*)(const Value* args, size_t count, CallContext& ctx);

struct Overload {
  bool member = false;          // receiver-style: args[0] is the receiver
  std::vector<TypeRef> params;  // the receiver first, for member overloads
  TypeRef result;
};

struct FunctionPiece {
  Library library = Library::kStandard;
  FunctionImpl impl = nullptr;  // nullptr: an operator the compiler emits itself
  std::vector<Overload> overloads;
  int pattern_arg = -1;  // the argument holding an RE2 pattern, precompiled when constant
};

struct Function {
  std::string name;
  std::vector<FunctionPiece> pieces;
};

class FunctionRegistry {
 public:
  // All libraries' functions; built once, then read-only (thread-safe).
  static const FunctionRegistry& Get();

  const Function* Find(std::string_view name) const;

  // Registration, while the registry is built. A signature reads "(int, int) -> int" for a
  // global overload and "string.(string) -> bool" for a member overload on a string receiver.
  void Add(Library library, std::string_view name, FunctionImpl impl,
           std::initializer_list<std::string_view> signatures, int pattern_arg = -1);

 private:
  std::map<std::string, Function, std::less<>> functions_;
};

// Registration hooks, one per implementation file.
void RegisterStandardFunctions(FunctionRegistry& registry);
void RegisterStringFunctions(FunctionRegistry& registry);
void RegisterStringFormat(FunctionRegistry& registry);
void RegisterListFunctions(FunctionRegistry& registry);
void RegisterKubernetesFunctions(FunctionRegistry& registry);

// The rule format()'s clause (s, d, f, e, b, x, X, o) breaks when given a value it does not
// take, in cel-go's words ("decimal clause can only be used on integers"); compile and
// evaluation both report it. Empty for a character that is no clause.
std::string_view FormatClauseRule(char clause);

// The answer of an implementation that does not take these argument kinds.
Value NoSuchOverload();
bool IsNoSuchOverload(const Value& v);
// The error Evaluate reports when no piece took the arguments.
Value NoMatchingOverload(std::string_view function, const Value* args, size_t count);

// Cost of a walk over n bytes or elements: cel-go charges a tenth of a unit per byte.
inline uint64_t TraversalCost(size_t n) {
  return (static_cast<uint64_t>(n) + 9) / 10;
}

}  // namespace tephra::cel
