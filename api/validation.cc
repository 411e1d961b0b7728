// Pieces of validation shared by jobs, queues and PodGroups: error formatting, lookups, name
// rules and the pod-template subset.
#include "api/validation.h"

#include <set>

#include <rapidjson/document.h>

#include "api/validation_internal.h"

namespace tephra::api {

std::string FormatFieldErrors(const FieldErrors& errors) {
  std::string out;
  for (const FieldError& e : errors) {
    if (!out.empty()) out += "; ";
    if (!e.path.empty()) out += e.path + ": ";
    out += e.message;
  }
  return out;
}

bool QueueLookup::HasAllocatedPods(const Queue& queue) const {
  return !Resources::FromList(queue.status.allocated).IsZero();
}

StaticQueueLookup::StaticQueueLookup(std::vector<std::shared_ptr<const Queue>> queues) {
  for (auto& q : queues) Put(std::move(q));
}

void StaticQueueLookup::Put(std::shared_ptr<const Queue> queue) {
  std::string name = queue->metadata.name;
  queues_[name] = std::move(queue);
}

std::shared_ptr<const Queue> StaticQueueLookup::Get(std::string_view name) const {
  auto it = queues_.find(name);
  return it == queues_.end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<const Queue>> StaticQueueLookup::Children(
    std::string_view parent) const {
  std::vector<std::shared_ptr<const Queue>> out;
  for (const auto& [name, q] : queues_) {
    if (name != parent && q->ParentName() == parent) out.push_back(q);
  }
  return out;
}

std::vector<std::shared_ptr<const Queue>> StaticQueueLookup::List() const {
  std::vector<std::shared_ptr<const Queue>> out;
  for (const auto& [name, q] : queues_) out.push_back(q);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Name rules

namespace {

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool IsAlnum(char c) { return IsLowerAlnum(c) || (c >= 'A' && c <= 'Z'); }

bool IsDnsLabelShape(std::string_view s) {
  if (s.empty() || !IsLowerAlnum(s.front()) || !IsLowerAlnum(s.back())) return false;
  for (char c : s) {
    if (!IsLowerAlnum(c) && c != '-') return false;
  }
  return true;
}

}  // namespace

std::vector<std::string> DnsLabelProblems(std::string_view value) {
  std::vector<std::string> out;
  if (value.size() > 63) out.emplace_back("must be no more than 63 characters");
  if (!IsDnsLabelShape(value)) {
    out.emplace_back(
        "must consist of lower case alphanumeric characters or '-', and must start and end with "
        "an alphanumeric character");
  }
  return out;
}

std::vector<std::string> DnsSubdomainProblems(std::string_view value) {
  std::vector<std::string> out;
  if (value.size() > 253) out.emplace_back("must be no more than 253 characters");
  bool ok = !value.empty();
  size_t start = 0;
  while (ok && start <= value.size()) {
    size_t dot = value.find('.', start);
    std::string_view label =
        value.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    ok = IsDnsLabelShape(label);
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  if (!ok) {
    out.emplace_back(
        "must consist of lower case alphanumeric characters, '-' or '.', and must start and end "
        "with an alphanumeric character");
  }
  return out;
}

std::vector<std::string> QualifiedNameProblems(std::string_view value) {
  std::vector<std::string> out;
  std::string_view name = value;
  size_t slash = value.find('/');
  if (slash != std::string_view::npos) {
    std::string_view prefix = value.substr(0, slash);
    name = value.substr(slash + 1);
    if (prefix.empty()) {
      out.emplace_back("prefix part must be non-empty");
    } else {
      for (std::string& p : DnsSubdomainProblems(prefix)) out.push_back("prefix part " + p);
    }
  }
  if (name.empty()) {
    out.emplace_back("name part must be non-empty");
    return out;
  }
  if (name.size() > 63) out.emplace_back("name part must be no more than 63 characters");
  bool ok = IsAlnum(name.front()) && IsAlnum(name.back());
  for (char c : name) ok = ok && (IsAlnum(c) || c == '-' || c == '_' || c == '.');
  if (!ok) {
    out.emplace_back(
        "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and "
        "end with an alphanumeric character");
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Helpers for the rule files

namespace validation {

std::string Index(std::string_view path, size_t i) {
  return std::string(path) + "[" + std::to_string(i) + "]";
}

std::string Field(std::string_view path, std::string_view field) {
  if (path.empty()) return std::string(field);
  return std::string(path) + "." + std::string(field);
}

std::string Join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (const std::string& s : items) {
    if (!out.empty()) out += sep;
    out += s;
  }
  return out;
}

void AddNameProblems(FieldErrors* errors, const std::string& path, std::string_view what,
                     std::string_view value, const std::vector<std::string>& problems) {
  for (const std::string& p : problems) {
    errors->push_back({path, std::string(what) + " \"" + std::string(value) + "\" " + p});
  }
}

void ValidateNetworkTopology(const std::optional<NetworkTopologySpec>& nt, const std::string& path,
                             FieldErrors* errors) {
  if (!nt) return;
  if (nt->highest_tier_allowed && !nt->highest_tier_name.empty()) {
    errors->push_back(
        {path, "highestTierAllowed and highestTierName are mutually exclusive; set only one"});
  }
  if (nt->highest_tier_allowed && *nt->highest_tier_allowed < 0) {
    errors->push_back({Field(path, "highestTierAllowed"), "must be greater than or equal to 0"});
  }
  if (!nt->mode.empty() && nt->mode != "hard" && nt->mode != "soft") {
    errors->push_back({Field(path, "mode"), "must be hard or soft, not \"" + nt->mode + "\""});
  }
}

void ValidateNonNegativeQuantities(const ResourceList& list, const std::string& path,
                                   FieldErrors* errors) {
  for (const auto& [name, q] : list) {
    if (q.Sign() < 0) {
      errors->push_back({Field(path, name), "must be a non-negative quantity, not " + q.String()});
    }
  }
}

bool JsonTextEqual(std::string_view a, std::string_view b) {
  if (a == b) return true;
  json::Document da;
  json::Document db;
  if (!json::Parse(a, &da).ok() || !json::Parse(b, &db).ok()) return false;
  return da == db;
}

}  // namespace validation

// ---------------------------------------------------------------------------------------------
// Pod templates

namespace {

using validation::Field;
using validation::Index;

void ValidateResources(const ResourceRequirements& res, const std::string& path,
                       FieldErrors* errors) {
  validation::ValidateNonNegativeQuantities(res.requests, Field(path, "requests"), errors);
  validation::ValidateNonNegativeQuantities(res.limits, Field(path, "limits"), errors);
  for (const auto& [name, request] : res.requests) {
    const Quantity* limit = res.limits.Find(name);
    if (limit != nullptr && request > *limit) {
      errors->push_back({Field(Field(path, "requests"), name),
                         "must be less than or equal to " + name + " limit of " + limit->String()});
    }
  }
}

void ValidateContainers(const std::vector<Container>& containers, bool init,
                        const std::string& path, std::set<std::string>* names,
                        FieldErrors* errors) {
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
        errors->push_back({Field(cpath, "restartPolicy"),
                           "may only be set on init containers (sidecars)"});
      } else if (*c.restart_policy != "Always") {
        errors->push_back({Field(cpath, "restartPolicy"),
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
  }
}

}  // namespace

FieldErrors ValidatePodTemplate(const PodTemplate& tmpl, std::string_view path) {
  FieldErrors errors;
  std::string spec = Field(path, "spec");
  if (tmpl.spec.containers.empty()) {
    errors.push_back({Field(spec, "containers"), "must have at least one container"});
  }
  std::set<std::string> names;
  ValidateContainers(tmpl.spec.init_containers, true, Field(spec, "initContainers"), &names,
                     &errors);
  ValidateContainers(tmpl.spec.containers, false, Field(spec, "containers"), &names, &errors);
  const std::string& restart = tmpl.spec.restart_policy;
  if (!restart.empty() && restart != "Always" && restart != "OnFailure" && restart != "Never") {
    errors.push_back({Field(spec, "restartPolicy"),
                      "must be Always, OnFailure or Never, not \"" + restart + "\""});
  }
  validation::ValidateNonNegativeQuantities(tmpl.spec.overhead, Field(spec, "overhead"), &errors);
  if (tmpl.spec.resources) ValidateResources(*tmpl.spec.resources, Field(spec, "resources"), &errors);
  return errors;
}

}  // namespace tephra::api
