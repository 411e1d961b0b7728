// tephra-scheduler's flags: Volcano's names and defaults, the errors for bad values, and what
// Finish() computes.
#include "scheduler/options.h"

#include <catch2/catch.hpp>

namespace tephra::scheduler {
namespace {

Status Parse(SchedulerDaemonOptions* options, const std::vector<std::string>& args) {
  base::FlagSet flags("tephra-scheduler");
  options->Register(flags);
  TEPHRA_RETURN_IF_ERROR(flags.Parse(args));
  return options->Finish();
}

TEST_CASE("Defaults follow Volcano's scheduler") {
  SchedulerDaemonOptions o;
  REQUIRE(Parse(&o, {}).ok());
  CHECK(o.scheduler.scheduler_names == std::vector<std::string>{"volcano"});
  CHECK(o.scheduler.period == std::chrono::seconds(1));
  CHECK(o.scheduler.default_queue == "default");
  CHECK(o.scheduler.sampling.minimum_feasible_nodes == 100);
  CHECK(o.scheduler.sampling.minimum_percentage_nodes_to_find == 5);
  CHECK(o.scheduler.sampling.percentage_nodes_to_find == 0);
  CHECK(o.daemon.client.qps == 2000);
  CHECK(o.daemon.client.burst == 2000);
  CHECK(o.daemon.leader.enabled);
  CHECK(o.daemon.health.flag == "listen-address");
  CHECK(o.daemon.health.address == "127.0.0.1:8080");
  CHECK_FALSE(o.daemon.health.allow_ephemeral);
  CHECK(o.daemon.component == "tephra-scheduler");
  CHECK(o.sync_timeout == std::chrono::minutes(2));
  CHECK(o.admin.address.empty());
  CHECK(o.dashboard_address.empty());
  // Computed: the lease and the events' source are named after the one scheduler name.
  CHECK(o.daemon.leader.resource_name == "volcano");
  CHECK(o.daemon.event_source == "volcano");
  CHECK(o.scheduler.explain_capacity == 10000);
  CHECK_FALSE(o.scheduler.keep_decision_snapshot);
}

TEST_CASE("Flags as a Deployment passes them, and what follows from them") {
  SchedulerDaemonOptions o;
  REQUIRE(
      Parse(&o, {"--scheduler-name=tephra", "--scheduler-conf=/etc/conf/scheduler.conf",
                 "--scheduler-conf-configmap=tephra-system/tephra-scheduler-configmap",
                 "--schedule-period=500ms", "--percentage-nodes-to-find=30",
                 "--listen-address=:9090", "--leader-elect=false", "--admin-address=127.0.0.1:8091",
                 "--explain-cache-size=5", "--kube-api-qps=100"})
          .ok());
  CHECK(o.scheduler.scheduler_names == std::vector<std::string>{"tephra"});
  CHECK(o.scheduler.conf_file == "/etc/conf/scheduler.conf");
  CHECK(o.scheduler.period == std::chrono::milliseconds(500));
  CHECK(o.scheduler.sampling.percentage_nodes_to_find == 30);
  CHECK(o.daemon.health.address == ":9090");
  CHECK_FALSE(o.daemon.leader.enabled);
  CHECK(o.daemon.client.qps == 100);
  CHECK(o.daemon.leader.resource_name == "tephra");
  CHECK(o.daemon.event_source == "tephra");
  CHECK(o.scheduler.explain_capacity == 5);
  CHECK(o.scheduler.keep_decision_snapshot);  // the admin API's DumpSnapshot needs it
}

TEST_CASE("The lease name: the one scheduler name, volcano for several, or as given") {
  SchedulerDaemonOptions several;
  REQUIRE(Parse(&several, {"--scheduler-name=a", "--scheduler-name=b"}).ok());
  CHECK(several.scheduler.scheduler_names == std::vector<std::string>{"a", "b"});
  CHECK(several.daemon.leader.resource_name == "volcano");
  CHECK(several.daemon.event_source == "a");
  SchedulerDaemonOptions given;
  REQUIRE(Parse(&given, {"--scheduler-name=a", "--leader-elect-resource-name=mine"}).ok());
  CHECK(given.daemon.leader.resource_name == "mine");
}

TEST_CASE("Bad flag values name the flag and the rule") {
  struct Bad {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Bad> bads = {
      {{"--scheduler-conf-configmap=cm"},
       "--scheduler-conf-configmap: \"cm\" is not namespace/name"},
      {{"--scheduler-conf-configmap=/cm"},
       "--scheduler-conf-configmap: \"/cm\" is not namespace/name"},
      {{"--scheduler-conf-configmap=ns/"},
       "--scheduler-conf-configmap: \"ns/\" is not namespace/name"},
      {{"--scheduler-conf-configmap=a/b/c"},
       "--scheduler-conf-configmap: \"a/b/c\" is not namespace/name"},
      {{"--explain-cache-size=0"}, "--explain-cache-size: must be at least 1"},
  };
  for (const Bad& b : bads) {
    INFO(b.args.front());
    SchedulerDaemonOptions o;
    Status s = Parse(&o, b.args);
    CHECK(s.code() == StatusCode::kInvalidArgument);
    CHECK(s.message() == b.message);
  }
}

}  // namespace
}  // namespace tephra::scheduler
