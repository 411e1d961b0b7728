#include "api/codec.h"

#include <unordered_map>

#include <rapidjson/document.h>

#include "base/time.h"

namespace tephra::api {

struct JsonObject::Context {
  json::Document* doc;
  json::Document::AllocatorType& alloc() { return doc->GetAllocator(); }
};

namespace {

using rapidjson::SizeType;
using rapidjson::StringRef;

std::string_view TrimSpace(std::string_view s) {
  constexpr std::string_view kSpace = " \t\n\r\v\f";
  size_t b = s.find_first_not_of(kSpace);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(kSpace) - b + 1);
}

// The quantity in a raw JSON value, if it holds a valid one.
std::optional<Quantity> QuantityOf(const json::Value& v) {
  json::Errors ignored;
  return DecodeQuantity(json::Reader(&v, &ignored));
}

bool EmptyString(const json::Value& v) {
  return json::IsString(v) && v.GetStringLength() == 0;
}
bool ZeroNumber(const json::Value& v) {
  return json::IntegerOf(v) == 0;
}
bool FalseBool(const json::Value& v) {
  return v.IsFalse();
}
bool EmptyObject(const json::Value& v) {
  return v.IsObject() && v.ObjectEmpty();
}
bool EmptyArray(const json::Value& v) {
  return v.IsArray() && v.Empty();
}
bool Never(const json::Value&) {
  return false;
}

// By value, so that 3.0 or a raw 3.00 stays as written when the model holds 3.
bool SameInt(const json::Value* v, int64_t value) {
  return v != nullptr && json::IntegerOf(*v) == value;
}

bool SameString(const json::Value* v, std::string_view value) {
  return v != nullptr && json::IsString(*v) && json::StringOf(*v) == value;
}

// Whether the object `cur` holds exactly the entries of `map` (any member order), each value
// accepted by same(value, expected). n log n.
template <typename Map, typename Same>
bool SameEntries(const json::Value* cur, const Map& map, Same same) {
  if (cur == nullptr || !cur->IsObject() || cur->MemberCount() != map.size()) return false;
  json::MemberIndex index(cur);
  for (const auto& [k, v] : map) {
    if (!same(index.Find(k), v)) return false;
  }
  return true;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Decoding helpers

std::optional<Quantity> DecodeQuantity(const json::Reader& r) {
  if (!r.present()) return std::nullopt;
  const json::Value& v = *r.value();
  std::string text;
  if (json::IsRawNumber(v)) {
    text = std::string(json::RawNumberText(v));
  } else if (v.IsString()) {
    text = std::string(TrimSpace(std::string_view(v.GetString(), v.GetStringLength())));
  } else if (v.IsInt64()) {
    text = std::to_string(v.GetInt64());
  } else if (v.IsUint64()) {
    text = std::to_string(v.GetUint64());
  } else if (v.IsNumber()) {
    text = json::Write(v);
  } else {
    r.Fail("expected a quantity (string or number)");
    return std::nullopt;
  }
  StatusOr<Quantity> q = Quantity::Parse(text);
  if (!q.ok()) {
    r.Fail(q.status().message());
    return std::nullopt;
  }
  return *std::move(q);
}

ResourceList DecodeResourceList(const json::Reader& r) {
  std::vector<ResourceList::Entry> entries;
  r.ForEachMember([&](std::string_view name, const json::Reader& value) {
    if (value.value() != nullptr && value.value()->IsNull()) {
      entries.emplace_back(name, Quantity());  // Kubernetes reads null as zero
      return;
    }
    std::optional<Quantity> q = DecodeQuantity(value);
    if (q) entries.emplace_back(name, *std::move(q));
  });
  return ResourceList(std::move(entries));
}

std::optional<Duration> DecodeDuration(const json::Reader& r) {
  std::optional<std::string> text = r.OptString();
  if (!text) return std::nullopt;
  StatusOr<Duration> d = base::ParseDuration(*text);
  if (!d.ok()) {
    r.Fail("invalid duration \"" + *text + "\" (expected e.g. \"90s\", \"1h30m\")");
    return std::nullopt;
  }
  return *d;
}

Status WithParsedJson(std::string_view text, const std::function<Status(const json::Value&)>& fn) {
  json::Document doc;
  TEPHRA_RETURN_IF_ERROR(json::Parse(text, &doc));
  return fn(doc);
}

Status DecodeObjectInto(const json::Value& value, const DecodeOptions& options,
                        std::string_view kind, kube::Object* out,
                        const std::function<void(const json::Reader&)>& fill) {
  json::Errors errors;
  json::Reader r(&value, &errors);
  if (!r.is_object()) return InvalidArgument(std::string(kind) + ": expected a JSON object");
  kube::DecodeObjectHeader(r, out);
  fill(r);
  if (!errors.empty()) {
    std::string what(kind);
    if (!out->metadata.name.empty()) what += " " + out->metadata.Key();
    return errors.ToStatus(what);
  }
  if (options.keep_raw) out->raw = std::make_shared<const std::string>(json::Write(value));
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// JsonObject

namespace {

json::Value* FindMember(json::Value* obj, std::string_view key) {
  auto it = obj->FindMember(StringRef(key.data(), static_cast<SizeType>(key.size())));
  return it == obj->MemberEnd() ? nullptr : &it->value;
}

void PutMember(json::Value* obj, std::string_view key, json::Value&& v,
               json::Document::AllocatorType& alloc) {
  if (json::Value* cur = FindMember(obj, key)) {
    *cur = v;  // rapidjson assignment moves
    return;
  }
  json::Value name(key.data(), static_cast<SizeType>(key.size()), alloc);
  obj->AddMember(name, v, alloc);
}

// Removes `key` unless it is absent, null, or holds what `empty` accepts as the unset value.
void ClearMember(json::Value* obj, std::string_view key, bool (*empty)(const json::Value&)) {
  auto it = obj->FindMember(StringRef(key.data(), static_cast<SizeType>(key.size())));
  if (it != obj->MemberEnd() && !it->value.IsNull() && !empty(it->value)) obj->EraseMember(it);
}

void PutString(json::Value* obj, std::string_view key, std::string_view text,
               json::Document::AllocatorType& alloc) {
  PutMember(obj, key, json::Value(text.data(), static_cast<SizeType>(text.size()), alloc), alloc);
}

// For EditList: the old element each new element i starts from (old.Size() for none). With
// names, the first old element not taken yet whose "name" is name_of(i), else the old element
// at index i if it has no name (a name the model filled in, such as a defaulted task name);
// without a name, the old element at index i if not taken. Linear: each name's candidates are
// taken in order.
std::vector<SizeType> MatchOldElements(const json::Value& old, size_t count,
                                       const std::function<std::string(size_t)>& name_of) {
  std::vector<SizeType> matches(count, old.Size());
  std::vector<bool> used(old.Size(), false);
  std::vector<bool> unnamed(old.Size(), false);
  std::unordered_map<std::string_view, std::vector<SizeType>> by_name;
  if (name_of) {
    for (SizeType j = old.Size(); j-- > 0;) {  // reversed: back() is the first candidate
      if (!old[j].IsObject()) continue;
      auto name = old[j].FindMember("name");
      if (name != old[j].MemberEnd() && json::IsString(name->value) &&
          name->value.GetStringLength() > 0) {
        by_name[json::StringOf(name->value)].push_back(j);
      } else {
        unnamed[j] = true;
      }
    }
  }
  for (size_t i = 0; i < count; ++i) {
    std::string name = name_of ? name_of(i) : std::string();
    if (!name.empty()) {
      auto it = by_name.find(name);
      std::vector<SizeType>* candidates = it == by_name.end() ? nullptr : &it->second;
      while (candidates != nullptr && !candidates->empty() && used[candidates->back()]) {
        candidates->pop_back();
      }
      if (candidates != nullptr && !candidates->empty()) {
        matches[i] = candidates->back();
        candidates->pop_back();
      } else if (i < old.Size() && unnamed[i] && !used[i]) {
        matches[i] = static_cast<SizeType>(i);
      } else {
        continue;
      }
    } else if (i < old.Size() && !used[i]) {
      matches[i] = static_cast<SizeType>(i);
    } else {
      continue;
    }
    used[matches[i]] = true;
  }
  return matches;
}

}  // namespace

bool JsonObject::empty() const {
  return value_->ObjectEmpty();
}

bool JsonObject::Has(std::string_view key) const {
  return FindMember(value_, key) != nullptr;
}

void JsonObject::Remove(std::string_view key) {
  auto it = value_->FindMember(StringRef(key.data(), static_cast<SizeType>(key.size())));
  if (it != value_->MemberEnd()) value_->EraseMember(it);  // keeps the other members' order
}

void JsonObject::SetString(std::string_view key, std::string_view value) {
  json::Value* cur = FindMember(value_, key);
  if (value.empty()) {
    ClearMember(value_, key, EmptyString);
    return;
  }
  if (SameString(cur, value)) return;
  PutString(value_, key, value, context_->alloc());
}

void JsonObject::SetOptString(std::string_view key, const std::optional<std::string>& value) {
  json::Value* cur = FindMember(value_, key);
  if (!value) {
    ClearMember(value_, key, Never);
    return;
  }
  if (SameString(cur, *value)) return;
  PutString(value_, key, *value, context_->alloc());
}

void JsonObject::SetInt(std::string_view key, int64_t value) {
  if (value == 0) {
    ClearMember(value_, key, ZeroNumber);
    return;
  }
  SetOptInt(key, value);
}

void JsonObject::SetOptInt(std::string_view key, std::optional<int64_t> value) {
  json::Value* cur = FindMember(value_, key);
  if (!value) {
    ClearMember(value_, key, Never);
    return;
  }
  if (SameInt(cur, *value)) return;
  PutMember(value_, key, json::Value(static_cast<int64_t>(*value)), context_->alloc());
}

void JsonObject::SetBool(std::string_view key, bool value) {
  if (!value) {
    ClearMember(value_, key, FalseBool);
    return;
  }
  SetOptBool(key, value);
}

void JsonObject::SetOptBool(std::string_view key, std::optional<bool> value) {
  json::Value* cur = FindMember(value_, key);
  if (!value) {
    ClearMember(value_, key, Never);
    return;
  }
  if (cur != nullptr && cur->IsBool() && cur->GetBool() == *value) return;
  PutMember(value_, key, json::Value(*value), context_->alloc());
}

void JsonObject::SetStringMap(std::string_view key,
                              const std::map<std::string, std::string>& value) {
  json::Value* cur = FindMember(value_, key);
  if (value.empty()) {
    ClearMember(value_, key, EmptyObject);
    return;
  }
  if (SameEntries(cur, value, SameString)) return;
  auto& alloc = context_->alloc();
  json::Value obj(rapidjson::kObjectType);
  for (const auto& [k, v] : value) {
    obj.AddMember(json::Value(k.data(), static_cast<SizeType>(k.size()), alloc),
                  json::Value(v.data(), static_cast<SizeType>(v.size()), alloc), alloc);
  }
  PutMember(value_, key, std::move(obj), alloc);
}

void JsonObject::SetStringList(std::string_view key, const std::vector<std::string>& value) {
  json::Value* cur = FindMember(value_, key);
  if (value.empty()) {
    ClearMember(value_, key, EmptyArray);
    return;
  }
  if (cur != nullptr && cur->IsArray() && cur->Size() == value.size()) {
    bool same = true;
    for (SizeType i = 0; i < cur->Size() && same; ++i) same = SameString(&(*cur)[i], value[i]);
    if (same) return;
  }
  auto& alloc = context_->alloc();
  json::Value arr(rapidjson::kArrayType);
  for (const auto& v : value) {
    arr.PushBack(json::Value(v.data(), static_cast<SizeType>(v.size()), alloc), alloc);
  }
  PutMember(value_, key, std::move(arr), alloc);
}

void JsonObject::SetIntMap(std::string_view key, const std::map<std::string, int32_t>& value) {
  json::Value* cur = FindMember(value_, key);
  if (value.empty()) {
    ClearMember(value_, key, EmptyObject);
    return;
  }
  if (SameEntries(cur, value, SameInt)) return;
  auto& alloc = context_->alloc();
  json::Value obj(rapidjson::kObjectType);
  for (const auto& [k, v] : value) {
    obj.AddMember(json::Value(k.data(), static_cast<SizeType>(k.size()), alloc), json::Value(v),
                  alloc);
  }
  PutMember(value_, key, std::move(obj), alloc);
}

void JsonObject::SetStringListMap(std::string_view key,
                                  const std::map<std::string, std::vector<std::string>>& value) {
  json::Value* cur = FindMember(value_, key);
  if (value.empty()) {
    ClearMember(value_, key, EmptyObject);
    return;
  }
  auto& alloc = context_->alloc();
  json::MemberIndex old_members(cur);
  json::Value obj(rapidjson::kObjectType);
  for (const auto& [k, list] : value) {
    json::Value arr(rapidjson::kArrayType);
    for (const auto& v : list) {
      arr.PushBack(json::Value(v.data(), static_cast<SizeType>(v.size()), alloc), alloc);
    }
    // A key with no arguments may be written as null; keep that spelling.
    const json::Value* old = old_members.Find(k);
    if (list.empty() && old != nullptr && old->IsNull()) arr.SetNull();
    obj.AddMember(json::Value(k.data(), static_cast<SizeType>(k.size()), alloc), arr, alloc);
  }
  if (cur != nullptr && json::Equal(*cur, obj)) return;
  PutMember(value_, key, std::move(obj), alloc);
}

void JsonObject::SetQuantities(std::string_view key, const ResourceList& value, bool keep_empty) {
  json::Value* cur = FindMember(value_, key);
  auto& alloc = context_->alloc();
  if (value.empty()) {
    if (keep_empty) {
      if (cur == nullptr || !EmptyObject(*cur)) {
        PutMember(value_, key, json::Value(rapidjson::kObjectType), alloc);
      }
    } else {
      ClearMember(value_, key, EmptyObject);
    }
    return;
  }
  bool same = cur != nullptr && cur->IsObject() && cur->MemberCount() == value.size();
  json::MemberIndex old_members(cur);
  json::Value obj(rapidjson::kObjectType);
  for (const auto& [name, quantity] : value) {
    const json::Value* old = old_members.Find(name);
    std::optional<Quantity> old_q = old != nullptr ? QuantityOf(*old) : std::nullopt;
    json::Value v;
    if (old_q && *old_q == quantity) {
      v.CopyFrom(*old, alloc);  // same value: keep the text as written ("1000m", "2")
    } else {
      same = false;
      std::string text = quantity.String();
      v.SetString(text.data(), static_cast<SizeType>(text.size()), alloc);
    }
    obj.AddMember(json::Value(name.data(), static_cast<SizeType>(name.size()), alloc), v, alloc);
  }
  if (same) return;
  PutMember(value_, key, std::move(obj), alloc);
}

void JsonObject::SetOptQuantities(std::string_view key, const std::optional<ResourceList>& value) {
  if (!value) {
    ClearMember(value_, key, Never);
    return;
  }
  SetQuantities(key, *value, /*keep_empty=*/true);
}

void JsonObject::SetTime(std::string_view key, const std::optional<base::Time>& value) {
  json::Value* cur = FindMember(value_, key);
  if (!value) {
    ClearMember(value_, key, Never);
    return;
  }
  if (cur != nullptr && json::IsString(*cur)) {
    std::optional<base::Time> old = base::ParseTime(json::StringOf(*cur));
    // metav1.Time has second precision on the wire: compare at that precision.
    if (old && std::chrono::floor<std::chrono::seconds>(*old) ==
                   std::chrono::floor<std::chrono::seconds>(*value)) {
      return;
    }
  }
  std::string text = base::FormatTime(*value);
  PutString(value_, key, text, context_->alloc());
}

void JsonObject::SetDuration(std::string_view key, const std::optional<Duration>& value) {
  json::Value* cur = FindMember(value_, key);
  if (!value) {
    ClearMember(value_, key, Never);
    return;
  }
  if (cur != nullptr && json::IsString(*cur)) {
    StatusOr<Duration> written = base::ParseDuration(json::StringOf(*cur));
    if (written.ok() && *written == *value) return;
  }
  std::string text = base::FormatDuration(*value);
  PutString(value_, key, text, context_->alloc());
}

void JsonObject::SetRawJson(std::string_view key, std::string_view text) {
  json::Document parsed;
  if (!json::Parse(text, &parsed).ok()) return;
  json::Value* cur = FindMember(value_, key);
  if (cur != nullptr && json::Equal(*cur, parsed)) return;
  json::Value copy(parsed, context_->alloc());
  PutMember(value_, key, std::move(copy), context_->alloc());
}

void JsonObject::ResetFrom(std::string_view text) {
  json::Document parsed;
  if (json::Parse(text, &parsed).ok() && parsed.IsObject()) {
    json::Value copy(parsed, context_->alloc());
    *value_ = copy;
  } else {
    value_->SetObject();
  }
}

void JsonObject::Edit(std::string_view key, const std::function<void(JsonObject&)>& fn) {
  json::Value* cur = FindMember(value_, key);
  bool was_object = cur != nullptr && cur->IsObject();
  // Detach the member while fn edits it; this object's members do not move meanwhile.
  json::Value child(rapidjson::kObjectType);
  if (was_object) child.Swap(*cur);
  JsonObject editor(&child, context_);
  fn(editor);
  if (was_object) {
    cur->Swap(child);
  } else if (!child.ObjectEmpty()) {
    PutMember(value_, key, std::move(child), context_->alloc());
  }
}

void JsonObject::EditIf(std::string_view key, bool present,
                        const std::function<void(JsonObject&)>& fn) {
  if (present) {
    Edit(key, fn);
  } else {
    ClearMember(value_, key, Never);
  }
}

void JsonObject::EditList(std::string_view key, size_t count,
                          const std::function<void(size_t, JsonObject&)>& fn,
                          const std::function<std::string(size_t)>& name_of) {
  json::Value* cur = FindMember(value_, key);
  if (count == 0) {
    ClearMember(value_, key, EmptyArray);
    return;
  }
  auto& alloc = context_->alloc();
  json::Value old(rapidjson::kArrayType);
  if (cur != nullptr && cur->IsArray()) old.Swap(*cur);
  std::vector<SizeType> matches = MatchOldElements(old, count, name_of);
  json::Value arr(rapidjson::kArrayType);
  arr.Reserve(static_cast<SizeType>(count), alloc);
  for (size_t i = 0; i < count; ++i) {
    SizeType match = matches[i];
    json::Value elem(rapidjson::kObjectType);
    if (match < old.Size() && old[match].IsObject()) elem.Swap(old[match]);
    JsonObject editor(&elem, context_);
    fn(i, editor);
    arr.PushBack(elem, alloc);
  }
  if (cur != nullptr) {
    *cur = arr;
  } else {
    PutMember(value_, key, std::move(arr), alloc);
  }
}

void JsonObject::EditMap(std::string_view key, const std::vector<std::string>& keys,
                         const std::function<void(const std::string&, JsonObject&)>& fn) {
  json::Value* cur = FindMember(value_, key);
  if (keys.empty()) {
    ClearMember(value_, key, EmptyObject);
    return;
  }
  auto& alloc = context_->alloc();
  json::Value old(rapidjson::kObjectType);
  if (cur != nullptr && cur->IsObject()) old.Swap(*cur);
  json::MemberIndex old_members(&old);
  json::Value out(rapidjson::kObjectType);
  for (const std::string& k : keys) {
    json::Value elem(rapidjson::kObjectType);
    if (json::Value* prev = old_members.Find(k, old); prev != nullptr && prev->IsObject()) {
      elem.Swap(*prev);
    }
    JsonObject editor(&elem, context_);
    fn(k, editor);
    out.AddMember(json::Value(k.data(), static_cast<SizeType>(k.size()), alloc), elem, alloc);
  }
  if (cur != nullptr) {
    *cur = out;
  } else {
    PutMember(value_, key, std::move(out), alloc);
  }
}

// ---------------------------------------------------------------------------------------------
// Objects

void EncodeObjectMetaInto(const kube::ObjectMeta& meta, JsonObject& m) {
  m.SetString("name", meta.name);
  m.SetString("generateName", meta.generate_name);
  m.SetString("namespace", meta.namespace_);
  m.SetString("uid", meta.uid);
  m.SetString("resourceVersion", meta.resource_version);
  m.SetInt("generation", meta.generation);
  m.SetTime("creationTimestamp", meta.creation_timestamp);
  m.SetTime("deletionTimestamp", meta.deletion_timestamp);
  m.SetOptInt("deletionGracePeriodSeconds", meta.deletion_grace_period_seconds);
  m.SetStringMap("labels", meta.labels);
  m.SetStringMap("annotations", meta.annotations);
  m.EditList("ownerReferences", meta.owner_references.size(), [&](size_t i, JsonObject& o) {
    EncodeOwnerReferenceInto(meta.owner_references[i], o);
  });
  m.SetStringList("finalizers", meta.finalizers);
}

void EncodeOwnerReferenceInto(const kube::OwnerReference& ref, JsonObject& o) {
  o.SetString("apiVersion", ref.api_version);
  o.SetString("kind", ref.kind);
  o.SetString("name", ref.name);
  o.SetString("uid", ref.uid);
  o.SetBool("controller", ref.controller);
  o.SetBool("blockOwnerDeletion", ref.block_owner_deletion);
}

std::string OverlayJson(std::string_view base, const std::function<void(JsonObject&)>& fn) {
  json::Document doc;
  if (base.empty() || !json::Parse(base, &doc).ok() || !doc.IsObject()) doc.SetObject();
  JsonObject::Context context{&doc};
  JsonObject root(&doc, &context);
  fn(root);
  return json::Write(doc);
}

std::string EncodeObject(const kube::Object& obj, const std::function<void(JsonObject&)>& body) {
  return OverlayJson(
      obj.raw ? std::string_view(*obj.raw) : std::string_view(), [&](JsonObject& root) {
        root.SetString("apiVersion", obj.api_version);
        root.SetString("kind", obj.kind);
        root.Edit("metadata", [&](JsonObject& m) { EncodeObjectMetaInto(obj.metadata, m); });
        body(root);
      });
}

}  // namespace tephra::api
