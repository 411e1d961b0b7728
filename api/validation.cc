// Pieces of validation shared by jobs, queues and PodGroups: error formatting, lookups and name
// rules.
#include "api/validation.h"

#include <algorithm>
#include <set>

#include <rapidjson/document.h>

#include "api/validation_internal.h"

namespace tephra::api {

std::string FormatFieldErrors(const FieldErrors& errors, size_t max_listed) {
  const size_t listed = std::min(errors.size(), max_listed);
  std::string out;
  for (size_t i = 0; i < listed; ++i) {
    if (i > 0) out += "; ";
    if (!errors[i].path.empty()) out += errors[i].path + ": ";
    out += errors[i].message;
  }
  return out + MoreErrorsNote(errors.size(), listed);
}

std::string MoreErrorsNote(size_t total, size_t listed) {
  return total > listed ? " (and " + std::to_string(total - listed) + " more)" : "";
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

bool IsLowerAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}
bool IsAlnum(char c) {
  return IsLowerAlnum(c) || (c >= 'A' && c <= 'Z');
}

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

void ValidateQuantities(const ResourceList& list, const std::string& path, FieldErrors* errors) {
  for (const auto& [name, q] : list) {
    if (q.Sign() < 0) {
      errors->push_back({Field(path, name), "must be a non-negative quantity, not " + q.String()});
      continue;
    }
    // Beyond what int64 accounting holds the amount could only saturate: a Job asking for it
    // would wait for ever (docs/admission.md, Tephra-only refusals).
    const Quantity most = LargestCountable(name);
    if (q > most) {
      errors->push_back({Field(path, name), "must be at most " + most.String() +
                                                " (Kubernetes counts " + name + " in int64 " +
                                                (CountedInMilli(name) ? "milli-units" : "units") +
                                                "), not " + q.String()});
    }
  }
}

bool IsNativeResource(std::string_view name) {
  return name.find('/') == std::string_view::npos ||
         name.find("kubernetes.io/") != std::string_view::npos;
}

bool IsExtendedResource(std::string_view name) {
  return !IsNativeResource(name) && name.substr(0, 9) != "requests." &&
         QualifiedNameProblems(name).empty();
}

bool IsCountedResource(std::string_view name) {
  constexpr std::string_view kCounts[] = {"pods",
                                          "services",
                                          "replicationcontrollers",
                                          "resourcequotas",
                                          "secrets",
                                          "configmaps",
                                          "persistentvolumeclaims",
                                          "services.nodeports",
                                          "services.loadbalancers"};
  return IsExtendedResource(name) ||
         std::find(std::begin(kCounts), std::end(kCounts), name) != std::end(kCounts);
}

void ValidateCountedQuantities(const ResourceList& list, const std::string& path,
                               FieldErrors* errors) {
  for (const auto& [name, q] : list) {
    // One too large to count is refused as such by ValidateQuantities.
    if (IsCountedResource(name) && q <= LargestCountable(name) && q.MilliValue() % 1000 != 0) {
      errors->push_back({Field(path, name), "must be a whole number, not " + q.String()});
    }
  }
}

bool JsonTextEqual(std::string_view a, std::string_view b) {
  if (a == b) return true;
  json::Document da;
  json::Document db;
  if (!json::Parse(a, &da).ok() || !json::Parse(b, &db).ok()) return false;
  return json::Equal(da, db);
}

}  // namespace validation

}  // namespace tephra::api
