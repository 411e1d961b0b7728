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

#include "base/status.h"

namespace tephra::json {

using Value = rapidjson::Value;
using Document = rapidjson::Document;

// Parse refuses documents nested deeper than this, so every walk over a parsed document
// (RapidJSON's own copy and comparison included) recurses at most this deep.
inline constexpr size_t kMaxDepth = 512;

// Numbers keep their exact text. Parse stores a number as int64, uint64 or double only when
// writing that value back gives the same text; any other number (a 41-digit integer, 1e400,
// -0, 1.50, 1E3) becomes a "raw number": a string value holding kRawNumberMark and the text,
// which Write emits unquoted and Reader reads as a number. Parse refuses invalid UTF-8, so no
// parsed string can start with the mark (the byte 0xFF never occurs in UTF-8).
inline constexpr char kRawNumberMark = '\xFF';
bool IsRawNumber(const Value& v);
// The text of a raw number; empty for any other value.
std::string_view RawNumberText(const Value& v);
// A string value that is not a raw number.
bool IsString(const Value& v);
std::string_view StringOf(const Value& v);  // empty unless IsString
// A number, raw or not.
bool IsNumber(const Value& v);
// "string", "integer", "number", "boolean", "object", "array" or "null", for messages.
std::string_view TypeOf(const Value& v);
// The value of a number that is a whole number within int64 (3, 3.0, "3.00" raw, -0).
std::optional<int64_t> IntegerOf(const Value& v);
// The value of a number as a double; nullopt for a raw number outside double's range.
std::optional<double> DoubleOf(const Value& v);

// Equal by value: member order does not matter, numbers compare as RapidJSON does (3 equals
// 3.0) and raw numbers by their text. n log n in the size of the values, no recursion.
bool Equal(const Value& a, const Value& b);

// Looks members of one object up by name in constant time after a linear build (FindMember
// scans, which makes a lookup per member quadratic). The first of repeated names wins, as with
// FindMember. The object's members must not be added or removed while the index is in use.
class MemberIndex {
 public:
  explicit MemberIndex(const Value* object);  // null or not an object: finds nothing
  const Value* Find(std::string_view name) const;
  // The same member of `object`, which must be the indexed object (for editing it).
  Value* Find(std::string_view name, Value& object) const;
  // The member's position in the object.
  std::optional<size_t> Position(std::string_view name) const;

 private:
  const Value* object_;
  std::vector<std::pair<std::string_view, size_t>> sorted_;  // (name, member position)
};

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
  // The reader of member `key` whose value is `child` (found by the caller).
  Reader Member(std::string_view key, const Value* child) const;

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

// Calls fn(offset, c) for every character c of `text` outside JSON strings (a string's opening
// quote included, its content and closing quote not). Linear; for scanning text that has not
// been parsed yet.
template <typename Fn>
void ForEachOutsideStrings(std::string_view text, Fn fn) {
  bool in_string = false;
  bool escaped = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (!in_string) {
      in_string = c == '"';
      fn(i, c);
    } else if (escaped) {
      escaped = false;
    } else if (c == '\\') {
      escaped = true;
    } else if (c == '"') {
      in_string = false;
    }
  }
}

// Parses text into doc; the error names the offset and the reason. Documents nested deeper than
// kMaxDepth and invalid UTF-8 are refused; numbers keep their text (see kRawNumberMark).
Status Parse(std::string_view text, Document* doc);

// Like Parse, but a value that would nest deeper than `max_depth` levels (1 to kMaxDepth) is
// kept as null instead of failing the parse, and `*cut` gets the path of the first such value,
// one segment per level: a member name (names beyond 64 bytes are shortened, ending in "...")
// or "[index]" for an array element. `*cut` is empty when nothing was cut. Reads the text
// without recursion, however deep it nests.
Status ParsePruned(std::string_view text, size_t max_depth, Document* doc,
                   std::vector<std::string>* cut);
// Path segments as Reader names fields ("spec.tasks[0].name"). More than `max_segments` (at
// least 4) keep the first ones and the last two around " ... ".
std::string JoinPath(const std::vector<std::string>& segments, size_t max_segments = SIZE_MAX);

// Compact serialisation of a value; raw numbers are written as their text.
std::string Write(const Value& value);
// Indented by two spaces per level, for people.
std::string WritePretty(const Value& value);

// Escapes a string as a JSON string literal, quotes included.
std::string Quote(std::string_view s);

}  // namespace tephra::json
