#include "base/time.h"

#include <cstdint>
#include <cstdio>
#include <ctime>
#include <limits>

namespace tephra::base {
namespace {

bool Digits(std::string_view s, size_t pos, size_t n, int* out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

}  // namespace

std::optional<Time> ParseTime(std::string_view s) {
  int year, mon, day, hour, min, sec;
  if (!Digits(s, 0, 4, &year) || s.size() < 20 || s[4] != '-' || !Digits(s, 5, 2, &mon) ||
      s[7] != '-' || !Digits(s, 8, 2, &day) || (s[10] != 'T' && s[10] != 't') ||
      !Digits(s, 11, 2, &hour) || s[13] != ':' || !Digits(s, 14, 2, &min) || s[16] != ':' ||
      !Digits(s, 17, 2, &sec)) {
    return std::nullopt;
  }
  if (mon < 1 || mon > 12 || day < 1 || day > 31 || hour > 23 || min > 59 || sec > 60) {
    return std::nullopt;
  }
  // system_clock counts nanoseconds in 64 bits: only 1678..2261 is representable.
  if (year < 1678 || year > 2261) return std::nullopt;
  size_t pos = 19;
  std::chrono::microseconds frac{0};
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    int64_t us = 0;
    int digits = 0;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      if (digits < 6) {
        us = us * 10 + (s[pos] - '0');
        ++digits;
      }
      ++pos;
    }
    if (digits == 0) return std::nullopt;
    for (; digits < 6; ++digits) us *= 10;
    frac = std::chrono::microseconds(us);
  }
  int offset_minutes = 0;
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    int oh, om;
    if (!Digits(s, pos + 1, 2, &oh) || pos + 3 >= s.size() || s[pos + 3] != ':' ||
        !Digits(s, pos + 4, 2, &om)) {
      return std::nullopt;
    }
    offset_minutes = (oh * 60 + om) * (s[pos] == '-' ? -1 : 1);
    pos += 6;
  } else {
    return std::nullopt;
  }
  if (pos != s.size()) return std::nullopt;
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = mon - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = min;
  tm.tm_sec = sec;
  time_t t = timegm(&tm);
  return Clock::from_time_t(t) - std::chrono::minutes(offset_minutes) +
         std::chrono::duration_cast<Clock::duration>(frac);
}

namespace {

std::string Format(Time t, bool micro) {
  auto secs = std::chrono::time_point_cast<std::chrono::seconds>(t);
  if (secs > t) secs -= std::chrono::seconds(1);  // floor for times before the epoch
  time_t tt = Clock::to_time_t(secs);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[40];
  size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  std::string out(buf, n);
  if (micro) {
    auto us = std::chrono::duration_cast<std::chrono::microseconds>(t - secs).count();
    std::snprintf(buf, sizeof buf, ".%06lld", static_cast<long long>(us));
    out += buf;
  }
  out += 'Z';
  return out;
}

}  // namespace

std::string FormatTime(Time t) {
  return Format(t, false);
}
std::string FormatMicroTime(Time t) {
  return Format(t, true);
}

// ---- Go durations ---------------------------------------------------------------------------

using std::chrono::nanoseconds;

namespace {

__extension__ typedef unsigned __int128 Uint128;

struct DurationUnit {
  std::string_view name;
  uint64_t nanos;
};

constexpr DurationUnit kDurationUnits[] = {
    {"ns", 1},
    {"us", 1'000},
    {"\xC2\xB5s", 1'000},  // U+00B5 micro sign
    {"\xCE\xBCs", 1'000},  // U+03BC Greek mu
    {"ms", 1'000'000},
    {"s", 1'000'000'000},
    {"m", 60'000'000'000},
    {"h", 3'600'000'000'000},
};

bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}

}  // namespace

StatusOr<nanoseconds> ParseDuration(std::string_view text) {
  const std::string quoted = "\"" + std::string(text) + "\"";
  std::string_view s = text;
  bool negative = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return nanoseconds(0);
  if (s.empty()) return InvalidArgument("invalid duration " + quoted);
  // Exact integer arithmetic: the magnitude may reach 2^63 when negative (INT64_MIN).
  const Uint128 limit =
      negative ? (uint64_t{1} << 63) : static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  Uint128 total = 0;
  while (!s.empty()) {
    // [digits][.digits] then a unit.
    uint64_t whole = 0;
    bool overflow = false;
    size_t i = 0;
    for (; i < s.size() && IsDigit(s[i]); ++i) {
      if (whole > (std::numeric_limits<uint64_t>::max() - 9) / 10) overflow = true;
      whole = whole * 10 + static_cast<uint64_t>(s[i] - '0');
    }
    const bool has_whole = i > 0;
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
    if (!has_whole && !has_fraction) return InvalidArgument("invalid duration " + quoted);
    if (overflow) return InvalidArgument("duration " + quoted + " is out of range");
    s.remove_prefix(i);
    size_t unit_len = 0;
    while (unit_len < s.size() && s[unit_len] != '.' && !IsDigit(s[unit_len])) ++unit_len;
    const std::string_view unit_name = s.substr(0, unit_len);
    if (unit_name.empty()) {
      return InvalidArgument("missing unit in duration " + quoted + " (use ns, us, ms, s, m or h)");
    }
    const DurationUnit* unit = nullptr;
    for (const auto& u : kDurationUnits) {
      if (u.name == unit_name) unit = &u;
    }
    if (unit == nullptr) {
      return InvalidArgument("unknown unit \"" + std::string(unit_name) + "\" in duration " +
                             quoted + " (use ns, us, ms, s, m or h)");
    }
    s.remove_prefix(unit_len);
    const Uint128 part = static_cast<Uint128>(whole) * unit->nanos +
                         static_cast<Uint128>(fraction) * unit->nanos / scale;
    total += part;
    if (part > limit || total > limit) {
      return InvalidArgument("duration " + quoted + " is out of range");
    }
  }
  const auto magnitude = static_cast<uint64_t>(total);
  if (!negative) return nanoseconds(static_cast<int64_t>(magnitude));
  return nanoseconds(magnitude == (uint64_t{1} << 63) ? std::numeric_limits<int64_t>::min()
                                                      : -static_cast<int64_t>(magnitude));
}

std::optional<nanoseconds> ParsePositiveDuration(std::string_view text) {
  if (text.empty()) return std::nullopt;
  StatusOr<nanoseconds> d = ParseDuration(text);
  if (!d.ok() || d->count() <= 0) return std::nullopt;
  return *d;
}

namespace {

// "<whole>[.<fraction without trailing zeros>]" for value / 10^digits.
std::string FixedPoint(uint64_t value, int digits) {
  uint64_t divisor = 1;
  for (int i = 0; i < digits; ++i) divisor *= 10;
  std::string out = std::to_string(value / divisor);
  uint64_t rest = value % divisor;
  if (rest == 0) return out;
  std::string frac = std::to_string(rest);
  frac.insert(0, static_cast<size_t>(digits) - frac.size(), '0');
  while (!frac.empty() && frac.back() == '0') frac.pop_back();
  return out + "." + frac;
}

}  // namespace

std::string FormatDuration(nanoseconds d) {
  if (d.count() == 0) return "0s";
  const bool negative = d.count() < 0;
  // Negating through unsigned keeps INT64_MIN representable.
  const uint64_t u =
      negative ? 0 - static_cast<uint64_t>(d.count()) : static_cast<uint64_t>(d.count());
  std::string out;
  if (u < 1'000) {
    out = std::to_string(u) + "ns";
  } else if (u < 1'000'000) {
    out = FixedPoint(u, 3) + "\xC2\xB5s";
  } else if (u < 1'000'000'000) {
    out = FixedPoint(u, 6) + "ms";
  } else {
    const uint64_t seconds_total = u / 1'000'000'000;
    const uint64_t hours = seconds_total / 3600;
    const uint64_t minutes = seconds_total / 60 % 60;
    out = FixedPoint(u % 60'000'000'000, 9) + "s";
    if (seconds_total >= 60) out = std::to_string(minutes) + "m" + out;
    if (hours > 0) out = std::to_string(hours) + "h" + out;
  }
  return negative ? "-" + out : out;
}

}  // namespace tephra::base
