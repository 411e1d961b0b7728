#include "json/json.h"

#include <catch2/catch.hpp>
#include <rapidjson/document.h>

namespace tephra::json {
namespace {

TEST_CASE("Reader reads typed fields and reports wrong types with paths") {
  Document doc;
  REQUIRE(Parse(R"({"spec":{"replicas":"3","tasks":[{"name":"a","replicas":2},
                   {"name":7,"replicas":1.0}],"big":4294967296,"flag":true,
                   "labels":{"a":"1","b":2}}})",
                &doc)
              .ok());
  Errors errors;
  Reader root(&doc, &errors);
  Reader spec = root["spec"];
  CHECK(spec["replicas"].Int(5) == 5);
  CHECK(spec["tasks"].size() == 2);
  CHECK(spec["tasks"][0]["name"].String() == "a");
  CHECK(spec["tasks"][0]["replicas"].Int32() == 2);
  CHECK(spec["tasks"][1]["name"].String("x") == "x");
  CHECK(spec["tasks"][1]["replicas"].Int32() == 1);
  CHECK(spec["big"].Int() == 4294967296);
  CHECK(spec["big"].Int32(-1) == -1);
  CHECK(spec["flag"].Bool());
  CHECK(spec["missing"]["deeper"].String("d") == "d");
  CHECK_FALSE(spec["missing"].present());
  auto labels = spec["labels"].StringMap();
  CHECK(labels.size() == 1);
  CHECK(labels["a"] == "1");

  REQUIRE(errors.size() == 4);
  CHECK(errors.items()[0] == "spec.replicas: expected integer, got string");
  CHECK(errors.items()[1] == "spec.tasks[1].name: expected string, got integer");
  CHECK(errors.items()[2] == "spec.big: value 4294967296 does not fit in a 32-bit integer");
  CHECK(errors.items()[3] == "spec.labels.b: expected string, got integer");
  Status st = errors.ToStatus("job");
  CHECK(st.code() == StatusCode::kInvalidArgument);
  CHECK(st.message().rfind("job: spec.replicas: expected integer", 0) == 0);
}

TEST_CASE("Reader rejects fractional integers and reads non-integral doubles") {
  Document doc;
  REQUIRE(Parse(R"({"a":1.5,"b":2.25})", &doc).ok());
  Errors errors;
  Reader r(&doc, &errors);
  CHECK(r["a"].Int(9) == 9);
  CHECK(r["b"].Double() == 2.25);
  CHECK(errors.size() == 1);
}

TEST_CASE("Reader truncates very long paths without overflowing") {
  std::string text = "1";
  for (int i = 0; i < 40; ++i) text = R"({"a_rather_long_key":)" + text + "}";
  Document doc;
  REQUIRE(Parse(text, &doc).ok());
  Errors errors;
  Reader r(&doc, &errors);
  for (int i = 0; i < 40; ++i) r = r["a_rather_long_key"];
  CHECK(r.String() == "");
  REQUIRE(errors.size() == 1);
  CHECK(errors.items()[0].find("...: expected string") != std::string::npos);
}

TEST_CASE("Parse reports the offset of malformed JSON") {
  Document doc;
  Status st = Parse(R"({"a":)", &doc);
  CHECK(st.code() == StatusCode::kInvalidArgument);
  CHECK(st.message().find("offset 5") != std::string::npos);
}

TEST_CASE("Writer builds valid JSON with escaping") {
  Writer w;
  w.StartObject()
      .Field("name", "a\"b\n")
      .Field("n", int64_t{-3})
      .Field("ok", true)
      .Key("list")
      .StartArray()
      .Int(1)
      .String("x")
      .Null()
      .StartObject()
      .EndObject()
      .EndArray()
      .StringMap("labels", {{"k", "v"}, {"z", ""}})
      .Key("raw")
      .Raw(R"({"x":1})")
      .EndObject();
  CHECK(
      w.str() ==
      R"({"name":"a\"b\n","n":-3,"ok":true,"list":[1,"x",null,{}],"labels":{"k":"v","z":""},"raw":{"x":1}})");
  Document doc;
  CHECK(Parse(w.str(), &doc).ok());
}

TEST_CASE("ApplyMergePatch follows RFC 7386") {
  std::string out;
  REQUIRE(ApplyMergePatch(R"({"a":"b","c":{"d":"e","f":"g"},"l":[1,2]})",
                          R"({"a":"z","c":{"f":null,"h":1},"l":[3]})", &out)
              .ok());
  CHECK(out == R"({"a":"z","c":{"d":"e","h":1},"l":[3]})");
  // Removing a member keeps the others in order; a patch repeating a new name merges both.
  REQUIRE(
      ApplyMergePatch(R"({"a":1,"b":2,"c":3,"d":4})", R"({"b":null,"e":{"x":1},"e":{"y":2}})", &out)
          .ok());
  CHECK(out == R"({"a":1,"c":3,"d":4,"e":{"x":1,"y":2}})");
  // Members apply in order: removed, then set again, the value starts afresh.
  REQUIRE(
      ApplyMergePatch(R"({"a":{"x":1},"b":2})", R"({"a":null,"a":{"y":2},"c":null})", &out).ok());
  CHECK(out == R"({"a":{"y":2},"b":2})");
  REQUIRE(ApplyMergePatch(R"({"a":1})", R"(["x"])", &out).ok());
  CHECK(out == R"(["x"])");
  CHECK_FALSE(ApplyMergePatch("{", "{}", &out).ok());
}

TEST_CASE("Numbers keep their exact text through Parse and Write") {
  const std::string long_integer = "1" + std::string(400, '7');
  for (std::string number :
       {std::string("88888888888888888888888888888888888888888"), std::string("1e400"),
        std::string("-1e400"), std::string("2.5e-400"), std::string("-0"), std::string("-0.0"),
        std::string("1.0000000000000000001"), std::string("1E3"), std::string("1e3"),
        std::string("1.50"), std::string("0.1"), std::string("1.5"), std::string("100"),
        std::string("-5"), std::string("9223372036854775807"), std::string("-9223372036854775808"),
        std::string("18446744073709551615"), std::string("18446744073709551616"), long_integer}) {
    CAPTURE(number);
    std::string text = R"({"a":[)" + number + R"(],"b":{"c":)" + number + "}}";
    Document doc;
    REQUIRE(Parse(text, &doc).ok());
    CHECK(Write(doc) == text);
    Document again;
    REQUIRE(Parse(Write(doc), &again).ok());
    CHECK(Equal(doc, again));
  }
}

TEST_CASE("Numbers the usual types cannot hold exactly become raw numbers, others stay typed") {
  Document doc;
  REQUIRE(
      Parse(R"([3, 3.5, 1e400, 88888888888888888888888888888888888888888, -0, 3.00])", &doc).ok());
  CHECK(doc[0].IsInt64());
  CHECK(doc[1].IsDouble());
  CHECK(RawNumberText(doc[2]) == "1e400");
  CHECK(IsRawNumber(doc[3]));
  CHECK(IsRawNumber(doc[4]));
  CHECK(IsRawNumber(doc[5]));
  CHECK_FALSE(IsString(doc[2]));
  CHECK(IsNumber(doc[2]));
  CHECK(IntegerOf(doc[5]) == 3);
  CHECK(IntegerOf(doc[4]) == 0);
  CHECK_FALSE(IntegerOf(doc[3]).has_value());
  CHECK_FALSE(DoubleOf(doc[2]).has_value());
}

TEST_CASE("A number RapidJSON cannot hold does not hide a malformed one") {
  Document doc;
  CHECK(Parse("[1e400, 1-2]", &doc).message() ==
        "invalid JSON at offset 8: invalid number \"1-2\"");
  CHECK_FALSE(Parse("[1e400, 01]", &doc).ok());
  REQUIRE(Parse("[1e400, -0.5e-3, 0]", &doc).ok());
  CHECK(Write(doc) == "[1e400,-0.5e-3,0]");
  // A string built in code that merely looks like a raw number is written as a string.
  Document built;
  built.SetString(
      "\xFF"
      "1-2",
      built.GetAllocator());
  CHECK(Write(built) ==
        "\"\xFF"
        "1-2\"");
}

TEST_CASE("Reader reads raw numbers as numbers and names what does not fit") {
  Document doc;
  REQUIRE(Parse(R"({"whole":3.00,"big":88888888888888888888888888888888888888888,
                    "huge":1e400,"unsigned":18446744073709551615,"name":1e400})",
                &doc)
              .ok());
  Errors errors;
  Reader r(&doc, &errors);
  CHECK(r["whole"].Int32() == 3);
  CHECK(r["big"].Int(-1) == -1);
  CHECK(r["huge"].Double(-1) == -1);
  CHECK(r["unsigned"].Int(-1) == -1);
  CHECK(r["name"].String("x") == "x");
  REQUIRE(errors.size() == 4);
  CHECK(errors.items()[0] ==
        "big: value 88888888888888888888888888888888888888888 does not fit in a 64-bit integer");
  CHECK(errors.items()[1] == "huge: value 1e400 is out of range");
  CHECK(errors.items()[2] ==
        "unsigned: value 18446744073709551615 does not fit in a 64-bit integer");
  CHECK(errors.items()[3] == "name: expected string, got number");
}

TEST_CASE("Parse refuses documents nested deeper than kMaxDepth, without recursing into them") {
  auto nested = [](size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); };
  Document doc;
  CHECK(Parse(nested(kMaxDepth), &doc).ok());
  Status st = Parse(nested(kMaxDepth + 1), &doc);
  CHECK(st.message().find("nested more than 512 levels deep") != std::string::npos);
  // Far deeper than any stack would allow with one frame per level.
  st = Parse(nested(1'000'000), &doc);
  CHECK(st.code() == StatusCode::kInvalidArgument);
}

TEST_CASE("ParsePruned keeps values too deep as null and names the first one's path") {
  Document doc;
  std::vector<std::string> cut;
  const std::string text =
      R"({"a":{"b":[1,{"c":{"d":[[0]]}},{"e":{"f":{}}}],"g":"x"},"h":[[[[]]]],"i":2})";
  REQUIRE(ParsePruned(text, 4, &doc, &cut).ok());
  // The object holding "d" opens at level 5.
  CHECK(JoinPath(cut) == "a.b[1].c");
  // Everything within four levels is read as Parse reads it; deeper values are null.
  CHECK(Write(doc) == R"({"a":{"b":[1,{"c":null},{"e":null}],"g":"x"},"h":[[[null]]],"i":2})");
  REQUIRE(ParsePruned(text, 6, &doc, &cut).ok());
  CHECK(JoinPath(cut) == "a.b[1].c.d[0]");
  // Within the limit nothing is cut and the document is Parse's.
  REQUIRE(ParsePruned(text, 7, &doc, &cut).ok());
  CHECK(cut.empty());
  Document whole;
  REQUIRE(Parse(text, &whole).ok());
  CHECK(Equal(doc, whole));
  // Numbers beyond double's range, and syntax errors after the cut, are handled as by Parse.
  REQUIRE(ParsePruned(R"({"n":1e400,"deep":[[[2e999]]]})", 2, &doc, &cut).ok());
  CHECK(Write(doc) == R"({"n":1e400,"deep":[null]})");
  CHECK(JoinPath(cut) == "deep[0]");
  CHECK_FALSE(ParsePruned(R"({"deep":[[[1]]],)", 2, &doc, &cut).ok());
}

TEST_CASE("ParsePruned reads any depth without recursion") {
  auto nested = [](size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); };
  Document doc;
  std::vector<std::string> cut;
  REQUIRE(ParsePruned("{\"k\":" + nested(1'000'000) + "}", 3, &doc, &cut).ok());
  CHECK(JoinPath(cut) == "k[0][0]");
  CHECK(Write(doc) == R"({"k":[[null]]})");
  // The limit is at most kMaxDepth.
  REQUIRE(ParsePruned(nested(kMaxDepth + 5), 100'000, &doc, &cut).ok());
  CHECK(cut.size() == kMaxDepth);
}

TEST_CASE("ParsePruned shortens long member names in the path, keeping UTF-8 whole") {
  Document doc;
  std::vector<std::string> cut;
  // 63 ASCII bytes, then a two-byte character straddling the 64-byte cut.
  const std::string name = std::string(63, 'n') + "\xC3\xA9" + "tail";
  REQUIRE(ParsePruned(R"({")" + name + R"(":[[1]]})", 2, &doc, &cut).ok());
  REQUIRE(cut.size() == 2);
  CHECK(cut[0] == std::string(63, 'n') + "...");
  CHECK(cut[1] == "[0]");
}

TEST_CASE("JoinPath writes Reader's notation and shortens long paths around the middle") {
  CHECK(JoinPath({}) == "");
  CHECK(JoinPath({"spec", "tasks", "[0]", "name"}) == "spec.tasks[0].name");
  CHECK(JoinPath({"[1]", "a"}) == "[1].a");
  std::vector<std::string> deep = {"spec", "affinity"};
  for (int i = 0; i < 100; ++i) deep.push_back("x" + std::to_string(i));
  CHECK(JoinPath(deep, 6) == "spec.affinity.x0.x1 ... x98.x99");
  CHECK(JoinPath(deep).size() > 300);
}

TEST_CASE("Parse refuses invalid UTF-8, so no string can pass for a raw number") {
  Document doc;
  CHECK_FALSE(Parse("[\"\xFF"
                    "1\"]",
                    &doc)
                  .ok());
  CHECK_FALSE(Parse("{\"a\":\"\xC3\"}", &doc).ok());
  REQUIRE(Parse("[\"\xC3\xA9\"]", &doc).ok());
  CHECK(IsString(doc[0]));
}

TEST_CASE("Parse reads the whole text: no byte order mark, nothing after a NUL") {
  Document doc;
  CHECK_FALSE(Parse("\xEF{}", &doc).ok());
  CHECK_FALSE(Parse("\xEF\xBB\xBF{}", &doc).ok());
  CHECK(Parse("{}", &doc).ok());
  // Nor does it stop at a NUL byte as RapidJSON would.
  CHECK_FALSE(Parse(std::string("{}\0{", 4), &doc).ok());
}

TEST_CASE("Equal ignores member order and compares numbers by value or raw text") {
  Document a;
  Document b;
  REQUIRE(Parse(R"({"x":1,"y":[1,{"p":"q","r":null}],"z":1e400})", &a).ok());
  REQUIRE(Parse(R"({"z":1e400,"y":[1.0,{"r":null,"p":"q"}],"x":1})", &b).ok());
  CHECK(Equal(a, b));
  REQUIRE(Parse(R"({"z":1E400,"y":[1.0,{"r":null,"p":"q"}],"x":1})", &b).ok());
  CHECK_FALSE(Equal(a, b));
  REQUIRE(Parse(R"({"x":1,"y":[1,{"p":"q","s":null}],"z":1e400})", &b).ok());
  CHECK_FALSE(Equal(a, b));
  REQUIRE(Parse(R"({"x":true})", &a).ok());
  REQUIRE(Parse(R"({"x":false})", &b).ok());
  CHECK_FALSE(Equal(a, b));
}

TEST_CASE("MemberIndex finds members like FindMember, the first of repeated names winning") {
  Document doc;
  REQUIRE(Parse(R"({"b":1,"a":2,"b":3,"":4})", &doc).ok());
  MemberIndex index(&doc);
  REQUIRE(index.Find("b") != nullptr);
  CHECK(index.Find("b")->GetInt() == 1);
  CHECK(index.Find("a")->GetInt() == 2);
  CHECK(index.Find("")->GetInt() == 4);
  CHECK(index.Find("c") == nullptr);
  Value* a = index.Find("a", doc);
  a->SetInt(5);
  CHECK(doc["a"].GetInt() == 5);
  CHECK(MemberIndex(nullptr).Find("a") == nullptr);
}

TEST_CASE("WritePretty indents and keeps raw numbers") {
  Document doc;
  REQUIRE(Parse(R"({"a":[1e400]})", &doc).ok());
  CHECK(WritePretty(doc) == "{\n  \"a\": [\n    1e400\n  ]\n}");
}

}  // namespace
}  // namespace tephra::json
