// Building blocks of the typed codecs in api/: decoding helpers over json::Reader and
// JsonObject, the editor that writes modelled fields over an object's original JSON so that
// fields Tephra does not model survive a decode/encode round trip.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/duration.h"
#include "api/resources.h"
#include "base/status.h"
#include "base/time.h"
#include "json/json.h"
#include "kube/meta/object.h"

namespace tephra::api {

struct DecodeOptions {
  // Keep the original JSON text in Object::raw so that encoding the object again preserves
  // every field Tephra does not model. Costs a copy of the text per object.
  bool keep_raw = false;
};

// Reads a quantity given as a JSON string (spaces trimmed, as the API server does) or a JSON
// number (CRDs with int-or-string fields store numbers). Records an error at the reader's path.
std::optional<Quantity> DecodeQuantity(const json::Reader& r);
ResourceList DecodeResourceList(const json::Reader& r);
using kube::DecodeTime;
std::optional<Duration> DecodeDuration(const json::Reader& r);

// Parses `text` and hands the document root to fn; a parse error is returned as is.
Status WithParsedJson(std::string_view text, const std::function<Status(const json::Value&)>& fn);

// Decodes the object header (apiVersion, kind, metadata) and the rest through `fill`, and keeps
// the raw text when asked. Errors name the object and the field path:
//   "Job ns/name: spec.tasks[1].replicas: expected integer, got string".
Status DecodeObjectInto(const json::Value& value, const DecodeOptions& options,
                        std::string_view kind, kube::Object* out,
                        const std::function<void(const json::Reader&)>& fill);

template <typename T, typename Fill>
StatusOr<std::shared_ptr<T>> DecodeTypedObject(const json::Value& value,
                                               const DecodeOptions& options, std::string_view kind,
                                               Fill fill) {
  auto obj = std::make_shared<T>();
  TEPHRA_RETURN_IF_ERROR(DecodeObjectInto(value, options, kind, obj.get(),
                                          [&](const json::Reader& r) { fill(r, obj.get()); }));
  return obj;
}

template <typename T, typename Fill>
StatusOr<std::shared_ptr<T>> DecodeTypedObjectText(std::string_view text,
                                                   const DecodeOptions& options,
                                                   std::string_view kind, Fill fill) {
  StatusOr<std::shared_ptr<T>> result = InvalidArgument(std::string(kind) + ": not decoded");
  TEPHRA_RETURN_IF_ERROR(WithParsedJson(text, [&](const json::Value& v) {
    result = DecodeTypedObject<T>(v, DecodeOptions{}, kind, fill);
    return result.status();
  }));
  // The text itself is the raw form; no need to serialise the document again.
  if (options.keep_raw) (*result)->raw = std::make_shared<const std::string>(text);
  return result;
}

// One JSON object being edited in place. It starts as the object's original JSON (or empty)
// and each Set call replaces or removes exactly one modelled member, leaving every other member
// as it was. A setter whose value equals what is already there (by value: "1000m" equals "1",
// a timestamp with fractional seconds equals the same second) changes nothing, so an unchanged
// object re-encodes to its original text.
//
// "Unset" values (empty string, 0, false, empty map or list, nullopt) remove the member, as Go's
// omitempty does, unless it already holds that empty value.
class JsonObject {
 public:
  struct Context;  // the document's allocator; defined in codec.cc

  bool empty() const;
  bool Has(std::string_view key) const;

  void SetString(std::string_view key, std::string_view value);
  void SetOptString(std::string_view key, const std::optional<std::string>& value);
  void SetInt(std::string_view key, int64_t value);
  void SetOptInt(std::string_view key, std::optional<int64_t> value);
  void SetBool(std::string_view key, bool value);
  void SetOptBool(std::string_view key, std::optional<bool> value);
  void SetStringMap(std::string_view key, const std::map<std::string, std::string>& value);
  void SetStringList(std::string_view key, const std::vector<std::string>& value);
  void SetIntMap(std::string_view key, const std::map<std::string, int32_t>& value);
  // map[string][]string; a key with an empty list is written as [] (it still means something).
  void SetStringListMap(std::string_view key,
                        const std::map<std::string, std::vector<std::string>>& value);
  // `keep_empty` writes {} for an empty list (a PodGroup's explicit empty minResources).
  void SetQuantities(std::string_view key, const ResourceList& value, bool keep_empty = false);
  void SetOptQuantities(std::string_view key, const std::optional<ResourceList>& value);
  void SetTime(std::string_view key, const std::optional<base::Time>& value);
  void SetDuration(std::string_view key, const std::optional<Duration>& value);
  // An already serialised JSON value (kept as is when equal to the current one).
  void SetRawJson(std::string_view key, std::string_view json);
  void Remove(std::string_view key);

  // Edits the member object `key` (created when missing). When it ends up empty and was not an
  // object before, it is not written.
  void Edit(std::string_view key, const std::function<void(JsonObject&)>& fn);
  // Edits `key` if `present`, else removes it.
  void EditIf(std::string_view key, bool present, const std::function<void(JsonObject&)>& fn);
  // Rewrites the array of objects `key` to `count` elements. Element i starts from the old
  // element with the same "name" member when `name_of` is given (so reordering keeps each
  // element's unknown fields), else from the old element at index i.
  void EditList(std::string_view key, size_t count,
                const std::function<void(size_t, JsonObject&)>& fn,
                const std::function<std::string(size_t)>& name_of = nullptr);
  // Rewrites the object `key` whose members are data (map[string]struct): exactly `keys`
  // remain, each edited by fn.
  void EditMap(std::string_view key, const std::vector<std::string>& keys,
               const std::function<void(const std::string&, JsonObject&)>& fn);
  // Replaces the whole content with the JSON object `json` (e.g. a pod template kept as text);
  // later setters then overlay on it. Non-object or invalid text leaves an empty object.
  void ResetFrom(std::string_view json);

  // For codec.cc only.
  JsonObject(json::Value* value, Context* context) : value_(value), context_(context) {}

 private:
  json::Value* value_;
  Context* context_;
};

// Edits the JSON object `base` (or {} when empty or not an object) with fn and returns the
// compact result.
std::string OverlayJson(std::string_view base, const std::function<void(JsonObject&)>& fn);

// Encodes an object: starts from obj.raw (or {}), writes apiVersion, kind and metadata, then
// lets `body` write the rest. Returns compact JSON text.
std::string EncodeObject(const kube::Object& obj, const std::function<void(JsonObject&)>& body);

// Writes ObjectMeta's modelled fields (labels, annotations, ownerReferences, ...) over `m`.
void EncodeObjectMetaInto(const kube::ObjectMeta& meta, JsonObject& m);
// An OwnerReference (metadata.ownerReferences[i], a Command's target).
using kube::DecodeOwnerReference;
void EncodeOwnerReferenceInto(const kube::OwnerReference& ref, JsonObject& o);

}  // namespace tephra::api
