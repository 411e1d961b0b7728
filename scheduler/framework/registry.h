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
  // What `conf`'s plugin and action arguments say that is not acted on, found by building each
  // plugin, and each action with a `configurations` entry, once (docs/scheduler.md,
  // "Configuration"), one line each:
  //   a value not of the type read:  tiers[1].plugins[0].arguments.binpack.weight: expected an
  //                                  integer, got "heavy"; its default is used
  //   a key nobody read:             tiers[1].plugins[0].arguments: unknown key "binpack.wieght"
  //                                  (did you mean "binpack.weight"?); ignored
  //   a Volcano key not acted on:    tiers[1].plugins[2].arguments: Volcano's key
  //                                  "predicate.CacheEnable" is recognised; Tephra does not act
  //                                  on it
  //   an entry for no known action:  configurations[0].name: unknown action "alocate" (did you
  //                                  mean "allocate"?); its arguments are ignored
  std::vector<std::string> ArgumentProblems(const SchedulerConf& conf) const;

 private:
  Status CheckNew(const std::string& kind, const std::string& name) const;

  std::map<std::string, PluginFactory> plugins_;
  std::map<std::string, ActionFactory> actions_;
  std::map<std::string, std::string> recognised_plugins_, recognised_actions_;
};

}  // namespace tephra::scheduler
