// The strings extension's format(): printf-style clauses over a list of arguments
// (docs/cel.md, "Strings"). %s any value, %d integers, %f and %e numbers with an optional
// precision, %b binary, %o octal, %x and %X hexadecimal (also of strings and bytes), %% a
// percent sign.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "cel/functions.h"

namespace tephra::cel {
namespace {

bool SpecialDouble(double d, std::string* out) {
  if (std::isnan(d)) {
    *out += "NaN";
  } else if (std::isinf(d)) {
    *out += d > 0 ? "Infinity" : "-Infinity";
  } else {
    return false;
  }
  return true;
}

Status ClauseError(char clause, const Value& v) {
  return InvalidArgument("error during formatting: " + std::string(FormatClauseRule(clause)) +
                         ", was given " + std::string(v.Type().name));
}

// %s: the value as text; lists and maps with their elements the same way. The values were
// built by an expression whose nesting the parser bounds, so the recursion is bounded too.
Status AppendText(std::string* out, const Value& v) {
  switch (v.kind()) {
    case ValueKind::kNull:
      *out += "null";
      return Status::Ok();
    case ValueKind::kBool:
      *out += v.bool_value() ? "true" : "false";
      return Status::Ok();
    case ValueKind::kInt:
      *out += std::to_string(v.int_value());
      return Status::Ok();
    case ValueKind::kUint:
      *out += std::to_string(v.uint_value());
      return Status::Ok();
    case ValueKind::kDouble:
      if (!SpecialDouble(v.double_value(), out)) *out += FormatDouble(v.double_value());
      return Status::Ok();
    case ValueKind::kString:
    case ValueKind::kBytes:
      *out += v.text();
      return Status::Ok();
    case ValueKind::kType:
      *out += v.type().name;
      return Status::Ok();
    case ValueKind::kList: {
      *out += "[";
      for (size_t i = 0; i < v.list().size(); ++i) {
        if (i > 0) *out += ", ";
        TEPHRA_RETURN_IF_ERROR(AppendText(out, v.list().Get(i)));
      }
      *out += "]";
      return Status::Ok();
    }
    case ValueKind::kMap: {
      std::vector<std::pair<std::string, std::string>> entries;
      for (size_t i = 0; i < v.map().size(); ++i) {
        std::string key;
        std::string value;
        TEPHRA_RETURN_IF_ERROR(AppendText(&key, v.map().KeyAt(i)));
        TEPHRA_RETURN_IF_ERROR(AppendText(&value, v.map().ValueAt(i)));
        entries.emplace_back(std::move(key), std::move(value));
      }
      std::sort(entries.begin(), entries.end());
      *out += "{";
      for (size_t i = 0; i < entries.size(); ++i) {
        if (i > 0) *out += ", ";
        *out += entries[i].first + ": " + entries[i].second;
      }
      *out += "}";
      return Status::Ok();
    }
    case ValueKind::kQuantity:
      *out += v.quantity().String();
      return Status::Ok();
    default:
      return ClauseError('s', v);
  }
}

std::string InBase(uint64_t magnitude, int base, bool upper) {
  if (magnitude == 0) return "0";
  const char* digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
  std::string out;
  while (magnitude > 0) {
    out.push_back(digits[magnitude % static_cast<uint64_t>(base)]);
    magnitude /= static_cast<uint64_t>(base);
  }
  std::reverse(out.begin(), out.end());
  return out;
}

Status AppendInteger(std::string* out, const Value& v, int base, bool upper, char clause) {
  switch (v.kind()) {
    case ValueKind::kInt: {
      int64_t i = v.int_value();
      uint64_t magnitude = i < 0 ? 0 - static_cast<uint64_t>(i) : static_cast<uint64_t>(i);
      if (i < 0) *out += "-";
      *out += InBase(magnitude, base, upper);
      return Status::Ok();
    }
    case ValueKind::kUint:
      *out += InBase(v.uint_value(), base, upper);
      return Status::Ok();
    case ValueKind::kBool:
      if (base == 2) {
        *out += v.bool_value() ? "1" : "0";
        return Status::Ok();
      }
      break;
    case ValueKind::kDouble:
      if (base == 10 && SpecialDouble(v.double_value(), out)) return Status::Ok();
      break;
    case ValueKind::kString:
    case ValueKind::kBytes:
      if (base == 16) {
        for (char c : v.text()) {
          std::string hex = InBase(static_cast<unsigned char>(c), 16, upper);
          if (hex.size() < 2) hex.insert(0, "0");
          *out += hex;
        }
        return Status::Ok();
      }
      break;
    default:
      break;
  }
  return ClauseError(clause, v);
}

Status AppendFloat(std::string* out, const Value& v, int precision, char clause) {
  double d;
  switch (v.kind()) {
    case ValueKind::kDouble:
      d = v.double_value();
      break;
    case ValueKind::kInt:
      d = static_cast<double>(v.int_value());
      break;
    case ValueKind::kUint:
      d = static_cast<double>(v.uint_value());
      break;
    default:
      return ClauseError(clause, v);
  }
  if (SpecialDouble(d, out)) return Status::Ok();
  char format[8] = {'%', '.', '*', clause, '\0'};
  int length = std::snprintf(nullptr, 0, format, precision, d);
  std::string text(static_cast<size_t>(length) + 1, '\0');
  std::snprintf(text.data(), text.size(), format, precision, d);
  text.resize(static_cast<size_t>(length));
  *out += text;
  return Status::Ok();
}

Value Format(const Value* a, size_t, CallContext& ctx) {
  if (a[0].kind() != ValueKind::kString || a[1].kind() != ValueKind::kList) {
    return NoSuchOverload();
  }
  std::string_view f = a[0].text();
  const ListValue& args = a[1].list();
  std::string out;
  size_t next = 0;
  for (size_t i = 0; i < f.size(); ++i) {
    if (f[i] != '%') {
      out.push_back(f[i]);
      continue;
    }
    if (i + 1 < f.size() && f[i + 1] == '%') {
      out.push_back('%');
      ++i;
      continue;
    }
    // In cel-go's order: the argument, the end of the text, the precision, the clause.
    if (next >= args.size()) {
      return Value::Error("index " + std::to_string(next) + " out of range");
    }
    if (++i >= f.size()) return Value::Error("unexpected end of string");
    int precision = 6;
    if (f[i] == '.') {
      precision = 0;
      while (++i < f.size() && f[i] >= '0' && f[i] <= '9') {
        precision = std::min(precision * 10 + (f[i] - '0'), 1000);
      }
      if (i >= f.size()) {
        return Value::Error(
            "could not parse formatting clause: error while parsing precision: could not find "
            "end of precision specifier");
      }
    }
    char clause = f[i];
    Value arg = args.Get(next++);
    Status status;
    switch (clause) {
      case 's':
        status = AppendText(&out, arg);
        break;
      case 'd':
        status = AppendInteger(&out, arg, 10, false, clause);
        break;
      case 'b':
        status = AppendInteger(&out, arg, 2, false, clause);
        break;
      case 'o':
        status = AppendInteger(&out, arg, 8, false, clause);
        break;
      case 'x':
        status = AppendInteger(&out, arg, 16, false, clause);
        break;
      case 'X':
        status = AppendInteger(&out, arg, 16, true, clause);
        break;
      case 'f':
      case 'e':
        status = AppendFloat(&out, arg, precision, clause);
        break;
      default:
        return Value::Error(std::string("could not parse formatting clause: unrecognized "
                                        "formatting clause \"") +
                            clause + "\"");
    }
    if (!status.ok()) return Value::Error(status.message());
  }
  ctx.cost += TraversalCost(out.size());
  return Value::String(std::move(out));
}

}  // namespace

std::string_view FormatClauseRule(char clause) {
  switch (clause) {
    case 's':
      return "string clause can only be used on strings, bools, bytes, ints, doubles, maps, "
             "lists, types, durations, and timestamps";
    case 'd':
      return "decimal clause can only be used on integers";
    case 'f':
      return "fixed-point clause can only be used on doubles";
    case 'e':
      return "scientific clause can only be used on doubles";
    case 'b':
      return "only integers and bools can be formatted as binary";
    case 'x':
    case 'X':
      return "only integers, byte buffers, and strings can be formatted as hex";
    case 'o':
      return "octal clause can only be used on integers";
    default:
      return "";
  }
}

void RegisterStringFormat(FunctionRegistry& r) {
  r.Add(Library::kStrings, "format", Format, {"string.(list(dyn)) -> string"});
}

}  // namespace tephra::cel
