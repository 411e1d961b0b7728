// The static types the checker assigns (docs/cel.md, "Type checking"): CEL's primitive types,
// list(T), map(K, V), type(T), dyn, type parameters of overloads, Kubernetes' quantity and
// semver, and object types with declared fields (the DRA `device`).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace tephra::cel {

enum class TypeKind : uint8_t {
  kDyn,
  kNull,
  kBool,
  kInt,
  kUint,
  kDouble,
  kString,
  kBytes,
  kList,      // params[0]: element
  kMap,       // params[0]: key, params[1]: value
  kType,      // params[0]: the type it denotes, when known
  kQuantity,  // kubernetes.Quantity
  kSemver,    // kubernetes.Semver
  kObject,    // fields
  kParam,     // an overload's type parameter (name)
  kError,
};

class Type;
using TypeRef = std::shared_ptr<const Type>;

class Type {
 public:
  static TypeRef Dyn();
  // dyn under the name Kubernetes gives a device attribute's value in messages ("any").
  static TypeRef Any();
  static TypeRef Null();
  static TypeRef Bool();
  static TypeRef Int();
  static TypeRef Uint();
  static TypeRef Double();
  static TypeRef String();
  static TypeRef Bytes();
  static TypeRef Quantity();
  static TypeRef Semver();
  static TypeRef Error();
  static TypeRef List(TypeRef element);
  static TypeRef Map(TypeRef key, TypeRef value);
  static TypeRef TypeOf(TypeRef type);  // type(T); TypeOf(nullptr) is type without a parameter
  static TypeRef Param(std::string name);
  static TypeRef Object(std::string name, std::vector<std::pair<std::string, TypeRef>> fields);

  // Reads the notation of the declarations: "int", "list(A)", "map(string, dyn)", "type(A)",
  // "quantity", "semver"; a single capital letter is a type parameter.
  static StatusOr<TypeRef> Parse(std::string_view text);

  TypeKind kind() const { return kind_; }
  const std::vector<TypeRef>& params() const { return params_; }
  const std::string& name() const { return name_; }
  // The field's type, or nullptr when the object has no such field.
  TypeRef Field(std::string_view field) const;

  // "int", "list(string)", "map(string, dyn)", "kubernetes.DRADevice".
  std::string ToString() const;

 private:
  explicit Type(TypeKind kind) : kind_(kind) {}
  TypeKind kind_;
  std::vector<TypeRef> params_;
  std::string name_;
  std::vector<std::pair<std::string, TypeRef>> fields_;
};

// Type parameter bindings while one overload is matched against arguments.
using Substitution = std::map<std::string, TypeRef>;

// Whether a value of type `actual` may be passed where `formal` is expected; binds formal's
// type parameters in subst. dyn is assignable both ways.
bool IsAssignable(const TypeRef& formal, const TypeRef& actual, Substitution* subst);

// formal with its bound parameters replaced (unbound ones become dyn).
TypeRef Substitute(const TypeRef& formal, const Substitution& subst);

// Whether two types are the same (dyn only equals dyn).
bool SameType(const TypeRef& a, const TypeRef& b);

}  // namespace tephra::cel
