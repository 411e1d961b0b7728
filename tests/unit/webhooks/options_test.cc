// tephra-admission's flags: Volcano's names, defaults, and the errors for bad combinations.
#include "webhooks/options.h"

#include <cstdlib>

#include <catch2/catch.hpp>
#include <yaml-cpp/yaml.h>

namespace tephra::webhooks {
namespace {

Status Parse(AdmissionOptions* options, const std::vector<std::string>& args) {
  base::FlagSet flags("tephra-admission");
  options->Register(flags);
  TEPHRA_RETURN_IF_ERROR(flags.Parse(args));
  return options->Finish();
}

TEST_CASE("Defaults follow Volcano's webhook manager and its Helm chart") {
  ::setenv("TEPHRA_NAMESPACE", "suite-ns", 1);
  AdmissionOptions o;
  REQUIRE(Parse(&o, {}).ok());
  CHECK(o.port == 8443);
  CHECK(o.enabled_admission ==
        std::vector<std::string>{"/jobs/mutate", "/jobs/validate", "/podgroups/validate",
                                 "/queues/mutate", "/queues/validate", "/hypernodes/validate"});
  CHECK(o.scheduler_names == std::vector<std::string>{"volcano"});
  CHECK(o.secret_name == "volcano-admission-secret");
  CHECK(o.webhook_config_name_prefix == "volcano-admission-service");
  CHECK(o.max_queue_depth == 5);
  CHECK(o.client.qps == 50);
  CHECK(o.client.burst == 100);
  CHECK(o.healthz_address == "127.0.0.1:11251");
  CHECK(o.namespace_ == "suite-ns");
  CHECK(o.generates_certificates());
  ::unsetenv("TEPHRA_NAMESPACE");
}

// The chart's default list and the daemon's are one behaviour: a cluster installed with the chart
// registers exactly the paths a tephra-admission started without --enabled-admission serves (the
// chaos run relies on it).
TEST_CASE("The chart's default admission paths are the daemon's") {
  YAML::Node values = YAML::LoadFile(std::string(TEPHRA_SOURCE_DIR) + "/charts/tephra/values.yaml");
  std::vector<std::string> chart;
  for (const YAML::Node& path : values["admission"]["enabledAdmissions"])
    chart.push_back(path.as<std::string>());
  AdmissionOptions o;
  REQUIRE(Parse(&o, {}).ok());
  CHECK(chart == o.enabled_admission);
}

TEST_CASE("Flags as a Deployment passes them") {
  AdmissionOptions o;
  REQUIRE(Parse(&o, {"--port=9443", "--enabled-admission=/jobs/validate,/pods/validate",
                     "--scheduler-name", "volcano", "--scheduler-name", "tephra", "--extra-san",
                     "IP:127.0.0.1", "--namespace", "ns", "--max-queue-depth=3",
                     "--enable-queue-allocated-pods-check", "--request-timeout=5s",
                     "--kube-api-qps=20", "--healthz-address=0"})
              .ok());
  CHECK(o.port == 9443);
  CHECK(o.enabled_admission == std::vector<std::string>{"/jobs/validate", "/pods/validate"});
  CHECK(o.scheduler_names == std::vector<std::string>{"volcano", "tephra"});
  CHECK(o.extra_sans == std::vector<std::string>{"IP:127.0.0.1"});
  CHECK(o.namespace_ == "ns");
  CHECK(o.max_queue_depth == 3);
  CHECK(o.enable_queue_allocated_pods_check);
  CHECK(o.request_timeout == std::chrono::seconds(5));
  CHECK(o.client.qps == 20);
}

TEST_CASE("Bad flag values name the flag and the rule") {
  struct Bad {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Bad> bads = {
      {{"--enabled-admission=/jobs/validate,/cronjobs/validate"},
       "--enabled-admission: unknown admission path \"/cronjobs/validate\"; known: /jobs/mutate, "
       "/jobs/validate, /queues/mutate, /queues/validate, /podgroups/mutate, /podgroups/validate, "
       "/pods/mutate, /pods/validate, /hypernodes/validate"},
      {{"--enabled-admission=/jobs/validate,/jobs/validate"},
       "--enabled-admission: /jobs/validate is listed twice"},
      {{"--port=0"}, "--port: must be between 1 and 65535"},
      {{"--tls-cert-file=/x.crt"}, "--tls-cert-file and --tls-private-key-file go together"},
      {{"--ca-cert-file=/ca.crt"},
       "--ca-cert-file: only with --tls-cert-file (generated certificates come with their own CA)"},
      {{"--extra-san=IP:nope"},
       "--extra-san: subject alternative name \"IP:nope\": not an IP address"},
      {{"--healthz-address=localhost"}, "--healthz-address localhost: want host:port"},
      {{"--max-queue-depth=0"}, "--max-queue-depth: must be at least 1"},
  };
  for (const Bad& b : bads) {
    INFO(b.args.front());
    AdmissionOptions o;
    Status s = Parse(&o, b.args);
    CHECK(s.message() == b.message);
  }
}

}  // namespace
}  // namespace tephra::webhooks
