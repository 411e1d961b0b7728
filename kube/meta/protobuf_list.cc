#include "kube/meta/protobuf_list.h"

#include <cstdint>
#include <optional>

namespace tephra::kube {
namespace {

constexpr std::string_view kMagic{"k8s\0", 4};

// Reads the fields of one protobuf message, one at a time, without knowing its schema.
class FieldReader {
 public:
  explicit FieldReader(std::string_view bytes) : rest_(bytes) {}

  struct Field {
    uint32_t number = 0;
    int wire_type = 0;
    std::string_view bytes;  // the payload of a length-delimited field
  };

  // The next field, nullopt at the end; sets *error on malformed input.
  std::optional<Field> Next(std::string* error) {
    if (rest_.empty()) return std::nullopt;
    std::optional<uint64_t> tag = Varint();
    if (!tag || (*tag >> 3) == 0 || (*tag >> 3) > UINT32_MAX) {
      *error = "malformed field tag";
      return std::nullopt;
    }
    Field f;
    f.number = static_cast<uint32_t>(*tag >> 3);
    f.wire_type = static_cast<int>(*tag & 7);
    switch (f.wire_type) {
      case 0:
        if (!Varint()) *error = "truncated varint in field " + std::to_string(f.number);
        break;
      case 1:
        if (!Skip(8)) *error = "truncated fixed64 field " + std::to_string(f.number);
        break;
      case 5:
        if (!Skip(4)) *error = "truncated fixed32 field " + std::to_string(f.number);
        break;
      case 2: {
        std::optional<uint64_t> len = Varint();
        if (!len || *len > rest_.size()) {
          *error = "field " + std::to_string(f.number) + " is longer than what is left";
          break;
        }
        f.bytes = rest_.substr(0, *len);
        rest_.remove_prefix(*len);
        break;
      }
      default:  // groups (3, 4) are not used by Kubernetes
        *error = "unsupported wire type " + std::to_string(f.wire_type) + " in field " +
                 std::to_string(f.number);
    }
    if (!error->empty()) return std::nullopt;
    return f;
  }

 private:
  std::optional<uint64_t> Varint() {
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (rest_.empty()) return std::nullopt;
      auto byte = static_cast<uint8_t>(rest_.front());
      rest_.remove_prefix(1);
      value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return value;
    }
    return std::nullopt;
  }
  bool Skip(size_t n) {
    if (rest_.size() < n) return false;
    rest_.remove_prefix(n);
    return true;
  }

  std::string_view rest_;
};

// The payload of the length-delimited field `number` (the last one wins, as in protobuf).
StatusOr<std::string_view> FindBytes(std::string_view message, uint32_t number,
                                     std::string_view what) {
  FieldReader reader(message);
  std::string error;
  std::optional<std::string_view> found;
  while (auto f = reader.Next(&error)) {
    if (f->number == number && f->wire_type == 2) found = f->bytes;
  }
  if (!error.empty()) return InvalidArgument(std::string(what) + ": " + error);
  if (!found) {
    return InvalidArgument(std::string(what) + ": field " + std::to_string(number) + " missing");
  }
  return *found;
}

}  // namespace

StatusOr<ProtobufList> SplitProtobufList(std::string_view body) {
  if (body.substr(0, kMagic.size()) != kMagic) {
    return InvalidArgument("protobuf list: the body does not start with \"k8s\\0\"");
  }
  body.remove_prefix(kMagic.size());
  TEPHRA_ASSIGN_OR_RETURN(std::string_view list, FindBytes(body, 2, "protobuf list: envelope"));
  ProtobufList out;
  FieldReader reader(list);
  std::string error;
  while (auto f = reader.Next(&error)) {
    if (f->wire_type != 2) continue;
    if (f->number == 2) {
      out.items.push_back(f->bytes);
    } else if (f->number == 1) {
      FieldReader meta(f->bytes);
      while (auto m = meta.Next(&error)) {
        if (m->wire_type != 2) continue;
        if (m->number == 2) out.resource_version = std::string(m->bytes);
        if (m->number == 3) out.continue_token = std::string(m->bytes);
      }
      if (!error.empty()) return InvalidArgument("protobuf list: metadata: " + error);
    }
  }
  if (!error.empty()) return InvalidArgument("protobuf list: " + error);
  return out;
}

}  // namespace tephra::kube
