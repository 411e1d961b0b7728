// Checked JSON access. All reads of JSON from the network go through json::Reader: a missing
// field yields the default, a field of the wrong type yields the default *and* an error naming
// the field path ("spec.tasks[1].replicas: expected integer, got string"). RapidJSON's own
// getters assert on type mismatches, so they are never called on unchecked input.
//
// Only rapidjson/fwd.h is included here; the full RapidJSON headers stay in .cc files.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/fwd.h>

#include "kube/status.h"

namespace tephra::json {

using Value = rapidjson::Value;
using Document = rapidjson::Document;

// Errors found while reading one document; each carries the field path.
class Errors {
 public:
  void Add(std::string path, std::string message);
  bool empty() const { return items_.empty(); }
  size_t size() const { return items_.size(); }
  const std::vector<std::string>& items() const { return items_; }
  // OK when empty, else InvalidArgument "what: path1: msg1; path2: msg2".
  Status ToStatus(std::string_view what) const;

 private:
  std::vector<std::string> items_;
};

// A position in a JSON document: a value (possibly absent) and its path. Cheap to copy: the
// path lives in a fixed inline buffer (very long paths are cut, ending in "..."), so walking a
// document allocates nothing unless an error is recorded.
class Reader {
 public:
  Reader(const Value* value, Errors* errors, std::string_view path = "");

  bool present() const;  // present and not null
  bool is_object() const;
  bool is_array() const;
  bool is_string() const;
  std::string path() const;
  const Value* value() const { return value_; }
  Errors* errors() const { return errors_; }

  Reader operator[](std::string_view key) const;  // absent Reader if missing or not an object
  Reader operator[](size_t index) const;

  std::string String(std::string_view fallback = "") const;
  int64_t Int(int64_t fallback = 0) const;
  // Integer that must fit in int32; records an error otherwise.
  int32_t Int32(int32_t fallback = 0) const;
  double Double(double fallback = 0) const;
  bool Bool(bool fallback = false) const;
  std::optional<std::string> OptString() const;
  std::optional<int64_t> OptInt() const;
  std::optional<int32_t> OptInt32() const;
  std::optional<bool> OptBool() const;
  // A string-to-string map (labels, annotations, nodeSelector).
  std::map<std::string, std::string> StringMap() const;
  std::vector<std::string> StringList() const;

  size_t size() const;  // array length, 0 if not an array
  void ForEach(const std::function<void(const Reader&)>& fn) const;  // array elements
  void ForEachMember(const std::function<void(std::string_view, const Reader&)>& fn) const;

  // Records an error at this path.
  void Fail(std::string message) const;

 private:
  bool Expect(bool ok, const char* what) const;
  void Append(std::string_view part);

  static constexpr size_t kPathCapacity = 110;
  const Value* value_;
  Errors* errors_;
  uint8_t path_len_ = 0;
  bool path_truncated_ = false;
  char path_[kPathCapacity];
};

// Streaming JSON text builder (no DOM). Commas and escaping are handled; the caller keeps
// Start/End calls balanced.
class Writer {
 public:
  Writer& StartObject();
  Writer& EndObject();
  Writer& StartArray();
  Writer& EndArray();
  Writer& Key(std::string_view key);
  Writer& String(std::string_view value);
  Writer& Int(int64_t value);
  Writer& Double(double value);
  Writer& Bool(bool value);
  Writer& Null();
  // Inserts already-serialised JSON as one value.
  Writer& Raw(std::string_view json);

  // Key(k).String(v) etc. in one call.
  Writer& Field(std::string_view key, std::string_view value) { return Key(key).String(value); }
  Writer& Field(std::string_view key, const char* value) { return Key(key).String(value); }
  Writer& Field(std::string_view key, int64_t value) { return Key(key).Int(value); }
  Writer& Field(std::string_view key, int32_t value) { return Key(key).Int(value); }
  Writer& Field(std::string_view key, bool value) { return Key(key).Bool(value); }
  Writer& StringMap(std::string_view key, const std::map<std::string, std::string>& map);
  Writer& StringList(std::string_view key, const std::vector<std::string>& list);

  const std::string& str() const { return out_; }
  std::string Take() { return std::move(out_); }

 private:
  void BeforeValue();

  std::string out_;
  std::vector<bool> first_;  // per open container: no element written yet
  bool after_key_ = false;
};

// RFC 7386 JSON merge patch: objects merge recursively, null deletes, anything else replaces.
Status ApplyMergePatch(std::string_view target, std::string_view patch, std::string* out);

// Parses text into doc; the error names the offset and RapidJSON's reason.
Status Parse(std::string_view text, Document* doc);

// Compact serialisation of a value.
std::string Write(const Value& value);

// Escapes a string as a JSON string literal, quotes included.
std::string Quote(std::string_view s);

}  // namespace tephra::json
