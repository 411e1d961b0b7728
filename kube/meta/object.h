// Kubernetes object metadata shared by every typed object, and the base class the informer
// cache stores. Cached objects are immutable: the cache hands out shared_ptr<const T>.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "base/time.h"
#include "json/json.h"

namespace tephra::kube {

struct OwnerReference {
  std::string api_version;
  std::string kind;
  std::string name;
  std::string uid;
  bool controller = false;
  bool block_owner_deletion = false;

  bool operator==(const OwnerReference&) const = default;
};

struct ObjectMeta {
  std::string name;
  std::string generate_name;
  std::string namespace_;
  std::string uid;
  std::string resource_version;
  int64_t generation = 0;
  std::optional<base::Time> creation_timestamp;
  std::optional<base::Time> deletion_timestamp;
  std::optional<int64_t> deletion_grace_period_seconds;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  std::vector<OwnerReference> owner_references;
  std::vector<std::string> finalizers;
  bool operator==(const ObjectMeta&) const = default;

  // "namespace/name", or "name" for cluster-scoped objects: the cache and work-queue key.
  std::string Key() const;
  // The ownerReference with controller=true, if any.
  const OwnerReference* ControllerRef() const;
  std::string Label(std::string_view key) const;
  std::string Annotation(std::string_view key) const;
};

// Base of every typed object. `raw` is the JSON the object was decoded from when the decoder
// kept it; codecs overlay modelled fields on it so fields Tephra does not model survive.
class Object {
 public:
  virtual ~Object() = default;

  std::string api_version;
  std::string kind;
  ObjectMeta metadata;
  std::shared_ptr<const std::string> raw;
};

using ObjectPtr = std::shared_ptr<const Object>;

// An object Tephra does not model: metadata plus its JSON text.
class RawObject : public Object {
 public:
  std::string json;
};

// A reference to one version of an object: an Event's involvedObject, a PV's spec.claimRef.
struct ObjectReference {
  std::string api_version;
  std::string kind;
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string resource_version;

  static ObjectReference To(const Object& object);
  bool operator==(const ObjectReference&) const = default;
};

// "namespace/name" or "name".
std::string ObjectKey(std::string_view namespace_, std::string_view name);
// Splits an ObjectKey back into namespace and name.
std::pair<std::string, std::string> SplitObjectKey(std::string_view key);

// A metav1.Time field; a malformed value is recorded as an error at r's path.
std::optional<base::Time> DecodeTime(const json::Reader& r);
// metadata.ownerReferences[i], a Command's target.
OwnerReference DecodeOwnerReference(const json::Reader& r);

// Decodes metadata (and apiVersion/kind) from an object; errors carry field paths.
void DecodeObjectMeta(const json::Reader& metadata, ObjectMeta* out);
void DecodeObjectHeader(const json::Reader& object, Object* out);
// Writes "metadata":{...} with every set field.
void EncodeObjectMeta(const ObjectMeta& meta, json::Writer* w);

// Decodes any object as a RawObject (keeps the JSON text).
StatusOr<std::shared_ptr<RawObject>> DecodeRawObject(const json::Value& value);

}  // namespace tephra::kube
