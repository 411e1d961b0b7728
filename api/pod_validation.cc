// Pod-template validation (docs/admission.md, "Pod templates"): the JSON shape of the template
// (the types Kubernetes' PodTemplateSpec gives its fields), then the rules of Kubernetes' core
// pod validation that matter for batch pods. Volcano's job webhook decodes the template into
// the Kubernetes types and runs that validation; Tephra keeps the template as JSON text, so it
// checks the same things on the text. Linear in the template's size.
#include <array>
#include <set>
#include <span>

#include <rapidjson/document.h>

#include "api/validation.h"
#include "api/validation_internal.h"

namespace tephra::api {
namespace {

using validation::Field;
using validation::Index;

// ---------------------------------------------------------------------------------------------
// JSON shape

enum class Shape : uint8_t {
  kString,
  kBool,
  kInt32,
  kInt64,
  kStringList,
  kStringMap,
  kQuantityMap,  // name -> quantity (string or number)
  kObject,       // members checked against `members` (none: any object)
  kObjectList,   // each element an object checked against `members`
};

struct Member {
  std::string_view name;
  Shape shape;
  std::span<const Member> members = {};
};

constexpr Member kNameOnly[] = {{"name", Shape::kString}};
constexpr Member kEnvVar[] = {
    {"name", Shape::kString}, {"value", Shape::kString}, {"valueFrom", Shape::kObject}};
constexpr Member kEnvFrom[] = {
    {"prefix", Shape::kString}, {"configMapRef", Shape::kObject}, {"secretRef", Shape::kObject}};
constexpr Member kContainerPort[] = {{"name", Shape::kString},
                                     {"hostPort", Shape::kInt32},
                                     {"containerPort", Shape::kInt32},
                                     {"protocol", Shape::kString},
                                     {"hostIP", Shape::kString}};
constexpr Member kResources[] = {{"limits", Shape::kQuantityMap},
                                 {"requests", Shape::kQuantityMap},
                                 {"claims", Shape::kObjectList, kNameOnly}};
constexpr Member kVolumeMount[] = {{"name", Shape::kString},
                                   {"readOnly", Shape::kBool},
                                   {"mountPath", Shape::kString},
                                   {"subPath", Shape::kString},
                                   {"subPathExpr", Shape::kString},
                                   {"mountPropagation", Shape::kString},
                                   {"recursiveReadOnly", Shape::kString}};
constexpr Member kVolumeDevice[] = {{"name", Shape::kString}, {"devicePath", Shape::kString}};
constexpr Member kSecurityContext[] = {{"runAsUser", Shape::kInt64},
                                       {"runAsGroup", Shape::kInt64},
                                       {"runAsNonRoot", Shape::kBool},
                                       {"privileged", Shape::kBool},
                                       {"readOnlyRootFilesystem", Shape::kBool},
                                       {"allowPrivilegeEscalation", Shape::kBool},
                                       {"procMount", Shape::kString},
                                       {"capabilities", Shape::kObject},
                                       {"seccompProfile", Shape::kObject},
                                       {"seLinuxOptions", Shape::kObject}};
constexpr Member kContainer[] = {{"name", Shape::kString},
                                 {"image", Shape::kString},
                                 {"command", Shape::kStringList},
                                 {"args", Shape::kStringList},
                                 {"workingDir", Shape::kString},
                                 {"ports", Shape::kObjectList, kContainerPort},
                                 {"envFrom", Shape::kObjectList, kEnvFrom},
                                 {"env", Shape::kObjectList, kEnvVar},
                                 {"resources", Shape::kObject, kResources},
                                 {"resizePolicy", Shape::kObjectList},
                                 {"restartPolicy", Shape::kString},
                                 {"volumeMounts", Shape::kObjectList, kVolumeMount},
                                 {"volumeDevices", Shape::kObjectList, kVolumeDevice},
                                 {"livenessProbe", Shape::kObject},
                                 {"readinessProbe", Shape::kObject},
                                 {"startupProbe", Shape::kObject},
                                 {"lifecycle", Shape::kObject},
                                 {"terminationMessagePath", Shape::kString},
                                 {"terminationMessagePolicy", Shape::kString},
                                 {"imagePullPolicy", Shape::kString},
                                 {"securityContext", Shape::kObject, kSecurityContext},
                                 {"stdin", Shape::kBool},
                                 {"stdinOnce", Shape::kBool},
                                 {"tty", Shape::kBool}};
constexpr Member kToleration[] = {{"key", Shape::kString},
                                  {"operator", Shape::kString},
                                  {"value", Shape::kString},
                                  {"effect", Shape::kString},
                                  {"tolerationSeconds", Shape::kInt64}};
constexpr Member kHostAlias[] = {{"ip", Shape::kString}, {"hostnames", Shape::kStringList}};
constexpr Member kDnsConfig[] = {{"nameservers", Shape::kStringList},
                                 {"searches", Shape::kStringList},
                                 {"options", Shape::kObjectList}};
constexpr Member kSpreadConstraint[] = {{"maxSkew", Shape::kInt32},
                                        {"topologyKey", Shape::kString},
                                        {"whenUnsatisfiable", Shape::kString},
                                        {"labelSelector", Shape::kObject},
                                        {"minDomains", Shape::kInt32},
                                        {"matchLabelKeys", Shape::kStringList},
                                        {"nodeAffinityPolicy", Shape::kString},
                                        {"nodeTaintsPolicy", Shape::kString}};
constexpr Member kPodSecurityContext[] = {{"runAsUser", Shape::kInt64},
                                          {"runAsGroup", Shape::kInt64},
                                          {"runAsNonRoot", Shape::kBool},
                                          {"fsGroup", Shape::kInt64},
                                          {"fsGroupChangePolicy", Shape::kString},
                                          {"seccompProfile", Shape::kObject},
                                          {"seLinuxOptions", Shape::kObject},
                                          {"sysctls", Shape::kObjectList}};
constexpr Member kPodSpec[] = {{"volumes", Shape::kObjectList},
                               {"initContainers", Shape::kObjectList, kContainer},
                               {"containers", Shape::kObjectList, kContainer},
                               {"ephemeralContainers", Shape::kObjectList, kContainer},
                               {"restartPolicy", Shape::kString},
                               {"terminationGracePeriodSeconds", Shape::kInt64},
                               {"activeDeadlineSeconds", Shape::kInt64},
                               {"dnsPolicy", Shape::kString},
                               {"nodeSelector", Shape::kStringMap},
                               {"serviceAccountName", Shape::kString},
                               {"serviceAccount", Shape::kString},
                               {"automountServiceAccountToken", Shape::kBool},
                               {"nodeName", Shape::kString},
                               {"hostNetwork", Shape::kBool},
                               {"hostPID", Shape::kBool},
                               {"hostIPC", Shape::kBool},
                               {"hostUsers", Shape::kBool},
                               {"shareProcessNamespace", Shape::kBool},
                               {"securityContext", Shape::kObject, kPodSecurityContext},
                               {"imagePullSecrets", Shape::kObjectList, kNameOnly},
                               {"hostname", Shape::kString},
                               {"subdomain", Shape::kString},
                               {"affinity", Shape::kObject},
                               {"schedulerName", Shape::kString},
                               {"tolerations", Shape::kObjectList, kToleration},
                               {"hostAliases", Shape::kObjectList, kHostAlias},
                               {"priorityClassName", Shape::kString},
                               {"priority", Shape::kInt32},
                               {"dnsConfig", Shape::kObject, kDnsConfig},
                               {"readinessGates", Shape::kObjectList},
                               {"runtimeClassName", Shape::kString},
                               {"enableServiceLinks", Shape::kBool},
                               {"preemptionPolicy", Shape::kString},
                               {"overhead", Shape::kQuantityMap},
                               {"topologySpreadConstraints", Shape::kObjectList, kSpreadConstraint},
                               {"setHostnameAsFQDN", Shape::kBool},
                               {"os", Shape::kObject, kNameOnly},
                               {"schedulingGates", Shape::kObjectList, kNameOnly},
                               {"resources", Shape::kObject, kResources}};
constexpr Member kObjectMeta[] = {
    {"name", Shape::kString},           {"generateName", Shape::kString},
    {"namespace", Shape::kString},      {"labels", Shape::kStringMap},
    {"annotations", Shape::kStringMap}, {"finalizers", Shape::kStringList}};
constexpr Member kPodTemplateSpec[] = {{"metadata", Shape::kObject, kObjectMeta},
                                       {"spec", Shape::kObject, kPodSpec}};

std::string Got(const json::Value& v) {
  return ", not " + std::string(json::TypeOf(v));
}

bool IsInteger(const json::Value& v, int64_t min, int64_t max) {
  std::optional<int64_t> i = json::IntegerOf(v);
  return i && *i >= min && *i <= max;
}

// Checks the members of `obj` named in `schema` (others are not Tephra's to judge); null is
// always fine, as Go decodes it to the zero value. Recursion follows the schema, whose depth is
// fixed, never the input.
void CheckShape(const json::Value& obj, std::span<const Member> schema, const std::string& path,
                FieldErrors* errors) {
  for (auto m = obj.MemberBegin(); m != obj.MemberEnd(); ++m) {
    std::string_view name(m->name.GetString(), m->name.GetStringLength());
    auto rule =
        std::find_if(schema.begin(), schema.end(), [&](const Member& r) { return r.name == name; });
    const json::Value& v = m->value;
    if (rule == schema.end() || v.IsNull()) continue;
    std::string at = Field(path, name);
    switch (rule->shape) {
      case Shape::kString:
        if (!json::IsString(v)) errors->push_back({at, "must be a string" + Got(v)});
        break;
      case Shape::kBool:
        if (!v.IsBool()) errors->push_back({at, "must be true or false" + Got(v)});
        break;
      case Shape::kInt32:
        if (!IsInteger(v, INT32_MIN, INT32_MAX)) {
          errors->push_back({at, "must be a 32-bit integer" + Got(v)});
        }
        break;
      case Shape::kInt64:
        if (!IsInteger(v, INT64_MIN, INT64_MAX)) {
          errors->push_back({at, "must be a 64-bit integer" + Got(v)});
        }
        break;
      case Shape::kStringList:
        if (!v.IsArray()) {
          errors->push_back({at, "must be a list of strings" + Got(v)});
          break;
        }
        for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
          if (!json::IsString(v[i]))
            errors->push_back({Index(at, i), "must be a string" + Got(v[i])});
        }
        break;
      case Shape::kStringMap:
      case Shape::kQuantityMap:
        if (!v.IsObject()) {
          errors->push_back({at, "must be an object" + Got(v)});
          break;
        }
        for (auto e = v.MemberBegin(); e != v.MemberEnd(); ++e) {
          bool ok = json::IsString(e->value) ||
                    (rule->shape == Shape::kQuantityMap && json::IsNumber(e->value));
          if (!ok) {
            errors->push_back({Field(at, {e->name.GetString(), e->name.GetStringLength()}),
                               std::string(rule->shape == Shape::kStringMap
                                               ? "must be a string"
                                               : "must be a quantity (string or number)") +
                                   Got(e->value)});
          }
        }
        break;
      case Shape::kObject:
        if (!v.IsObject()) {
          errors->push_back({at, "must be an object" + Got(v)});
        } else if (!rule->members.empty()) {
          CheckShape(v, rule->members, at, errors);
        }
        break;
      case Shape::kObjectList:
        if (!v.IsArray()) {
          errors->push_back({at, "must be a list of objects" + Got(v)});
          break;
        }
        for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
          if (!v[i].IsObject()) {
            errors->push_back({Index(at, i), "must be an object" + Got(v[i])});
          } else if (!rule->members.empty()) {
            CheckShape(v[i], rule->members, Index(at, i), errors);
          }
        }
        break;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Reading the template's JSON

const json::Value* Get(const json::Value* obj, std::string_view key) {
  if (obj == nullptr || !obj->IsObject()) return nullptr;
  auto it = obj->FindMember(rapidjson::StringRef(key.data(), key.size()));
  return it == obj->MemberEnd() || it->value.IsNull() ? nullptr : &it->value;
}

std::string_view StringAt(const json::Value* obj, std::string_view key) {
  const json::Value* v = Get(obj, key);
  return v == nullptr ? std::string_view() : json::StringOf(*v);
}

// The elements of the list `key` that are objects, with their indexes.
template <typename Fn>
void ForEachObject(const json::Value* obj, std::string_view key, Fn fn) {
  const json::Value* list = Get(obj, key);
  if (list == nullptr || !list->IsArray()) return;
  for (rapidjson::SizeType i = 0; i < list->Size(); ++i) {
    if ((*list)[i].IsObject()) fn(i, (*list)[i]);
  }
}

template <size_t N>
void CheckOneOf(std::string_view value, const std::array<std::string_view, N>& allowed,
                const std::string& path, FieldErrors* errors) {
  if (value.empty() || std::find(allowed.begin(), allowed.end(), value) != allowed.end()) return;
  std::string list;
  for (std::string_view a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
  errors->push_back({path, "unsupported value \"" + std::string(value) + "\"; supported: " + list});
}

void CheckRange(const json::Value* v, int64_t min, int64_t max, const std::string& path,
                FieldErrors* errors) {
  if (v == nullptr || !json::IsNumber(*v) || IsInteger(*v, min, max)) return;
  errors->push_back({path, "must be between " + std::to_string(min) + " and " +
                               std::to_string(max) + ", not " + json::Write(*v)});
}

// ---------------------------------------------------------------------------------------------
// Name rules of core/v1 that validation.h does not already have

bool IsAlpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}

// Environment variable names: [-._a-zA-Z][-._a-zA-Z0-9]*.
bool IsEnvVarName(std::string_view s) {
  if (s.empty() || IsDigit(s.front())) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return IsAlpha(c) || IsDigit(c) || c == '-' || c == '.' || c == '_';
  });
}

// IANA service names (container port names): at most 15 lowercase alphanumerics and '-', at
// least one letter, no '-' at either end and no "--".
std::vector<std::string> PortNameProblems(std::string_view s) {
  std::vector<std::string> out;
  if (s.size() > 15) out.emplace_back("must be no more than 15 characters");
  if (!std::all_of(s.begin(), s.end(),
                   [](char c) { return (c >= 'a' && c <= 'z') || IsDigit(c) || c == '-'; })) {
    out.emplace_back("must contain only lowercase alphanumeric characters and '-'");
  }
  if (std::none_of(s.begin(), s.end(), [](char c) { return c >= 'a' && c <= 'z'; })) {
    out.emplace_back("must contain at least one letter (a-z)");
  }
  if (s.front() == '-' || s.back() == '-' || s.find("--") != std::string_view::npos) {
    out.emplace_back("must not start or end with '-' or contain \"--\"");
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Resources

bool IsHugePages(std::string_view name) {
  return name.substr(0, kResourceHugePagesPrefix.size()) == kResourceHugePagesPrefix;
}

bool IsStandardContainerResource(std::string_view name) {
  return name == kResourceCpu || name == kResourceMemory || name == kResourceEphemeralStorage ||
         IsHugePages(name);
}

// Names a container may request, and the rules of resources that cannot be overcommitted
// (extended resources and hugepages): a limit is required, extended ones are whole numbers
// and request exactly their limit.
void ValidateResourceNames(const ResourceRequirements& res, const std::string& path,
                           FieldErrors* errors) {
  for (const auto* list : {&res.requests, &res.limits}) {
    std::string lpath = Field(path, list == &res.requests ? "requests" : "limits");
    for (const auto& [name, q] : *list) {
      std::string at = Field(lpath, name);
      if (name.find('/') == std::string::npos) {
        if (!IsStandardContainerResource(name)) {
          errors->push_back({at, "\"" + name +
                                     "\" is not a container resource (cpu, memory, "
                                     "ephemeral-storage, hugepages-<size>) nor a fully qualified "
                                     "extended resource such as example.com/gpu"});
        }
      } else {
        validation::AddNameProblems(errors, at, "resource name", name, QualifiedNameProblems(name));
      }
    }
    validation::ValidateCountedQuantities(*list, lpath, errors);
  }
  for (const auto& [name, request] : res.requests) {
    bool extended = validation::IsExtendedResource(name);
    if (!extended && !IsHugePages(name)) continue;
    const Quantity* limit = res.limits.Find(name);
    if (limit == nullptr) {
      errors->push_back({Field(Field(path, "limits"), name),
                         "must be set, as " + name + " cannot be overcommitted"});
    } else if (extended && request != *limit) {
      errors->push_back({Field(Field(path, "requests"), name),
                         "must equal the " + name + " limit of " + limit->String()});
    }
  }
}

void ValidateResources(const ResourceRequirements& res, const std::string& path,
                       FieldErrors* errors) {
  validation::ValidateQuantities(res.requests, Field(path, "requests"), errors);
  validation::ValidateQuantities(res.limits, Field(path, "limits"), errors);
  for (const auto& [name, request] : res.requests) {
    const Quantity* limit = res.limits.Find(name);
    if (limit != nullptr && request > *limit) {
      errors->push_back({Field(Field(path, "requests"), name),
                         "must be less than or equal to " + name + " limit of " + limit->String()});
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Containers

constexpr std::array<std::string_view, 3> kPullPolicies{"Always", "IfNotPresent", "Never"};
constexpr std::array<std::string_view, 2> kTerminationMessagePolicies{"File",
                                                                      "FallbackToLogsOnError"};
constexpr std::array<std::string_view, 3> kProtocols{"TCP", "UDP", "SCTP"};
constexpr std::array<std::string_view, 5> kEnvSources{
    "fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef", "fileKeyRef"};
constexpr int64_t kMaxId = 2147483647;

void ValidateEnv(const json::Value& c, const std::string& cpath, FieldErrors* errors) {
  std::set<std::string_view> names;
  ForEachObject(&c, "env", [&](rapidjson::SizeType i, const json::Value& e) {
    std::string epath = Index(Field(cpath, "env"), i);
    std::string_view name = StringAt(&e, "name");
    if (name.empty()) {
      errors->push_back({Field(epath, "name"), "is required"});
    } else if (!IsEnvVarName(name)) {
      errors->push_back({Field(epath, "name"),
                         "environment variable name \"" + std::string(name) +
                             "\" must consist of letters, digits, '_', '-' or '.', and must not "
                             "start with a digit"});
    } else if (!names.insert(name).second) {
      errors->push_back({Field(epath, "name"),
                         "duplicate environment variable name \"" + std::string(name) + "\""});
    }
    const json::Value* from = Get(&e, "valueFrom");
    if (from == nullptr || !from->IsObject()) return;
    if (!StringAt(&e, "value").empty()) {
      errors->push_back({Field(epath, "valueFrom"), "may not be set when value is not empty"});
    }
    auto sources = std::count_if(kEnvSources.begin(), kEnvSources.end(),
                                 [&](std::string_view s) { return Get(from, s) != nullptr; });
    if (sources != 1) {
      errors->push_back({Field(epath, "valueFrom"),
                         "must set exactly one of fieldRef, resourceFieldRef, configMapKeyRef, "
                         "secretKeyRef or fileKeyRef"});
    }
  });
}

void ValidatePorts(const json::Value& c, const std::string& cpath, bool host_network,
                   FieldErrors* errors) {
  std::set<std::string_view> names;
  ForEachObject(&c, "ports", [&](rapidjson::SizeType i, const json::Value& p) {
    std::string ppath = Index(Field(cpath, "ports"), i);
    std::string_view name = StringAt(&p, "name");
    if (!name.empty()) {
      validation::AddNameProblems(errors, Field(ppath, "name"), "port name", name,
                                  PortNameProblems(name));
      if (!names.insert(name).second) {
        errors->push_back(
            {Field(ppath, "name"), "duplicate port name \"" + std::string(name) + "\""});
      }
    }
    CheckOneOf(StringAt(&p, "protocol"), kProtocols, Field(ppath, "protocol"), errors);
    const json::Value* host = Get(&p, "hostPort");
    const json::Value* container = Get(&p, "containerPort");
    if (host_network && host != nullptr && container != nullptr && json::IntegerOf(*host) != 0 &&
        json::IntegerOf(*host) != json::IntegerOf(*container)) {
      errors->push_back(
          {Field(ppath, "hostPort"), "must equal containerPort when hostNetwork is true"});
    }
  });
}

void ValidateMounts(const json::Value& c, const std::string& cpath,
                    const std::set<std::string_view>& volumes, FieldErrors* errors) {
  std::set<std::string_view> paths;
  ForEachObject(&c, "volumeMounts", [&](rapidjson::SizeType i, const json::Value& m) {
    std::string mpath = Index(Field(cpath, "volumeMounts"), i);
    std::string_view name = StringAt(&m, "name");
    if (name.empty()) {
      errors->push_back({Field(mpath, "name"), "is required"});
    } else if (volumes.count(name) == 0) {
      errors->push_back(
          {Field(mpath, "name"), "no volume named \"" + std::string(name) + "\" in spec.volumes"});
    }
    std::string_view mount_path = StringAt(&m, "mountPath");
    if (mount_path.empty()) {
      errors->push_back({Field(mpath, "mountPath"), "is required"});
    } else if (!paths.insert(mount_path).second) {
      errors->push_back(
          {Field(mpath, "mountPath"), "duplicate mountPath \"" + std::string(mount_path) + "\""});
    }
  });
}

void ValidateSecurityContext(const json::Value* sc, const std::string& path, FieldErrors* errors) {
  CheckRange(Get(sc, "runAsUser"), 0, kMaxId, Field(path, "runAsUser"), errors);
  CheckRange(Get(sc, "runAsGroup"), 0, kMaxId, Field(path, "runAsGroup"), errors);
}

// Rules read from the container's JSON (fields the typed model does not keep).
void ValidateContainerJson(const json::Value& c, const std::string& cpath,
                           const std::set<std::string_view>& volumes, bool host_network,
                           FieldErrors* errors) {
  ValidateEnv(c, cpath, errors);
  ValidatePorts(c, cpath, host_network, errors);
  ValidateMounts(c, cpath, volumes, errors);
  CheckOneOf(StringAt(&c, "imagePullPolicy"), kPullPolicies, Field(cpath, "imagePullPolicy"),
             errors);
  CheckOneOf(StringAt(&c, "terminationMessagePolicy"), kTerminationMessagePolicies,
             Field(cpath, "terminationMessagePolicy"), errors);
  ValidateSecurityContext(Get(&c, "securityContext"), Field(cpath, "securityContext"), errors);
}

void ValidateContainers(const std::vector<Container>& containers, const json::Value* json_list,
                        bool init, const std::string& path,
                        const std::set<std::string_view>& volumes, bool host_network,
                        std::set<std::string>* names, FieldErrors* errors) {
  for (size_t i = 0; i < containers.size(); ++i) {
    const Container& c = containers[i];
    std::string cpath = Index(path, i);
    if (c.name.empty()) {
      errors->push_back({Field(cpath, "name"), "is required"});
    } else {
      validation::AddNameProblems(errors, Field(cpath, "name"), "container name", c.name,
                                  DnsLabelProblems(c.name));
      if (!names->insert(c.name).second) {
        errors->push_back({Field(cpath, "name"), "duplicate container name \"" + c.name + "\""});
      }
    }
    if (c.image.empty()) errors->push_back({Field(cpath, "image"), "is required"});
    ValidateResources(c.resources, Field(cpath, "resources"), errors);
    if (c.restart_policy) {
      if (!init) {
        errors->push_back(
            {Field(cpath, "restartPolicy"), "may only be set on init containers (sidecars)"});
      } else if (*c.restart_policy != "Always") {
        errors->push_back(
            {Field(cpath, "restartPolicy"),
             "must be Always (a sidecar) when set, not \"" + *c.restart_policy + "\""});
      }
    }
    for (size_t p = 0; p < c.ports.size(); ++p) {
      const ContainerPort& port = c.ports[p];
      std::string ppath = Index(Field(cpath, "ports"), p);
      if (port.container_port < 1 || port.container_port > 65535) {
        errors->push_back({Field(ppath, "containerPort"), "must be between 1 and 65535"});
      }
      if (port.host_port < 0 || port.host_port > 65535) {
        errors->push_back({Field(ppath, "hostPort"), "must be between 0 and 65535"});
      }
    }
    ValidateResourceNames(c.resources, Field(cpath, "resources"), errors);
    if (json_list != nullptr && json_list->IsArray() && i < json_list->Size() &&
        (*json_list)[static_cast<rapidjson::SizeType>(i)].IsObject()) {
      ValidateContainerJson((*json_list)[static_cast<rapidjson::SizeType>(i)], cpath, volumes,
                            host_network, errors);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The pod

constexpr std::array<std::string_view, 4> kDnsPolicies{"ClusterFirstWithHostNet", "ClusterFirst",
                                                       "Default", "None"};
constexpr std::array<std::string_view, 2> kTolerationOperators{"Equal", "Exists"};
constexpr std::array<std::string_view, 3> kTaintEffects{"NoSchedule", "PreferNoSchedule",
                                                        "NoExecute"};

// Volume names: DNS labels, unique, each with at most one source. The names, for mounts.
std::set<std::string_view> ValidateVolumes(const json::Value* spec, const std::string& path,
                                           FieldErrors* errors) {
  std::set<std::string_view> names;
  ForEachObject(spec, "volumes", [&](rapidjson::SizeType i, const json::Value& v) {
    std::string vpath = Index(Field(path, "volumes"), i);
    std::string_view name = StringAt(&v, "name");
    if (name.empty()) {
      errors->push_back({Field(vpath, "name"), "is required"});
    } else {
      validation::AddNameProblems(errors, Field(vpath, "name"), "volume name", name,
                                  DnsLabelProblems(name));
      if (!names.insert(name).second) {
        errors->push_back(
            {Field(vpath, "name"), "duplicate volume name \"" + std::string(name) + "\""});
      }
    }
    size_t sources = 0;
    for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m) {
      if (m->value.IsObject()) ++sources;  // every volume source is an object
    }
    if (sources > 1) errors->push_back({vpath, "may not have more than one volume source"});
  });
  return names;
}

void ValidateLabels(const json::Value* labels, const std::string& path, FieldErrors* errors) {
  if (labels == nullptr || !labels->IsObject()) return;
  for (auto m = labels->MemberBegin(); m != labels->MemberEnd(); ++m) {
    std::string key(m->name.GetString(), m->name.GetStringLength());
    validation::AddNameProblems(errors, Field(path, key), "label key", key,
                                QualifiedNameProblems(key));
    validation::AddNameProblems(errors, Field(path, key), "label value", json::StringOf(m->value),
                                LabelValueProblems(json::StringOf(m->value)));
  }
}

// Rules of the pod spec read from its JSON.
void ValidatePodSpecJson(const json::Value* spec, const std::string& path, FieldErrors* errors) {
  CheckOneOf(StringAt(spec, "dnsPolicy"), kDnsPolicies, Field(path, "dnsPolicy"), errors);
  ValidateLabels(Get(spec, "nodeSelector"), Field(path, "nodeSelector"), errors);
  ForEachObject(spec, "tolerations", [&](rapidjson::SizeType i, const json::Value& t) {
    std::string tpath = Index(Field(path, "tolerations"), i);
    std::string_view op = StringAt(&t, "operator");
    CheckOneOf(op, kTolerationOperators, Field(tpath, "operator"), errors);
    CheckOneOf(StringAt(&t, "effect"), kTaintEffects, Field(tpath, "effect"), errors);
    if (op == "Exists" && !StringAt(&t, "value").empty()) {
      errors->push_back({Field(tpath, "value"), "must be empty when operator is Exists"});
    }
  });
  CheckRange(Get(spec, "activeDeadlineSeconds"), 1, INT32_MAX, Field(path, "activeDeadlineSeconds"),
             errors);
  auto name_rule = [&](std::string_view key, std::vector<std::string> (*rule)(std::string_view)) {
    std::string_view value = StringAt(spec, key);
    if (!value.empty()) {
      validation::AddNameProblems(errors, Field(path, key), key, value, rule(value));
    }
  };
  name_rule("serviceAccountName", DnsSubdomainProblems);
  name_rule("priorityClassName", DnsSubdomainProblems);
  name_rule("hostname", DnsLabelProblems);
  name_rule("subdomain", DnsLabelProblems);
  ValidateSecurityContext(Get(spec, "securityContext"), Field(path, "securityContext"), errors);
}

}  // namespace

std::vector<std::string> LabelValueProblems(std::string_view value) {
  std::vector<std::string> out;
  if (value.empty()) return out;
  if (value.size() > 63) out.emplace_back("must be no more than 63 characters");
  auto alnum = [](char c) { return IsAlpha(c) || IsDigit(c); };
  bool ok = alnum(value.front()) && alnum(value.back()) &&
            std::all_of(value.begin(), value.end(),
                        [&](char c) { return alnum(c) || c == '-' || c == '_' || c == '.'; });
  if (!ok) {
    out.emplace_back(
        "must be empty or consist of alphanumeric characters, '-', '_' or '.', and must start "
        "and end with an alphanumeric character");
  }
  return out;
}

FieldErrors ValidatePodTemplate(const PodTemplate& tmpl, std::string_view path) {
  FieldErrors errors;
  std::string spec_path = Field(path, "spec");
  json::Document doc;
  const json::Value* spec = nullptr;
  if (!tmpl.json.empty() && json::Parse(tmpl.json, &doc).ok() && doc.IsObject()) {
    CheckShape(doc, kPodTemplateSpec, std::string(path), &errors);
    spec = Get(&doc, "spec");
    ValidateLabels(Get(Get(&doc, "metadata"), "labels"), Field(Field(path, "metadata"), "labels"),
                   &errors);
  }
  if (tmpl.spec.containers.empty()) {
    errors.push_back({Field(spec_path, "containers"), "must have at least one container"});
  }
  std::set<std::string_view> volumes = ValidateVolumes(spec, spec_path, &errors);
  bool host_network = tmpl.spec.host_network;
  std::set<std::string> names;
  ValidateContainers(tmpl.spec.init_containers, Get(spec, "initContainers"), true,
                     Field(spec_path, "initContainers"), volumes, host_network, &names, &errors);
  ValidateContainers(tmpl.spec.containers, Get(spec, "containers"), false,
                     Field(spec_path, "containers"), volumes, host_network, &names, &errors);
  const std::string& restart = tmpl.spec.restart_policy;
  if (!restart.empty() && restart != "Always" && restart != "OnFailure" && restart != "Never") {
    errors.push_back({Field(spec_path, "restartPolicy"),
                      "must be Always, OnFailure or Never, not \"" + restart + "\""});
  }
  validation::ValidateQuantities(tmpl.spec.overhead, Field(spec_path, "overhead"), &errors);
  if (tmpl.spec.resources) {
    ValidateResources(*tmpl.spec.resources, Field(spec_path, "resources"), &errors);
  }
  ValidatePodSpecJson(spec, spec_path, &errors);
  return errors;
}

}  // namespace tephra::api
