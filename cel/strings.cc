// cel-go's strings extension at version 2, as Kubernetes enables it (docs/cel.md, "Strings"):
// charAt, indexOf, lastIndexOf, lowerAscii, upperAscii, replace, split, substring, trim,
// join, strings.quote and format. Indexes count code points.
#include <cmath>
#include <limits>

#include "cel/functions.h"
#include "cel/unicode.h"

namespace tephra::cel {
namespace {

Value IndexError(int64_t index) {
  return Value::Error("index out of range: " + std::to_string(index));
}

Value CharAt(const Value* a, size_t, CallContext& ctx) {
  if (!a[0].IsString() || !a[1].IsInt()) return NoSuchOverload();
  std::string_view s = a[0].text();
  ctx.cost += TraversalCost(s.size());
  int64_t i = a[1].int_value();
  auto length = static_cast<int64_t>(CountCodePoints(s));
  if (i < 0 || i > length) return IndexError(i);
  if (i == length) return Value::StringView("");
  size_t start = CodePointOffset(s, static_cast<size_t>(i));
  size_t end = start;
  DecodeUtf8(s, &end);
  return Value::String(std::string(s.substr(start, end - start)));
}

// The code point index of the first (or last) occurrence of sub at or after (or at or
// before) code point `from`; -1 when there is none.
Value IndexOfImpl(const Value* a, size_t n, CallContext& ctx, bool last) {
  if (!a[0].IsString() || !a[1].IsString() || (n == 3 && !a[2].IsInt())) return NoSuchOverload();
  std::string_view s = a[0].text();
  std::string_view sub = a[1].text();
  ctx.cost += TraversalCost(s.size());
  auto length = static_cast<int64_t>(CountCodePoints(s));
  int64_t from = n == 3 ? a[2].int_value() : (last ? length : 0);
  if (from < 0 || from > length) return IndexError(from);
  size_t offset = CodePointOffset(s, static_cast<size_t>(from));
  size_t found;
  if (last) {
    found = s.rfind(sub, offset);
  } else {
    found = s.find(sub, offset);
  }
  if (found == std::string_view::npos) return Value::Int(-1);
  return Value::Int(static_cast<int64_t>(CountCodePoints(s.substr(0, found))));
}

Value IndexOf(const Value* a, size_t n, CallContext& ctx) {
  return IndexOfImpl(a, n, ctx, false);
}

Value LastIndexOf(const Value* a, size_t n, CallContext& ctx) {
  return IndexOfImpl(a, n, ctx, true);
}

Value ChangeAsciiCase(const Value* a, CallContext& ctx, bool upper) {
  if (!a[0].IsString()) return NoSuchOverload();
  std::string out(a[0].text());
  ctx.cost += TraversalCost(out.size());
  for (char& c : out) {
    if (upper && c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    if (!upper && c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return Value::String(std::move(out));
}

Value LowerAscii(const Value* a, size_t, CallContext& ctx) {
  return ChangeAsciiCase(a, ctx, false);
}

Value UpperAscii(const Value* a, size_t, CallContext& ctx) {
  return ChangeAsciiCase(a, ctx, true);
}

Value Replace(const Value* a, size_t n, CallContext& ctx) {
  if (!a[0].IsString() || !a[1].IsString() || !a[2].IsString() || (n == 4 && !a[3].IsInt())) {
    return NoSuchOverload();
  }
  std::string_view s = a[0].text();
  std::string_view from = a[1].text();
  std::string_view to = a[2].text();
  int64_t limit = n == 4 ? a[3].int_value() : -1;
  ctx.cost += TraversalCost(s.size());
  std::string out;
  size_t pos = 0;
  int64_t done = 0;
  // Go's strings.Replace: an empty `from` matches before each code point and at the end.
  while (limit < 0 || done < limit) {
    size_t at;
    if (from.empty()) {
      if (pos > s.size()) break;
      at = pos;
    } else {
      at = s.find(from, pos);
      if (at == std::string_view::npos) break;
    }
    out.append(s.substr(pos, at - pos)).append(to);
    ctx.cost += TraversalCost(to.size());
    ++done;
    if (from.empty()) {
      if (at == s.size()) {
        pos = s.size() + 1;
        break;
      }
      size_t next = at;
      DecodeUtf8(s, &next);
      out.append(s.substr(at, next - at));
      pos = next;
    } else {
      pos = at + from.size();
    }
  }
  if (pos <= s.size()) out.append(s.substr(pos));
  return Value::String(std::move(out));
}

Value Split(const Value* a, size_t n, CallContext& ctx) {
  if (!a[0].IsString() || !a[1].IsString() || (n == 3 && !a[2].IsInt())) return NoSuchOverload();
  std::string_view s = a[0].text();
  std::string_view sep = a[1].text();
  int64_t limit = n == 3 ? a[2].int_value() : -1;
  ctx.cost += TraversalCost(s.size());
  auto out = std::make_shared<VectorList>();
  if (limit == 0) return Value::List(std::move(out));
  // Go's strings.SplitN: an empty separator splits into code points.
  size_t pos = 0;
  while (limit < 0 || static_cast<int64_t>(out->size()) < limit - 1) {
    size_t at;
    size_t skip;
    if (sep.empty()) {
      if (pos >= s.size()) break;
      at = pos;
      DecodeUtf8(s, &at);
      if (at >= s.size()) break;
      skip = 0;
    } else {
      at = s.find(sep, pos);
      if (at == std::string_view::npos) break;
      skip = sep.size();
    }
    out->items().push_back(Value::String(std::string(s.substr(pos, at - pos))));
    pos = at + skip;
  }
  if (!(sep.empty() && s.empty()))
    out->items().push_back(Value::String(std::string(s.substr(pos))));
  return Value::List(std::move(out));
}

Value Substring(const Value* a, size_t n, CallContext& ctx) {
  if (!a[0].IsString() || !a[1].IsInt() || (n == 3 && !a[2].IsInt())) return NoSuchOverload();
  std::string_view s = a[0].text();
  ctx.cost += TraversalCost(s.size());
  auto length = static_cast<int64_t>(CountCodePoints(s));
  int64_t start = a[1].int_value();
  int64_t end = n == 3 ? a[2].int_value() : length;
  if (start < 0 || start > length) return IndexError(start);
  if (end < 0 || end > length) return IndexError(end);
  if (start > end) {
    return Value::Error("invalid substring range. start: " + std::to_string(start) +
                        ", end: " + std::to_string(end));
  }
  size_t from = CodePointOffset(s, static_cast<size_t>(start));
  size_t to = CodePointOffset(s, static_cast<size_t>(end));
  return Value::String(std::string(s.substr(from, to - from)));
}

// Unicode White_Space, as Go's unicode.IsSpace (and so strings.TrimSpace) reads it.
bool IsUnicodeSpace(uint32_t c) {
  switch (c) {
    case '\t':
    case '\n':
    case '\v':
    case '\f':
    case '\r':
    case ' ':
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
      return true;
    default:
      return c >= 0x2000 && c <= 0x200A;
  }
}

Value Trim(const Value* a, size_t, CallContext& ctx) {
  if (!a[0].IsString()) return NoSuchOverload();
  std::string_view s = a[0].text();
  ctx.cost += TraversalCost(s.size());
  size_t start = 0;
  while (start < s.size()) {
    size_t next = start;
    if (!IsUnicodeSpace(DecodeUtf8(s, &next))) break;
    start = next;
  }
  size_t end = s.size();
  while (end > start) {
    size_t lead = end - 1;
    while (lead > start && (static_cast<unsigned char>(s[lead]) & 0xC0) == 0x80) --lead;
    size_t probe = lead;
    if (!IsUnicodeSpace(DecodeUtf8(s, &probe))) break;
    end = lead;
  }
  return Value::String(std::string(s.substr(start, end - start)));
}

Value Join(const Value* a, size_t n, CallContext& ctx) {
  if (a[0].kind() != ValueKind::kList || (n == 2 && !a[1].IsString())) return NoSuchOverload();
  const ListValue& list = a[0].list();
  std::string_view sep = n == 2 ? a[1].text() : std::string_view();
  std::string out;
  for (size_t i = 0; i < list.size(); ++i) {
    Value item = list.Get(i);
    if (!item.IsString()) {
      return Value::Error("join: list element " + std::to_string(i) + " is a " +
                          std::string(item.Type().name) + ", not a string");
    }
    if (i > 0) out.append(sep);
    out.append(item.text());
  }
  ctx.cost += TraversalCost(out.size());
  return Value::String(std::move(out));
}

Value Quote(const Value* a, size_t, CallContext& ctx) {
  if (!a[0].IsString()) return NoSuchOverload();
  std::string_view s = a[0].text();
  ctx.cost += TraversalCost(s.size());
  std::string out = "\"";
  size_t pos = 0;
  while (pos < s.size()) {
    uint32_t c = DecodeUtf8(s, &pos);
    switch (c) {
      case '\a':
        out += "\\a";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\v':
        out += "\\v";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      default:
        AppendUtf8(&out, c);
    }
  }
  out += "\"";
  return Value::String(std::move(out));
}

}  // namespace

void RegisterStringFunctions(FunctionRegistry& r) {
  constexpr Library kLib = Library::kStrings;
  r.Add(kLib, "charAt", CharAt, {"string.(int) -> string"});
  r.Add(kLib, "indexOf", IndexOf, {"string.(string) -> int", "string.(string, int) -> int"});
  r.Add(kLib, "lastIndexOf", LastIndexOf,
        {"string.(string) -> int", "string.(string, int) -> int"});
  r.Add(kLib, "lowerAscii", LowerAscii, {"string.() -> string"});
  r.Add(kLib, "upperAscii", UpperAscii, {"string.() -> string"});
  r.Add(kLib, "replace", Replace,
        {"string.(string, string) -> string", "string.(string, string, int) -> string"});
  r.Add(kLib, "split", Split,
        {"string.(string) -> list(string)", "string.(string, int) -> list(string)"});
  r.Add(kLib, "substring", Substring, {"string.(int) -> string", "string.(int, int) -> string"});
  r.Add(kLib, "trim", Trim, {"string.() -> string"});
  r.Add(kLib, "join", Join, {"list(string).() -> string", "list(string).(string) -> string"});
  r.Add(kLib, "strings.quote", Quote, {"(string) -> string"});
  RegisterStringFormat(r);
}

}  // namespace tephra::cel
