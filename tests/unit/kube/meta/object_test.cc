#include "kube/meta/object.h"

#include <catch2/catch.hpp>
#include <rapidjson/document.h>

#include "base/time.h"

namespace tephra::kube {
namespace {

TEST_CASE("ParseTime and FormatTime handle Kubernetes timestamps") {
  auto t = base::ParseTime("2026-11-30T09:28:37Z");
  REQUIRE(t);
  CHECK(base::FormatTime(*t) == "2026-11-30T09:28:37Z");
  auto micro = base::ParseTime("2026-11-30T09:28:37.123456Z");
  REQUIRE(micro);
  CHECK(base::FormatMicroTime(*micro) == "2026-11-30T09:28:37.123456Z");
  CHECK(base::FormatTime(*micro) == "2026-11-30T09:28:37Z");
  auto offset = base::ParseTime("2026-11-30T10:28:37+01:00");
  REQUIRE(offset);
  CHECK(*offset == *t);
  CHECK(base::FormatMicroTime(*base::ParseTime("2026-11-30T09:28:37.5Z")) ==
        "2026-11-30T09:28:37.500000Z");
  CHECK_FALSE(base::ParseTime("2026-11-30 09:28:37Z"));
  CHECK_FALSE(base::ParseTime("2026-13-30T09:28:37Z"));
  CHECK_FALSE(base::ParseTime("2026-11-30T09:28:37"));
  CHECK_FALSE(base::ParseTime("2026-11-30T09:28:37Zjunk"));
  CHECK_FALSE(base::ParseTime(""));
  CHECK_FALSE(base::ParseTime("4052-11-30T09:28:37Z"));  // found by fuzz_json_reader: overflowed
}

TEST_CASE("ObjectMeta decodes and re-encodes") {
  const char* text = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns",
    "uid":"u1","resourceVersion":"42","generation":3,"creationTimestamp":"2026-11-30T09:28:37Z",
    "labels":{"app":"x"},"annotations":{"scheduling.k8s.io/group-name":"pg"},
    "ownerReferences":[{"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","name":"j",
      "uid":"ju","controller":true,"blockOwnerDeletion":true}],"finalizers":["f1"]}})";
  json::Document doc;
  REQUIRE(json::Parse(text, &doc).ok());
  json::Errors errors;
  Object obj;
  DecodeObjectHeader(json::Reader(&doc, &errors), &obj);
  REQUIRE(errors.empty());
  CHECK(obj.kind == "Pod");
  CHECK(obj.metadata.Key() == "ns/p");
  CHECK(obj.metadata.generation == 3);
  CHECK(obj.metadata.Label("app") == "x");
  CHECK(obj.metadata.Annotation("scheduling.k8s.io/group-name") == "pg");
  CHECK(obj.metadata.Annotation("missing").empty());
  REQUIRE(obj.metadata.ControllerRef() != nullptr);
  CHECK(obj.metadata.ControllerRef()->name == "j");
  CHECK_FALSE(obj.metadata.deletion_timestamp);

  json::Writer w;
  w.StartObject();
  EncodeObjectMeta(obj.metadata, &w);
  w.EndObject();
  json::Document again;
  REQUIRE(json::Parse(w.str(), &again).ok());
  Object obj2;
  DecodeObjectHeader(json::Reader(&again, &errors), &obj2);
  REQUIRE(errors.empty());
  CHECK(obj2.metadata.Key() == "ns/p");
  CHECK(obj2.metadata.owner_references == obj.metadata.owner_references);
  CHECK(obj2.metadata.creation_timestamp == obj.metadata.creation_timestamp);
  CHECK(obj2.metadata.finalizers == obj.metadata.finalizers);
}

TEST_CASE("ObjectMeta reports a malformed timestamp by path") {
  json::Document doc;
  REQUIRE(json::Parse(R"({"metadata":{"name":"x","deletionTimestamp":"yesterday"}})", &doc).ok());
  json::Errors errors;
  Object obj;
  DecodeObjectHeader(json::Reader(&doc, &errors), &obj);
  REQUIRE(errors.size() == 1);
  CHECK(errors.items()[0] == "metadata.deletionTimestamp: invalid RFC 3339 time \"yesterday\"");
}

TEST_CASE("Object keys split and join") {
  CHECK(ObjectKey("ns", "a") == "ns/a");
  CHECK(ObjectKey("", "node-1") == "node-1");
  CHECK(SplitObjectKey("ns/a") == std::make_pair(std::string("ns"), std::string("a")));
  CHECK(SplitObjectKey("node-1") == std::make_pair(std::string(), std::string("node-1")));
}

}  // namespace
}  // namespace tephra::kube
