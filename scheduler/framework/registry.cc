#include "scheduler/framework/registry.h"

namespace tephra::scheduler {

Status Registry::CheckNew(const std::string& kind, const std::string& name) const {
  const bool taken = kind == "plugin" ? plugins_.count(name) || recognised_plugins_.count(name)
                                      : actions_.count(name) || recognised_actions_.count(name);
  if (taken) return AlreadyExists(kind + " \"" + name + "\" is registered twice");
  return Status::Ok();
}

Status Registry::AddPlugin(PluginFactory factory) {
  const std::string name(factory(PluginOption{})->name());
  TEPHRA_RETURN_IF_ERROR(CheckNew("plugin", name));
  plugins_.emplace(name, std::move(factory));
  return Status::Ok();
}

Status Registry::AddAction(ActionFactory factory) {
  const std::string name(factory(Arguments{})->name());
  TEPHRA_RETURN_IF_ERROR(CheckNew("action", name));
  actions_.emplace(name, std::move(factory));
  return Status::Ok();
}

Status Registry::AddRecognisedPlugin(const std::string& name, std::string what) {
  TEPHRA_RETURN_IF_ERROR(CheckNew("plugin", name));
  recognised_plugins_.emplace(name, std::move(what));
  return Status::Ok();
}

Status Registry::AddRecognisedAction(const std::string& name, std::string what) {
  TEPHRA_RETURN_IF_ERROR(CheckNew("action", name));
  recognised_actions_.emplace(name, std::move(what));
  return Status::Ok();
}

std::unique_ptr<Plugin> Registry::NewPlugin(const PluginOption& option) const {
  auto it = plugins_.find(option.name);
  return it == plugins_.end() ? nullptr : it->second(option);
}

std::vector<std::string> Registry::ArgumentProblems(const SchedulerConf& conf) const {
  std::vector<std::string> out;
  for (size_t t = 0; t < conf.tiers.size(); ++t) {
    for (size_t p = 0; p < conf.tiers[t].plugins.size(); ++p) {
      PluginOption option = conf.tiers[t].plugins[p];  // a copy: problems are recorded on it
      NewPlugin(option);
      for (const auto& problem : option.arguments.Problems()) {
        out.push_back("tiers[" + std::to_string(t) + "].plugins[" + std::to_string(p) +
                      "].arguments." + problem + "; its default is used");
      }
    }
  }
  return out;
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

ConfNames Registry::Names() const {
  ConfNames names;
  names.plugins = PluginNames();
  names.actions = ActionNames();
  names.recognised_plugins = recognised_plugins_;
  names.recognised_actions = recognised_actions_;
  return names;
}

}  // namespace tephra::scheduler
