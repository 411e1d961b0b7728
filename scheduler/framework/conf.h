// The scheduler configuration, in Volcano's volcano-scheduler.conf format:
//
//   actions: "enqueue, allocate, backfill"
//   tiers:
//   - plugins:
//     - name: priority
//     - name: gang
//       enablePreemptable: false
//       arguments: {...}
//   configurations:
//   - name: allocate
//     arguments: {predicateErrorCacheEnable: true}
//
// Plugin enable flags keep Volcano's exact (and inconsistent) spellings; every flag defaults
// to enabled.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace tephra::scheduler {

// Plugin or action arguments: scalar values by key, read with typed getters. A plugin or
// action reads its arguments when it is built; the keys no getter asked about are what it
// ignores (Registry::ArgumentProblems warns of them).
class Arguments {
 public:
  Arguments() = default;
  explicit Arguments(std::map<std::string, std::string> values) : values_(std::move(values)) {}

  bool Has(const std::string& key) const;
  std::string GetString(const std::string& key, const std::string& fallback = "") const;
  int64_t GetInt(const std::string& key, int64_t fallback) const;
  double GetDouble(const std::string& key, double fallback) const;
  bool GetBool(const std::string& key, bool fallback) const;
  // One of `choices` (the first when absent or not one of them: a problem then).
  std::string GetChoice(const std::string& key, const std::vector<std::string>& choices) const;
  // A value `valid` accepts; `fallback` when absent or not accepted (a problem then, saying what
  // was `expected`).
  std::string GetValid(const std::string& key, const std::function<bool(std::string_view)>& valid,
                       std::string_view expected, const std::string& fallback) const;
  // A positive Go duration ("90m"); nullopt when absent or not one (a problem then).
  std::optional<std::chrono::nanoseconds> GetDuration(const std::string& key) const;
  // Values of keys starting with prefix, e.g. "binpack.resources.": suffix → value.
  std::map<std::string, std::string> WithPrefix(const std::string& prefix) const;
  const std::map<std::string, std::string>& values() const { return values_; }
  // Type errors found by getters, each once ("binpack.weight: expected a number, got x").
  std::vector<std::string> Problems() const;
  // The keys getters (and Has) asked about, present or not, sorted: what a misspelt key is
  // compared with.
  std::vector<std::string> AskedKeys() const;
  // The keys present that no getter, Has or WithPrefix asked about, sorted.
  std::vector<std::string> UnreadKeys() const;

 private:
  void AddProblem(std::string problem) const;
  void Ask(const std::string& key) const;

  std::map<std::string, std::string> values_;
  mutable std::vector<std::string> problems_;
  mutable std::set<std::string> asked_;
  mutable std::vector<std::string> asked_prefixes_;
};

// The per-extension-point switches of one plugin in a tier.
enum class ExtensionPoint {
  kJobOrder,
  kJobReady,
  kJobPipelined,
  kTaskOrder,
  kPreemptable,
  kReclaimable,
  kPreemptive,
  kQueueOrder,
  kClusterOrder,
  kPredicate,
  kBestNode,
  kNodeOrder,
  kTargetJob,
  kReservedNodes,
  kJobEnqueued,  // also gates JobEnqueueable, as in Volcano
  kVictim,
  kJobStarving,
  kOverused,
  kAllocatable,
  kHyperNodeOrder,
  kSubJobReady,
  kSubJobPipelined,
  kSubJobOrder,
  kHyperNodeGradient,
};
inline constexpr int kExtensionPointCount = 24;
// Volcano's YAML key for the switch ("enableJobOrder", "enabledVictim", ...).
const char* EnableFlagName(ExtensionPoint point);

struct PluginOption {
  std::string name;
  std::map<ExtensionPoint, bool> enabled;  // absent = enabled
  std::optional<bool> enable_hierarchy;    // drf/capacity hierarchical mode
  Arguments arguments;

  bool Enabled(ExtensionPoint point) const;
};

struct Tier {
  std::vector<PluginOption> plugins;
};

// A Volcano action or plugin the configuration names that Tephra does not implement.
struct UnsupportedName {
  std::string kind;  // "action" or "plugin"
  std::string name;
  std::string where;  // the field, e.g. "tiers[0].plugins[3].name"
  std::string what;   // what it does in Volcano

  bool operator==(const UnsupportedName&) const = default;
};

// One entry of `configurations[]`: an action's arguments.
struct ActionOption {
  size_t index = 0;  // its position in configurations[], for messages
  Arguments arguments;
};

struct SchedulerConf {
  std::vector<std::string> actions;
  std::vector<Tier> tiers;
  std::map<std::string, ActionOption> configurations;  // by action name (named twice: the last)
  // Left out of `actions` and `tiers`, one entry per mention (Warnings() words them).
  std::vector<UnsupportedName> unsupported;

  // One line per unsupported mention: "tiers[0].plugins[3].name: plugin "sla" (...) is not
  // implemented in Tephra; left out".
  std::vector<std::string> Warnings() const;

  const Arguments& ActionArguments(const std::string& action) const;
  bool HasAction(const std::string& action) const;
  bool HasPlugin(const std::string& plugin) const;
};

// The names a configuration may use: implemented ones, and Volcano's that Tephra recognises
// without implementing them (name → what it does in Volcano).
struct ConfNames {
  std::vector<std::string> actions, plugins;
  std::map<std::string, std::string> recognised_actions, recognised_plugins;
};

// Parses the YAML text. A name that is neither implemented nor recognised is a config error,
// as in Volcano, with the nearest known name suggested; a recognised one is left out and
// listed in `unsupported`. Empty `names.actions`/`names.plugins` skip the check.
StatusOr<SchedulerConf> ParseSchedulerConf(const std::string& yaml, const ConfNames& names);

// Volcano's built-in default: actions enqueue, allocate, backfill; tier 1 priority, gang,
// conformance; tier 2 overcommit, drf, predicates, proportion, nodeorder.
const char* DefaultSchedulerConfYaml();

}  // namespace tephra::scheduler
