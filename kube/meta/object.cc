#include "kube/meta/object.h"

#include <rapidjson/document.h>

namespace tephra::kube {

std::string ObjectKey(std::string_view namespace_, std::string_view name) {
  if (namespace_.empty()) return std::string(name);
  std::string key;
  key.reserve(namespace_.size() + 1 + name.size());
  key.append(namespace_).append("/").append(name);
  return key;
}

std::pair<std::string, std::string> SplitObjectKey(std::string_view key) {
  size_t slash = key.find('/');
  if (slash == std::string_view::npos) return {"", std::string(key)};
  return {std::string(key.substr(0, slash)), std::string(key.substr(slash + 1))};
}

std::string ObjectMeta::Key() const {
  return ObjectKey(namespace_, name);
}

const OwnerReference* ObjectMeta::ControllerRef() const {
  for (const auto& ref : owner_references) {
    if (ref.controller) return &ref;
  }
  return nullptr;
}

std::string ObjectMeta::Label(std::string_view key) const {
  auto it = labels.find(std::string(key));
  return it == labels.end() ? std::string() : it->second;
}

std::string ObjectMeta::Annotation(std::string_view key) const {
  auto it = annotations.find(std::string(key));
  return it == annotations.end() ? std::string() : it->second;
}

std::optional<base::Time> DecodeTime(const json::Reader& r) {
  std::optional<std::string> text = r.OptString();
  if (!text) return std::nullopt;
  std::optional<base::Time> t = base::ParseTime(*text);
  if (!t) r.Fail("invalid RFC 3339 time \"" + *text + "\"");
  return t;
}

OwnerReference DecodeOwnerReference(const json::Reader& r) {
  OwnerReference ref;
  ref.api_version = r["apiVersion"].String();
  ref.kind = r["kind"].String();
  ref.name = r["name"].String();
  ref.uid = r["uid"].String();
  ref.controller = r["controller"].Bool();
  ref.block_owner_deletion = r["blockOwnerDeletion"].Bool();
  return ref;
}

void DecodeObjectMeta(const json::Reader& m, ObjectMeta* out) {
  out->name = m["name"].String();
  out->generate_name = m["generateName"].String();
  out->namespace_ = m["namespace"].String();
  out->uid = m["uid"].String();
  out->resource_version = m["resourceVersion"].String();
  out->generation = m["generation"].Int();
  out->creation_timestamp = DecodeTime(m["creationTimestamp"]);
  out->deletion_timestamp = DecodeTime(m["deletionTimestamp"]);
  out->deletion_grace_period_seconds = m["deletionGracePeriodSeconds"].OptInt();
  out->labels = m["labels"].StringMap();
  out->annotations = m["annotations"].StringMap();
  out->finalizers = m["finalizers"].StringList();
  out->owner_references.clear();
  m["ownerReferences"].ForEach(
      [&](const json::Reader& r) { out->owner_references.push_back(DecodeOwnerReference(r)); });
}

void DecodeObjectHeader(const json::Reader& object, Object* out) {
  out->api_version = object["apiVersion"].String();
  out->kind = object["kind"].String();
  DecodeObjectMeta(object["metadata"], &out->metadata);
}

void EncodeObjectMeta(const ObjectMeta& meta, json::Writer* w) {
  w->Key("metadata").StartObject();
  if (!meta.name.empty()) w->Field("name", meta.name);
  if (!meta.generate_name.empty()) w->Field("generateName", meta.generate_name);
  if (!meta.namespace_.empty()) w->Field("namespace", meta.namespace_);
  if (!meta.uid.empty()) w->Field("uid", meta.uid);
  if (!meta.resource_version.empty()) w->Field("resourceVersion", meta.resource_version);
  if (meta.generation != 0) w->Field("generation", meta.generation);
  if (meta.creation_timestamp)
    w->Field("creationTimestamp", base::FormatTime(*meta.creation_timestamp));
  if (meta.deletion_timestamp)
    w->Field("deletionTimestamp", base::FormatTime(*meta.deletion_timestamp));
  if (meta.deletion_grace_period_seconds) {
    w->Field("deletionGracePeriodSeconds", *meta.deletion_grace_period_seconds);
  }
  if (!meta.labels.empty()) w->StringMap("labels", meta.labels);
  if (!meta.annotations.empty()) w->StringMap("annotations", meta.annotations);
  if (!meta.owner_references.empty()) {
    w->Key("ownerReferences").StartArray();
    for (const auto& ref : meta.owner_references) {
      w->StartObject()
          .Field("apiVersion", ref.api_version)
          .Field("kind", ref.kind)
          .Field("name", ref.name)
          .Field("uid", ref.uid);
      if (ref.controller) w->Field("controller", true);
      if (ref.block_owner_deletion) w->Field("blockOwnerDeletion", true);
      w->EndObject();
    }
    w->EndArray();
  }
  if (!meta.finalizers.empty()) w->StringList("finalizers", meta.finalizers);
  w->EndObject();
}

StatusOr<std::shared_ptr<RawObject>> DecodeRawObject(const json::Value& value) {
  json::Errors errors;
  auto obj = std::make_shared<RawObject>();
  json::Reader r(&value, &errors);
  if (!r.is_object()) return InvalidArgument("object: expected a JSON object");
  DecodeObjectHeader(r, obj.get());
  TEPHRA_RETURN_IF_ERROR(errors.ToStatus("object"));
  obj->json = json::Write(value);
  return obj;
}

ObjectReference ObjectReference::To(const Object& object) {
  ObjectReference r;
  r.api_version = object.api_version;
  r.kind = object.kind;
  r.namespace_ = object.metadata.namespace_;
  r.name = object.metadata.name;
  r.uid = object.metadata.uid;
  r.resource_version = object.metadata.resource_version;
  return r;
}

}  // namespace tephra::kube
