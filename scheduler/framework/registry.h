// Named factories for plugins and actions. Builtins are registered explicitly by
// RegisterBuiltins() (scheduler/builtins.h), called by main and by tests.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "scheduler/framework/conf.h"
#include "scheduler/framework/interfaces.h"

namespace tephra::scheduler {

using PluginFactory = std::function<std::unique_ptr<Plugin>(const PluginOption& option)>;
using ActionFactory = std::function<std::unique_ptr<Action>(const Arguments& arguments)>;

class Registry {
 public:
  // Registered under the name its plugin (action) answers, name(), asked of one built from an
  // empty configuration, so a name is written once. A duplicate name is an error: two plugins
  // must never answer to one name.
  Status AddPlugin(PluginFactory factory);
  Status AddAction(ActionFactory factory);
  // Names Volcano ships that Tephra knows but does not implement: a configuration naming one
  // loads, with a warning saying what is left out (`what`: what the name does in Volcano).
  Status AddRecognisedPlugin(const std::string& name, std::string what);
  Status AddRecognisedAction(const std::string& name, std::string what);

  std::unique_ptr<Plugin> NewPlugin(const PluginOption& option) const;
  std::unique_ptr<Action> NewAction(const std::string& name, const Arguments& arguments) const;
  std::vector<std::string> PluginNames() const;
  std::vector<std::string> ActionNames() const;
  // Every name a configuration may use, for ParseSchedulerConf.
  ConfNames Names() const;
  // Arguments of `conf`'s plugins that do not have the type their plugin reads, found by
  // building each plugin once: "tiers[1].plugins[0].arguments.binpack.weight: expected an
  // integer, got \"heavy\"; its default is used".
  std::vector<std::string> ArgumentProblems(const SchedulerConf& conf) const;

 private:
  Status CheckNew(const std::string& kind, const std::string& name) const;

  std::map<std::string, PluginFactory> plugins_;
  std::map<std::string, ActionFactory> actions_;
  std::map<std::string, std::string> recognised_plugins_, recognised_actions_;
};

}  // namespace tephra::scheduler
