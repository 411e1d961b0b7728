// Kubernetes' CEL libraries for quantities, semantic versions and regular expressions
// (docs/cel.md, "Kubernetes libraries"). Quantities are api::Quantity, the one implementation
// of Kubernetes' quantity arithmetic in this repository.
#include "cel/regex.h"
#include "cel/semver.h"

namespace tephra::cel {
namespace {

bool IsQuantity(const Value& v) {
  return v.kind() == ValueKind::kQuantity;
}
bool IsSemver(const Value& v) {
  return v.kind() == ValueKind::kSemver;
}

Value QuantityOf(const Value* a, size_t, CallContext&) {
  if (!a[0].IsString()) return NoSuchOverload();
  StatusOr<api::Quantity> q = api::Quantity::Parse(a[0].text());
  if (!q.ok()) return Value::Error(q.status().message());
  return Value::Quantity(std::move(*q));
}

Value IsQuantityString(const Value* a, size_t, CallContext&) {
  if (!a[0].IsString()) return NoSuchOverload();
  return Value::Bool(api::Quantity::Parse(a[0].text()).ok());
}

Value QuantitySign(const Value* a, size_t, CallContext&) {
  if (!IsQuantity(a[0])) return NoSuchOverload();
  return Value::Int(a[0].quantity().Sign());
}

Value QuantityIsInteger(const Value* a, size_t, CallContext&) {
  if (!IsQuantity(a[0])) return NoSuchOverload();
  return Value::Bool(a[0].quantity().AsInt64().has_value());
}

Value QuantityAsInteger(const Value* a, size_t, CallContext&) {
  if (!IsQuantity(a[0])) return NoSuchOverload();
  std::optional<int64_t> v = a[0].quantity().AsInt64();
  if (!v) return Value::Error("cannot convert value to integer");
  return Value::Int(*v);
}

Value QuantityAsFloat(const Value* a, size_t, CallContext&) {
  if (!IsQuantity(a[0])) return NoSuchOverload();
  return Value::Double(a[0].quantity().AsApproximateDouble());
}

// The other operand of add and sub: a quantity, or an int read as a quantity.
bool Operand(const Value& v, api::Quantity* out) {
  if (IsQuantity(v)) {
    *out = v.quantity();
    return true;
  }
  if (v.kind() == ValueKind::kInt) {
    *out = api::Quantity::FromInt(v.int_value(), api::QuantityFormat::kDecimalExponent);
    return true;
  }
  return false;
}

Value QuantityArithmetic(const Value* a, bool add) {
  api::Quantity other;
  if (!IsQuantity(a[0]) || !Operand(a[1], &other)) return NoSuchOverload();
  StatusOr<api::Quantity> r = add ? a[0].quantity().Plus(other) : a[0].quantity().Minus(other);
  if (!r.ok()) return Value::Error(r.status().message());
  return Value::Quantity(std::move(*r));
}

Value QuantityAdd(const Value* a, size_t, CallContext&) {
  return QuantityArithmetic(a, true);
}

Value QuantitySub(const Value* a, size_t, CallContext&) {
  return QuantityArithmetic(a, false);
}

// compareTo, isLessThan and isGreaterThan, for quantities and for versions.
int Compare(const Value& x, const Value& y) {
  return IsQuantity(x) ? x.quantity().Compare(y.quantity()) : x.semver().Compare(y.semver());
}

template <ValueKind kKind>
Value CompareTo(const Value* a, size_t, CallContext&) {
  if (a[0].kind() != kKind || a[1].kind() != kKind) return NoSuchOverload();
  return Value::Int(Compare(a[0], a[1]));
}

template <ValueKind kKind>
Value IsLessThan(const Value* a, size_t, CallContext&) {
  if (a[0].kind() != kKind || a[1].kind() != kKind) return NoSuchOverload();
  return Value::Bool(Compare(a[0], a[1]) < 0);
}

template <ValueKind kKind>
Value IsGreaterThan(const Value* a, size_t, CallContext&) {
  if (a[0].kind() != kKind || a[1].kind() != kKind) return NoSuchOverload();
  return Value::Bool(Compare(a[0], a[1]) > 0);
}

StatusOr<Semver> ParseSemver(const Value* a, size_t n) {
  bool normalize = n == 2 && a[1].bool_value();
  return normalize ? Semver::ParseNormalized(a[0].text()) : Semver::Parse(a[0].text());
}

Value SemverOf(const Value* a, size_t n, CallContext&) {
  if (!a[0].IsString() || (n == 2 && a[1].kind() != ValueKind::kBool)) return NoSuchOverload();
  StatusOr<Semver> v = ParseSemver(a, n);
  if (!v.ok()) return Value::Error(v.status().message());
  return Value::SemverValue(std::make_shared<const Semver>(std::move(*v)));
}

Value IsSemverString(const Value* a, size_t n, CallContext&) {
  if (!a[0].IsString() || (n == 2 && a[1].kind() != ValueKind::kBool)) return NoSuchOverload();
  return Value::Bool(ParseSemver(a, n).ok());
}

Value SemverMajor(const Value* a, size_t, CallContext&) {
  if (!IsSemver(a[0])) return NoSuchOverload();
  return Value::Int(static_cast<int64_t>(a[0].semver().major()));
}

Value SemverMinor(const Value* a, size_t, CallContext&) {
  if (!IsSemver(a[0])) return NoSuchOverload();
  return Value::Int(static_cast<int64_t>(a[0].semver().minor()));
}

Value SemverPatch(const Value* a, size_t, CallContext&) {
  if (!IsSemver(a[0])) return NoSuchOverload();
  return Value::Int(static_cast<int64_t>(a[0].semver().patch()));
}

Value Find(const Value* a, size_t, CallContext& ctx) {
  if (!a[0].IsString() || !a[1].IsString()) return NoSuchOverload();
  std::string_view text = a[0].text();
  return WithRegex(a[1].text(), ctx, [&](const re2::RE2& re) {
    ctx.cost += RegexCost(text, a[1].text());
    re2::StringPiece match;
    if (!re.Match(re2::StringPiece(text.data(), text.size()), 0, text.size(), re2::RE2::UNANCHORED,
                  &match, 1)) {
      return Value::StringView("");
    }
    return Value::String(std::string(match.data(), match.size()));
  });
}

// Go's FindAllString: successive non-overlapping matches; an empty match right after the
// previous match is skipped.
Value FindAll(const Value* a, size_t n, CallContext& ctx) {
  if (!a[0].IsString() || !a[1].IsString() || (n == 3 && a[2].kind() != ValueKind::kInt)) {
    return NoSuchOverload();
  }
  std::string_view text = a[0].text();
  int64_t limit = n == 3 ? a[2].int_value() : -1;
  return WithRegex(a[1].text(), ctx, [&](const re2::RE2& re) {
    ctx.cost += RegexCost(text, a[1].text());
    auto out = std::make_shared<VectorList>();
    re2::StringPiece input(text.data(), text.size());
    size_t pos = 0;
    size_t previous_end = std::string_view::npos;
    while (pos <= text.size() && (limit < 0 || static_cast<int64_t>(out->size()) < limit)) {
      re2::StringPiece match;
      if (!re.Match(input, pos, text.size(), re2::RE2::UNANCHORED, &match, 1)) break;
      auto start = static_cast<size_t>(match.data() - text.data());
      size_t end = start + match.size();
      if (match.empty()) {
        if (start != previous_end) out->items().push_back(Value::StringView(""));
        // Step over one code point.
        pos = end + 1;
        while (pos < text.size() && (static_cast<unsigned char>(text[pos]) & 0xC0) == 0x80) ++pos;
      } else {
        out->items().push_back(Value::String(std::string(match.data(), match.size())));
        pos = end;
      }
      previous_end = end;
    }
    return Value::List(std::move(out));
  });
}

}  // namespace

void RegisterKubernetesFunctions(FunctionRegistry& r) {
  constexpr Library kLib = Library::kKubernetes;
  r.Add(kLib, "quantity", QuantityOf, {"(string) -> quantity"});
  r.Add(kLib, "isQuantity", IsQuantityString, {"(string) -> bool"});
  // Kubernetes declares sign as a global function: sign(q), not q.sign().
  r.Add(kLib, "sign", QuantitySign, {"(quantity) -> int"});
  r.Add(kLib, "isInteger", QuantityIsInteger, {"quantity.() -> bool"});
  r.Add(kLib, "asInteger", QuantityAsInteger, {"quantity.() -> int"});
  r.Add(kLib, "asApproximateFloat", QuantityAsFloat, {"quantity.() -> double"});
  r.Add(kLib, "add", QuantityAdd,
        {"quantity.(quantity) -> quantity", "quantity.(int) -> quantity"});
  r.Add(kLib, "sub", QuantitySub,
        {"quantity.(quantity) -> quantity", "quantity.(int) -> quantity"});
  r.Add(kLib, "compareTo", CompareTo<ValueKind::kQuantity>, {"quantity.(quantity) -> int"});
  r.Add(kLib, "isLessThan", IsLessThan<ValueKind::kQuantity>, {"quantity.(quantity) -> bool"});
  r.Add(kLib, "isGreaterThan", IsGreaterThan<ValueKind::kQuantity>,
        {"quantity.(quantity) -> bool"});
  r.Add(kLib, "semver", SemverOf, {"(string) -> semver", "(string, bool) -> semver"});
  r.Add(kLib, "isSemver", IsSemverString, {"(string) -> bool", "(string, bool) -> bool"});
  r.Add(kLib, "major", SemverMajor, {"semver.() -> int"});
  r.Add(kLib, "minor", SemverMinor, {"semver.() -> int"});
  r.Add(kLib, "patch", SemverPatch, {"semver.() -> int"});
  r.Add(kLib, "compareTo", CompareTo<ValueKind::kSemver>, {"semver.(semver) -> int"});
  r.Add(kLib, "isLessThan", IsLessThan<ValueKind::kSemver>, {"semver.(semver) -> bool"});
  r.Add(kLib, "isGreaterThan", IsGreaterThan<ValueKind::kSemver>, {"semver.(semver) -> bool"});
  r.Add(kLib, "find", Find, {"string.(string) -> string"}, 1);
  r.Add(kLib, "findAll", FindAll,
        {"string.(string) -> list(string)", "string.(string, int) -> list(string)"}, 1);
}

}  // namespace tephra::cel
