#include "cel/value.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>

#include "cel/semver.h"

namespace tephra::cel {

namespace types {
const TypeValue kNull{"null_type"};
const TypeValue kBool{"bool"};
const TypeValue kInt{"int"};
const TypeValue kUint{"uint"};
const TypeValue kDouble{"double"};
const TypeValue kString{"string"};
const TypeValue kBytes{"bytes"};
const TypeValue kList{"list"};
const TypeValue kMap{"map"};
const TypeValue kType{"type"};
const TypeValue kQuantity{"kubernetes.Quantity"};
const TypeValue kSemver{"kubernetes.Semver"};
const TypeValue kError{"error"};
}  // namespace types

bool MapValue::Contains(const Value& key) const {
  Value ignored;
  return Find(key, &ignored);
}

Value Value::Bool(bool b) {
  Value v;
  v.kind_ = ValueKind::kBool;
  v.scalar_.b = b;
  return v;
}

Value Value::Int(int64_t i) {
  Value v;
  v.kind_ = ValueKind::kInt;
  v.scalar_.i = i;
  return v;
}

Value Value::Uint(uint64_t u) {
  Value v;
  v.kind_ = ValueKind::kUint;
  v.scalar_.u = u;
  return v;
}

Value Value::Double(double d) {
  Value v;
  v.kind_ = ValueKind::kDouble;
  v.scalar_.d = d;
  return v;
}

Value Value::StringView(std::string_view utf8) {
  Value v;
  v.kind_ = ValueKind::kString;
  v.ptr_ = utf8.data();
  v.scalar_.n = utf8.size();
  return v;
}

Value Value::String(std::string utf8) {
  auto owned = std::make_shared<const std::string>(std::move(utf8));
  Value v = StringView(*owned);
  v.owner_ = std::move(owned);
  return v;
}

Value Value::BytesView(std::string_view bytes) {
  Value v = StringView(bytes);
  v.kind_ = ValueKind::kBytes;
  return v;
}

Value Value::Bytes(std::string bytes) {
  Value v = String(std::move(bytes));
  v.kind_ = ValueKind::kBytes;
  return v;
}

Value Value::Pointer(ValueKind kind, const void* target, std::shared_ptr<const void> owner) {
  Value v;
  v.kind_ = kind;
  v.ptr_ = target;
  v.owner_ = std::move(owner);
  return v;
}

Value Value::List(std::shared_ptr<const ListValue> list) {
  const ListValue* target = list.get();
  return Pointer(ValueKind::kList, target, std::move(list));
}

Value Value::ListView(const ListValue* list) {
  return Pointer(ValueKind::kList, list, nullptr);
}

Value Value::Map(std::shared_ptr<const MapValue> map) {
  const MapValue* target = map.get();
  return Pointer(ValueKind::kMap, target, std::move(map));
}

Value Value::MapView(const MapValue* map) {
  return Pointer(ValueKind::kMap, map, nullptr);
}

Value Value::Type(const TypeValue& type) {
  return Pointer(ValueKind::kType, &type, nullptr);
}

Value Value::Quantity(api::Quantity quantity) {
  auto owned = std::make_shared<const api::Quantity>(std::move(quantity));
  const api::Quantity* target = owned.get();
  return Pointer(ValueKind::kQuantity, target, std::move(owned));
}

Value Value::QuantityView(const api::Quantity* quantity) {
  return Pointer(ValueKind::kQuantity, quantity, nullptr);
}

Value Value::SemverValue(std::shared_ptr<const Semver> semver) {
  const Semver* target = semver.get();
  return Pointer(ValueKind::kSemver, target, std::move(semver));
}

Value Value::SemverView(const Semver* semver) {
  return Pointer(ValueKind::kSemver, semver, nullptr);
}

Value Value::Error(std::string message) {
  Value v = String(std::move(message));
  v.kind_ = ValueKind::kError;
  return v;
}

const TypeValue& Value::Type() const {
  switch (kind_) {
    case ValueKind::kNull:
      return types::kNull;
    case ValueKind::kBool:
      return types::kBool;
    case ValueKind::kInt:
      return types::kInt;
    case ValueKind::kUint:
      return types::kUint;
    case ValueKind::kDouble:
      return types::kDouble;
    case ValueKind::kString:
      return types::kString;
    case ValueKind::kBytes:
      return types::kBytes;
    case ValueKind::kList:
      return types::kList;
    case ValueKind::kMap:
      return types::kMap;
    case ValueKind::kType:
      return types::kType;
    case ValueKind::kQuantity:
      return types::kQuantity;
    case ValueKind::kSemver:
      return types::kSemver;
    case ValueKind::kError:
      return types::kError;
  }
  return types::kError;
}

namespace {

void AppendQuoted(std::string* out, std::string_view text, char quote) {
  out->push_back(quote);
  for (char c : text) {
    switch (c) {
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      default:
        if (c == quote) out->push_back('\\');
        out->push_back(c);
    }
  }
  out->push_back(quote);
}

// Values nest only as deep as the expression that built them (the parser bounds that) or as
// the activation's data, so this recursion is bounded.
void AppendDebug(std::string* out, const Value& v) {
  switch (v.kind()) {
    case ValueKind::kNull:
      out->append("null");
      return;
    case ValueKind::kBool:
      out->append(v.bool_value() ? "true" : "false");
      return;
    case ValueKind::kInt:
      out->append(std::to_string(v.int_value()));
      return;
    case ValueKind::kUint:
      out->append(std::to_string(v.uint_value())).push_back('u');
      return;
    case ValueKind::kDouble:
      out->append(FormatDouble(v.double_value()));
      return;
    case ValueKind::kString:
      AppendQuoted(out, v.text(), '"');
      return;
    case ValueKind::kBytes:
      out->push_back('b');
      AppendQuoted(out, v.text(), '"');
      return;
    case ValueKind::kList: {
      out->push_back('[');
      for (size_t i = 0; i < v.list().size(); ++i) {
        if (i > 0) out->append(", ");
        AppendDebug(out, v.list().Get(i));
      }
      out->push_back(']');
      return;
    }
    case ValueKind::kMap: {
      out->push_back('{');
      for (size_t i = 0; i < v.map().size(); ++i) {
        if (i > 0) out->append(", ");
        AppendDebug(out, v.map().KeyAt(i));
        out->append(": ");
        AppendDebug(out, v.map().ValueAt(i));
      }
      out->push_back('}');
      return;
    }
    case ValueKind::kType:
      out->append(v.type().name);
      return;
    case ValueKind::kQuantity:
      out->append("quantity(\"").append(v.quantity().String()).append("\")");
      return;
    case ValueKind::kSemver:
      out->append("semver(\"").append(v.semver().String()).append("\")");
      return;
    case ValueKind::kError:
      out->append("error: ").append(v.error_message());
      return;
  }
}

constexpr double kTwo63 = 9223372036854775808.0;
constexpr double kTwo64 = 18446744073709551616.0;

int Sign3(bool less, bool greater) {
  return less ? -1 : (greater ? 1 : 0);
}

// An integer against a double as cel-go compares them: through the double, so that
// 9223372036854775807 and 9223372036854775808.0 are equal, as they are in Go.
int CompareDoubles(double x, double y) {
  if (std::isnan(x) || std::isnan(y)) return 2;
  return Sign3(x<y, x> y);
}

int CompareIntDouble(int64_t i, double d) {
  if (std::isnan(d)) return 2;
  if (d < -kTwo63) return 1;
  if (d > kTwo63) return -1;
  return CompareDoubles(static_cast<double>(i), d);
}

int CompareUintDouble(uint64_t u, double d) {
  if (std::isnan(d)) return 2;
  if (d < 0) return 1;
  if (d > kTwo64) return -1;
  return CompareDoubles(static_cast<double>(u), d);
}

int CompareIntUint(int64_t i, uint64_t u) {
  if (i < 0) return -1;
  auto v = static_cast<uint64_t>(i);
  return Sign3(v<u, v> u);
}

}  // namespace

std::string Value::DebugString() const {
  std::string out;
  AppendDebug(&out, *this);
  return out;
}

int CompareNumbers(const Value& a, const Value& b) {
  switch (a.kind()) {
    case ValueKind::kInt:
      switch (b.kind()) {
        case ValueKind::kInt:
          return Sign3(a.int_value() < b.int_value(), a.int_value() > b.int_value());
        case ValueKind::kUint:
          return CompareIntUint(a.int_value(), b.uint_value());
        default:
          return CompareIntDouble(a.int_value(), b.double_value());
      }
    case ValueKind::kUint:
      switch (b.kind()) {
        case ValueKind::kInt:
          return -CompareIntUint(b.int_value(), a.uint_value());
        case ValueKind::kUint:
          return Sign3(a.uint_value() < b.uint_value(), a.uint_value() > b.uint_value());
        default:
          return CompareUintDouble(a.uint_value(), b.double_value());
      }
    default:
      switch (b.kind()) {
        case ValueKind::kInt: {
          int c = CompareIntDouble(b.int_value(), a.double_value());
          return c == 2 ? 2 : -c;
        }
        case ValueKind::kUint: {
          int c = CompareUintDouble(b.uint_value(), a.double_value());
          return c == 2 ? 2 : -c;
        }
        default:
          return CompareDoubles(a.double_value(), b.double_value());
      }
  }
}

int Order(const Value& x, const Value& y) {
  if (x.IsNumber() && y.IsNumber()) return CompareNumbers(x, y);
  if (x.kind() != y.kind()) return 3;
  switch (x.kind()) {
    case ValueKind::kBool:
      return x.bool_value() == y.bool_value() ? 0 : (x.bool_value() ? 1 : -1);
    case ValueKind::kString:
    case ValueKind::kBytes: {
      // Byte order of UTF-8 is code point order.
      int c = x.text().compare(y.text());
      return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    default:
      return 3;
  }
}

bool IsKeyKind(ValueKind kind) {
  return kind == ValueKind::kBool || kind == ValueKind::kInt || kind == ValueKind::kUint ||
         kind == ValueKind::kString;
}

uint64_t HashKey(const Value& key) {
  constexpr uint64_t kMix = 0x9e3779b97f4a7c15ULL;
  switch (key.kind()) {
    case ValueKind::kBool:
      return key.bool_value() ? 0x51u : 0x50u;
    case ValueKind::kInt:
      return static_cast<uint64_t>(key.int_value()) * kMix;
    case ValueKind::kUint:
      return key.uint_value() * kMix;  // equal to the int's when it fits
    case ValueKind::kDouble: {
      double d = key.double_value();
      if (d >= -kTwo63 && d < kTwo63 && std::trunc(d) == d) {
        return static_cast<uint64_t>(static_cast<int64_t>(d)) * kMix;
      }
      if (d >= 0 && d < kTwo64 && std::trunc(d) == d) return static_cast<uint64_t>(d) * kMix;
      return 0x0d;
    }
    case ValueKind::kString:
      return std::hash<std::string_view>()(key.text()) ^ 0x5a5a;
    default:
      return 0;
  }
}

bool KeysEqual(const Value& a, const Value& b) {
  if (a.IsNumber() && b.IsNumber()) return CompareNumbers(a, b) == 0;
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case ValueKind::kBool:
      return a.bool_value() == b.bool_value();
    case ValueKind::kString:
      return a.text() == b.text();
    default:
      return false;
  }
}

bool Equal(const Value& a, const Value& b) {
  if (a.IsNumber() && b.IsNumber()) return CompareNumbers(a, b) == 0;
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case ValueKind::kNull:
      return true;
    case ValueKind::kBool:
      return a.bool_value() == b.bool_value();
    case ValueKind::kString:
    case ValueKind::kBytes:
      return a.text() == b.text();
    case ValueKind::kType:
      return a.type().name == b.type().name;
    case ValueKind::kQuantity:
      return a.quantity().Compare(b.quantity()) == 0;
    case ValueKind::kSemver:
      return a.semver().Compare(b.semver()) == 0;
    case ValueKind::kList: {
      const ListValue& x = a.list();
      const ListValue& y = b.list();
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i) {
        if (!Equal(x.Get(i), y.Get(i))) return false;
      }
      return true;
    }
    case ValueKind::kMap: {
      const MapValue& x = a.map();
      const MapValue& y = b.map();
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i) {
        Value other;
        if (!y.Find(x.KeyAt(i), &other) || !Equal(x.ValueAt(i), other)) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

namespace {
constexpr size_t kScanLimit = 8;  // below this many entries a scan beats hashing
}

bool EntryMap::Find(const Value& key, Value* value) const {
  if (index_.empty()) {
    for (const auto& [k, v] : entries_) {
      if (KeysEqual(k, key)) {
        *value = v;
        return true;
      }
    }
    return false;
  }
  size_t mask = index_.size() - 1;
  for (size_t slot = HashKey(key) & mask;; slot = (slot + 1) & mask) {
    uint32_t at = index_[slot];
    if (at == 0) return false;
    if (KeysEqual(entries_[at - 1].first, key)) {
      *value = entries_[at - 1].second;
      return true;
    }
  }
}

bool EntryMap::Insert(Value key, Value value) {
  Value existing;
  if (Find(key, &existing)) return false;
  entries_.emplace_back(std::move(key), std::move(value));
  if (entries_.size() > kScanLimit && entries_.size() * 2 > index_.size()) {
    Rehash();
  } else if (!index_.empty()) {
    size_t mask = index_.size() - 1;
    size_t slot = HashKey(entries_.back().first) & mask;
    while (index_[slot] != 0) slot = (slot + 1) & mask;
    index_[slot] = static_cast<uint32_t>(entries_.size());
  }
  return true;
}

void EntryMap::Rehash() {
  size_t capacity = 16;
  while (capacity < entries_.size() * 4) capacity *= 2;
  index_.assign(capacity, 0);
  size_t mask = capacity - 1;
  for (size_t i = 0; i < entries_.size(); ++i) {
    size_t slot = HashKey(entries_[i].first) & mask;
    while (index_[slot] != 0) slot = (slot + 1) & mask;
    index_[slot] = static_cast<uint32_t>(i + 1);
  }
}

bool ParseDouble(std::string_view text, double* out) {
  std::string_view s = text;
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  if (s.empty() || s[0] == '+') return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  if (end != s.data() + s.size()) return false;
  if (ec == std::errc::result_out_of_range) {
    // from_chars does not say which way; strtod (the "C" locale's) does: huge or tiny.
    std::string copy(s);
    double v = std::strtod(copy.c_str(), nullptr);
    if (std::isinf(v)) return false;
    *out = v;
    return true;
  }
  return ec == std::errc();
}

std::string FormatDouble(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "+Inf" : "-Inf";
  if (d == 0) return std::signbit(d) ? "-0" : "0";
  // The shortest digits that read back as d, then Go's %g layout of them.
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  (void)ec;
  std::string_view sci(buf, static_cast<size_t>(end - buf));
  bool negative = sci.front() == '-';
  if (negative) sci.remove_prefix(1);
  size_t e = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e)) {
    if (c != '.') digits.push_back(c);
  }
  int exponent = std::stoi(std::string(sci.substr(e + 1)));
  std::string out = negative ? "-" : "";
  if (exponent < -4 || exponent >= 6) {
    out.push_back(digits[0]);
    if (digits.size() > 1) out.append(".").append(digits, 1, std::string::npos);
    out.push_back('e');
    out.push_back(exponent < 0 ? '-' : '+');
    int magnitude = std::abs(exponent);
    if (magnitude < 10) out.push_back('0');
    out.append(std::to_string(magnitude));
    return out;
  }
  int point = exponent + 1;  // digits before the decimal point
  if (point <= 0) {
    out.append("0.").append(static_cast<size_t>(-point), '0').append(digits);
  } else if (static_cast<size_t>(point) >= digits.size()) {
    out.append(digits).append(static_cast<size_t>(point) - digits.size(), '0');
  } else {
    out.append(digits, 0, static_cast<size_t>(point))
        .append(".")
        .append(digits, static_cast<size_t>(point), std::string::npos);
  }
  return out;
}

}  // namespace tephra::cel
