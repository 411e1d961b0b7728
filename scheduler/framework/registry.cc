#include "scheduler/framework/registry.h"

namespace tephra::scheduler {

Status Registry::AddPlugin(const std::string& name, PluginFactory factory) {
  if (!plugins_.emplace(name, std::move(factory)).second) {
    return AlreadyExists("plugin \"" + name + "\" is registered twice");
  }
  return Status::Ok();
}

Status Registry::AddAction(const std::string& name, ActionFactory factory) {
  if (!actions_.emplace(name, std::move(factory)).second) {
    return AlreadyExists("action \"" + name + "\" is registered twice");
  }
  return Status::Ok();
}

std::unique_ptr<Plugin> Registry::NewPlugin(const PluginOption& option) const {
  auto it = plugins_.find(option.name);
  return it == plugins_.end() ? nullptr : it->second(option);
}

std::unique_ptr<Action> Registry::NewAction(const std::string& name,
                                            const Arguments& arguments) const {
  auto it = actions_.find(name);
  return it == actions_.end() ? nullptr : it->second(arguments);
}

std::vector<std::string> Registry::PluginNames() const {
  std::vector<std::string> out;
  for (const auto& [name, f] : plugins_) out.push_back(name);
  return out;
}

std::vector<std::string> Registry::ActionNames() const {
  std::vector<std::string> out;
  for (const auto& [name, f] : actions_) out.push_back(name);
  return out;
}

}  // namespace tephra::scheduler
