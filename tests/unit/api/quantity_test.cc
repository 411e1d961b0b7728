#include "api/quantity.h"

#include <limits>
#include <string>

#include <catch2/catch.hpp>

namespace tephra::api {
namespace {

std::string Canonical(const std::string& text) {
  StatusOr<Quantity> q = Quantity::Parse(text);
  if (!q.ok()) return "error: " + q.status().message();
  return q->String();
}

// Canonical forms as the API server prints them (checked against kube-apiserver v1.37 with
// server-side dry runs; see tests/integration/api_quantity_test.cc for the live comparison).
TEST_CASE("Quantity prints the canonical form Kubernetes prints") {
  struct Case {
    const char* in;
    const char* out;
  };
  const Case cases[] = {
      // decimal SI suffixes, each one
      {"1n", "1n"},
      {"1u", "1u"},
      {"1m", "1m"},
      {"1", "1"},
      {"1k", "1k"},
      {"1M", "1M"},
      {"1G", "1G"},
      {"1T", "1T"},
      {"1P", "1P"},
      {"1E", "1E"},
      // binary SI suffixes, each one
      {"1Ki", "1Ki"},
      {"1Mi", "1Mi"},
      {"1Gi", "1Gi"},
      {"1Ti", "1Ti"},
      {"1Pi", "1Pi"},
      {"1Ei", "1Ei"},
      // moving to the largest suffix without losing precision
      {"1000m", "1"},
      {"1500m", "1500m"},
      {"1000k", "1M"},
      {"10k", "10k"},
      {"100k", "100k"},
      {"1000n", "1u"},
      {"1500n", "1500n"},
      {"0.1", "100m"},
      {"1.5", "1500m"},
      {".5", "500m"},
      {"1.000", "1"},
      {"00012", "12"},
      {"1.", "1"},
      {"+1k", "1k"},
      {"1.G", "1G"},
      {"123.456789012345", "123456789013n"},
      {"1024Mi", "1Gi"},
      {"1.5Gi", "1536Mi"},
      {"0.5Ei", "512Pi"},
      {"1.5Ei", "1536Pi"},
      {"1000000000000000Ki", "976562500000Mi"},
      {"8Ki", "8Ki"},
      {"1023Ki", "1023Ki"},
      // binary values below 1024 or with a fraction print as decimal
      {"1.5Ki", "1536"},
      {"0.5Ki", "512"},
      {"0.001Ki", "1024m"},
      {"0.9Gi", "966367641600m"},
      {"1.1Ei", "1268213655067531673600m"},
      // exponents keep their own format
      {"1e3", "1e3"},
      {"1E3", "1e3"},
      {"12e6", "12e6"},
      {"10e2", "1e3"},
      {"1e19", "10e18"},
      {"2e-1", "200e-3"},
      {"1e-3", "1e-3"},
      {"1E-3", "1e-3"},
      {"1e+3", "1e3"},
      {"1e0", "1"},
      {"1000e-3", "1"},
      {"1e1", "10"},
      {"1e2", "100"},
      {"5e3", "5e3"},
      {"1e9999", "1e9999"},
      {"1e+003", "1e3"},
      // rounding up to nano units
      {"1e-20", "1e-9"},
      {"0.0000000001", "1n"},
      {"0.0000000011", "2n"},
      {"-0.0000000001", "-1n"},
      // the binary cap at 2^63-1
      {"8Ei", "9223372036854775807"},
      {"10Ei", "9223372036854775807"},
      {"7Ei", "7Ei"},
      {"-8Ei", "-9223372036854775807"},
      // decimal values are not capped
      {"9223372036854775808", "9223372036854775808"},
      {"99999999999999999999999", "99999999999999999999999"},
      {"123456789012345678901234567890123456789012", "123456789012345678901234567890123456789012"},
      // above E: keep the largest suffix (Kubernetes drops the suffix here, changing the value)
      {"1000E", "1000E"},
      // negatives
      {"-1", "-1"},
      {"-1500m", "-1500m"},
      {"-1Ki", "-1Ki"},
      {"-1.5Gi", "-1536Mi"},
      {"-0", "0"},
      // zeros, including the odd spellings Kubernetes accepts as zero
      {"0", "0"},
      {"0m", "0"},
      {"0Ki", "0"},
      {"0e5", "0"},
      {"-", "0"},
      {"+", "0"},
      {".", "0"},
      {"Ki", "0"},
      {"m", "0"},
      {"e3", "0"},
      {"-.", "0"},
      {".e3", "0"},
      {"000", "0"},
  };
  for (const Case& c : cases) {
    INFO("input " << c.in);
    CHECK(Canonical(c.in) == c.out);
  }
}

TEST_CASE("Quantity rejects malformed input and names the problem") {
  const char* bad_format[] = {"1e3.5", "1.5.5", "1Gb", "1KiB",  "0x10",  "1,5",
                              "1_000", " 1",    "1 ",  "1e--3", "1e3e3", "abc"};
  for (const char* text : bad_format) {
    INFO("input " << text);
    StatusOr<Quantity> q = Quantity::Parse(text);
    REQUIRE_FALSE(q.ok());
    CHECK(q.status().message().find("expected [+-]digits[.digits]") != std::string::npos);
  }
  const char* bad_suffix[] = {"1e", "1ee3", "1K", "1mi", "1ki", "1-", "1Gi5", "1m5"};
  for (const char* text : bad_suffix) {
    INFO("input " << text);
    StatusOr<Quantity> q = Quantity::Parse(text);
    REQUIRE_FALSE(q.ok());
    CHECK(q.status().message().find("unknown suffix") != std::string::npos);
  }
  CHECK(Quantity::Parse("1Gi5").status().message() ==
        "invalid quantity \"1Gi5\": unknown suffix \"Gi5\"");
  CHECK(Quantity::Parse("").status().message() == "invalid quantity \"\": empty");
  CHECK(Quantity::Parse("1e9999999999").status().message() ==
        "invalid quantity \"1e9999999999\": exponent out of range");
}

TEST_CASE("Value and MilliValue round away from zero and saturate") {
  auto q = [](const char* text) { return *Quantity::Parse(text); };
  CHECK(q("1").MilliValue() == 1000);
  CHECK(q("1500m").Value() == 2);
  CHECK(q("1500m").MilliValue() == 1500);
  CHECK(q("1n").MilliValue() == 1);
  CHECK(q("1n").Value() == 1);
  CHECK(q("-1n").MilliValue() == -1);
  CHECK(q("-1500m").Value() == -2);
  CHECK(q("1001u").MilliValue() == 2);
  CHECK(q("1Gi").Value() == 1073741824);
  CHECK(q("1.5Gi").MilliValue() == 1610612736000);
  CHECK(q("0.9Gi").Value() == 966367642);
  CHECK(q("12e6").Value() == 12000000);
  CHECK(q("7Ei").Value() == 7 * (int64_t{1} << 60));
  CHECK(q("8Ei").Value() == std::numeric_limits<int64_t>::max());
  CHECK(q("8Ei").MilliValue() == std::numeric_limits<int64_t>::max());
  CHECK(q("1e9999").Value() == std::numeric_limits<int64_t>::max());
  CHECK(q("-1e9999").MilliValue() == std::numeric_limits<int64_t>::min());
  CHECK(q("9223372036854775807").Value() == std::numeric_limits<int64_t>::max());
  CHECK(q("9223372036854775808").Value() == std::numeric_limits<int64_t>::max());
  CHECK(q("-9223372036854775808").Value() == std::numeric_limits<int64_t>::min());
  CHECK(q("-9223372036854775809").Value() == std::numeric_limits<int64_t>::min());
  CHECK(q("9223372036854775.807").MilliValue() == std::numeric_limits<int64_t>::max());
  CHECK(q("9223372036854775.808").MilliValue() == std::numeric_limits<int64_t>::max());
  CHECK(q("0").MilliValue() == 0);
}

TEST_CASE("Quantities compare by value, whatever the format") {
  auto q = [](const char* text) { return *Quantity::Parse(text); };
  CHECK(q("1") == q("1000m"));
  CHECK(q("1Ki") == q("1024"));
  CHECK(q("1k") == q("1e3"));
  CHECK(q("1k") < q("1Ki"));
  CHECK(q("-1") < q("0"));
  CHECK(q("-2") < q("-1"));
  CHECK(q("1.5") > q("1.499999999"));
  CHECK(q("1e9999") > q("8Ei"));
  CHECK(q("100m") < q("1"));
  CHECK(q("0.1") == q("100m"));
  CHECK(q("10") > q("9.999"));
  CHECK(q("0") == Quantity());
  CHECK(q("1").Compare(q("2")) == -1);
  CHECK(q("2").Compare(q("2")) == 0);
  CHECK(q("1Gi").Sign() == 1);
  CHECK(q("-1Gi").Sign() == -1);
  CHECK(q("0Gi").Sign() == 0);
  CHECK(q("1Gi").format() == QuantityFormat::kBinarySI);
  CHECK(q("0.5Ki").format() == QuantityFormat::kBinarySI);
  CHECK(q("0.0001Ki").format() == QuantityFormat::kDecimalSI);
  CHECK(q("1e3").format() == QuantityFormat::kDecimalExponent);
}

TEST_CASE("Quantities built from integers print like Kubernetes' constructors") {
  CHECK(Quantity::FromMilli(1500).String() == "1500m");
  CHECK(Quantity::FromMilli(2000).String() == "2");
  CHECK(Quantity::FromMilli(0).String() == "0");
  CHECK(Quantity::FromMilli(-250).String() == "-250m");
  CHECK(Quantity::FromInt(int64_t{1} << 30, QuantityFormat::kBinarySI).String() == "1Gi");
  CHECK(Quantity::FromInt(1536 * 1024 * 1024LL, QuantityFormat::kBinarySI).String() == "1536Mi");
  CHECK(Quantity::FromInt(1000, QuantityFormat::kBinarySI).String() == "1k");
  CHECK(Quantity::FromInt(12000000, QuantityFormat::kDecimalExponent).String() == "12e6");
  CHECK(
      Quantity::FromInt(std::numeric_limits<int64_t>::min(), QuantityFormat::kBinarySI).String() ==
      "-8Ei");
  CHECK(Quantity::FromInt(std::numeric_limits<int64_t>::max()).Value() ==
        std::numeric_limits<int64_t>::max());
}

}  // namespace
}  // namespace tephra::api

namespace tephra::api {
namespace {

Quantity Q(const std::string& text) {
  StatusOr<Quantity> q = Quantity::Parse(text);
  REQUIRE(q.ok());
  return *q;
}

TEST_CASE("Quantity adds and subtracts exactly, as Kubernetes' Add and Sub") {
  CHECK(Q("50k").Plus(Q("20"))->Compare(Q("50.02k")) == 0);
  CHECK(Q("50k").Minus(Q("20"))->Compare(Q("49.98k")) == 0);
  CHECK(Q("1Gi").Plus(Q("1Gi"))->String() == "2Gi");
  CHECK(Q("1").Minus(Q("3"))->String() == "-2");
  CHECK(Q("-1").Minus(Q("-3"))->String() == "2");
  CHECK(Q("100m").Plus(Q("-100m"))->IsZero());
  CHECK(Q("1n").Plus(Q("1E"))->Compare(Q("1000000000000000000000000001n")) == 0);
  CHECK(Q("0").Plus(Q("5Mi"))->String() == "5Mi");  // zero takes the other's format
  // Exact beyond int64: no rounding through a double.
  CHECK(Q("9223372036854775807").Plus(Q("1"))->Compare(Q("9223372036854775808")) == 0);
  StatusOr<Quantity> far = Q("1e2000").Plus(Q("1n"));
  REQUIRE_FALSE(far.ok());
  CHECK(far.status().message().find("too far apart") != std::string::npos);
}

TEST_CASE("Quantity converts to int64 only when it is a whole number that fits") {
  CHECK(Q("50k").AsInt64() == 50000);
  CHECK(Q("-2Ki").AsInt64() == -2048);
  CHECK(Q("0").AsInt64() == 0);
  CHECK(Q("9223372036854775807").AsInt64() == std::numeric_limits<int64_t>::max());
  CHECK(Q("-9223372036854775808").AsInt64() == std::numeric_limits<int64_t>::min());
  CHECK_FALSE(Q("9223372036854775808").AsInt64().has_value());
  CHECK_FALSE(Q("1500m").AsInt64().has_value());
  CHECK_FALSE(Q("9999999999999999999999999999999999999G").AsInt64().has_value());
}

TEST_CASE("Quantity gives the nearest double") {
  CHECK(Q("50.703k").AsApproximateDouble() == 50703.0);
  CHECK(Q("1Mi").AsApproximateDouble() == 1048576.0);
  CHECK(Q("-250m").AsApproximateDouble() == -0.25);
  CHECK(Q("1e400").AsApproximateDouble() == std::numeric_limits<double>::infinity());
}

}  // namespace
}  // namespace tephra::api
