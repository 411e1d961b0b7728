// CEL's standard definitions (docs/cel.md, "Standard functions"): arithmetic with overflow as
// an error, heterogeneous equality, ordering across the numeric types, indexing, size, the
// conversions, and the string predicates.
#include <cmath>
#include <limits>
#include <re2/re2.h>

#include "cel/functions.h"
#include "cel/regex.h"
#include "cel/unicode.h"

namespace tephra::cel {
namespace {

constexpr double kTwo63 = 9223372036854775808.0;
constexpr double kTwo64 = 18446744073709551616.0;

Value Overflow() {
  return Value::Error("integer overflow");
}

// ints and uints with overflow as an error (checked(a, b, &r) is true on overflow), doubles
// as IEEE 754 computes them.
template <typename Checked, typename Float>
Value Arithmetic(const Value& x, const Value& y, Checked checked, Float floating) {
  if (x.kind() != y.kind()) return NoSuchOverload();
  switch (x.kind()) {
    case ValueKind::kInt: {
      int64_t r;
      if (checked(x.int_value(), y.int_value(), &r)) return Overflow();
      return Value::Int(r);
    }
    case ValueKind::kUint: {
      uint64_t r;
      if (checked(x.uint_value(), y.uint_value(), &r)) return Overflow();
      return Value::Uint(r);
    }
    case ValueKind::kDouble:
      return Value::Double(floating(x.double_value(), y.double_value()));
    default:
      return NoSuchOverload();
  }
}

Value Add(const Value* a, size_t, CallContext& ctx) {
  const Value& x = a[0];
  const Value& y = a[1];
  if (x.kind() != y.kind()) return NoSuchOverload();
  switch (x.kind()) {
    case ValueKind::kString:
    case ValueKind::kBytes: {
      ctx.cost += TraversalCost(x.text().size() + y.text().size());
      std::string joined;
      joined.reserve(x.text().size() + y.text().size());
      joined.append(x.text()).append(y.text());
      return x.IsString() ? Value::String(std::move(joined)) : Value::Bytes(std::move(joined));
    }
    case ValueKind::kList: {
      const ListValue& l = x.list();
      const ListValue& r = y.list();
      if (l.size() == 0) return y;
      if (r.size() == 0) return x;
      ctx.cost += TraversalCost(l.size() + r.size());
      auto out = std::make_shared<VectorList>();
      out->items().reserve(l.size() + r.size());
      for (size_t i = 0; i < l.size(); ++i) out->items().push_back(l.Get(i));
      for (size_t i = 0; i < r.size(); ++i) out->items().push_back(r.Get(i));
      return Value::List(std::move(out));
    }
    default:
      return Arithmetic(
          x, y, [](auto p, auto q, auto* r) { return __builtin_add_overflow(p, q, r); },
          [](double p, double q) { return p + q; });
  }
}

Value Subtract(const Value* a, size_t, CallContext&) {
  return Arithmetic(
      a[0], a[1], [](auto p, auto q, auto* r) { return __builtin_sub_overflow(p, q, r); },
      [](double p, double q) { return p - q; });
}

Value Multiply(const Value* a, size_t, CallContext&) {
  return Arithmetic(
      a[0], a[1], [](auto p, auto q, auto* r) { return __builtin_mul_overflow(p, q, r); },
      [](double p, double q) { return p * q; });
}

Value Divide(const Value* a, size_t, CallContext&) {
  const Value& x = a[0];
  const Value& y = a[1];
  if (x.kind() != y.kind()) return NoSuchOverload();
  switch (x.kind()) {
    case ValueKind::kInt:
      if (y.int_value() == 0) return Value::Error("division by zero");
      if (y.int_value() == -1 && x.int_value() == std::numeric_limits<int64_t>::min()) {
        return Overflow();
      }
      return Value::Int(x.int_value() / y.int_value());
    case ValueKind::kUint:
      if (y.uint_value() == 0) return Value::Error("division by zero");
      return Value::Uint(x.uint_value() / y.uint_value());
    case ValueKind::kDouble:
      return Value::Double(x.double_value() / y.double_value());
    default:
      return NoSuchOverload();
  }
}

Value Modulo(const Value* a, size_t, CallContext&) {
  const Value& x = a[0];
  const Value& y = a[1];
  if (x.kind() != y.kind()) return NoSuchOverload();
  switch (x.kind()) {
    case ValueKind::kInt:
      if (y.int_value() == 0) return Value::Error("modulus by zero");
      if (y.int_value() == -1 && x.int_value() == std::numeric_limits<int64_t>::min()) {
        return Overflow();
      }
      return Value::Int(x.int_value() % y.int_value());
    case ValueKind::kUint:
      if (y.uint_value() == 0) return Value::Error("modulus by zero");
      return Value::Uint(x.uint_value() % y.uint_value());
    default:
      return NoSuchOverload();
  }
}

Value Negate(const Value* a, size_t, CallContext&) {
  switch (a[0].kind()) {
    case ValueKind::kInt:
      if (a[0].int_value() == std::numeric_limits<int64_t>::min()) return Overflow();
      return Value::Int(-a[0].int_value());
    case ValueKind::kDouble:
      return Value::Double(-a[0].double_value());
    default:
      return NoSuchOverload();
  }
}

Value Not(const Value* a, size_t, CallContext&) {
  if (!a[0].IsBool()) return NoSuchOverload();
  return Value::Bool(!a[0].bool_value());
}

Value Equals(const Value* a, size_t, CallContext&) {
  return Value::Bool(Equal(a[0], a[1]));
}

Value NotEquals(const Value* a, size_t, CallContext&) {
  return Value::Bool(!Equal(a[0], a[1]));
}

template <bool (*Test)(int)>
Value Relation(const Value* a, size_t, CallContext& ctx) {
  if (a[0].kind() == ValueKind::kString || a[0].kind() == ValueKind::kBytes) {
    ctx.cost += TraversalCost(std::min(a[0].text().size(), a[1].text().size()));
  }
  int order = Order(a[0], a[1]);
  if (order == 3) return NoSuchOverload();
  return Value::Bool(order != 2 && Test(order));
}

bool IsLess(int c) {
  return c < 0;
}
bool IsLessEqual(int c) {
  return c <= 0;
}
bool IsGreater(int c) {
  return c > 0;
}
bool IsGreaterEqual(int c) {
  return c >= 0;
}

Value In(const Value* a, size_t, CallContext& ctx) {
  const Value& element = a[0];
  const Value& container = a[1];
  if (container.kind() == ValueKind::kList) {
    const ListValue& list = container.list();
    ctx.cost += TraversalCost(list.size());
    for (size_t i = 0; i < list.size(); ++i) {
      if (Equal(element, list.Get(i))) return Value::Bool(true);
    }
    return Value::Bool(false);
  }
  if (container.kind() == ValueKind::kMap) {
    if (!IsKeyKind(element.kind()) && element.kind() != ValueKind::kDouble) {
      return Value::Bool(false);
    }
    return Value::Bool(container.map().Contains(element));
  }
  return NoSuchOverload();
}

// A list index as an integer: int, uint, or a double without a fraction.
bool ListIndex(const Value& index, int64_t* out) {
  switch (index.kind()) {
    case ValueKind::kInt:
      *out = index.int_value();
      return true;
    case ValueKind::kUint:
      *out = index.uint_value() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
                 ? std::numeric_limits<int64_t>::max()
                 : static_cast<int64_t>(index.uint_value());
      return true;
    case ValueKind::kDouble: {
      double d = index.double_value();
      if (std::trunc(d) != d || !(d > -kTwo63 && d < kTwo63)) return false;
      *out = static_cast<int64_t>(d);
      return true;
    }
    default:
      return false;
  }
}

Value Index(const Value* a, size_t, CallContext&) {
  const Value& container = a[0];
  const Value& key = a[1];
  if (container.kind() == ValueKind::kList) {
    int64_t i;
    if (!ListIndex(key, &i)) {
      if (key.kind() == ValueKind::kDouble) return Value::Error("unsupported index value");
      return NoSuchOverload();
    }
    if (i < 0 || static_cast<uint64_t>(i) >= container.list().size()) {
      return Value::Error("index out of bounds: " + std::to_string(i));
    }
    return container.list().Get(static_cast<size_t>(i));
  }
  if (container.kind() == ValueKind::kMap) {
    if (!IsKeyKind(key.kind()) && key.kind() != ValueKind::kDouble) {
      return Value::Error("unsupported key type: " + std::string(key.Type().name));
    }
    Value found;
    if (container.map().Find(key, &found)) return found;
    return Value::Error("no such key: " + key.DebugString());
  }
  return NoSuchOverload();
}

Value Size(const Value* a, size_t, CallContext&) {
  switch (a[0].kind()) {
    case ValueKind::kString:
      return Value::Int(static_cast<int64_t>(CountCodePoints(a[0].text())));
    case ValueKind::kBytes:
      return Value::Int(static_cast<int64_t>(a[0].text().size()));
    case ValueKind::kList:
      return Value::Int(static_cast<int64_t>(a[0].list().size()));
    case ValueKind::kMap:
      return Value::Int(static_cast<int64_t>(a[0].map().size()));
    default:
      return NoSuchOverload();
  }
}

Value RangeError() {
  return Value::Error("range error");
}

// Go's strconv.ParseInt(s, 10, 64) and ParseUint: an optional sign (ParseInt only), digits.
bool ParseDecimal(std::string_view s, bool allow_sign, bool* negative, uint64_t* magnitude,
                  bool* out_of_range) {
  *negative = false;
  *out_of_range = false;
  if (!s.empty() && allow_sign && (s[0] == '+' || s[0] == '-')) {
    *negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return false;
  uint64_t value = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    auto digit = static_cast<uint64_t>(c - '0');
    if (value > (std::numeric_limits<uint64_t>::max() - digit) / 10) *out_of_range = true;
    value = value * 10 + digit;
  }
  *magnitude = value;
  return true;
}

Value ToInt(const Value* a, size_t, CallContext&) {
  const Value& v = a[0];
  switch (v.kind()) {
    case ValueKind::kInt:
      return v;
    case ValueKind::kUint:
      if (v.uint_value() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return RangeError();
      }
      return Value::Int(static_cast<int64_t>(v.uint_value()));
    case ValueKind::kDouble: {
      double d = v.double_value();
      if (!(d > -kTwo63 && d < kTwo63)) return RangeError();
      return Value::Int(static_cast<int64_t>(d));
    }
    case ValueKind::kString: {
      bool negative;
      bool out_of_range;
      uint64_t magnitude;
      if (!ParseDecimal(v.text(), true, &negative, &magnitude, &out_of_range)) {
        return Value::Error("cannot convert string to int: \"" + std::string(v.text()) + "\"");
      }
      uint64_t limit = negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
      if (out_of_range || magnitude > limit) return RangeError();
      return Value::Int(negative ? static_cast<int64_t>(0 - magnitude)
                                 : static_cast<int64_t>(magnitude));
    }
    default:
      return NoSuchOverload();
  }
}

Value ToUint(const Value* a, size_t, CallContext&) {
  const Value& v = a[0];
  switch (v.kind()) {
    case ValueKind::kUint:
      return v;
    case ValueKind::kInt:
      if (v.int_value() < 0) return RangeError();
      return Value::Uint(static_cast<uint64_t>(v.int_value()));
    case ValueKind::kDouble: {
      double d = v.double_value();
      if (!(d > -1 && d < kTwo64)) return RangeError();
      return Value::Uint(static_cast<uint64_t>(d));
    }
    case ValueKind::kString: {
      bool negative;
      bool out_of_range;
      uint64_t magnitude;
      if (!ParseDecimal(v.text(), false, &negative, &magnitude, &out_of_range)) {
        return Value::Error("cannot convert string to uint: \"" + std::string(v.text()) + "\"");
      }
      if (out_of_range) return RangeError();
      return Value::Uint(magnitude);
    }
    default:
      return NoSuchOverload();
  }
}

Value ToDouble(const Value* a, size_t, CallContext&) {
  const Value& v = a[0];
  switch (v.kind()) {
    case ValueKind::kDouble:
      return v;
    case ValueKind::kInt:
      return Value::Double(static_cast<double>(v.int_value()));
    case ValueKind::kUint:
      return Value::Double(static_cast<double>(v.uint_value()));
    case ValueKind::kString: {
      std::string_view s = v.text();
      double d = 0;
      if (!ParseDouble(s, &d)) {
        return Value::Error("cannot convert string to double: \"" + std::string(v.text()) + "\"");
      }
      return Value::Double(d);
    }
    default:
      return NoSuchOverload();
  }
}

Value ToString(const Value* a, size_t, CallContext& ctx) {
  const Value& v = a[0];
  switch (v.kind()) {
    case ValueKind::kString:
      return v;
    case ValueKind::kBool:
      return Value::StringView(v.bool_value() ? "true" : "false");
    case ValueKind::kInt:
      return Value::String(std::to_string(v.int_value()));
    case ValueKind::kUint:
      return Value::String(std::to_string(v.uint_value()));
    case ValueKind::kDouble:
      return Value::String(FormatDouble(v.double_value()));
    case ValueKind::kBytes:
      ctx.cost += TraversalCost(v.text().size());
      if (!IsValidUtf8(v.text()))
        return Value::Error("invalid UTF-8 in bytes, cannot convert to string");
      return Value::String(std::string(v.text()));
    default:
      return NoSuchOverload();
  }
}

Value ToBytes(const Value* a, size_t, CallContext& ctx) {
  const Value& v = a[0];
  switch (v.kind()) {
    case ValueKind::kBytes:
      return v;
    case ValueKind::kString:
      ctx.cost += TraversalCost(v.text().size());
      return Value::Bytes(std::string(v.text()));
    default:
      return NoSuchOverload();
  }
}

Value ToBool(const Value* a, size_t, CallContext&) {
  const Value& v = a[0];
  switch (v.kind()) {
    case ValueKind::kBool:
      return v;
    case ValueKind::kString: {
      // Go's strconv.ParseBool.
      static constexpr std::string_view kTrue[] = {"1", "t", "T", "TRUE", "true", "True"};
      static constexpr std::string_view kFalse[] = {"0", "f", "F", "FALSE", "false", "False"};
      for (std::string_view t : kTrue) {
        if (v.text() == t) return Value::Bool(true);
      }
      for (std::string_view f : kFalse) {
        if (v.text() == f) return Value::Bool(false);
      }
      return Value::Error("cannot convert string to bool: \"" + std::string(v.text()) + "\"");
    }
    default:
      return NoSuchOverload();
  }
}

Value ToDyn(const Value* a, size_t, CallContext&) {
  return a[0];
}

Value TypeOf(const Value* a, size_t, CallContext&) {
  return Value::Type(a[0].Type());
}

Value Contains(const Value* a, size_t, CallContext& ctx) {
  if (a[0].kind() != ValueKind::kString || a[1].kind() != ValueKind::kString) {
    return NoSuchOverload();
  }
  ctx.cost += TraversalCost(a[0].text().size());
  return Value::Bool(a[0].text().find(a[1].text()) != std::string_view::npos);
}

Value StartsWith(const Value* a, size_t, CallContext& ctx) {
  if (a[0].kind() != ValueKind::kString || a[1].kind() != ValueKind::kString) {
    return NoSuchOverload();
  }
  ctx.cost += TraversalCost(a[1].text().size());
  return Value::Bool(a[0].text().starts_with(a[1].text()));
}

Value EndsWith(const Value* a, size_t, CallContext& ctx) {
  if (a[0].kind() != ValueKind::kString || a[1].kind() != ValueKind::kString) {
    return NoSuchOverload();
  }
  ctx.cost += TraversalCost(a[1].text().size());
  return Value::Bool(a[0].text().ends_with(a[1].text()));
}

Value Matches(const Value* a, size_t, CallContext& ctx) {
  if (a[0].kind() != ValueKind::kString || a[1].kind() != ValueKind::kString) {
    return NoSuchOverload();
  }
  return WithRegex(a[1].text(), ctx, [&](const re2::RE2& re) {
    ctx.cost += RegexCost(a[0].text(), a[1].text());
    return Value::Bool(re2::RE2::PartialMatch(a[0].text(), re));
  });
}

}  // namespace

void RegisterStandardFunctions(FunctionRegistry& r) {
  constexpr Library kStd = Library::kStandard;
  // The logical operators and the conditional are compiled to jumps (docs/cel.md, "Errors").
  r.Add(kStd, "_&&_", nullptr, {"(bool, bool) -> bool"});
  r.Add(kStd, "_||_", nullptr, {"(bool, bool) -> bool"});
  r.Add(kStd, "_?_:_", nullptr, {"(bool, A, A) -> A"});
  r.Add(kStd, "!_", Not, {"(bool) -> bool"});
  r.Add(kStd, "-_", Negate, {"(int) -> int", "(double) -> double"});
  r.Add(kStd, "_+_", Add,
        {"(int, int) -> int", "(uint, uint) -> uint", "(double, double) -> double",
         "(string, string) -> string", "(bytes, bytes) -> bytes", "(list(A), list(A)) -> list(A)"});
  r.Add(kStd, "_-_", Subtract,
        {"(int, int) -> int", "(uint, uint) -> uint", "(double, double) -> double"});
  r.Add(kStd, "_*_", Multiply,
        {"(int, int) -> int", "(uint, uint) -> uint", "(double, double) -> double"});
  r.Add(kStd, "_/_", Divide,
        {"(int, int) -> int", "(uint, uint) -> uint", "(double, double) -> double"});
  r.Add(kStd, "_%_", Modulo, {"(int, int) -> int", "(uint, uint) -> uint"});
  r.Add(kStd, "_==_", Equals, {"(A, A) -> bool"});
  r.Add(kStd, "_!=_", NotEquals, {"(A, A) -> bool"});
  // Kubernetes enables cel-go's cross-type numeric comparisons: 1 < 1.5 and 2u > 1 check.
  for (auto [name, impl] :
       {std::pair{"_<_", &Relation<IsLess>}, std::pair{"_<=_", &Relation<IsLessEqual>},
        std::pair{"_>_", &Relation<IsGreater>}, std::pair{"_>=_", &Relation<IsGreaterEqual>}}) {
    r.Add(kStd, name, impl,
          {"(bool, bool) -> bool", "(string, string) -> bool", "(bytes, bytes) -> bool",
           "(int, int) -> bool", "(uint, uint) -> bool", "(double, double) -> bool",
           "(int, uint) -> bool", "(int, double) -> bool", "(uint, int) -> bool",
           "(uint, double) -> bool", "(double, int) -> bool", "(double, uint) -> bool"});
  }
  r.Add(kStd, "@in", In, {"(A, list(A)) -> bool", "(A, map(A, B)) -> bool"});
  r.Add(kStd, "_[_]", Index, {"(list(A), int) -> A", "(map(A, B), A) -> B"});
  r.Add(kStd, "size", Size,
        {"(string) -> int", "(bytes) -> int", "(list(A)) -> int", "(map(A, B)) -> int",
         "string.() -> int", "bytes.() -> int", "list(A).() -> int", "map(A, B).() -> int"});
  r.Add(kStd, "int", ToInt,
        {"(int) -> int", "(uint) -> int", "(double) -> int", "(string) -> int"});
  r.Add(kStd, "uint", ToUint,
        {"(uint) -> uint", "(int) -> uint", "(double) -> uint", "(string) -> uint"});
  r.Add(kStd, "double", ToDouble,
        {"(double) -> double", "(int) -> double", "(uint) -> double", "(string) -> double"});
  r.Add(kStd, "string", ToString,
        {"(string) -> string", "(bool) -> string", "(int) -> string", "(uint) -> string",
         "(double) -> string", "(bytes) -> string"});
  r.Add(kStd, "bytes", ToBytes, {"(bytes) -> bytes", "(string) -> bytes"});
  r.Add(kStd, "bool", ToBool, {"(bool) -> bool", "(string) -> bool"});
  r.Add(kStd, "dyn", ToDyn, {"(A) -> dyn"});
  r.Add(kStd, "type", TypeOf, {"(A) -> type(A)"});
  r.Add(kStd, "contains", Contains, {"string.(string) -> bool"});
  r.Add(kStd, "startsWith", StartsWith, {"string.(string) -> bool"});
  r.Add(kStd, "endsWith", EndsWith, {"string.(string) -> bool"});
  r.Add(kStd, "matches", Matches, {"string.(string) -> bool", "(string, string) -> bool"}, 1);
}

}  // namespace tephra::cel
