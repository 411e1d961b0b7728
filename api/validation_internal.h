// Helpers shared by the validation rule files (validation.cc, job_validation.cc,
// queue_validation.cc). Not part of the api/ interface.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/validation.h"

namespace tephra::api::validation {

// "path[i]" and "path.field".
std::string Index(std::string_view path, size_t i);
std::string Field(std::string_view path, std::string_view field);

// One error per problem: "<what> \"<value>\" <problem>".
void AddNameProblems(FieldErrors* errors, const std::string& path, std::string_view what,
                     std::string_view value, const std::vector<std::string>& problems);
// Tier fields exclusive, highestTierAllowed >= 0, mode hard|soft.
void ValidateNetworkTopology(const std::optional<NetworkTopologySpec>& nt, const std::string& path,
                             FieldErrors* errors);
// Every quantity non-negative and within what int64 accounting holds (LargestCountable).
void ValidateQuantities(const ResourceList& list, const std::string& path, FieldErrors* errors);
// Kubernetes' resource name classes: native resources have no domain or one under
// kubernetes.io; extended resources are every other qualified name (but not quota names
// starting with "requests."); counted resources are extended ones and object counts (pods, ...).
bool IsNativeResource(std::string_view name);
bool IsExtendedResource(std::string_view name);
bool IsCountedResource(std::string_view name);
// Counted resources must be whole numbers.
void ValidateCountedQuantities(const ResourceList& list, const std::string& path,
                               FieldErrors* errors);
// JSON texts equal by value (member order does not matter).
bool JsonTextEqual(std::string_view a, std::string_view b);

}  // namespace tephra::api::validation
