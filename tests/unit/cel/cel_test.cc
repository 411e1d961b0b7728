// The language: compile errors, error semantics, arithmetic, equality, maps, strings,
// conversions, macros, and the limits (cost, nesting, length).
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "cel/dra.h"
#include "tests/unit/cel/testing.h"

namespace tephra::cel {
namespace {

using testing::CompileError;
using testing::Eval;
using testing::Everything;

// Positions are cel-go's (kube-apiserver reports the same for a DeviceClass): an operator at
// its token, a call at its '(', a selection at its '.'.
TEST_CASE("compile errors name the position and the rule") {
  const Environment& dra = DeviceSelectorEnvironment();
  CHECK(CompileError("device.driver == devce.driver", dra) ==
        "1:18: undeclared reference to 'devce' (in container '')");
  CHECK(CompileError("device.drivr == 'a'", dra) == "1:7: undefined field 'drivr'");
  CHECK(CompileError("device.driver", dra) == "the expression must evaluate to bool, not string");
  CHECK(CompileError("device.driver == 1", dra) ==
        "1:15: found no matching overload for '_==_' applied to '(string, int)'");
  CHECK(CompileError("1 + ", dra) == "1:5: Syntax error: unexpected end of input");
  CHECK(CompileError("(1 == 1", dra) ==
        "1:8: Syntax error: unexpected end of input: an opening bracket at 1:1 is not closed");
  CHECK(CompileError("a = 1", dra) ==
        "1:3: Syntax error: '=' is not an operator (did you mean '=='?)");
  CHECK(CompileError("[1, 'a'] == []", dra) == "1:5: expected type 'int' but found 'string'");
  CHECK(CompileError("'x'.contains(1)", dra) ==
        "1:13: found no matching overload for 'contains' applied to 'string.(int)'");
  CHECK(CompileError("ip('10.0.0.1').family() == 4", dra) ==
        "1:3: function 'ip' (Kubernetes' IP library) is not supported");
  CHECK(CompileError("device.driver.matches('[')", dra)
            .starts_with("1:23: invalid regular expression: missing ]"));
  CHECK(CompileError("[1].all(1, true)", dra) ==
        "1:9: Syntax error: all() variable must be a simple name");
  CHECK(CompileError("has(device)", dra) ==
        "1:4: Syntax error: invalid argument to has() macro: it takes a field selection");
  CHECK(CompileError("x.?y", dra) == "1:2: Syntax error: optional syntax is not supported");
  CHECK(CompileError("Msg{a: 1}", dra) ==
        "1:4: Syntax error: message construction (Name{field: value}) is not supported");
  CHECK(CompileError("let", dra) == "1:1: Syntax error: reserved identifier: let");
  CHECK(CompileError("'a\nb' == ''", dra) ==
        "1:3: Syntax error: newline in a single-quoted string literal");
  CHECK(CompileError("'abc' == '\\q'", dra) == "1:11: Syntax error: invalid escape sequence");
  CHECK(CompileError("'%d'.format([1, 'a']) == ''", dra) ==
        "1:12: too many arguments supplied to string.format (expected 1, got 2)");
  CHECK(CompileError("'%d %s'.format([1]) == ''", dra) == "1:15: index 1 out of range");
  CHECK(CompileError("'%d'.format(['a']) == ''", dra) ==
        "1:14: error during formatting: decimal clause can only be used on integers, was given "
        "string");
  CHECK(CompileError("'%s'.format([[1, quantity('1')]]) == ''", dra) ==
        "1:26: error during formatting: string clause can only be used on strings, bools, bytes, "
        "ints, doubles, maps, lists, types, durations, and timestamps, was given "
        "kubernetes.Quantity");
  CHECK(CompileError("'%.2'.format([1.0]) == ''", dra) ==
        "1:13: could not parse formatting clause: error while parsing precision: could not find "
        "end of precision specifier");
  CHECK(CompileError("'%q'.format([1]) == ''", dra) ==
        "1:12: could not parse formatting clause: unrecognized formatting clause \"q\"");
  CHECK(CompileError("'100%'.format([]) == ''", dra) == "1:14: unexpected end of string");
  // A device attribute's value is google.protobuf.Any to Kubernetes, which no clause takes.
  CHECK(CompileError("'%s'.format([device.attributes['a'].x]) == ''", dra) ==
        "1:36: error during formatting: string clause can only be used on strings, bools, bytes, "
        "ints, doubles, maps, lists, types, durations, and timestamps, was given "
        "google.protobuf.Any");
  CHECK(CompileError("'%s %d %.1f %x %%'.format([dyn(device.attributes['a'].x), 1u, 'NaN', "
                     "b'a']) == ''",
                     dra) == "");
  CHECK(CompileError("9223372036854775808 > 0", dra) ==
        "1:1: Syntax error: invalid int literal: 9223372036854775808 is out of range");
}

TEST_CASE("errors are errors: && and || absorb them only where the specification says") {
  // false decides &&, true decides ||, whichever side the error is on.
  CHECK(Eval("1/0 == 0 && false") == "false");
  CHECK(Eval("false && 1/0 == 0") == "false");
  CHECK(Eval("1/0 == 0 || true") == "true");
  CHECK(Eval("true || 1/0 == 0") == "true");
  // Otherwise the error is the result, never true.
  CHECK(Eval("true && 1/0 == 0") == "error: division by zero");
  CHECK(Eval("1/0 == 0 && true") == "error: division by zero");
  CHECK(Eval("false || 1/0 == 0") == "error: division by zero");
  CHECK(Eval("!(1/0 == 0)") == "error: division by zero");
  CHECK(Eval("1/0 == 0 ? true : true") == "error: division by zero");
  CHECK(Eval("[1, 2].all(x, 10 / (x - 1) > 0)") == "error: division by zero");
  CHECK(Eval("[1, 2].exists(x, 10 / (x - 1) > 0)") == "true");
  CHECK(Eval("[0, 2].exists_one(x, 10 / x > 0)") == "error: division by zero");
  CHECK(Eval("[1, 2].map(x, 10 / (x - 1))") == "error: division by zero");
}

TEST_CASE("integer arithmetic: overflow and division by zero are errors") {
  CHECK(Eval("9223372036854775807 + 1") == "error: integer overflow");
  CHECK(Eval("-9223372036854775808 - 1") == "error: integer overflow");
  CHECK(Eval("4611686018427387904 * 2") == "error: integer overflow");
  CHECK(Eval("-9223372036854775808 / -1") == "error: integer overflow");
  CHECK(Eval("-9223372036854775808 % -1") == "error: integer overflow");
  CHECK(Eval("-(-9223372036854775807 - 1)") == "error: integer overflow");
  CHECK(Eval("0u - 1u") == "error: integer overflow");
  CHECK(Eval("18446744073709551615u + 1u") == "error: integer overflow");
  CHECK(Eval("7 / 0") == "error: division by zero");
  CHECK(Eval("7 % 0") == "error: modulus by zero");
  CHECK(Eval("7u / 0u") == "error: division by zero");
  CHECK(Eval("-7 / 2") == "-3");  // truncation toward zero
  CHECK(Eval("-7 % 2") == "-1");
  CHECK(Eval("1.0 / 0.0") == "+Inf");
  CHECK(Eval("-9223372036854775808") == "-9223372036854775808");
}

TEST_CASE("equality is heterogeneous across numbers, ordering crosses numeric types") {
  CHECK(Eval("dyn(1) == 1u") == "true");
  CHECK(Eval("dyn(1) == 1.0") == "true");
  CHECK(Eval("dyn(1) == '1'") == "false");
  CHECK(Eval("dyn([1, 2]) == [1.0, 2.0]") == "true");
  CHECK(Eval("dyn({'a': 1}) == {'a': 1u}") == "true");
  CHECK(Eval("0.0/0.0 == 0.0/0.0") == "false");
  CHECK(Eval("1 < 1.5 && 2u > 1 && -1 < 0u") == "true");
  CHECK(Eval("'a' < 'b' && b'a' < b'b' && false < true") == "true");
  CHECK(CompileError("1 == 1u") ==
        "1:3: found no matching overload for '_==_' applied to '(int, uint)'");
}

TEST_CASE("maps: bool, int, uint and string keys, 1, 1u and 1.0 are one key") {
  Environment env = Everything();
  CHECK(Eval("dyn({1: 'a'})[1u]", env) == "\"a\"");
  CHECK(Eval("dyn({1: 'a'})[1.0]", env) == "\"a\"");
  CHECK(Eval("{1: 'a'}[2]", env) == "error: no such key: 2");
  CHECK(Eval("{true: 1, 'k': 2, 3u: 3}['k']", env) == "2");
  CHECK(Eval("{1: 'a', 1u: 'b'}", env) == "error: Failed with repeated key: 1u");
  CHECK(Eval("{1.5: 'a'}", env) == "error: unsupported key type: double");
  CHECK(Eval("{'a': 1}.a + {'b': 2}['b']", env) == "3");
  CHECK(Eval("has({'a': 1}.a) && !has({'a': 1}.b)", env) == "true");
  CHECK(Eval("'a' in {'a': 1} && !(2 in {1: 1})", env) == "true");
  CHECK(Eval("size({'a': 1, 'b': 2})", env) == "2");
  // Larger maps are found through a hash index.
  CHECK(Eval("lists.range(100).transformMap(i, v, v * v)[99]", env) == "9801");
}

TEST_CASE("strings are code points, bytes are bytes") {
  CHECK(Eval("size('héllo')") == "5");
  CHECK(Eval("size(b'h\\xc3\\xa9')") == "3");
  CHECK(Eval("'héllo'.charAt(1)") == "\"é\"");
  CHECK(Eval("'héllo'.substring(1, 3)") == "\"él\"");
  CHECK(Eval("'héllo'.indexOf('l')") == "2");
  CHECK(Eval("'\\u00e9' == 'é' && '\\xe9' == 'é'") == "true");
  CHECK(Eval("'ab' + 'cd'") == "\"abcd\"");
  CHECK(Eval("'a,b,,c'.split(',')") == "[\"a\", \"b\", \"\", \"c\"]");
  CHECK(Eval("' \\t x \\n'.trim()") == "\"x\"");
  CHECK(Eval("['a', 'b'].join('-')") == "\"a-b\"");
  CHECK(Eval("'TacoCat'.lowerAscii() + 'TacoCat'.upperAscii()") == "\"tacocatTACOCAT\"");
  CHECK(Eval("'hello hello'.replace('he', 'we', 1)") == "\"wello hello\"");
  CHECK(Eval("'%d-%s-%.2f'.format([1, 'a', 2.5])") == "\"1-a-2.50\"");
  // What compile cannot see is refused at evaluation, in the same words.
  CHECK(Eval("'%d'.format([dyn('a')])") ==
        "error: error during formatting: decimal clause can only be used on integers, was given "
        "string");
  CHECK(Eval("'%d %d'.format(dyn([1]))") == "error: index 1 out of range");
  CHECK(Eval("dyn('100%').format([1])") == "error: unexpected end of string");
  CHECK(Eval("strings.quote('a\"b')") == "\"\\\"a\\\\\\\"b\\\"\"");
  CHECK(Eval("'gpu-0'.matches('^gpu-[0-9]+$') && !'gpu-x'.matches('^gpu-[0-9]+$')") == "true");
  CHECK(Eval("'abc'.startsWith('ab') && 'abc'.endsWith('bc') && 'abc'.contains('b')") == "true");
  CHECK(Eval("'abc'.matches(dyn('['))").starts_with("error: invalid regular expression"));
}

TEST_CASE("conversions and types") {
  CHECK(Eval("int('42') + int(42u) + int(2.9)") == "86");
  CHECK(Eval("int('x')") == "error: cannot convert string to int: \"x\"");
  CHECK(Eval("int(1e19)") == "error: range error");
  CHECK(Eval("uint(-1)") == "error: range error");
  CHECK(Eval("double('1.5') + double(1)") == "2.5");
  CHECK(Eval("string(1.5) + string(1000000.0) + string(0.0001)") == "\"1.51e+060.0001\"");
  CHECK(Eval("string(b'\\xff')") == "error: invalid UTF-8 in bytes, cannot convert to string");
  CHECK(Eval("bool('true') && !bool('0')") == "true");
  CHECK(Eval("bytes('é') == b'\\xc3\\xa9'") == "true");
  CHECK(Eval("type(1) == int && type('a') == string && type([]) == list && type({}) == map") ==
        "true");
  CHECK(Eval("type(type(1)) == type && type(null) == null_type") == "true");
  CHECK(Eval("type(quantity('1'))") == "kubernetes.Quantity");
}

TEST_CASE("macros, two-variable comprehensions and cel.bind") {
  Environment env = Everything();
  CHECK(Eval("[1, 2, 3].all(x, x > 0) && [1, 2, 3].exists(x, x == 2)", env) == "true");
  CHECK(Eval("[1, 2, 3].exists_one(x, x > 2)", env) == "true");
  CHECK(Eval("[1, 2, 3].map(x, x * 2)", env) == "[2, 4, 6]");
  CHECK(Eval("[1, 2, 3].map(x, x > 1, x * 2)", env) == "[4, 6]");
  CHECK(Eval("[1, 2, 3].filter(x, x % 2 == 1)", env) == "[1, 3]");
  CHECK(Eval("{'a': 1, 'b': 2}.filter(k, k != 'a')", env) == "[\"b\"]");
  CHECK(Eval("[10, 20].all(i, v, v == (i + 1) * 10)", env) == "true");
  CHECK(Eval("{'a': 1}.exists(k, v, k == 'a' && v == 1)", env) == "true");
  CHECK(Eval("['a', 'b'].transformList(i, v, v + string(i))", env) == "[\"a0\", \"b1\"]");
  CHECK(Eval("{'a': 1}.transformMap(k, v, v + 1)", env) == "{\"a\": 2}");
  CHECK(Eval("{'a': 1}.transformMapEntry(k, v, {v: k})", env) == "{1: \"a\"}");
  CHECK(Eval("cel.bind(x, 2, x * x + x)", env) == "6");
  CHECK(Eval("[[1, 2], [3]].all(l, l.all(x, x < 4))", env) == "true");
  // The iteration variable shadows an outer one of the same name.
  CHECK(Eval("[1].all(x, [2].all(x, x == 2)) && [1].all(x, x == 1)", env) == "true");
  CHECK(Eval("1.all(x, true)", Environment().SetCheckTypes(false)) ==
        "error: cannot iterate over a value of type int");
}

TEST_CASE("unchecked programs: unknown names and functions are errors when evaluated") {
  Environment env;
  env.SetCheckTypes(false);
  CHECK(Eval("x", env) == "error: undeclared reference to 'x' (in container '')");
  CHECK(Eval("x || true", env) == "true");
  CHECK(Eval("f(1)", env) == "error: unbound function: f");
  CHECK(Eval("'a'.contains('a', 'b')", env) == "error: unbound function: contains");
  CHECK(Eval("1 + 'a'", env) == "error: no such overload: _+_(int, string)");
}

TEST_CASE("variables: declared in order, passed in order, qualified names resolve") {
  Environment env;
  env.DeclareVariable("a.b", Type::Int())
      .DeclareVariable("a", Type::Map(Type::String(), Type::Int()));
  std::vector<Value> vars{Value::Int(7)};
  auto map = std::make_shared<EntryMap>();
  map->Insert(Value::String("b"), Value::Int(1));
  map->Insert(Value::String("c"), Value::Int(2));
  vars.push_back(Value::Map(map));
  CHECK(Eval("a.b", env, vars) == "7");  // the longest declared name wins
  CHECK(Eval("a.c", env, vars) == "2");
  CHECK(Eval("a.b", env, std::span<const Value>()) == "error: no value for variable 'a.b'");
}

TEST_CASE("cost limit: an evaluation past the limit stops with an error") {
  Environment env = Everything();
  env.SetCostLimit(1000);
  CHECK(Eval("lists.range(100).all(i, lists.range(100).all(j, true))", env) ==
        "error: " + std::string(kCostLimitExceeded));
  // The size of a range is charged before the list is built.
  CHECK(Eval("size(lists.range(1000000000)) > 0", env) ==
        "error: " + std::string(kCostLimitExceeded));
  CHECK(Eval("lists.range(10).all(i, true)", env) == "true");
  uint64_t cost = 0;
  StatusOr<Program> p = Compile("[1, 2, 3].exists(x, x == 3)", env);
  REQUIRE(p.ok());
  CHECK(p->Evaluate({}, &cost).DebugString() == "true");
  CHECK(cost > 0);
  CHECK(cost < 100);
}

TEST_CASE("constant subexpressions are computed once, at compile, within the cost limit") {
  Environment env = Everything();
  env.SetCostLimit(1000);
  uint64_t cost = 1;
  StatusOr<Program> folded =
      Compile("quantity('40Gi') == quantity('40960Mi') && [1, 2].size() == 2", env);
  REQUIRE(folded.ok());
  CHECK(folded->Evaluate({}, &cost).DebugString() == "true");
  CHECK(cost == 0);
  // Folding spends at most one evaluation's budget; the rest is computed when evaluated.
  StatusOr<Program> big = Compile("size(lists.range(600)) + size(lists.range(600)) == 1200", env);
  REQUIRE(big.ok());
  CHECK(big->Evaluate({}, &cost).DebugString() == "true");
  CHECK(cost > 600);
  // An error folds to the same error.
  CHECK(Eval("1 / 0 == 1 || true", env) == "true");
  CHECK(Eval("quantity('x')", env).starts_with("error: invalid quantity"));
}

TEST_CASE("nesting is limited with a clear error, long flat expressions are fine") {
  auto nested = [](int depth) {
    return std::string(static_cast<size_t>(depth), '(') + "1" +
           std::string(static_cast<size_t>(depth), ')') + " == 1";
  };
  CHECK(Eval(nested(200)) == "true");
  CHECK(CompileError(nested(300)) ==
        "1:251: Syntax error: expression nests deeper than 250 levels");
  CHECK(CompileError(std::string(100000, '[')) ==
        "1:251: Syntax error: expression nests deeper than 250 levels");
  // A flat expression as long as the limit allows: no recursion follows its length.
  std::string sum = "0";
  for (int i = 0; i < 20000; ++i) sum += " + 1";
  CHECK(Eval(sum + " == 20000") == "true");
  std::string conjunction = "true";
  for (int i = 0; i < 10000; ++i) conjunction += " && true";
  CHECK(Eval(conjunction) == "true");
  // A long chain of selections resolves in time linear in its length.
  Environment dotted;
  dotted.DeclareVariable("a.b", Type::Dyn());
  std::string chain = "a.b";
  for (int i = 0; i < 30000; ++i) chain += ".c";
  CHECK(CompileError(chain + " == 1", dotted) == "");
  Environment small;
  small.SetMaxExpressionLength(10);
  CHECK(CompileError("1 + 2 + 3 + 4", small) ==
        "the expression is 13 code points long; at most 10 are allowed");
  CHECK(CompileError("'\xff'") == "the expression is not valid UTF-8");
}

TEST_CASE("one program evaluates on many threads at once") {
  StatusOr<Program> p = Compile("[1, 2, 3].map(x, x * 2).exists(y, y == 6) && 'a' + 'b' == 'ab'",
                                Environment::Kubernetes());
  REQUIRE(p.ok());
  std::vector<std::thread> threads;
  std::vector<int> matches(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) matches[static_cast<size_t>(t)] += p->Evaluate({}).IsTrue();
    });
  }
  for (std::thread& t : threads) t.join();
  CHECK(matches == std::vector<int>(4, 2000));
}

}  // namespace
}  // namespace tephra::cel
