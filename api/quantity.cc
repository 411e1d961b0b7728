#include "api/quantity.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <limits>

namespace tephra::api {
namespace {

constexpr int kNanoExponent = -9;
// Exponents beyond this are refused instead of being wrapped around as Kubernetes does.
constexpr int64_t kMaxExponent = 1'000'000'000;
constexpr std::string_view kMaxBinary = "9223372036854775807";  // 2^63-1: the binary cap

bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}

bool IsSuffixChar(char c) {
  return std::string_view("eEinumkKMGTP").find(c) != std::string_view::npos;
}

Status Invalid(std::string_view text, std::string_view why) {
  return InvalidArgument("invalid quantity \"" + std::string(text) + "\": " + std::string(why));
}

struct Suffix {
  int base = 10;  // 10 or 2
  int64_t exponent = 0;
  QuantityFormat format = QuantityFormat::kDecimalSI;
};

struct NamedSuffix {
  std::string_view name;
  int base;
  int exponent;
};

constexpr std::array<NamedSuffix, 16> kSuffixes{{
    {"n", 10, -9},
    {"u", 10, -6},
    {"m", 10, -3},
    {"", 10, 0},
    {"k", 10, 3},
    {"M", 10, 6},
    {"G", 10, 9},
    {"T", 10, 12},
    {"P", 10, 15},
    {"E", 10, 18},
    {"Ki", 2, 10},
    {"Mi", 2, 20},
    {"Gi", 2, 30},
    {"Ti", 2, 40},
    {"Pi", 2, 50},
    {"Ei", 2, 60},
}};

// Reads a suffix the way Kubernetes does: a known SI suffix, else e/E followed by a signed
// integer exponent.
bool InterpretSuffix(std::string_view s, Suffix* out) {
  for (const NamedSuffix& named : kSuffixes) {
    if (named.name == s) {
      out->base = named.base;
      out->exponent = named.exponent;
      out->format = named.base == 2 ? QuantityFormat::kBinarySI : QuantityFormat::kDecimalSI;
      return true;
    }
  }
  if (s.size() < 2 || (s[0] != 'e' && s[0] != 'E')) return false;
  std::string_view num = s.substr(1);
  bool negative = false;
  if (num[0] == '+' || num[0] == '-') {
    negative = num[0] == '-';
    num.remove_prefix(1);
  }
  if (num.empty()) return false;
  int64_t value = 0;
  for (char c : num) {
    if (!IsDigit(c)) return false;
    value = value * 10 + (c - '0');
    if (value > kMaxExponent) value = kMaxExponent + 1;  // stays "too large" without overflow
  }
  out->base = 10;
  out->exponent = negative ? -value : value;
  out->format = QuantityFormat::kDecimalExponent;
  return true;
}

// digits *= factor, for a decimal digit string without leading zeros.
void MultiplyDigits(std::string* digits, uint32_t factor) {
  uint64_t carry = 0;
  for (size_t i = digits->size(); i-- > 0;) {
    uint64_t v = static_cast<uint64_t>((*digits)[i] - '0') * factor + carry;
    (*digits)[i] = static_cast<char>('0' + v % 10);
    carry = v / 10;
  }
  while (carry > 0) {
    digits->insert(digits->begin(), static_cast<char>('0' + carry % 10));
    carry /= 10;
  }
}

// digits += 1.
void IncrementDigits(std::string* digits) {
  for (size_t i = digits->size(); i-- > 0;) {
    if ((*digits)[i] != '9') {
      ++(*digits)[i];
      return;
    }
    (*digits)[i] = '0';
  }
  digits->insert(digits->begin(), '1');
}

// Compares the magnitudes a*10^ea and b*10^eb of normalised digit strings.
int CompareMagnitude(std::string_view a, int64_t ea, std::string_view b, int64_t eb) {
  if (a.empty() || b.empty()) return a.empty() ? (b.empty() ? 0 : -1) : 1;
  int64_t ma = static_cast<int64_t>(a.size()) + ea;  // position of the leading digit
  int64_t mb = static_cast<int64_t>(b.size()) + eb;
  if (ma != mb) return ma < mb ? -1 : 1;
  size_t common = std::min(a.size(), b.size());
  int c = a.substr(0, common).compare(b.substr(0, common));
  if (c != 0) return c < 0 ? -1 : 1;
  if (a.size() == b.size()) return 0;
  return a.size() < b.size() ? -1 : 1;  // the longer one has further non-zero digits
}

// Suffixes of 1024^0 .. 1024^6.
constexpr std::array<std::string_view, 7> kBinaryPowers{"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};

uint64_t Magnitude(int64_t v) {
  return v < 0 ? uint64_t{0} - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
}

int64_t Saturate(bool negative) {
  return negative ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max();
}

}  // namespace

void Quantity::Normalize() {
  size_t lead = digits_.find_first_not_of('0');
  if (lead == std::string::npos) {
    digits_.clear();
    exponent_ = 0;
    negative_ = false;
    return;
  }
  digits_.erase(0, lead);
  size_t last = digits_.find_last_not_of('0');
  exponent_ += static_cast<int32_t>(digits_.size() - 1 - last);
  digits_.resize(last + 1);
}

StatusOr<Quantity> Quantity::Parse(std::string_view text) {
  if (text.empty()) return Invalid(text, "empty");
  size_t pos = 0;
  bool negative = false;
  if (text[0] == '-' || text[0] == '+') {
    negative = text[0] == '-';
    ++pos;
  }
  // Kubernetes reads a sign followed only by zeros (or nothing) as zero.
  if (text.find_first_not_of('0', pos) == std::string_view::npos) return Quantity();

  size_t int_start = pos;
  while (pos < text.size() && IsDigit(text[pos])) ++pos;
  std::string_view integer = text.substr(int_start, pos - int_start);
  std::string_view fraction;
  if (pos < text.size() && text[pos] == '.') {
    size_t frac_start = ++pos;
    while (pos < text.size() && IsDigit(text[pos])) ++pos;
    fraction = text.substr(frac_start, pos - frac_start);
  }
  size_t suffix_start = pos;
  while (pos < text.size() && IsSuffixChar(text[pos])) ++pos;
  if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) ++pos;
  while (pos < text.size() && IsDigit(text[pos])) ++pos;
  if (pos != text.size()) {
    return Invalid(text,
                   "expected [+-]digits[.digits] and an optional suffix (n u m k M G T P E, "
                   "Ki Mi Gi Ti Pi Ei, or an exponent such as e3)");
  }
  std::string_view suffix_text = text.substr(suffix_start);
  Suffix suffix;
  if (!InterpretSuffix(suffix_text, &suffix)) {
    return Invalid(text, "unknown suffix \"" + std::string(suffix_text) + "\"");
  }
  if (suffix.exponent > kMaxExponent || suffix.exponent < -kMaxExponent) {
    return Invalid(text, "exponent out of range");
  }

  Quantity q;
  q.format_ = suffix.format;
  q.negative_ = negative;
  q.digits_.reserve(integer.size() + fraction.size());
  q.digits_.append(integer).append(fraction);
  size_t lead = q.digits_.find_first_not_of('0');
  if (lead == std::string::npos) return Quantity();  // "0.000Ki", ".", "m": zero
  q.digits_.erase(0, lead);
  int64_t exponent = -static_cast<int64_t>(fraction.size());
  if (suffix.base == 10) {
    exponent += suffix.exponent;
  } else {
    for (int64_t i = 0; i < suffix.exponent; i += 10) MultiplyDigits(&q.digits_, 1024);
  }
  // Round the magnitude up to a whole number of nano units, as Kubernetes does.
  if (exponent < kNanoExponent) {
    uint64_t drop = static_cast<uint64_t>(kNanoExponent - exponent);
    bool inexact;
    if (drop >= q.digits_.size()) {
      inexact = true;  // non-zero and below 1n
      q.digits_.clear();
    } else {
      inexact = q.digits_.find_first_not_of('0', q.digits_.size() - drop) != std::string::npos;
      q.digits_.resize(q.digits_.size() - drop);
    }
    if (inexact) IncrementDigits(&q.digits_);
    exponent = kNanoExponent;
  }
  if (exponent > std::numeric_limits<int32_t>::max() - static_cast<int64_t>(q.digits_.size())) {
    return Invalid(text, "exponent out of range");
  }
  q.exponent_ = static_cast<int32_t>(exponent);
  q.Normalize();
  if (q.format_ == QuantityFormat::kBinarySI && !q.IsZero()) {
    if (CompareMagnitude(q.digits_, q.exponent_, kMaxBinary, 0) > 0) {
      q.digits_ = std::string(kMaxBinary);
      q.exponent_ = 0;
    }
    // A fraction of one cannot be written with a binary suffix.
    if (CompareMagnitude(q.digits_, q.exponent_, "1", 0) < 0)
      q.format_ = QuantityFormat::kDecimalSI;
  }
  return q;
}

Quantity Quantity::FromInt(int64_t value, QuantityFormat format) {
  Quantity q;
  q.format_ = format;
  q.negative_ = value < 0;
  q.digits_ = std::to_string(Magnitude(value));
  q.Normalize();
  return q;
}

Quantity Quantity::FromMilli(int64_t milli, QuantityFormat format) {
  Quantity q = FromInt(milli, format);
  if (!q.IsZero()) q.exponent_ -= 3;
  return q;
}

int Quantity::Compare(const Quantity& other) const {
  if (Sign() != other.Sign()) return Sign() < other.Sign() ? -1 : 1;
  int c = CompareMagnitude(digits_, exponent_, other.digits_, other.exponent_);
  return negative_ ? -c : c;
}

int64_t Quantity::ScaledInt(int shift) const {
  if (IsZero()) return 0;
  int64_t e = static_cast<int64_t>(exponent_) + shift;
  uint64_t limit = negative_ ? (uint64_t{1} << 63) : static_cast<uint64_t>(Saturate(false));
  uint64_t magnitude = 0;
  auto accumulate = [&](std::string_view digits, int64_t zeros) {
    if (static_cast<int64_t>(digits.size()) + zeros > 19) return false;
    for (char c : digits) {
      magnitude = magnitude * 10 + static_cast<uint64_t>(c - '0');
    }
    for (int64_t i = 0; i < zeros; ++i) {
      if (magnitude > limit / 10) return false;
      magnitude *= 10;
    }
    return magnitude <= limit;
  };
  bool fits;
  if (e >= 0) {
    fits = accumulate(digits_, e);
  } else {
    // Digits are normalised, so cutting any of them drops a non-zero part: round away from 0.
    int64_t keep = std::max<int64_t>(static_cast<int64_t>(digits_.size()) + e, 0);
    fits = accumulate(std::string_view(digits_).substr(0, static_cast<size_t>(keep)), 0) &&
           magnitude < limit;
    if (fits) ++magnitude;
  }
  if (!fits) return Saturate(negative_);
  if (!negative_) return static_cast<int64_t>(magnitude);
  return magnitude == (uint64_t{1} << 63) ? std::numeric_limits<int64_t>::min()
                                          : -static_cast<int64_t>(magnitude);
}

int64_t Quantity::Value() const {
  return ScaledInt(0);
}

std::string Quantity::ReadableString() const {
  const int64_t value = ScaledInt(0);
  const uint64_t magnitude = Magnitude(value);
  const bool divisible = magnitude < 1024 || magnitude % 1024 == 0;
  if (format_ != QuantityFormat::kBinarySI || exponent_ < 0 || divisible) return String();
  if (magnitude % 1000 == 0) return FromInt(value, QuantityFormat::kDecimalSI).String();  // "1G"
  double scaled = static_cast<double>(magnitude);
  size_t power = 0;
  while (power + 1 < kBinaryPowers.size() && scaled >= 1024) {
    scaled /= 1024;
    ++power;
  }
  char digits[32];
  std::snprintf(digits, sizeof digits, "%.2f", scaled);
  std::string number = digits;
  number.erase(number.find_last_not_of('0') + 1);
  if (number.back() == '.') number.pop_back();
  return std::string("~") + (negative_ ? "-" : "") + number + std::string(kBinaryPowers[power]);
}

std::optional<int64_t> Quantity::AsInt64() const {
  if (IsZero()) return 0;
  if (exponent_ < 0) return std::nullopt;  // normalised digits: a negative exponent is a fraction
  if (digits_.size() + static_cast<size_t>(exponent_) > 19) return std::nullopt;
  uint64_t magnitude = 0;
  for (char c : digits_) magnitude = magnitude * 10 + static_cast<uint64_t>(c - '0');
  for (int32_t i = 0; i < exponent_; ++i) {
    if (magnitude > std::numeric_limits<uint64_t>::max() / 10) return std::nullopt;
    magnitude *= 10;
  }
  uint64_t limit = negative_ ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
  if (magnitude > limit) return std::nullopt;
  return negative_ ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
}

double Quantity::AsApproximateDouble() const {
  if (IsZero()) return 0;
  std::string text = (negative_ ? "-" : "") + digits_ + "e" + std::to_string(exponent_);
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc::result_out_of_range) {
    // Too large or too small for a double: infinity, or zero.
    bool huge = static_cast<int64_t>(digits_.size()) + exponent_ > 0;
    if (!huge) return negative_ ? -0.0 : 0.0;
    return negative_ ? -std::numeric_limits<double>::infinity()
                     : std::numeric_limits<double>::infinity();
  }
  return value;
}

StatusOr<Quantity> Quantity::Plus(const Quantity& other) const {
  if (other.IsZero()) return *this;
  if (IsZero()) {
    Quantity q = other;
    return q;
  }
  // Align both at the smaller exponent: a * 10^e + b * 10^e.
  int64_t low = std::min(exponent_, other.exponent_);
  int64_t width = std::max<int64_t>(static_cast<int64_t>(digits_.size()) + exponent_,
                                    static_cast<int64_t>(other.digits_.size()) + other.exponent_) -
                  low;
  if (width > static_cast<int64_t>(kMaxArithmeticDigits)) {
    return InvalidArgument("quantity arithmetic out of range: " + String() + " and " +
                           other.String() + " are too far apart to add exactly");
  }
  auto aligned = [&](const Quantity& q) {
    std::string d = q.digits_;
    d.append(static_cast<size_t>(q.exponent_ - low), '0');
    d.insert(0, static_cast<size_t>(width) - d.size(), '0');
    return d;
  };
  std::string a = aligned(*this);
  std::string b = aligned(other);
  Quantity q;
  q.format_ = format_;
  q.exponent_ = static_cast<int32_t>(low);
  if (negative_ == other.negative_) {
    q.negative_ = negative_;
    q.digits_.assign(a.size() + 1, '0');
    int carry = 0;
    for (size_t i = a.size(); i-- > 0;) {
      int v = (a[i] - '0') + (b[i] - '0') + carry;
      q.digits_[i + 1] = static_cast<char>('0' + v % 10);
      carry = v / 10;
    }
    q.digits_[0] = static_cast<char>('0' + carry);
  } else {
    // Subtract the smaller magnitude from the larger; the sign is the larger one's.
    bool this_larger = a >= b;
    const std::string& big = this_larger ? a : b;
    const std::string& small = this_larger ? b : a;
    q.negative_ = this_larger ? negative_ : other.negative_;
    q.digits_.assign(big.size(), '0');
    int borrow = 0;
    for (size_t i = big.size(); i-- > 0;) {
      int v = (big[i] - '0') - (small[i] - '0') - borrow;
      borrow = v < 0 ? 1 : 0;
      q.digits_[i] = static_cast<char>('0' + (v + 10) % 10);
    }
  }
  q.Normalize();
  return q;
}

StatusOr<Quantity> Quantity::Minus(const Quantity& other) const {
  Quantity negated = other;
  if (!negated.IsZero()) negated.negative_ = !negated.negative_;
  return Plus(negated);
}

int64_t Quantity::MilliValue() const {
  return ScaledInt(3);
}

std::string Quantity::String() const {
  if (IsZero()) return "0";
  std::string out = negative_ ? "-" : "";
  QuantityFormat format = format_;
  if (format == QuantityFormat::kBinarySI) {
    // Below 1024, or with a fractional part, a binary suffix would lose precision or clarity.
    if (CompareMagnitude(digits_, exponent_, "1024", 0) < 0 || exponent_ < 0) {
      format = QuantityFormat::kDecimalSI;
    }
  }
  if (format == QuantityFormat::kBinarySI) {
    uint64_t value = Magnitude(ScaledInt(0));
    size_t power = 0;
    while (power + 1 < kBinaryPowers.size() && value % 1024 == 0) {
      value /= 1024;
      ++power;
    }
    out += std::to_string(value);
    out += kBinaryPowers[power];
    return out;
  }
  // Decimal: lower the exponent to a multiple of three, padding the mantissa with zeros.
  int64_t exponent = exponent_;
  int64_t pad = ((exponent % 3) + 3) % 3;
  exponent -= pad;
  out += digits_;
  if (format == QuantityFormat::kDecimalSI && exponent > 18) {
    pad += exponent - 18;
    exponent = 18;
  }
  out.append(static_cast<size_t>(pad), '0');
  if (format == QuantityFormat::kDecimalExponent || exponent < -9) {
    if (exponent != 0) out += "e" + std::to_string(exponent);
    return out;
  }
  static constexpr std::array<std::string_view, 10> kDecimal{"n", "u", "m", "",  "k",
                                                             "M", "G", "T", "P", "E"};
  out += kDecimal[static_cast<size_t>((exponent + 9) / 3)];
  return out;
}

}  // namespace tephra::api
