#include "base/strings.h"

#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace tephra::base {
namespace {

using List = std::vector<std::string>;

TEST_CASE("a comma list is split, its items trimmed and empty ones dropped") {
  CHECK(SplitCommaList("") == List{});
  CHECK(SplitCommaList("a") == List{"a"});
  CHECK(SplitCommaList("gang,priority") == List{"gang", "priority"});
  CHECK(SplitCommaList(" enqueue, allocate ,backfill ") == List{"enqueue", "allocate", "backfill"});
  CHECK(SplitCommaList("a,,b,") == List{"a", "b"});
  CHECK(SplitCommaList(" , ,") == List{});
  CHECK(SplitCommaList("nvidia.com/gpu,\texample.com/foo\n") ==
        List{"nvidia.com/gpu", "example.com/foo"});
  CHECK(SplitCommaList("a b, c") == List{"a b", "c"});
}

TEST_CASE("TrimSpace removes whitespace at both ends only") {
  CHECK(TrimSpace("") == "");
  CHECK(TrimSpace(" \t ") == "");
  CHECK(TrimSpace(" cpu = 2\n") == "cpu = 2");
}

}  // namespace
}  // namespace tephra::base
