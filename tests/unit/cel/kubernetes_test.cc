// Kubernetes' CEL libraries: quantity, semver, lists and regex; cel-go's lists and sets
// extensions as Kubernetes enables them.
#include <catch2/catch.hpp>

#include "cel/semver.h"
#include "tests/unit/cel/testing.h"

namespace tephra::cel {
namespace {

using testing::CompileError;
using testing::Eval;
using testing::Everything;

TEST_CASE("quantity: parsing, comparison, arithmetic and conversions") {
  CHECK(Eval("quantity('1Gi') == quantity('1024Mi')") == "true");
  CHECK(Eval("quantity('200M') == quantity('0.2G')") == "true");
  CHECK(Eval("quantity('50M').compareTo(quantity('50Mi'))") == "-1");
  CHECK(Eval("quantity('50Mi').isGreaterThan(quantity('50M'))") == "true");
  CHECK(Eval("quantity('50M').isLessThan(quantity('100M'))") == "true");
  CHECK(Eval("quantity('50k').add(quantity('20')) == quantity('50.02k')") == "true");
  CHECK(Eval("quantity('50k').add(20).sub(quantity('100k')).sub(-50000).asInteger()") == "20");
  CHECK(Eval("quantity('50k').asInteger()") == "50000");
  CHECK(Eval("quantity('9999999999999999999999999999999999999G').asInteger()") ==
        "error: cannot convert value to integer");
  CHECK(Eval("quantity('9999999999999999999999999999999999999G').isInteger()") == "false");
  CHECK(Eval("quantity('50.703k').asApproximateFloat()") == "50703");
  CHECK(Eval("sign(quantity('-5')) == -1 && sign(quantity('0')) == 0") == "true");
  CHECK(Eval("isQuantity('1.3G') && !isQuantity('1,3G') && !isQuantity('200K')") == "true");
  CHECK(Eval("quantity('10Mo')").starts_with("error: invalid quantity \"10Mo\""));
  // Kubernetes declares sign as a global function only.
  CHECK(CompileError("quantity('1').sign() == 1") ==
        "1:19: found no matching overload for 'sign' applied to 'kubernetes.Quantity.()'");
  CHECK(CompileError("quantity('1') < quantity('2')") ==
        "1:15: found no matching overload for '_<_' applied to '(kubernetes.Quantity, "
        "kubernetes.Quantity)'");
}

TEST_CASE("semver: parsing (strict and normalising), parts and precedence") {
  CHECK(Eval("semver('1.2.3').major() == 1 && semver('1.2.3').minor() == 2 && "
             "semver('1.2.3').patch() == 3") == "true");
  CHECK(Eval("semver('1.2.3').compareTo(semver('1.10.0'))") == "-1");
  CHECK(Eval("semver('1.0.0-alpha').isLessThan(semver('1.0.0'))") == "true");
  CHECK(Eval("semver('1.0.0-alpha.2').isLessThan(semver('1.0.0-alpha.10'))") == "true");
  CHECK(Eval("semver('1.0.0-alpha.1').isLessThan(semver('1.0.0-alpha.beta'))") == "true");
  CHECK(Eval("semver('1.0.0+build.1') == semver('1.0.0+build.2')") == "true");
  CHECK(Eval("semver('v1.2', true) == semver('1.2.0')") == "true");
  CHECK(Eval("semver('01.02.03', true) == semver('1.2.3')") == "true");
  CHECK(Eval("isSemver('1.2.3') && !isSemver('01.2.3') && isSemver('01.2.3', true)") == "true");
  CHECK(Eval("!isSemver('v1.0') && !isSemver('1.2') && isSemver('1.2', true)") == "true");
  CHECK(Eval("semver('1.2')").starts_with("error: invalid semantic version \"1.2\""));
  CHECK(Eval("semver('1.0-rc1', true)").starts_with("error: invalid semantic version"));
}

TEST_CASE("Semver orders as semver.org says") {
  const char* ordered[] = {"1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta",
                           "1.0.0-beta",  "1.0.0-beta.2",  "1.0.0-beta.11",
                           "1.0.0-rc.1",  "1.0.0",         "1.0.1",
                           "1.1.0",       "2.0.0",         "18446744073709551615.0.0"};
  for (size_t i = 0; i + 1 < std::size(ordered); ++i) {
    INFO(ordered[i] << " < " << ordered[i + 1]);
    StatusOr<Semver> a = Semver::Parse(ordered[i]);
    StatusOr<Semver> b = Semver::Parse(ordered[i + 1]);
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    CHECK(a->Compare(*b) == -1);
    CHECK(b->Compare(*a) == 1);
  }
  for (const char* bad : {"", "1", "1.2", "1.2.3.4", "01.2.3", "1.2.3-", "1.2.3-01", "1.2.3+",
                          "1.2.3-a..b", "v1.2.3", "18446744073709551616.0.0", " 1.2.3"}) {
    INFO(bad);
    CHECK_FALSE(Semver::Parse(bad).ok());
  }
}

TEST_CASE("Kubernetes' list library and cel-go's lists and sets extensions") {
  Environment env = Everything();
  CHECK(Eval("[1, 2, 3].isSorted() && ![3, 1].isSorted() && ['a', 'b'].isSorted()", env) == "true");
  CHECK(Eval("[1, 2, 3].sum()", env) == "6");
  CHECK(Eval("[1.5, 2.5].sum()", env) == "4");
  CHECK(Eval("[].sum()", env) == "0");
  CHECK(Eval("[9223372036854775807, 1].sum()", env) == "error: integer overflow");
  CHECK(Eval("[3, 1, 2].min() == 1 && [3, 1, 2].max() == 3", env) == "true");
  CHECK(Eval("[].min()", env) == "error: min called on an empty list");
  CHECK(Eval("[1, 2, 1].indexOf(1) == 0 && [1, 2, 1].lastIndexOf(1) == 2", env) == "true");
  CHECK(Eval("[1, 2].indexOf(3)", env) == "-1");
  CHECK(Eval("[1, 2, 3, 4].slice(1, 3)", env) == "[2, 3]");
  CHECK(Eval("[1, 2].slice(1, 3)", env) == "error: cannot slice(1, 3), list is length 2");
  CHECK(Eval("[[1], [2, [3]]].flatten()", env) == "[1, 2, [3]]");
  CHECK(Eval("[[1], [2, [3]]].flatten(2)", env) == "[1, 2, 3]");
  CHECK(Eval("[3, 1, 2].sort()", env) == "[1, 2, 3]");
  CHECK(Eval("[1, 'a'].sort()", env) == "error: list elements must have the same comparable type");
  CHECK(Eval("lists.range(3)", env) == "[0, 1, 2]");
  CHECK(Eval("[1, 2, 3].reverse()", env) == "[3, 2, 1]");
  CHECK(Eval("[1, 2, 1, 2.0].distinct()", env) == "[1, 2]");
  CHECK(Eval("sets.contains([1, 2, 3], [1, 2]) && !sets.contains([1], [2])", env) == "true");
  CHECK(Eval("sets.equivalent([1, 2], [2, 1, 1]) && sets.intersects([1, 2], [2])", env) == "true");
}

TEST_CASE("Kubernetes' regex library: find and findAll, patterns checked at compile") {
  CHECK(Eval("'abc123def456'.find('[0-9]+')") == "\"123\"");
  CHECK(Eval("'xyz'.find('[0-9]+')") == "\"\"");
  CHECK(Eval("'a1b22c333'.findAll('[0-9]+')") == "[\"1\", \"22\", \"333\"]");
  CHECK(Eval("'a1b22c333'.findAll('[0-9]+', 2)") == "[\"1\", \"22\"]");
  CHECK(Eval("'abc'.findAll('x*')") == "[\"\", \"\", \"\", \"\"]");
  CHECK(CompileError("'a'.find('(')").starts_with("1:10: invalid regular expression: missing )"));
}

}  // namespace
}  // namespace tephra::cel
