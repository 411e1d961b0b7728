// Kubernetes resource quantities (k8s.io/apimachinery resource.Quantity) with the same parsing,
// rounding, capping and canonical printing as the API server.
//
// A quantity is an exact decimal: significant digits times a power of ten, never a float. As in
// Kubernetes, parsing rounds the magnitude up to a multiple of 1e-9 ("1e-20" becomes 1n), caps
// binary-suffixed values at 2^63-1, and remembers the suffix family (binary Ki..Ei, decimal
// n..E, or exponent e/E) to print the value in that family's canonical form again:
//   "1000m" -> "1", "1024Mi" -> "1Gi", "1.5Gi" -> "1536Mi", "0.1" -> "100m", "12e6" -> "12e6",
//   "1e19" -> "10e18", "0.9Gi" -> "966367641600m" (a fraction of a byte cannot be binary).
//
// Two differences from the API server, both deliberate:
//  * Kubernetes echoes some well-formed but non-canonical inputs verbatim ("+1k", "1.", "007",
//    "1e0"); String() here always prints the canonical form of the same value ("1k", "1", "7",
//    "1"). The lossless codecs keep the original text of values they do not change.
//  * Kubernetes prints decimal values of 1e21 and above with no suffix at all ("1000E" comes back
//    as "1", a different number); String() keeps the largest suffix instead ("1000E").
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace tephra::api {

// The suffix family a quantity was written in; it decides how String() prints it.
enum class QuantityFormat : uint8_t {
  kDecimalSI,        // n u m "" k M G T P E
  kBinarySI,         // Ki Mi Gi Ti Pi Ei
  kDecimalExponent,  // e3, E-6
};

class Quantity {
 public:
  // Zero.
  Quantity() = default;

  // Parses Kubernetes quantity syntax: [+-]digits[.digits][suffix]. The error names the
  // problem ("unknown suffix \"Gb\"", ...). Like Kubernetes, leading or trailing spaces are an
  // error here; the JSON decoders trim them first, as the API server does.
  static StatusOr<Quantity> Parse(std::string_view text);

  // value / 1000 exactly, e.g. FromMilli(1500) prints "1500m".
  static Quantity FromMilli(int64_t milli, QuantityFormat format = QuantityFormat::kDecimalSI);
  // An integer value, e.g. FromInt(1 << 30, kBinarySI) prints "1Gi".
  static Quantity FromInt(int64_t value, QuantityFormat format = QuantityFormat::kDecimalSI);

  // Canonical text, as the API server serialises the value.
  std::string String() const;
  // Text for people: String(), except that a byte count no binary suffix divides reads as its
  // exact decimal form when one exists ("1G") and otherwise rounded ("~38.4Gi", not
  // "41231686042").
  std::string ReadableString() const;

  // The value rounded away from zero to an integer (Kubernetes Value()); saturates at the
  // int64 limits instead of overflowing.
  int64_t Value() const;
  // The value times 1000, rounded away from zero (Kubernetes MilliValue()); saturating.
  int64_t MilliValue() const;

  bool IsZero() const { return digits_.empty(); }
  // -1, 0 or 1.
  int Sign() const { return IsZero() ? 0 : (negative_ ? -1 : 1); }
  QuantityFormat format() const { return format_; }

  // The value as an int64 when it is a whole number that fits (Kubernetes AsInt64).
  std::optional<int64_t> AsInt64() const;
  // The nearest double; +-infinity beyond double's range (Kubernetes AsApproximateFloat64).
  double AsApproximateDouble() const;

  // this + other and this - other, exactly (Kubernetes Add and Sub); the result keeps this
  // quantity's format unless this is zero. Refused when aligning the two would take more than
  // kMaxArithmeticDigits digits (1e2000 + 1e-9), which Kubernetes would compute at great cost.
  static constexpr size_t kMaxArithmeticDigits = 1000;
  StatusOr<Quantity> Plus(const Quantity& other) const;
  StatusOr<Quantity> Minus(const Quantity& other) const;

  // Numeric comparison; the format does not take part (Kubernetes Cmp/Equal).
  int Compare(const Quantity& other) const;
  bool operator==(const Quantity& other) const { return Compare(other) == 0; }
  std::strong_ordering operator<=>(const Quantity& other) const { return Compare(other) <=> 0; }

 private:
  // value = (negative_ ? -1 : 1) * digits_ * 10^exponent_, where digits_ has neither leading
  // nor trailing zeros (empty for zero). Short values stay in the string's inline buffer.
  std::string digits_;
  int32_t exponent_ = 0;
  bool negative_ = false;
  QuantityFormat format_ = QuantityFormat::kDecimalSI;

  // value * 10^shift rounded away from zero, saturating.
  int64_t ScaledInt(int shift) const;
  void Normalize();
};

}  // namespace tephra::api
