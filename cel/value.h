// CEL values (docs/cel.md): what an expression reads, computes and returns.
//
// A Value is a small tagged union: scalars inline, everything else a pointer. A pointer either
// owns what it points to (strings, lists and maps an evaluation builds) or borrows it (the
// program's constants, the activation's data: a device's attributes are read where they are,
// never copied into CEL maps). A borrowed value is valid while its owner is; a result of
// Evaluate may borrow from the program and the activation.
//
// Errors are values too (ValueKind::kError): CEL propagates them through functions and lets
// `&&`, `||` and the macros absorb them as the specification says.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/quantity.h"

namespace tephra::cel {

class Semver;

enum class ValueKind : uint8_t {
  kNull,
  kBool,
  kInt,
  kUint,
  kDouble,
  kString,
  kBytes,
  kList,
  kMap,
  kType,
  kQuantity,  // Kubernetes' quantity library
  kSemver,    // Kubernetes' semver library
  kError,
};

// A CEL type as a value: type(1) == int. Instances have static storage; equal types are the
// same instance, so comparing pointers compares types.
struct TypeValue {
  std::string_view name;
};

namespace types {
extern const TypeValue kNull;
extern const TypeValue kBool;
extern const TypeValue kInt;
extern const TypeValue kUint;
extern const TypeValue kDouble;
extern const TypeValue kString;
extern const TypeValue kBytes;
extern const TypeValue kList;
extern const TypeValue kMap;
extern const TypeValue kType;
extern const TypeValue kQuantity;  // "kubernetes.Quantity"
extern const TypeValue kSemver;    // "kubernetes.Semver"
extern const TypeValue kError;
}  // namespace types

class Value;

// A list an evaluation reads. Implementations outside this library present their own data
// (a device's list-valued attribute) without copying it.
class ListValue {
 public:
  virtual ~ListValue() = default;
  virtual size_t size() const = 0;
  virtual Value Get(size_t index) const = 0;
};

// A map an evaluation reads. Keys are bool, int, uint or string; Find compares keys as CEL does
// (1, 1u and 1.0 name the same entry). Entries are numbered 0..size()-1 for iteration.
class MapValue {
 public:
  virtual ~MapValue() = default;
  virtual size_t size() const = 0;
  // The value under key; false when there is none.
  virtual bool Find(const Value& key, Value* value) const = 0;
  virtual Value KeyAt(size_t index) const = 0;
  virtual Value ValueAt(size_t index) const = 0;
  // `key in map`. Usually Find's answer; a map may also answer Find for keys it does not hold
  // (Kubernetes' device.attributes answers any domain with an empty map, yet `in` says false).
  virtual bool Contains(const Value& key) const;
};

class Value {
 public:
  Value() = default;  // null

  static Value Null() { return Value(); }
  static Value Bool(bool b);
  static Value Int(int64_t i);
  static Value Uint(uint64_t u);
  static Value Double(double d);
  // Borrowed text: the caller keeps it alive while the value is used.
  static Value StringView(std::string_view utf8);
  static Value String(std::string utf8);
  static Value BytesView(std::string_view bytes);
  static Value Bytes(std::string bytes);
  static Value List(std::shared_ptr<const ListValue> list);
  static Value ListView(const ListValue* list);
  static Value Map(std::shared_ptr<const MapValue> map);
  static Value MapView(const MapValue* map);
  static Value Type(const TypeValue& type);
  static Value Quantity(api::Quantity quantity);
  static Value QuantityView(const api::Quantity* quantity);
  static Value SemverValue(std::shared_ptr<const Semver> semver);
  static Value SemverView(const Semver* semver);
  static Value Error(std::string message);

  ValueKind kind() const { return kind_; }
  bool IsError() const { return kind_ == ValueKind::kError; }
  bool IsBool() const { return kind_ == ValueKind::kBool; }
  bool IsTrue() const { return kind_ == ValueKind::kBool && scalar_.b; }
  bool IsFalse() const { return kind_ == ValueKind::kBool && !scalar_.b; }
  bool IsInt() const { return kind_ == ValueKind::kInt; }
  bool IsString() const { return kind_ == ValueKind::kString; }
  bool IsList() const { return kind_ == ValueKind::kList; }
  bool IsMap() const { return kind_ == ValueKind::kMap; }
  bool IsNumber() const {
    return kind_ == ValueKind::kInt || kind_ == ValueKind::kUint || kind_ == ValueKind::kDouble;
  }

  bool bool_value() const { return scalar_.b; }
  int64_t int_value() const { return scalar_.i; }
  uint64_t uint_value() const { return scalar_.u; }
  double double_value() const { return scalar_.d; }
  // Strings and bytes.
  std::string_view text() const {
    return {static_cast<const char*>(ptr_), static_cast<size_t>(scalar_.n)};
  }
  const ListValue& list() const { return *static_cast<const ListValue*>(ptr_); }
  const MapValue& map() const { return *static_cast<const MapValue*>(ptr_); }
  const TypeValue& type() const { return *static_cast<const TypeValue*>(ptr_); }
  const api::Quantity& quantity() const { return *static_cast<const api::Quantity*>(ptr_); }
  const Semver& semver() const { return *static_cast<const Semver*>(ptr_); }
  std::string_view error_message() const { return text(); }

  // The same value borrowing this one's data (no owner is copied): valid while this one lives.
  Value View() const {
    Value v = *this;
    v.owner_.reset();
    return v;
  }

  // The value's CEL type: type(v).
  const TypeValue& Type() const;

  // Debugging text in CEL syntax ("[1, \"a\"]"); errors print as "error: <message>".
  std::string DebugString() const;

 private:
  // A value of a pointer kind, owning its target through owner (empty: borrowed).
  static Value Pointer(ValueKind kind, const void* target, std::shared_ptr<const void> owner);

  ValueKind kind_ = ValueKind::kNull;
  union Scalar {
    bool b;
    int64_t i;
    uint64_t u;
    double d;
    uint64_t n;  // the length of text
  } scalar_{.i = 0};
  const void* ptr_ = nullptr;
  // Keeps ptr_'s target alive when the value owns it; empty when it borrows.
  std::shared_ptr<const void> owner_;
};

// A list an evaluation builds.
class VectorList final : public ListValue {
 public:
  VectorList() = default;
  explicit VectorList(std::vector<Value> items) : items_(std::move(items)) {}
  size_t size() const override { return items_.size(); }
  Value Get(size_t index) const override { return items_[index]; }
  std::vector<Value>& items() { return items_; }

 private:
  std::vector<Value> items_;
};

// A map an evaluation builds: entries in insertion order, found by a hash of the key.
class EntryMap final : public MapValue {
 public:
  size_t size() const override { return entries_.size(); }
  bool Find(const Value& key, Value* value) const override;
  Value KeyAt(size_t index) const override { return entries_[index].first; }
  Value ValueAt(size_t index) const override { return entries_[index].second; }
  // Adds an entry; false (and nothing added) when the key is present already. The key must be
  // a bool, int, uint or string.
  bool Insert(Value key, Value value);

 private:
  void Rehash();
  std::vector<std::pair<Value, Value>> entries_;
  // Open addressing over entry indexes + 1 (0 is empty); built once the map outgrows a scan.
  std::vector<uint32_t> index_;
};

// Whether v can be a map key (bool, int, uint, string).
bool IsKeyKind(ValueKind kind);
// Hash of a map key, equal for keys CEL considers equal (1 and 1u).
uint64_t HashKey(const Value& key);
// Key equality as map lookups use it: numbers by value, otherwise kind and content.
bool KeysEqual(const Value& a, const Value& b);

// CEL equality (heterogeneous: 1 == 1u == 1.0, different kinds are unequal, NaN is unequal to
// itself, lists and maps element by element). Neither operand may be an error.
bool Equal(const Value& a, const Value& b);

// Orders two numbers of any numeric kinds as cel-go does: int against uint exactly, either
// against a double through the double. -1, 0, 1, or 2 when unordered (NaN).
int CompareNumbers(const Value& a, const Value& b);

// Reads a double as Go's strconv.ParseFloat does: an optional sign, decimal or "inf",
// "infinity", "nan" in any case; a value too small for a double reads as 0, one too large
// fails. No surrounding space.
bool ParseDouble(std::string_view text, double* out);

// The order of two values as CEL's <, <=, > and >= see it: numbers across their kinds (as
// CompareNumbers), bools, strings and bytes within their kind. -1, 0, 1; 2 when unordered
// (NaN); 3 when the kinds have no order between them.
int Order(const Value& a, const Value& b);

// A double as CEL's string() prints it (Go's shortest 'g' form: 1e+06, 0.0045, 123.456).
std::string FormatDouble(double d);

}  // namespace tephra::cel
