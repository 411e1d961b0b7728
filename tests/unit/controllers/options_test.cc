// tephra-controller-manager's flags: vc-controller-manager's names and defaults, the errors for
// bad values, and what Finish() computes.
#include "controllers/options.h"

#include <catch2/catch.hpp>

#include "controllers/daemon.h"

namespace tephra::controllers {
namespace {

Status Parse(ControllerManagerOptions* options, const std::vector<std::string>& args) {
  base::FlagSet flags("tephra-controller-manager");
  options->Register(flags);
  TEPHRA_RETURN_IF_ERROR(flags.Parse(args));
  return options->Finish();
}

TEST_CASE("Defaults follow Volcano's controller manager") {
  ControllerManagerOptions o;
  REQUIRE(Parse(&o, {}).ok());
  CHECK(o.selected == std::vector<std::string>{"job-controller", "queue-controller",
                                               "pg-controller", "gc-controller",
                                               "hyperNode-controller"});
  CHECK(o.controllers.worker_threads == 3);
  CHECK(o.controllers.worker_threads_for_podgroup == 5);
  CHECK(o.controllers.worker_threads_for_queue == 5);
  CHECK(o.controllers.worker_threads_for_gc == 1);
  CHECK(o.controllers.max_requeue_num == 15);
  CHECK(o.controllers.scheduler_names == std::vector<std::string>{"volcano"});
  CHECK(o.daemon.client.qps == 50);
  CHECK(o.daemon.client.burst == 100);
  CHECK(o.daemon.leader.enabled);
  CHECK(o.daemon.leader.resource_name == "vc-controller-manager");
  CHECK(o.daemon.leader.lease_duration == std::chrono::seconds(15));
  CHECK(o.daemon.leader.renew_deadline == std::chrono::seconds(10));
  CHECK(o.daemon.leader.retry_period == std::chrono::seconds(2));
  CHECK(o.daemon.health.flag == "healthz-address");
  CHECK(o.daemon.health.address == "127.0.0.1:11252");
  CHECK(o.daemon.health.allow_ephemeral);
  CHECK(o.daemon.component == "tephra-controller-manager");
  CHECK(o.daemon.event_source == "vc-controller-manager");
}

TEST_CASE("Flags as a Deployment passes them") {
  ControllerManagerOptions o;
  REQUIRE(
      Parse(&o, {"--controllers=*,-gc-controller", "--worker-threads=8", "--scheduler-name=tephra",
                 "--namespace=team-a", "--queue-label-selector=pool=a", "--healthz-address=0",
                 "--leader-elect-resource-name=cm", "--kube-api-burst=200"})
          .ok());
  CHECK(o.selected == std::vector<std::string>{"job-controller", "queue-controller",
                                               "pg-controller", "hyperNode-controller"});
  CHECK(o.controllers.worker_threads == 8);
  CHECK(o.controllers.scheduler_names == std::vector<std::string>{"tephra"});
  CHECK(o.controllers.namespace_ == "team-a");
  CHECK(o.controllers.queue_label_selector == "pool=a");
  CHECK(o.daemon.health.address == "0");
  CHECK(o.daemon.leader.resource_name == "cm");
  CHECK(o.daemon.client.burst == 200);
}

TEST_CASE("An unknown controller names the flag and the known ones") {
  ControllerManagerOptions o;
  Status s = Parse(&o, {"--controllers=*,-jobflow-controller"});
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK(s.message() ==
        "--controllers: unknown controller \"jobflow-controller\" (known: job-controller, "
        "queue-controller, pg-controller, gc-controller, hyperNode-controller)");
}

TEST_CASE("Every controller --controllers knows can be made, under its own name") {
  for (std::string_view name : kControllerNames) {
    CAPTURE(name);
    std::unique_ptr<Controller> controller = NewController(name);
    REQUIRE(controller != nullptr);
    CHECK(controller->Name() == name);
  }
}

}  // namespace
}  // namespace tephra::controllers
