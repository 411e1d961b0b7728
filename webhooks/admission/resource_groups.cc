#include "webhooks/admission/resource_groups.h"

#include <cerrno>
#include <cstdlib>

#include <rapidjson/document.h>
#include <yaml-cpp/yaml.h>

#include "api/labels.h"
#include "webhooks/admission/files.h"

namespace tephra::webhooks {
namespace {

std::string Trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return "";
  size_t e = s.find_last_not_of(" \t");
  return std::string(s.substr(b, e - b + 1));
}

bool IsInteger(const std::string& s) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  (void)std::strtoll(s.c_str(), &end, 10);
  return errno == 0 && end == s.c_str() + s.size();
}

void ScalarToJson(const YAML::Node& node, json::Writer* w) {
  const std::string& s = node.Scalar();
  if (node.Tag() == "!") {
    w->String(s);
  } else if (s == "true" || s == "false") {
    w->Bool(s == "true");
  } else if (s == "null" || s == "~") {
    w->Null();
  } else if (IsInteger(s)) {
    w->Int(std::strtoll(s.c_str(), nullptr, 10));
  } else {
    w->String(s);
  }
}

// YAML as JSON, with plain scalars typed the way Kubernetes manifests read them: integers,
// booleans and null; quoted scalars are always strings. Iterative, and it writes at most
// `*budget` values (and spends them): YAML aliases can make a small file expand into
// exponentially many.
StatusOr<std::string> ToJson(const YAML::Node& root, const std::string& path, size_t* budget) {
  struct Frame {
    YAML::Node node;
    YAML::const_iterator next;
  };
  json::Writer w;
  std::vector<Frame> stack;  // open maps and sequences (never assigned: see conf.cc)
  auto open = [&](const YAML::Node& node) -> Status {
    if (*budget == 0) return InvalidArgument(path + ": too many values once aliases are expanded");
    --*budget;
    if (node.IsMap() || node.IsSequence()) {
      node.IsMap() ? w.StartObject() : w.StartArray();
      stack.push_back({node, node.begin()});
    } else if (node.IsScalar()) {
      ScalarToJson(node, &w);
    } else {
      w.Null();
    }
    return Status::Ok();
  };
  TEPHRA_RETURN_IF_ERROR(open(root));
  while (!stack.empty()) {
    Frame& top = stack.back();
    bool map = top.node.IsMap();
    if (top.next == top.node.end()) {
      map ? w.EndObject() : w.EndArray();
      stack.pop_back();
      continue;
    }
    YAML::const_iterator item = top.next++;
    if (map) {
      w.Key(item->first.Scalar());
      TEPHRA_RETURN_IF_ERROR(open(item->second));  // may invalidate `top`
    } else {
      TEPHRA_RETURN_IF_ERROR(open(*item));
    }
  }
  return w.Take();
}

std::string ScalarOr(const YAML::Node& node, std::string_view key) {
  YAML::Node v = node[std::string(key)];
  return v && v.IsScalar() ? v.Scalar() : std::string();
}

Status ParseGroup(const YAML::Node& node, const std::string& path, size_t* budget,
                  ResourceGroup* out) {
  if (!node.IsMap()) return InvalidArgument(path + ": must be a mapping");
  // The group's own entries count against the budget too (aliased groups or label maps).
  size_t entries = node.size();
  for (const char* key : {"labels", "object"}) {
    if (YAML::Node n = node[key]; n && (n.IsMap() || n.IsSequence())) entries += n.size();
  }
  if (YAML::Node object = node["object"]; object && object.IsMap()) {
    if (YAML::Node values = object["value"]; values && values.IsSequence())
      entries += values.size();
  }
  if (entries > *budget) {
    return InvalidArgument(path + ": too many values once aliases are expanded");
  }
  *budget -= entries;
  out->name = ScalarOr(node, "resourceGroup");
  if (out->name.empty()) return InvalidArgument(path + ".resourceGroup: is required");
  YAML::Node object = node["object"];
  if (!object) {
    out->match = ResourceGroup::Match::kAnnotation;
    out->annotations.emplace_back(std::string(api::kResourceGroupAnnotation), out->name);
  } else {
    std::string key = ScalarOr(object, "key");
    YAML::Node values = object["value"];
    if (values && !values.IsSequence()) {
      return InvalidArgument(path + ".object.value: must be a list");
    }
    std::vector<std::string> items;
    if (values) {
      for (const auto& v : values) {
        if (!v.IsScalar()) return InvalidArgument(path + ".object.value: must list strings");
        items.push_back(v.Scalar());
      }
    }
    if (key == "namespace") {
      out->match = ResourceGroup::Match::kNamespace;
      out->namespaces = std::move(items);
    } else if (key == "annotation") {
      out->match = ResourceGroup::Match::kAnnotation;
      for (const std::string& item : items) {
        size_t colon = item.find(':');
        if (colon == std::string::npos) {
          return InvalidArgument(path + ".object.value: annotation \"" + item +
                                 "\" must be written \"key: value\"");
        }
        out->annotations.emplace_back(Trim(item.substr(0, colon)), Trim(item.substr(colon + 1)));
      }
    } else {
      return InvalidArgument(path + ".object.key: must be namespace or annotation, not \"" + key +
                             "\"");
    }
  }
  out->scheduler_name = ScalarOr(node, "schedulerName");
  if (YAML::Node labels = node["labels"]) {
    if (!labels.IsMap()) return InvalidArgument(path + ".labels: must be a mapping");
    for (const auto& kv : labels) {
      if (!kv.second.IsScalar()) return InvalidArgument(path + ".labels: values must be strings");
      out->node_selector[kv.first.Scalar()] = kv.second.Scalar();
    }
  }
  if (YAML::Node tolerations = node["tolerations"]) {
    if (!tolerations.IsSequence()) return InvalidArgument(path + ".tolerations: must be a list");
    TEPHRA_ASSIGN_OR_RETURN(out->tolerations_json,
                            ToJson(tolerations, path + ".tolerations", budget));
  }
  if (YAML::Node affinity = node["affinity"]) {
    if (affinity.IsScalar()) {
      // Volcano writes the affinity as a JSON string; accept that form too.
      json::Document doc;
      if (!json::Parse(affinity.Scalar(), &doc).ok()) {
        return InvalidArgument(path + ".affinity: is neither a mapping nor a JSON object");
      }
      out->affinity_json = json::Write(doc);
    } else if (affinity.IsMap()) {
      TEPHRA_ASSIGN_OR_RETURN(out->affinity_json, ToJson(affinity, path + ".affinity", budget));
    } else {
      return InvalidArgument(path + ".affinity: must be a mapping");
    }
    if (out->affinity_json.empty() || out->affinity_json.front() != '{') {
      return InvalidArgument(path + ".affinity: must be an object");
    }
  }
  return Status::Ok();
}

StatusOr<ResourceGroups> ReadGroupsFile(const std::string& path) {
  TEPHRA_ASSIGN_OR_RETURN(std::string text, ReadWholeFile(path));
  StatusOr<ResourceGroups> groups = ParseResourceGroups(text);
  if (!groups.ok()) return groups.status().WithContext(path);
  return groups;
}

}  // namespace

StatusOr<ResourceGroups> ParseResourceGroups(std::string_view yaml) {
  ResourceGroups out;
  // yaml-cpp reports errors by throwing; they stop here.
  try {
    YAML::Node root = YAML::Load(std::string(yaml));
    if (!root || root.IsNull()) return out;
    if (!root.IsMap()) return InvalidArgument("the admission configuration must be a mapping");
    YAML::Node groups = root["resourceGroups"];
    if (!groups || groups.IsNull()) return out;
    if (!groups.IsSequence()) return InvalidArgument("resourceGroups: must be a list");
    // Every value of the text takes at least one character, unless it is an alias.
    size_t budget = yaml.size() + 16;
    for (size_t i = 0; i < groups.size(); ++i) {
      ResourceGroup group;
      TEPHRA_RETURN_IF_ERROR(
          ParseGroup(groups[i], "resourceGroups[" + std::to_string(i) + "]", &budget, &group));
      out.groups.push_back(std::move(group));
    }
  } catch (const YAML::Exception& e) {
    return InvalidArgument(std::string("invalid YAML: ") + e.what());
  }
  return out;
}

const ResourceGroup* MatchResourceGroup(const ResourceGroups& groups, std::string_view namespace_,
                                        const std::map<std::string, std::string>& annotations) {
  for (const ResourceGroup& g : groups.groups) {
    if (g.match == ResourceGroup::Match::kNamespace) {
      for (const std::string& ns : g.namespaces) {
        if (ns == namespace_) return &g;
      }
      continue;
    }
    for (const auto& [key, value] : g.annotations) {
      auto it = annotations.find(key);
      if (it != annotations.end() && it->second == value) return &g;
    }
  }
  return nullptr;
}

api::JsonPatch ResourceGroupPatch(const ResourceGroup& group, const json::Reader& pod) {
  api::JsonPatch patch;
  json::Reader spec = pod["spec"];
  if (!group.node_selector.empty()) {
    if (spec["nodeSelector"].is_object()) {
      for (const auto& [key, value] : group.node_selector) {
        patch.push_back(
            {"add", "/spec/nodeSelector/" + api::EscapeJsonPointer(key), json::Quote(value)});
      }
    } else {
      json::Writer w;
      w.StartObject();
      for (const auto& [key, value] : group.node_selector) w.Field(key, value);
      w.EndObject();
      patch.push_back({"add", "/spec/nodeSelector", w.Take()});
    }
  }
  if (!group.affinity_json.empty() && !spec["affinity"].present()) {
    patch.push_back({"add", "/spec/affinity", group.affinity_json});
  }
  if (!group.tolerations_json.empty()) {
    if (spec["tolerations"].is_array()) {
      json::Document doc;
      if (json::Parse(group.tolerations_json, &doc).ok()) {
        json::Errors errors;
        json::Reader(&doc, &errors).ForEach([&](const json::Reader& t) {
          patch.push_back({"add", "/spec/tolerations/-", json::Write(*t.value())});
        });
      }
    } else {
      patch.push_back({"add", "/spec/tolerations", group.tolerations_json});
    }
  }
  if (!group.scheduler_name.empty() && spec["schedulerName"].String() != group.scheduler_name) {
    patch.push_back({"add", "/spec/schedulerName", json::Quote(group.scheduler_name)});
  }
  return patch;
}

StatusOr<std::shared_ptr<ResourceGroupFile>> ResourceGroupFile::Open(std::string path) {
  std::shared_ptr<ResourceGroupFile> file(new ResourceGroupFile(std::move(path)));
  StatusOr<bool> loaded = file->ReloadIfChanged();
  if (!loaded.ok()) return loaded.status();
  return file;
}

std::shared_ptr<const ResourceGroups> ResourceGroupFile::Current() const {
  sync::MutexLock lock(mu_);
  return groups_;
}

StatusOr<bool> ResourceGroupFile::ReloadIfChanged() {
  std::string stamp = FileStamp(path_);
  {
    sync::MutexLock lock(mu_);
    if (groups_ != nullptr && stamp == stamp_) return false;
  }
  StatusOr<ResourceGroups> groups = ReadGroupsFile(path_);
  sync::MutexLock lock(mu_);
  // Remember the stamp either way, so a broken file is reported once per change.
  stamp_ = stamp;
  if (!groups.ok()) return groups.status();
  groups_ = std::make_shared<const ResourceGroups>(*std::move(groups));
  return true;
}

}  // namespace tephra::webhooks
