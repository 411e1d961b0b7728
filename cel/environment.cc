#include "cel/environment.h"

#include <algorithm>

namespace tephra::cel {

Environment::Environment() {
  EnableLibrary(Library::kStandard);
}

Environment Environment::Kubernetes() {
  Environment env;
  env.EnableLibrary(Library::kStrings)
      .EnableLibrary(Library::kLists)
      .EnableLibrary(Library::kSets)
      .EnableLibrary(Library::kKubernetes)
      .SetHomogeneousAggregateLiterals(true);
  return env;
}

Environment& Environment::EnableLibrary(Library library) {
  libraries_.set(static_cast<size_t>(library));
  return *this;
}

bool Environment::LibraryEnabled(Library library) const {
  return libraries_.test(static_cast<size_t>(library));
}

Environment& Environment::DeclareVariable(std::string name, TypeRef type) {
  auto it = variable_index_.find(name);
  if (it != variable_index_.end()) {
    variables_[it->second].second = std::move(type);
    return *this;
  }
  max_segments_ =
      std::max(max_segments_, static_cast<size_t>(std::count(name.begin(), name.end(), '.')) + 1);
  variable_index_.emplace(name, variables_.size());
  variables_.emplace_back(std::move(name), std::move(type));
  return *this;
}

std::optional<size_t> Environment::FindVariable(std::string_view name) const {
  auto it = variable_index_.find(name);
  if (it == variable_index_.end()) return std::nullopt;
  return it->second;
}

Environment& Environment::SetContainer(std::string container) {
  container_ = std::move(container);
  return *this;
}

Environment& Environment::SetCheckTypes(bool check) {
  check_types_ = check;
  return *this;
}

Environment& Environment::SetHomogeneousAggregateLiterals(bool on) {
  homogeneous_literals_ = on;
  return *this;
}

Environment& Environment::SetCostLimit(uint64_t limit) {
  cost_limit_ = limit;
  return *this;
}

Environment& Environment::SetMaxExpressionLength(size_t length) {
  max_length_ = length;
  return *this;
}

Environment& Environment::SetResultType(TypeRef type) {
  result_type_ = std::move(type);
  return *this;
}

Environment& Environment::SetMacros(bool enabled) {
  macros_ = enabled;
  return *this;
}

}  // namespace tephra::cel
