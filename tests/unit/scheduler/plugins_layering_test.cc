// The plugins link against the scheduler framework alone (tests/unit/scheduler/CMakeLists.txt
// gives this binary scheduler_plugins and nothing else; neither links the Kubernetes client): a
// plugin or a part of the framework that calls the client fails to link here, which keeps "a
// session does no I/O" (docs/architecture.md) a rule of the build. The twin of
// actions_layering_test.cc.
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "scheduler/framework/cycle.h"
#include "scheduler/framework/registry.h"
#include "scheduler/model/hypernodes.h"
#include "scheduler/plugins/plugins.h"

namespace tephra::scheduler {
namespace {

// Volcano's names of the builtin plugins.
const std::set<std::string> kVolcanoNames = {
    "gang",      "priority", "drf",         "proportion",    "predicates",
    "nodeorder", "binpack",  "conformance", "overcommit",    "capacity",
    "pdb",       "sla",      "nodegroup",   "resourcequota", "network-topology-aware"};

TEST_CASE("Every plugin builds from the framework alone, under Volcano's name") {
  std::set<std::string> names;
  for (const PluginFactory& factory : BuiltinPluginFactories()) {
    std::unique_ptr<Plugin> plugin = factory(PluginOption{});
    REQUIRE(plugin != nullptr);
    CHECK(names.insert(std::string(plugin->name())).second);
  }
  CHECK(names == kVolcanoNames);
}

TEST_CASE("A session with every plugin runs from the framework alone") {
  Registry registry;
  SchedulerConf conf;
  conf.tiers.emplace_back();
  for (const PluginFactory& factory : BuiltinPluginFactories()) {
    REQUIRE(registry.AddPlugin(factory).ok());
  }
  for (const std::string& name : registry.PluginNames()) {
    PluginOption option;
    option.name = name;
    conf.tiers.back().plugins.push_back(option);
  }
  REQUIRE(conf.tiers.back().plugins.size() == kVolcanoNames.size());
  auto snapshot = std::make_shared<Snapshot>();
  std::vector<std::string> problems;
  snapshot->topology = HyperNodeTree::Build({}, {}, &problems);
  CycleResult result = RunCycle(snapshot, conf, registry, SessionOptions{});
  CHECK(result.jobs == 0);
  CHECK(result.nodes == 0);
  CHECK(result.actions.empty());
}

}  // namespace
}  // namespace tephra::scheduler
