#include "controllers/job/pod_draft.h"

#include <rapidjson/document.h>

#include "json/json.h"

namespace tephra::controllers::job {
namespace {

using rapidjson::Value;
using Alloc = rapidjson::Document::AllocatorType;

Value Str(std::string_view s, Alloc& a) {
  return Value(s.data(), static_cast<rapidjson::SizeType>(s.size()), a);
}

// The object member `key` of `parent`, created (or replaced when not an object) as needed.
Value& ObjectMember(Value& parent, std::string_view key, Alloc& a) {
  auto it = parent.FindMember(Str(key, a));
  if (it == parent.MemberEnd()) {
    parent.AddMember(Str(key, a), Value(rapidjson::kObjectType), a);
    return (parent.MemberEnd() - 1)->value;
  }
  if (!it->value.IsObject()) it->value.SetObject();
  return it->value;
}

Value& ArrayMember(Value& parent, std::string_view key, Alloc& a) {
  auto it = parent.FindMember(Str(key, a));
  if (it == parent.MemberEnd()) {
    parent.AddMember(Str(key, a), Value(rapidjson::kArrayType), a);
    return (parent.MemberEnd() - 1)->value;
  }
  if (!it->value.IsArray()) it->value.SetArray();
  return it->value;
}

std::string StringMember(const Value& obj, std::string_view key) {
  if (!obj.IsObject()) return "";
  auto it = obj.FindMember(Value(rapidjson::StringRef(key.data(), key.size())));
  if (it == obj.MemberEnd() || !json::IsString(it->value)) return "";
  return std::string(it->value.GetString(), it->value.GetStringLength());
}

void SetStringMember(Value& obj, std::string_view key, std::string_view value, Alloc& a) {
  auto it = obj.FindMember(Str(key, a));
  if (it == obj.MemberEnd()) {
    obj.AddMember(Str(key, a), Str(value, a), a);
  } else {
    it->value = Str(value, a);
  }
}

bool HasElementWith(const Value& array, std::string_view key, std::string_view value) {
  for (const auto& e : array.GetArray()) {
    if (StringMember(e, key) == value) return true;
  }
  return false;
}

}  // namespace

struct PodDraft::Impl {
  rapidjson::Document doc;
  Alloc& a() { return doc.GetAllocator(); }
  Value& metadata() { return ObjectMember(doc, "metadata", a()); }
  Value& spec() { return ObjectMember(doc, "spec", a()); }

  // Calls fn on every container (and init container when `init`).
  template <typename Fn>
  void ForContainers(bool init, Fn fn) {
    Value& s = spec();
    for (const char* list : {"containers", "initContainers"}) {
      if (std::string_view(list) == "initContainers" && !init) continue;
      auto it = s.FindMember(list);
      if (it == s.MemberEnd() || !it->value.IsArray()) continue;
      for (auto& c : it->value.GetArray()) {
        if (c.IsObject()) fn(c);
      }
    }
  }

  void AddEnvVar(Value& container, std::string_view name, Value var) {
    Value& env = ArrayMember(container, "env", a());
    if (HasElementWith(env, "name", name)) return;
    env.PushBack(var, a());
  }
};

PodDraft::PodDraft(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PodDraft::PodDraft(PodDraft&&) noexcept = default;
PodDraft& PodDraft::operator=(PodDraft&&) noexcept = default;
PodDraft::~PodDraft() = default;

StatusOr<PodDraft> PodDraft::FromTemplate(std::string_view template_json) {
  auto impl = std::make_unique<Impl>();
  rapidjson::Document tmpl;
  if (template_json.empty()) {
    tmpl.SetObject();
  } else {
    TEPHRA_RETURN_IF_ERROR(json::Parse(template_json, &tmpl).WithContext("pod template"));
    if (!tmpl.IsObject()) return InvalidArgument("pod template: not a JSON object");
  }
  impl->doc.SetObject();
  Alloc& a = impl->a();
  impl->doc.AddMember("apiVersion", "v1", a);
  impl->doc.AddMember("kind", "Pod", a);
  Value metadata(rapidjson::kObjectType);
  Value spec(rapidjson::kObjectType);
  auto m = tmpl.FindMember("metadata");
  if (m != tmpl.MemberEnd() && m->value.IsObject()) metadata.CopyFrom(m->value, a);
  auto s = tmpl.FindMember("spec");
  if (s != tmpl.MemberEnd() && s->value.IsObject()) spec.CopyFrom(s->value, a);
  // A template's own identity fields never belong on the pod.
  for (const char* key : {"name", "generateName", "namespace", "uid", "resourceVersion",
                          "creationTimestamp", "ownerReferences"}) {
    metadata.RemoveMember(key);
  }
  impl->doc.AddMember("metadata", metadata, a);
  impl->doc.AddMember("spec", spec, a);
  return PodDraft(std::move(impl));
}

void PodDraft::SetNameAndNamespace(std::string_view name, std::string_view namespace_) {
  Value& m = impl_->metadata();
  SetStringMember(m, "name", name, impl_->a());
  SetStringMember(m, "namespace", namespace_, impl_->a());
}

std::string PodDraft::Name() const {
  return StringMember(impl_->metadata(), "name");
}

void PodDraft::SetLabel(std::string_view key, std::string_view value) {
  SetStringMember(ObjectMember(impl_->metadata(), "labels", impl_->a()), key, value, impl_->a());
}

void PodDraft::SetAnnotation(std::string_view key, std::string_view value) {
  SetStringMember(ObjectMember(impl_->metadata(), "annotations", impl_->a()), key, value,
                  impl_->a());
}

std::string PodDraft::Label(std::string_view key) const {
  return StringMember(ObjectMember(impl_->metadata(), "labels", impl_->a()), key);
}

std::string PodDraft::Annotation(std::string_view key) const {
  return StringMember(ObjectMember(impl_->metadata(), "annotations", impl_->a()), key);
}

void PodDraft::SetControllerReference(const kube::OwnerReference& owner) {
  Alloc& a = impl_->a();
  Value& refs = ArrayMember(impl_->metadata(), "ownerReferences", a);
  refs.SetArray();
  Value ref(rapidjson::kObjectType);
  ref.AddMember("apiVersion", Str(owner.api_version, a), a);
  ref.AddMember("kind", Str(owner.kind, a), a);
  ref.AddMember("name", Str(owner.name, a), a);
  ref.AddMember("uid", Str(owner.uid, a), a);
  ref.AddMember("controller", owner.controller, a);
  ref.AddMember("blockOwnerDeletion", owner.block_owner_deletion, a);
  refs.PushBack(ref, a);
}

std::string PodDraft::SpecString(std::string_view key) const {
  return StringMember(impl_->spec(), key);
}

void PodDraft::SetSpecStringIfEmpty(std::string_view key, std::string_view value) {
  if (!SpecString(key).empty()) return;
  SetStringMember(impl_->spec(), key, value, impl_->a());
}

std::vector<std::string> PodDraft::ContainerNames() const {
  std::vector<std::string> names;
  impl_->ForContainers(false, [&](Value& c) { names.push_back(StringMember(c, "name")); });
  return names;
}

void PodDraft::AddEnv(std::string_view name, std::string_view value, bool init) {
  impl_->ForContainers(init, [&](Value& c) {
    Value var(rapidjson::kObjectType);
    var.AddMember("name", Str(name, impl_->a()), impl_->a());
    var.AddMember("value", Str(value, impl_->a()), impl_->a());
    impl_->AddEnvVar(c, name, std::move(var));
  });
}

void PodDraft::AddEnvTo(size_t container, std::string_view name, std::string_view value) {
  size_t i = 0;
  impl_->ForContainers(false, [&](Value& c) {
    if (i++ != container) return;
    Value var(rapidjson::kObjectType);
    var.AddMember("name", Str(name, impl_->a()), impl_->a());
    var.AddMember("value", Str(value, impl_->a()), impl_->a());
    impl_->AddEnvVar(c, name, std::move(var));
  });
}

void PodDraft::AddEnvFromConfigMap(std::string_view name, std::string_view config_map,
                                   std::string_view key, bool init) {
  impl_->ForContainers(init, [&](Value& c) {
    Alloc& a = impl_->a();
    Value ref(rapidjson::kObjectType);
    ref.AddMember("name", Str(config_map, a), a);
    ref.AddMember("key", Str(key, a), a);
    Value from(rapidjson::kObjectType);
    from.AddMember("configMapKeyRef", ref, a);
    Value var(rapidjson::kObjectType);
    var.AddMember("name", Str(name, a), a);
    var.AddMember("valueFrom", from, a);
    impl_->AddEnvVar(c, name, std::move(var));
  });
}

void PodDraft::AddVolume(std::string_view volume_json) {
  rapidjson::Document v;
  if (!json::Parse(volume_json, &v).ok() || !v.IsObject()) return;
  Value& volumes = ArrayMember(impl_->spec(), "volumes", impl_->a());
  if (HasElementWith(volumes, "name", StringMember(v, "name"))) return;
  Value copy(v, impl_->a());
  volumes.PushBack(copy, impl_->a());
}

void PodDraft::AddVolumeMount(std::string_view mount_json, bool init) {
  rapidjson::Document m;
  if (!json::Parse(mount_json, &m).ok() || !m.IsObject()) return;
  const std::string path = StringMember(m, "mountPath");
  impl_->ForContainers(init, [&](Value& c) {
    Value& mounts = ArrayMember(c, "volumeMounts", impl_->a());
    if (HasElementWith(mounts, "mountPath", path)) return;
    Value copy(m, impl_->a());
    mounts.PushBack(copy, impl_->a());
  });
}

void PodDraft::AddContainerPort(std::string_view name, int32_t port) {
  impl_->ForContainers(false, [&](Value& c) {
    Alloc& a = impl_->a();
    Value& ports = ArrayMember(c, "ports", a);
    for (const auto& p : ports.GetArray()) {
      if (StringMember(p, "name") == name) return;
      if (p.IsObject() && p.HasMember("containerPort") && p["containerPort"].IsInt() &&
          p["containerPort"].GetInt() == port) {
        return;
      }
    }
    Value entry(rapidjson::kObjectType);
    entry.AddMember("name", Str(name, a), a);
    entry.AddMember("containerPort", port, a);
    ports.PushBack(entry, a);
  });
}

void PodDraft::AddInitContainer(std::string_view container_json) {
  rapidjson::Document c;
  if (!json::Parse(container_json, &c).ok() || !c.IsObject()) return;
  Value& init = ArrayMember(impl_->spec(), "initContainers", impl_->a());
  if (HasElementWith(init, "name", StringMember(c, "name"))) return;
  Value copy(c, impl_->a());
  init.PushBack(copy, impl_->a());
}

std::string PodDraft::Json() const {
  return json::Write(impl_->doc);
}

}  // namespace tephra::controllers::job
