#include "kube/json.h"

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
  CHECK(w.str() ==
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
  REQUIRE(ApplyMergePatch(R"({"a":1})", R"(["x"])", &out).ok());
  CHECK(out == R"(["x"])");
  CHECK_FALSE(ApplyMergePatch("{", "{}", &out).ok());
}

}  // namespace
}  // namespace tephra::json
