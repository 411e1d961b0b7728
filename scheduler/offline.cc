#include "scheduler/offline.h"

#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include <glog/logging.h>

#include "scheduler/builtins.h"
#include "scheduler/replay/replay.h"

namespace tephra::scheduler {
namespace {

std::optional<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The configuration in `path` (empty: the built-in one) as the scheduler would load it; the
// error names the file and the problem.
StatusOr<SchedulerConf> LoadConf(const std::string& path, const Registry& registry) {
  std::string text = DefaultSchedulerConfYaml();
  if (!path.empty()) {
    std::optional<std::string> read = ReadFile(path);
    if (!read) return InvalidArgument(path + ": cannot read");
    text = std::move(*read);
  }
  auto conf = ParseSchedulerConf(text, registry.Names());
  if (!conf.ok()) {
    return InvalidArgument((path.empty() ? "(built-in)" : path) + ": " + conf.status().message());
  }
  return conf;
}

Registry Builtins() {
  Registry registry;
  Status registered = RegisterBuiltins(registry);
  CHECK(registered.ok()) << registered.ToString();
  return registry;
}

}  // namespace

int CheckConf(const std::string& path) {
  Registry registry = Builtins();
  StatusOr<SchedulerConf> conf = LoadConf(path, registry);
  if (!conf.ok()) {
    std::cerr << conf.status().message() << "\n";
    return 2;
  }
  for (const auto& w : conf->Warnings()) std::cout << path << ": warning: " << w << "\n";
  for (const auto& w : registry.ArgumentProblems(*conf))
    std::cout << path << ": warning: " << w << "\n";
  std::string actions, plugins;
  for (const auto& a : conf->actions) actions += (actions.empty() ? "" : ", ") + a;
  for (const auto& tier : conf->tiers) {
    std::string names;
    for (const auto& p : tier.plugins) names += (names.empty() ? "" : ", ") + p.name;
    plugins += (plugins.empty() ? "" : " | ") + names;
  }
  std::cout << path << ": loads: actions " << actions << "; plugins " << plugins << "\n";
  return 0;
}

int ReplaySnapshot(const SchedulerDaemonOptions& options, const base::FlagSet& flags) {
  std::optional<std::string> text = ReadFile(options.replay);
  if (!text) {
    std::cerr << "--replay: cannot read " << options.replay << "\n";
    return 2;
  }
  Registry registry = Builtins();
  StatusOr<SchedulerConf> conf = LoadConf(options.scheduler.conf_file, registry);
  if (!conf.ok()) {
    std::cerr << "--scheduler-conf " << conf.status().message() << "\n";
    return 2;
  }
  for (const auto& w : conf->Warnings()) std::cerr << "--scheduler-conf: warning: " << w << "\n";
  SpecInterner interner;
  StatusOr<SnapshotDocument> doc = DecodeSnapshot(*text, interner);
  if (!doc.ok()) {
    std::cerr << "--replay " << options.replay << ": " << doc.status().message() << "\n";
    return 2;
  }
  // Node sampling as the live scheduler had it, unless asked otherwise ("what if").
  const NodeSampling& asked = options.scheduler.sampling;
  if (flags.IsSet("minimum-feasible-nodes"))
    doc->sampling.minimum_feasible_nodes = asked.minimum_feasible_nodes;
  if (flags.IsSet("minimum-percentage-nodes-to-find"))
    doc->sampling.minimum_percentage_nodes_to_find = asked.minimum_percentage_nodes_to_find;
  if (flags.IsSet("percentage-nodes-to-find"))
    doc->sampling.percentage_nodes_to_find = asked.percentage_nodes_to_find;
  ReplayResult result = Replay(*doc, *conf, registry);
  std::cout << FormatReplay(result, *doc);
  return SameAsRecorded(result, *doc) ? 0 : 1;  // as diff(1): 1 = differences
}

}  // namespace tephra::scheduler
