#include "controllers/framework/controller.h"

#include <algorithm>
#include <optional>

namespace tephra::controllers {

StatusOr<std::vector<std::string>> SelectControllers(const std::vector<std::string>& spec) {
  std::vector<bool> enabled(std::size(kControllerNames), false);
  auto index_of = [](std::string_view name) -> std::optional<size_t> {
    for (size_t i = 0; i < std::size(kControllerNames); ++i) {
      if (kControllerNames[i] == name) return i;
    }
    return std::nullopt;
  };
  for (const std::string& raw : spec) {
    std::string_view item = raw;
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item.empty()) continue;
    if (item == "*") {
      std::fill(enabled.begin(), enabled.end(), true);
      continue;
    }
    bool on = true;
    if (item.front() == '-' || item.front() == '+') {
      on = item.front() == '+';
      item.remove_prefix(1);
    }
    auto i = index_of(item);
    if (!i) {
      std::string known;
      for (std::string_view n : kControllerNames)
        known += (known.empty() ? "" : ", ") + std::string(n);
      return InvalidArgument("--controllers: unknown controller \"" + std::string(item) +
                             "\" (known: " + known + ")");
    }
    enabled[*i] = on;
  }
  std::vector<std::string> out;
  for (size_t i = 0; i < enabled.size(); ++i) {
    if (enabled[i]) out.emplace_back(kControllerNames[i]);
  }
  return out;
}

base::WorkQueueOptions QueueOptions(const ControllerContext& context, std::string name) {
  base::WorkQueueOptions options;
  options.name = std::move(name);
  options.clock = context.clock;
  options.registry = context.metrics;
  return options;
}

kube::InformerScope NamespacedScope(const ControllerOptions& options) {
  kube::InformerScope scope;
  scope.namespace_ = options.namespace_;
  return scope;
}

kube::InformerScope QueueScope(const ControllerOptions& options) {
  kube::InformerScope scope;
  scope.label_selector = options.queue_label_selector;
  return scope;
}

}  // namespace tephra::controllers
