// Configuration parsing, tier combination rules and statement transactions.
#include <catch2/catch.hpp>

#include "scheduler/framework/conf.h"
#include "scheduler/framework/hooks.h"
#include "tests/unit/scheduler/harness.h"

namespace tephra::scheduler::testing {
namespace {

// Equal in every dimension (a dimension present with 0 equals a missing one).
bool SameValues(const api::Resources& a, const api::Resources& b) {
  return a.LessEqual(b, api::Resources::Missing::kZero) &&
         b.LessEqual(a, api::Resources::Missing::kZero);
}

TEST_CASE("the default configuration is Volcano's") {
  auto conf = ParseSchedulerConf(DefaultSchedulerConfYaml(), {});
  REQUIRE(conf.ok());
  CHECK(conf->actions == std::vector<std::string>{"enqueue", "allocate", "backfill"});
  REQUIRE(conf->tiers.size() == 2);
  CHECK(conf->tiers[0].plugins.size() == 3);
  CHECK(conf->tiers[1].plugins[4].name == "nodeorder");
}

TEST_CASE("plugin switches use Volcano's exact spellings and arguments flatten") {
  auto conf = ParseSchedulerConf(R"(
actions: "enqueue, allocate, preempt"
tiers:
- plugins:
  - name: gang
    enablePreemptable: false
    enabledVictim: false
  - name: binpack
    arguments:
      binpack.weight: 10
      binpack.resources: nvidia.com/gpu, example.com/foo
      binpack.resources.nvidia.com/gpu: 2
configurations:
- name: allocate
  arguments: {predicateErrorCacheEnable: false}
)",
                                 {});
  REQUIRE(conf.ok());
  const PluginOption& gang = conf->tiers[0].plugins[0];
  CHECK_FALSE(gang.Enabled(ExtensionPoint::kPreemptable));
  CHECK_FALSE(gang.Enabled(ExtensionPoint::kVictim));
  CHECK(gang.Enabled(ExtensionPoint::kJobOrder));
  const Arguments& args = conf->tiers[0].plugins[1].arguments;
  CHECK(args.GetInt("binpack.weight", 1) == 10);
  CHECK(args.GetString("binpack.resources") == "nvidia.com/gpu, example.com/foo");
  CHECK(args.GetInt("binpack.resources.nvidia.com/gpu", 1) == 2);
  CHECK_FALSE(conf->ActionArguments("allocate").GetBool("predicateErrorCacheEnable", true));
  CHECK(args.GetInt("missing", 7) == 7);
  CHECK(args.GetDouble("binpack.resources", 1.5) == 1.5);
  REQUIRE(args.Problems().size() == 1);
}

TEST_CASE("configuration errors name the problem") {
  Registry r;
  REQUIRE(RegisterBuiltins(r).ok());
  auto bad_action = ParseSchedulerConf("actions: \"allocate, teleport\"\ntiers: []", r.Names());
  CHECK(bad_action.status().message().find("unknown action \"teleport\"") != std::string::npos);
  auto bad_plugin =
      ParseSchedulerConf("actions: allocate\ntiers:\n- plugins:\n  - name: magic\n", r.Names());
  CHECK(bad_plugin.status().message() == "tiers[0].plugins[0].name: unknown plugin \"magic\"");
  auto bad_flag = ParseSchedulerConf(
      "actions: allocate\ntiers:\n- plugins:\n  - name: gang\n    enableJobOrdr: false\n", {});
  CHECK(bad_flag.status().message() == "tiers[0].plugins[0].enableJobOrdr: unknown plugin option");
  auto bad_bool = ParseSchedulerConf(
      "actions: allocate\ntiers:\n- plugins:\n  - name: gang\n    enableJobOrder: maybe\n", {});
  CHECK(bad_bool.status().message().find("must be true or false") != std::string::npos);
  auto hierarchy = ParseSchedulerConf(
      "actions: allocate\ntiers:\n- plugins:\n  - {name: drf, enableHierarchy: true}\n  - {name: "
      "proportion}\n",
      {});
  CHECK(hierarchy.status().message().find("cannot be used with proportion") != std::string::npos);
  CHECK_FALSE(ParseSchedulerConf("actions: [", {}).ok());
  CHECK_FALSE(ParseSchedulerConf("tiers: []", {}).ok());
}

TEST_CASE("a discarded statement restores every counter and plugin state") {
  Harness h;
  h.Node("n1", "cpu=4,memory=8Gi").Queue("default").Group("ns/j", "default", 3);
  for (int i = 0; i < 3; ++i)
    h.Pod("ns/j-" + std::to_string(i), "j").Request("cpu=1,memory=1Gi").Add();
  Registry registry;
  REQUIRE(RegisterBuiltins(registry).ok());
  auto conf = ParseSchedulerConf(DefaultSchedulerConfYaml(), {});
  REQUIRE(conf.ok());
  Session ssn(h.cache().TakeSnapshot(), *conf, registry, SessionOptions{});
  ssn.Open();
  auto j = ssn.JobIndex("ns/j");
  REQUIRE(j);
  const JobInfo before_job = ssn.job(*j);
  const NodeInfo before_node = ssn.node(0);
  {
    Statement stmt(ssn);
    for (const auto& [uid, t] : before_job.tasks) REQUIRE(stmt.Allocate(*j, t.uid(), 0).ok());
    CHECK(ssn.job(*j).Count(TaskStatus::kAllocated) == 3);
    CHECK(ssn.node(0).used.milli_cpu() == 3000);
    CHECK(ssn.JobReady(ssn.job(*j)));
    // Falls out of scope uncommitted: discarded.
  }
  CHECK(ssn.job(*j).Count(TaskStatus::kPending) == 3);
  CHECK(SameValues(ssn.job(*j).allocated, before_job.allocated));
  CHECK(SameValues(ssn.node(0).used, before_node.used));
  CHECK(ssn.node(0).tasks.size() == before_node.tasks.size());
  CHECK_FALSE(ssn.JobReady(ssn.job(*j)));
  // The snapshot (and the cache) never saw any of it.
  CHECK(h.cache().Node("n1")->used.milli_cpu() == 0);
}

TEST_CASE("pipelined allocations use releasing resources and undo cleanly") {
  Harness h;
  h.Node("n1", "cpu=2")
      .Queue("default")
      .Group("ns/old", "default", 1)
      .Group("ns/new", "default", 1);
  h.Pod("ns/old-0", "old").Request("cpu=2").On("n1").Terminating().Add();
  h.Pod("ns/new-0", "new").Request("cpu=2").Add();
  Registry registry;
  REQUIRE(RegisterBuiltins(registry).ok());
  auto conf = ParseSchedulerConf(DefaultSchedulerConfYaml(), {});
  Session ssn(h.cache().TakeSnapshot(), *conf, registry, SessionOptions{});
  ssn.Open();
  size_t j = *ssn.JobIndex("ns/new");
  std::string uid = ssn.job(j).tasks.begin()->second.uid();
  const char* why = nullptr;
  CHECK_FALSE(ssn.node(0).FitsIdle(ssn.job(j).tasks.at(uid).request(), &why));
  CHECK(std::string(why) == "Insufficient cpu");
  CHECK(ssn.node(0).FitsFutureIdle(ssn.job(j).tasks.at(uid).request(), &why));
  Statement stmt(ssn);
  REQUIRE(stmt.Pipeline(j, uid, 0).ok());
  CHECK(ssn.node(0).pipelined.milli_cpu() == 2000);
  CHECK(ssn.JobPipelined(ssn.job(j)));
  CHECK_FALSE(ssn.JobReady(ssn.job(j)));
  stmt.Discard();
  CHECK(ssn.node(0).pipelined.milli_cpu() == 0);
}

TEST_CASE("tiers combine votes and victims as Volcano does") {
  Harness h;
  h.Node("n1", "cpu=1").Queue("default").Group("ns/j", "default", 1);
  h.Pod("ns/j-0", "j").Request("cpu=1").Add();
  Registry registry;
  REQUIRE(RegisterBuiltins(registry).ok());
  auto conf = ParseSchedulerConf(R"(actions: allocate
tiers:
- plugins: [{name: gang}, {name: priority}]
- plugins: [{name: drf}, {name: conformance}])",
                                 {});
  REQUIRE(conf.ok());
  Session ssn(h.cache().TakeSnapshot(), *conf, registry, SessionOptions{});
  ssn.Open();
  // JobStarving: the first tier with plugins decides (gang and priority both say starving).
  CHECK(ssn.JobStarving(ssn.job(0)));
  // JobValid is never switched off.
  CHECK(ssn.JobValid(ssn.job(0)).pass);
}

TEST_CASE("hooks sit in their plugin's tier, in configured order, where the plugin is enabled") {
  auto conf = ParseSchedulerConf(R"(actions: allocate
tiers:
- plugins: [{name: gang}, {name: priority}, {name: drf, enableJobOrder: false}]
- plugins: [{name: proportion}, {name: gang}])",
                                 {});
  REQUIRE(conf.ok());
  Hooks hooks(*conf);
  std::vector<std::string> asked;
  auto order = [&](std::string label) {
    return [&asked, label](const JobInfo&, const JobInfo&) {
      asked.push_back(label);
      return 0;
    };
  };
  // Registered out of configured order; a plugin may register more than one hook.
  hooks.AddJobOrderFn("proportion", order("proportion"));
  hooks.AddJobOrderFn("priority", order("priority"));
  hooks.AddJobOrderFn("drf", order("drf"));  // switched off
  hooks.AddJobOrderFn("gang", order("gang 1"));
  hooks.AddJobOrderFn("gang", order("gang 2"));
  hooks.AddJobOrderFn("binpack", order("binpack"));  // not configured
  JobInfo l, r;
  l.uid = "a";
  r.uid = "b";
  CHECK(hooks.JobOrder(l, r));  // no plugin decides: uid
  CHECK(asked ==
        std::vector<std::string>{"gang 1", "gang 2", "priority", "proportion", "gang 1", "gang 2"});
}

}  // namespace
}  // namespace tephra::scheduler::testing
