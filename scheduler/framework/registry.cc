#include "scheduler/framework/registry.h"

#include <algorithm>
#include <string_view>
#include <utility>

#include "base/suggest.h"

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

namespace {

// " (did you mean "x"?)" with the known name nearest to `name`, or "" when none is near.
std::string DidYouMean(const std::string& name, const std::vector<std::string>& known) {
  const std::string nearest = base::NearestName(name, known);
  return nearest.empty() ? "" : " (did you mean \"" + nearest + "\"?)";
}

// Whether `pattern` (a key, or a prefix ending in ".") covers `key`.
bool Covers(std::string_view pattern, std::string_view key) {
  if (!pattern.empty() && pattern.back() == '.') return key.substr(0, pattern.size()) == pattern;
  return key == pattern;
}

// The problems of one plugin's or action's `arguments`, read by building it: values of the wrong
// type, then keys it did not read, each named as Volcano's (in `recognised`) or as a typo with
// the nearest key it reads. `where` is "tiers[0].plugins[1]" or "configurations[0]".
void AddArgumentProblems(const std::string& where, const Arguments& arguments,
                         const std::vector<std::string_view>& recognised,
                         std::vector<std::string>* out) {
  for (const auto& problem : arguments.Problems())
    out->push_back(where + ".arguments." + problem + "; its default is used");
  std::vector<std::string> known = arguments.AskedKeys();
  for (std::string_view r : recognised) {
    if (!r.empty() && r.back() != '.') known.emplace_back(r);
  }
  for (const std::string& key : arguments.UnreadKeys()) {
    const bool volcanos = std::any_of(recognised.begin(), recognised.end(),
                                      [&key](std::string_view r) { return Covers(r, key); });
    if (volcanos) {
      out->push_back(where + ".arguments: Volcano's key \"" + key +
                     "\" is recognised; Tephra does not act on it");
      continue;
    }
    out->push_back(where + ".arguments: unknown key \"" + key + "\"" + DidYouMean(key, known) +
                   "; ignored");
  }
}

}  // namespace

std::vector<std::string> Registry::ArgumentProblems(const SchedulerConf& conf) const {
  std::vector<std::string> out;
  for (size_t t = 0; t < conf.tiers.size(); ++t) {
    for (size_t p = 0; p < conf.tiers[t].plugins.size(); ++p) {
      // A copy: what the plugin reads is recorded on it.
      const PluginOption option = conf.tiers[t].plugins[p];
      std::unique_ptr<Plugin> plugin = NewPlugin(option);
      if (plugin == nullptr) continue;
      AddArgumentProblems("tiers[" + std::to_string(t) + "].plugins[" + std::to_string(p) + "]",
                          option.arguments, plugin->RecognisedArguments(), &out);
    }
  }
  // Actions with arguments, in the order of their configurations[] entries.
  std::vector<const std::pair<const std::string, ActionOption>*> entries;
  for (const auto& entry : conf.configurations) entries.push_back(&entry);
  std::sort(entries.begin(), entries.end(),
            [](const auto* l, const auto* r) { return l->second.index < r->second.index; });
  for (const auto* entry : entries) {
    const std::string& name = entry->first;
    const std::string where = "configurations[" + std::to_string(entry->second.index) + "]";
    if (recognised_actions_.count(name) != 0) continue;   // left out; its arguments are Volcano's
    const Arguments arguments = entry->second.arguments;  // a copy, as above
    std::unique_ptr<Action> action = NewAction(name, arguments);
    if (action == nullptr) {
      std::vector<std::string> known = ActionNames();
      for (const auto& [n, what] : recognised_actions_) known.push_back(n);
      out.push_back(where + ".name: unknown action \"" + name + "\"" + DidYouMean(name, known) +
                    "; its arguments are ignored");
      continue;
    }
    AddArgumentProblems(where, arguments, action->RecognisedArguments(), &out);
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
