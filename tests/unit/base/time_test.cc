// Go durations (base/time.h): parsed exactly as Go's time.ParseDuration, printed as its
// Duration.String.
#include "base/time.h"

#include <chrono>
#include <limits>
#include <optional>
#include <string_view>
#include <vector>

#include <catch2/catch.hpp>

namespace tephra::base {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::nanoseconds;
using std::chrono::seconds;

TEST_CASE("Go durations parse and format") {
  struct Case {
    const char* text;
    nanoseconds value;
  };
  for (const Case& c : std::vector<Case>{{"0", nanoseconds(0)},
                                         {"15s", seconds(15)},
                                         {"1m30s", seconds(90)},
                                         {"500ms", milliseconds(500)},
                                         {"1.5h", std::chrono::minutes(90)},
                                         {"-1.5s", milliseconds(-1500)},
                                         {"+2m", std::chrono::minutes(2)},
                                         {"300us", std::chrono::microseconds(300)},
                                         {"300\xC2\xB5s", std::chrono::microseconds(300)},
                                         {"7ns", nanoseconds(7)},
                                         {".5s", milliseconds(500)},
                                         {"1h2m3s4ms", nanoseconds(3723004000000)}}) {
    INFO(c.text);
    auto parsed = ParseDuration(c.text);
    REQUIRE(parsed.ok());
    CHECK(*parsed == c.value);
  }
  for (const char* bad : {"", "s", "1", "1x", ".s", "-", "9999999999h", "10000000000000000000ns"}) {
    INFO(bad);
    CHECK_FALSE(ParseDuration(bad).ok());
  }
  CHECK(FormatDuration(nanoseconds(0)) == "0s");
  CHECK(FormatDuration(seconds(15)) == "15s");
  CHECK(FormatDuration(seconds(90)) == "1m30s");
  CHECK(FormatDuration(std::chrono::hours(1)) == "1h0m0s");
  CHECK(FormatDuration(milliseconds(500)) == "500ms");
  CHECK(FormatDuration(milliseconds(1500)) == "1.5s");
  CHECK(FormatDuration(std::chrono::microseconds(1500)) == "1.5ms");
  CHECK(FormatDuration(std::chrono::microseconds(300)) == "300\xC2\xB5s");
  CHECK(FormatDuration(nanoseconds(42)) == "42ns");
  CHECK(FormatDuration(milliseconds(-61500)) == "-1m1.5s");
}

// The parsed value, or nullopt when ParseDuration refuses the text.
std::optional<nanoseconds> Parsed(std::string_view text) {
  StatusOr<nanoseconds> d = ParseDuration(text);
  if (!d.ok()) return std::nullopt;
  return *d;
}

TEST_CASE("ParseDuration is exact to the nanosecond over the whole int64 range") {
  CHECK(Parsed("0") == nanoseconds(0));
  CHECK(Parsed("30s") == seconds(30));
  CHECK(Parsed("1h30m") == minutes(90));
  CHECK(Parsed("1.5h") == minutes(90));
  CHECK(Parsed("300ms") == milliseconds(300));
  CHECK(Parsed("-1m") == minutes(-1));
  CHECK(Parsed("+5s") == seconds(5));
  CHECK(Parsed("1us") == nanoseconds(1000));
  CHECK(Parsed("1\xC2\xB5s") == nanoseconds(1000));
  CHECK(Parsed("1\xCE\xBCs") == nanoseconds(1000));
  CHECK(Parsed("2ns") == nanoseconds(2));
  CHECK(Parsed(".5s") == milliseconds(500));
  CHECK(Parsed("1.s") == seconds(1));
  CHECK(Parsed("1h1m1s1ms") == hours(1) + minutes(1) + seconds(1) + milliseconds(1));
  CHECK(Parsed("2562047h47m16.854775807s") == nanoseconds(std::numeric_limits<int64_t>::max()));
  CHECK(Parsed("-2562047h47m16.854775808s") == nanoseconds(std::numeric_limits<int64_t>::min()));
  for (const char* bad : {"", "s", "1", "10", "1x", "1hh", ".s", "-", "1h2",
                          "2562047h47m16.854775808s", "99999999999999999999h", "1 s", "1e3s"}) {
    INFO(bad);
    CHECK_FALSE(Parsed(bad));
  }
}

TEST_CASE("FormatDuration prints like Go's Duration.String, and parses back") {
  CHECK(FormatDuration(nanoseconds(0)) == "0s");
  CHECK(FormatDuration(seconds(90)) == "1m30s");
  CHECK(FormatDuration(hours(1)) == "1h0m0s");
  CHECK(FormatDuration(milliseconds(1500)) == "1.5s");
  CHECK(FormatDuration(milliseconds(300)) == "300ms");
  CHECK(FormatDuration(nanoseconds(1500)) == "1.5\xC2\xB5s");
  CHECK(FormatDuration(nanoseconds(12)) == "12ns");
  CHECK(FormatDuration(minutes(-5)) == "-5m0s");
  CHECK(FormatDuration(hours(26) + minutes(3) + milliseconds(500)) == "26h3m0.5s");
  CHECK(FormatDuration(nanoseconds(std::numeric_limits<int64_t>::min())) ==
        "-2562047h47m16.854775808s");
  for (nanoseconds d : {nanoseconds(seconds(90)), nanoseconds(hours(100)),
                        nanoseconds(milliseconds(1)), nanoseconds(999)}) {
    CHECK(Parsed(FormatDuration(d)) == d);
  }
}

}  // namespace
}  // namespace tephra::base
