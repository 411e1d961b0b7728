#include "api/duration.h"

#include <array>
#include <cstdint>
#include <limits>

namespace tephra::api {
namespace {

__extension__ typedef unsigned __int128 Uint128;

struct Unit {
  std::string_view name;
  uint64_t nanos;
};

// Longest names first so "ms" is not read as "m" followed by garbage.
constexpr std::array<Unit, 8> kUnits{{
    {"ns", 1},
    {"us", 1'000},
    {"\xC2\xB5s", 1'000},  // U+00B5 micro sign
    {"\xCE\xBCs", 1'000},  // U+03BC Greek mu
    {"ms", 1'000'000},
    {"s", 1'000'000'000},
    {"m", 60'000'000'000},
    {"h", 3'600'000'000'000},
}};

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Writes v's last `prec` decimal digits as a fraction without trailing zeros (".5"), and
// returns v with them removed.
uint64_t FormatFraction(uint64_t v, int prec, std::string* out) {
  std::string digits;
  bool printed = false;
  for (int i = 0; i < prec; ++i) {
    auto digit = static_cast<char>('0' + v % 10);
    printed = printed || digit != '0';
    if (printed) digits.insert(digits.begin(), digit);
    v /= 10;
  }
  if (printed) *out = "." + digits + *out;
  return v;
}

}  // namespace

std::optional<Duration> ParseDuration(std::string_view s) {
  bool negative = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return Duration(0);
  if (s.empty()) return std::nullopt;
  const Uint128 limit =
      negative ? (uint64_t{1} << 63) : static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  Uint128 total = 0;
  while (!s.empty()) {
    // The number: digits, optionally a fraction; at least one digit overall.
    uint64_t whole = 0;
    bool whole_overflow = false;
    size_t i = 0;
    for (; i < s.size() && IsDigit(s[i]); ++i) {
      if (whole > (std::numeric_limits<uint64_t>::max() - 9) / 10) whole_overflow = true;
      whole = whole * 10 + static_cast<uint64_t>(s[i] - '0');
    }
    bool has_whole = i > 0;
    uint64_t fraction = 0;
    uint64_t scale = 1;
    bool has_fraction = false;
    if (i < s.size() && s[i] == '.') {
      ++i;
      for (; i < s.size() && IsDigit(s[i]); ++i) {
        has_fraction = true;
        // Digits beyond what fits add nothing measurable in nanoseconds; Go drops them too.
        if (scale <= std::numeric_limits<uint64_t>::max() / 10 / 10) {
          fraction = fraction * 10 + static_cast<uint64_t>(s[i] - '0');
          scale *= 10;
        }
      }
    }
    if ((!has_whole && !has_fraction) || whole_overflow) return std::nullopt;
    s.remove_prefix(i);
    const Unit* unit = nullptr;
    for (const Unit& u : kUnits) {
      if (s.substr(0, u.name.size()) == u.name &&
          (unit == nullptr || u.name.size() > unit->name.size())) {
        unit = &u;
      }
    }
    if (unit == nullptr) return std::nullopt;  // missing or unknown unit
    s.remove_prefix(unit->name.size());
    Uint128 part = static_cast<Uint128>(whole) * unit->nanos +
                             static_cast<Uint128>(fraction) * unit->nanos / scale;
    total += part;
    if (part > limit || total > limit) return std::nullopt;
  }
  auto magnitude = static_cast<uint64_t>(total);
  if (!negative) return Duration(static_cast<int64_t>(magnitude));
  return Duration(magnitude == (uint64_t{1} << 63) ? std::numeric_limits<int64_t>::min()
                                                   : -static_cast<int64_t>(magnitude));
}

std::string FormatDuration(Duration d) {
  int64_t n = d.count();
  if (n == 0) return "0s";
  uint64_t u = n < 0 ? uint64_t{0} - static_cast<uint64_t>(n) : static_cast<uint64_t>(n);
  std::string out;
  if (u < 1'000'000'000) {
    // Below a second Go switches to smaller units: "1.5ms", "300ns".
    int prec;
    std::string unit;
    if (u < 1'000) {
      prec = 0;
      unit = "ns";
    } else if (u < 1'000'000) {
      prec = 3;
      unit = "\xC2\xB5s";
    } else {
      prec = 6;
      unit = "ms";
    }
    u = FormatFraction(u, prec, &out);
    out = std::to_string(u) + out + unit;
  } else {
    u = FormatFraction(u, 9, &out);
    out = std::to_string(u % 60) + out + "s";
    u /= 60;
    if (u > 0) {
      out = std::to_string(u % 60) + "m" + out;
      u /= 60;
      if (u > 0) out = std::to_string(u) + "h" + out;
    }
  }
  return n < 0 ? "-" + out : out;
}

}  // namespace tephra::api
