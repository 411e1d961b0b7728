// Splitting Kubernetes' protobuf LIST bodies into items, including malformed bodies.
#include "kube/meta/protobuf_list.h"

#include <catch2/catch.hpp>

namespace tephra::kube {
namespace {

// Minimal protobuf writer for hand-built bodies.
std::string Varint(uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
  return out;
}
std::string Bytes(uint32_t field, std::string_view payload) {
  return Varint(field << 3 | 2) + Varint(payload.size()) + std::string(payload);
}
std::string Number(uint32_t field, uint64_t v) {
  return Varint(field << 3) + Varint(v);
}
std::string Envelope(std::string_view list) {
  // runtime.Unknown: typeMeta = 1, raw = 2, contentEncoding = 3, contentType = 4.
  return std::string("k8s\0", 4) + Bytes(1, Bytes(1, "v1") + Bytes(2, "PodList")) + Bytes(2, list) +
         Bytes(3, "") + Bytes(4, "");
}

TEST_CASE("a protobuf list splits into its items, resourceVersion and continue token") {
  std::string meta = Bytes(1, "") + Bytes(2, "4711") + Bytes(3, "next-page") + Number(4, 99);
  std::string body = Envelope(Bytes(1, meta) + Bytes(2, "pod-a") + Bytes(2, "") + Number(7, 12345) +
                              Bytes(2, "pod-c"));
  StatusOr<ProtobufList> list = SplitProtobufList(body);
  REQUIRE(list.ok());
  CHECK(list->resource_version == "4711");
  CHECK(list->continue_token == "next-page");
  CHECK(list->items == std::vector<std::string_view>{"pod-a", "", "pod-c"});
}

TEST_CASE("an empty protobuf list has no items") {
  StatusOr<ProtobufList> list = SplitProtobufList(Envelope(Bytes(1, Bytes(2, "5"))));
  REQUIRE(list.ok());
  CHECK(list->items.empty());
  CHECK(list->resource_version == "5");
}

TEST_CASE("malformed protobuf lists are refused, naming the part") {
  auto error = [](std::string_view body) {
    StatusOr<ProtobufList> list = SplitProtobufList(body);
    REQUIRE_FALSE(list.ok());
    CHECK(list.status().code() == StatusCode::kInvalidArgument);
    return list.status().message();
  };
  CHECK(error("{\"kind\":\"PodList\"}").find("does not start with") != std::string::npos);
  CHECK(error(std::string("k8s\0", 4) + Bytes(1, "x")).find("envelope: field 2 missing") !=
        std::string::npos);
  // An item claiming more bytes than the body has.
  std::string truncated = Envelope(Varint(2 << 3 | 2) + Varint(1000) + "short");
  CHECK(error(truncated).find("longer than what is left") != std::string::npos);
  // A varint that never ends.
  CHECK(error(Envelope(Varint(3 << 3) + std::string(11, '\xff'))).find("truncated varint") !=
        std::string::npos);
  // Groups (wire type 3) are not part of Kubernetes' encoding.
  CHECK(error(Envelope(Varint(5 << 3 | 3))).find("unsupported wire type 3") != std::string::npos);
  CHECK(error(Envelope(Bytes(1, Varint(2 << 3 | 2) + Varint(9)))).find("metadata:") !=
        std::string::npos);
}

TEST_CASE("the items of a large protobuf list are views into the body, not copies") {
  std::string items;
  for (int i = 0; i < 100000; ++i) items += Bytes(2, "item-" + std::to_string(i));
  const std::string body = Envelope(Bytes(1, "") + items);
  StatusOr<ProtobufList> list = SplitProtobufList(body);
  REQUIRE(list.ok());
  REQUIRE(list->items.size() == 100000);
  CHECK(list->items.back() == "item-99999");
  CHECK(list->items.front().data() > body.data());
  CHECK(list->items.back().data() + list->items.back().size() == body.data() + body.size() - 4);
}

}  // namespace
}  // namespace tephra::kube
