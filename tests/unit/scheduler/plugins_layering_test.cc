// The plugins link against the scheduler framework alone (tests/unit/scheduler/CMakeLists.txt
// gives this binary scheduler_plugins and nothing else; neither links the Kubernetes client): a
// plugin or a part of the framework that calls the client fails to link here, which keeps "a
// session does no I/O" (docs/architecture.md) a rule of the build. The twin of
// actions_layering_test.cc.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "scheduler/framework/cycle.h"
#include "scheduler/framework/registry.h"
#include "scheduler/model/hypernodes.h"
#include "scheduler/plugins/plugins.h"

namespace tephra::scheduler {
namespace {

// Every builtin plugin's factory, under the name it answers to (scheduler/builtins.cc).
const std::pair<const char*, PluginFactory> kPlugins[] = {
    {"gang", NewGangPlugin},
    {"priority", NewPriorityPlugin},
    {"drf", NewDrfPlugin},
    {"proportion", NewProportionPlugin},
    {"predicates", NewPredicatesPlugin},
    {"nodeorder", NewNodeOrderPlugin},
    {"binpack", NewBinpackPlugin},
    {"conformance", NewConformancePlugin},
    {"overcommit", NewOvercommitPlugin},
    {"capacity", NewCapacityPlugin},
    {"pdb", NewPdbPlugin},
    {"sla", NewSlaPlugin},
    {"nodegroup", NewNodeGroupPlugin},
    {"resourcequota", NewResourceQuotaPlugin},
    {"network-topology-aware", NewNetworkTopologyPlugin},
};

TEST_CASE("Every plugin builds from the framework alone, under Volcano's name") {
  for (const auto& [name, factory] : kPlugins) {
    CAPTURE(name);
    PluginOption option;
    option.name = name;
    std::unique_ptr<Plugin> plugin = factory(option);
    REQUIRE(plugin != nullptr);
    CHECK(plugin->name() == name);
  }
}

TEST_CASE("A session with every plugin runs from the framework alone") {
  Registry registry;
  SchedulerConf conf;
  conf.tiers.emplace_back();
  for (const auto& [name, factory] : kPlugins) {
    REQUIRE(registry.AddPlugin(name, factory).ok());
    PluginOption option;
    option.name = name;
    conf.tiers.back().plugins.push_back(option);
  }
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
