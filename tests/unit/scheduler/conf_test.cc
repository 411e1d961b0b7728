// Volcano's configurations load: implemented names work, Volcano's other names are left out
// with a warning, typos are refused with the nearest name.
#include "scheduler/framework/conf.h"

#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include "scheduler/builtins.h"

namespace tephra::scheduler {
namespace {

std::string ReadConf(const std::string& name) {
  std::ifstream in(std::string(TEPHRA_SOURCE_DIR) + "/tests/unit/scheduler/confs/" + name);
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

ConfNames BuiltinNames() {
  Registry r;
  REQUIRE(RegisterBuiltins(r).ok());
  return r.Names();
}

std::vector<std::string> PluginNames(const SchedulerConf& conf) {
  std::vector<std::string> out;
  for (const auto& tier : conf.tiers) {
    for (const auto& p : tier.plugins) out.push_back(p.name);
  }
  return out;
}

}  // namespace

TEST_CASE("Volcano's chart configuration loads unchanged, with nothing left out") {
  auto conf = ParseSchedulerConf(ReadConf("volcano-chart.conf"), BuiltinNames());
  REQUIRE(conf.ok());
  CHECK(conf->unsupported.empty());
  CHECK(PluginNames(*conf) == std::vector<std::string>{"priority", "gang", "conformance",
                                                       "overcommit", "drf", "predicates",
                                                       "proportion", "nodeorder", "binpack"});
}

TEST_CASE("Volcano's CI configuration loads whole: reclaim, preempt and network-topology-aware") {
  auto conf = ParseSchedulerConf(ReadConf("volcano-ci.conf"), BuiltinNames());
  REQUIRE(conf.ok());
  CHECK(conf->actions ==
        std::vector<std::string>{"enqueue", "allocate", "backfill", "reclaim", "preempt"});
  CHECK(PluginNames(*conf) == std::vector<std::string>{"priority", "gang", "conformance", "sla",
                                                       "overcommit", "drf", "predicates",
                                                       "proportion", "nodeorder", "binpack",
                                                       "network-topology-aware"});
  CHECK(conf->unsupported.empty());
  CHECK(conf->Warnings().empty());
}

TEST_CASE("a plugin Tephra only recognises is left out with a warning naming it") {
  auto conf = ParseSchedulerConf(ReadConf("volcano-ci.conf") + "  - name: usage\n", BuiltinNames());
  REQUIRE(conf.ok());
  REQUIRE(conf->unsupported.size() == 1);
  CHECK(conf->unsupported[0].name == "usage");
  CHECK(conf->unsupported[0].where == "tiers[1].plugins[7].name");
  std::vector<std::string> warnings = conf->Warnings();
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].rfind("tiers[1].plugins[7].name: plugin \"usage\" (", 0) == 0);
  CHECK(warnings[0].find("is not implemented in Tephra; left out") != std::string::npos);
}

TEST_CASE("every plugin and action name Volcano ships loads") {
  const ConfNames names = BuiltinNames();
  for (const char* plugin : {"gang",
                             "priority",
                             "drf",
                             "proportion",
                             "capacity",
                             "predicates",
                             "nodeorder",
                             "binpack",
                             "conformance",
                             "overcommit",
                             "pdb",
                             "sla",
                             "tdm",
                             "numa-aware",
                             "deviceshare",
                             "extender",
                             "task-topology",
                             "nodegroup",
                             "resourcequota",
                             "rescheduling",
                             "usage",
                             "cdp",
                             "capacity-card",
                             "network-topology-aware",
                             "resource-strategy-fit",
                             "reservation"}) {
    INFO(plugin);
    auto conf = ParseSchedulerConf(
        std::string("actions: allocate\ntiers:\n- plugins:\n  - name: ") + plugin + "\n", names);
    CHECK(conf.ok());
  }
  for (const char* action : {"enqueue", "allocate", "backfill", "preempt", "reclaim", "shuffle",
                             "gangpreempt", "gangreclaim", "elect", "reserve"}) {
    INFO(action);
    auto conf = ParseSchedulerConf(std::string("actions: \"allocate, ") + action + "\"\n", names);
    CHECK(conf.ok());
  }
  auto only_unsupported = ParseSchedulerConf("actions: shuffle\n", names);
  CHECK(only_unsupported.status().message() == "actions: none of them is implemented in Tephra");
}

TEST_CASE("arguments of the wrong type are named once each, and their defaults used") {
  Registry registry;
  REQUIRE(RegisterBuiltins(registry).ok());
  auto conf = ParseSchedulerConf(ReadConf("bad-arguments.conf"), registry.Names());
  REQUIRE(conf.ok());
  CHECK(registry.ArgumentProblems(*conf) ==
        std::vector<std::string>{
            "tiers[0].plugins[2].arguments.sla-waiting-time: expected a positive duration such "
            "as 90m, got \"soon\"; its default is used",
            "tiers[1].plugins[0].arguments.overcommit-factor: expected a number, got \"lots\"; "
            "its default is used",
            "tiers[1].plugins[3].arguments.binpack.weight: expected an integer, got \"heavy\"; "
            "its default is used"});
  // Plugins read their arguments each session: a problem is kept once.
  Arguments args(std::map<std::string, std::string>{{"binpack.weight", "heavy"}});
  args.GetInt("binpack.weight", 1);
  args.GetInt("binpack.weight", 1);
  CHECK(args.Problems().size() == 1);
}

TEST_CASE("argument keys nobody reads are named: typos with the nearest key, Volcano's as such") {
  Registry registry;
  REQUIRE(RegisterBuiltins(registry).ok());
  auto conf = ParseSchedulerConf(ReadConf("unknown-arguments.conf"), registry.Names());
  REQUIRE(conf.ok());
  CHECK(registry.ArgumentProblems(*conf) ==
        std::vector<std::string>{
            "tiers[1].plugins[0].arguments: Volcano's key \"predicate.GPUSharingEnable\" is "
            "recognised; Tephra does not act on it",
            "tiers[1].plugins[1].arguments: unknown key \"binpack.wieght\" (did you mean "
            "\"binpack.weight\"?); ignored",
            "configurations[0].arguments: unknown key \"predicateErrorCacheEnabled\" (did you "
            "mean \"predicateErrorCacheEnable\"?); ignored",
            "configurations[1].name: unknown action \"alocate\" (did you mean \"allocate\"?); "
            "its arguments are ignored"});
  // A key under a prefix Volcano reads (network-topology-aware's hypernode.binpack.*), a key of
  // a plugin that reads none, a key far from any, and an action's key Tephra does not act on.
  auto more = ParseSchedulerConf(R"(actions: "allocate, preempt"
tiers:
- plugins:
  - name: gang
    arguments: {gang.weight: 1}
  - name: network-topology-aware
    arguments: {weight: 2, hypernode.binpack.cpu: 5, hypernode.binpack.resources: nvidia.com/gpu}
  - name: nodeorder
    arguments: {imagelocality.weight: 1, leastrequested.weight: 1, teleport: 7}
configurations:
- name: preempt
  arguments: {enableTopologyAwarePreemption: true}
)",
                                 registry.Names());
  REQUIRE(more.ok());
  CHECK(registry.ArgumentProblems(*more) ==
        std::vector<std::string>{
            "tiers[0].plugins[0].arguments: unknown key \"gang.weight\"; ignored",
            "tiers[0].plugins[1].arguments: Volcano's key \"hypernode.binpack.cpu\" is "
            "recognised; Tephra does not act on it",
            "tiers[0].plugins[1].arguments: Volcano's key \"hypernode.binpack.resources\" is "
            "recognised; Tephra does not act on it",
            "tiers[0].plugins[2].arguments: Volcano's key \"imagelocality.weight\" is recognised; "
            "Tephra does not act on it",
            "tiers[0].plugins[2].arguments: unknown key \"teleport\"; ignored",
            "configurations[0].arguments: Volcano's key \"enableTopologyAwarePreemption\" is "
            "recognised; Tephra does not act on it"});
}

TEST_CASE("the built-in and the chart's configurations have no argument problems") {
  Registry registry;
  REQUIRE(RegisterBuiltins(registry).ok());
  for (const std::string& text :
       {std::string(DefaultSchedulerConfYaml()), ReadConf("volcano-chart.conf")}) {
    auto conf = ParseSchedulerConf(text, registry.Names());
    REQUIRE(conf.ok());
    CHECK(registry.ArgumentProblems(*conf).empty());
  }
  // Volcano's CI configuration turns on dynamic resource allocation, which Tephra does not do.
  auto ci = ParseSchedulerConf(ReadConf("volcano-ci.conf"), registry.Names());
  REQUIRE(ci.ok());
  CHECK(registry.ArgumentProblems(*ci) ==
        std::vector<std::string>{"tiers[1].plugins[2].arguments: Volcano's key "
                                 "\"predicate.DynamicResourceAllocationEnable\" is recognised; "
                                 "Tephra does not act on it"});
}

TEST_CASE("a typo is refused with the nearest known name") {
  const ConfNames names = BuiltinNames();
  auto plugin = ParseSchedulerConf(ReadConf("typo.conf"), names);
  CHECK(plugin.status().message() ==
        "tiers[0].plugins[1].name: unknown plugin \"propotion\"; did you mean \"proportion\"?");
  auto recognised =
      ParseSchedulerConf("actions: allocate\ntiers:\n- plugins: [{name: slaa}]\n", names);
  CHECK(recognised.status().message() ==
        "tiers[0].plugins[0].name: unknown plugin \"slaa\"; did you mean \"sla\"?");
  auto action = ParseSchedulerConf("actions: \"enqueue, alocate\"\n", names);
  CHECK(action.status().message() ==
        "actions: unknown action \"alocate\"; did you mean "
        "\"allocate\"?");
  auto far = ParseSchedulerConf("actions: teleport\n", names);
  CHECK(far.status().message() == "actions: unknown action \"teleport\"");
  // A recognised plugin's options are Volcano's: a misspelt one is still an error.
  auto option = ParseSchedulerConf(
      "actions: allocate\ntiers:\n- plugins: [{name: tdm, enableJobOrdr: false}]\n", names);
  CHECK(option.status().message() == "tiers[0].plugins[0].enableJobOrdr: unknown plugin option");
}

TEST_CASE("a long name is refused without comparing it letter by letter") {
  std::string name(1 << 20, 'x');
  auto conf = ParseSchedulerConf("actions: allocate\ntiers:\n- plugins: [{name: " + name + "}]\n",
                                 BuiltinNames());
  REQUIRE_FALSE(conf.ok());
  CHECK(conf.status().message().find("did you mean") == std::string::npos);
}

}  // namespace tephra::scheduler
