// What an expression may use (docs/cel.md, "Environments"): the declared variables and their
// types, the function libraries, the container for qualified names, and the limits.
#pragma once

#include <bitset>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cel/functions.h"
#include "cel/types.h"

namespace tephra::cel {

class Environment {
 public:
  // CEL's standard definitions only, type checking on.
  Environment();

  // The libraries Kubernetes' base environment adds and this library implements: cel-go's
  // strings (version 2), lists (version 3) and sets extensions, the two-variable
  // comprehensions, cel.bind, and Kubernetes' quantity, semver, lists and regex libraries;
  // with homogeneous aggregate literals, as Kubernetes requires.
  static Environment Kubernetes();

  Environment& EnableLibrary(Library library);
  bool LibraryEnabled(Library library) const;

  // Declares a variable; the activation passes values in declaration order.
  Environment& DeclareVariable(std::string name, TypeRef type);
  size_t variable_count() const { return variables_.size(); }
  const std::string& variable_name(size_t index) const { return variables_[index].first; }
  const TypeRef& variable_type(size_t index) const { return variables_[index].second; }
  // The index of a declared variable.
  std::optional<size_t> FindVariable(std::string_view name) const;
  // Dot-separated parts of the longest declared name (1 for "device", 3 for "a.b.c").
  size_t max_variable_segments() const { return max_segments_; }

  // Qualified names resolve relative to the container ("a.b": x is tried as a.b.x, a.x, x).
  Environment& SetContainer(std::string container);
  const std::string& container() const { return container_; }

  // Off: names and functions that do not resolve are errors at evaluation instead of at
  // Compile, and no types are checked (cel-go's unchecked, parse-only programs).
  Environment& SetCheckTypes(bool check);
  bool check_types() const { return check_types_; }

  // [1, "a"] and {1: 1, "a": 2} are compile errors when on.
  Environment& SetHomogeneousAggregateLiterals(bool on);
  bool homogeneous_aggregate_literals() const { return homogeneous_literals_; }

  // Evaluation stops with an error once its cost passes this (cel-go's cost units).
  Environment& SetCostLimit(uint64_t limit);
  uint64_t cost_limit() const { return cost_limit_; }

  // Longest accepted expression, in code points.
  Environment& SetMaxExpressionLength(size_t length);
  size_t max_expression_length() const { return max_length_; }

  // When set, an expression whose type is neither this nor dyn is a compile error.
  Environment& SetResultType(TypeRef type);
  const TypeRef& result_type() const { return result_type_; }

  Environment& SetMacros(bool enabled);
  bool macros() const { return macros_; }

 private:
  std::bitset<8> libraries_;
  std::vector<std::pair<std::string, TypeRef>> variables_;
  std::map<std::string, size_t, std::less<>> variable_index_;
  size_t max_segments_ = 1;
  std::string container_;
  bool check_types_ = true;
  bool homogeneous_literals_ = false;
  bool macros_ = true;
  uint64_t cost_limit_ = 10'000'000;
  size_t max_length_ = 100'000;
  TypeRef result_type_;
};

}  // namespace tephra::cel
