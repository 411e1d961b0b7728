#include "api/duration.h"

#include <limits>

#include <catch2/catch.hpp>

namespace tephra::api {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::nanoseconds;
using std::chrono::seconds;

TEST_CASE("ParseDuration reads Go duration syntax") {
  CHECK(ParseDuration("0") == Duration(0));
  CHECK(ParseDuration("30s") == seconds(30));
  CHECK(ParseDuration("1h30m") == minutes(90));
  CHECK(ParseDuration("1.5h") == minutes(90));
  CHECK(ParseDuration("300ms") == milliseconds(300));
  CHECK(ParseDuration("-1m") == minutes(-1));
  CHECK(ParseDuration("+5s") == seconds(5));
  CHECK(ParseDuration("1us") == nanoseconds(1000));
  CHECK(ParseDuration("1\xC2\xB5s") == nanoseconds(1000));
  CHECK(ParseDuration("1\xCE\xBCs") == nanoseconds(1000));
  CHECK(ParseDuration("2ns") == nanoseconds(2));
  CHECK(ParseDuration(".5s") == milliseconds(500));
  CHECK(ParseDuration("1.s") == seconds(1));
  CHECK(ParseDuration("1h1m1s1ms") == hours(1) + minutes(1) + seconds(1) + milliseconds(1));
  CHECK(ParseDuration("2562047h47m16.854775807s") ==
        nanoseconds(std::numeric_limits<int64_t>::max()));
  CHECK(ParseDuration("-2562047h47m16.854775808s") ==
        nanoseconds(std::numeric_limits<int64_t>::min()));
  for (const char* bad : {"", "s", "1", "10", "1x", "1hh", ".s", "-", "1h2", "2562047h47m16.854775808s",
                          "99999999999999999999h", "1 s", "1e3s"}) {
    INFO(bad);
    CHECK_FALSE(ParseDuration(bad));
  }
}

TEST_CASE("FormatDuration prints like Go's Duration.String") {
  CHECK(FormatDuration(Duration(0)) == "0s");
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
  for (Duration d : {Duration(seconds(90)), Duration(hours(100)), Duration(milliseconds(1)),
                     Duration(nanoseconds(999))}) {
    CHECK(ParseDuration(FormatDuration(d)) == d);
  }
}

}  // namespace
}  // namespace tephra::api
