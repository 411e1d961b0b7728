// Job pod templates through the whole request path, as the API server calls the webhooks
// (/jobs/mutate, its patch applied, then /jobs/validate). Each case records what real Volcano
// answered for the same Job (tests/oracle/volcano_admission/, docs/admission.md): Tephra must
// refuse what Volcano refuses, naming the field, and accept what it accepts.
#include <string>

#include <catch2/catch.hpp>

#include "tests/unit/webhooks/testing.h"

namespace tephra::webhooks {
namespace {

using testing::Admit;

// A Job whose one task's template is {"metadata":{...}, "spec":{containers:[c], ...}}, with
// extra members (each followed by a comma) in the container, the pod spec and the template.
// The container's name and the pod's restartPolicy are only added when the extra members do not
// start with them.
std::string JobWith(const std::string& container, const std::string& spec,
                    const std::string& tmpl = "") {
  auto has = [](const std::string& members, const char* key) {
    return members.rfind(std::string("\"") + key + "\":", 0) == 0;
  };
  return R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job",
    "metadata":{"name":"j","namespace":"team"},"spec":{"minAvailable":1,"queue":"default",
    "tasks":[{"name":"t","replicas":1,"template":{)" +
         tmpl + R"("spec":{)" + spec +
         (has(spec, "restartPolicy") ? "" : R"("restartPolicy":"Never",)") + R"("containers":[{)" +
         container + (has(container, "name") ? "" : R"("name":"c",)") +
         R"("image":"busybox"}]}}}]}})";
}

struct Case {
  const char* name;
  std::string job;
  bool volcano_refuses;
  const char* path;  // the field Tephra's message names; empty when allowed
};

TEST_CASE("Pod templates: Tephra refuses what Volcano refuses and accepts what it accepts") {
  const std::vector<Case> cases = {
      {"base", JobWith("", ""), false, ""},
      {"command: true", JobWith(R"("command":true,)", ""), true, "containers[0].command"},
      {"command: \"ls\"", JobWith(R"("command":"ls",)", ""), true, "containers[0].command"},
      {"args: [1,2]", JobWith(R"("args":[1,2],)", ""), true, "containers[0].args[0]"},
      {"container name Bad_Name", JobWith(R"("name":"Bad_Name",)", ""), true, "containers[0].name"},
      {"init container named like a container",
       JobWith("", R"("initContainers":[{"name":"c","image":"x"}],)"), true, "containers[0].name"},
      {"requests cpu 2 > limits 1",
       JobWith(R"("resources":{"requests":{"cpu":"2"},"limits":{"cpu":"1"}},)", ""), true,
       "resources.requests.cpu"},
      {"requests cpu -1", JobWith(R"("resources":{"requests":{"cpu":"-1"}},)", ""), true,
       "resources.requests.cpu"},
      {"requests cpu abc", JobWith(R"("resources":{"requests":{"cpu":"abc"}},)", ""), true,
       "resources.requests.cpu"},
      {"requests foo", JobWith(R"("resources":{"requests":{"foo":"1"}},)", ""), true,
       "resources.requests.foo"},
      {"extended resource without limit",
       JobWith(R"("resources":{"requests":{"example.com/foo":"1"}},)", ""), true,
       "resources.limits.example.com/foo"},
      {"fractional extended resource",
       JobWith(
           R"("resources":{"requests":{"example.com/foo":"1500m"},"limits":{"example.com/foo":"1500m"}},)",
           ""),
       true, "resources.requests.example.com/foo"},
      {"hugepages without limit",
       JobWith(R"("resources":{"requests":{"hugepages-2Mi":"2Mi","cpu":"1","memory":"1Gi"}},)", ""),
       true, "resources.limits.hugepages-2Mi"},
      {"requests cpu as a number", JobWith(R"("resources":{"requests":{"cpu":2}},)", ""), false,
       ""},
      {"requests cpu 0.1m", JobWith(R"("resources":{"requests":{"cpu":"0.1m"}},)", ""), false, ""},
      {"volume with two sources",
       JobWith("", R"("volumes":[{"name":"v","emptyDir":{},"hostPath":{"path":"/x"}}],)"), true,
       "volumes[0]"},
      {"volume without a source", JobWith("", R"("volumes":[{"name":"v"}],)"), false, ""},
      {"volume name V_1", JobWith("", R"("volumes":[{"name":"V_1","emptyDir":{}}],)"), true,
       "volumes[0].name"},
      {"duplicate volume names",
       JobWith("", R"("volumes":[{"name":"v","emptyDir":{}},{"name":"v","emptyDir":{}}],)"), true,
       "volumes[1].name"},
      {"mount of a missing volume",
       JobWith(R"("volumeMounts":[{"name":"nope","mountPath":"/x"}],)", ""), true,
       "volumeMounts[0].name"},
      {"mount without a path",
       JobWith(R"("volumeMounts":[{"name":"v","mountPath":""}],)",
               R"("volumes":[{"name":"v","emptyDir":{}}],)"),
       true, "volumeMounts[0].mountPath"},
      {"relative mount path",
       JobWith(R"("volumeMounts":[{"name":"v","mountPath":"x"}],)",
               R"("volumes":[{"name":"v","emptyDir":{}}],)"),
       false, ""},
      {"two mounts at one path",
       JobWith(R"("volumeMounts":[{"name":"v","mountPath":"/x"},{"name":"w","mountPath":"/x"}],)",
               R"("volumes":[{"name":"v","emptyDir":{}},{"name":"w","emptyDir":{}}],)"),
       true, "volumeMounts[1].mountPath"},
      {"env name 1BAD", JobWith(R"("env":[{"name":"1BAD","value":"x"}],)", ""), true,
       "env[0].name"},
      {"env name A=B", JobWith(R"("env":[{"name":"A=B","value":"x"}],)", ""), true, "env[0].name"},
      {"env name empty", JobWith(R"("env":[{"name":"","value":"x"}],)", ""), true, "env[0].name"},
      {"env name a.b-c", JobWith(R"("env":[{"name":"a.b-c","value":"x"}],)", ""), false, ""},
      {"env value and valueFrom",
       JobWith(
           R"("env":[{"name":"A","value":"x","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}}],)",
           ""),
       true, "env[0].valueFrom"},
      {"env value a number", JobWith(R"("env":[{"name":"A","value":1}],)", ""), true,
       "env[0].value"},
      {"env valueFrom empty", JobWith(R"("env":[{"name":"A","valueFrom":{}}],)", ""), true,
       "env[0].valueFrom"},
      {"duplicate env names",
       JobWith(R"("env":[{"name":"A","value":"1"},{"name":"A","value":"2"}],)", ""), true,
       "env[1].name"},
      {"containerPort 0", JobWith(R"("ports":[{"containerPort":0}],)", ""), true,
       "ports[0].containerPort"},
      {"containerPort 70000", JobWith(R"("ports":[{"containerPort":70000}],)", ""), true,
       "ports[0].containerPort"},
      {"containerPort as a string", JobWith(R"("ports":[{"containerPort":"80"}],)", ""), true,
       "ports[0].containerPort"},
      {"port name HTTP_1", JobWith(R"("ports":[{"containerPort":80,"name":"HTTP_1"}],)", ""), true,
       "ports[0].name"},
      {"port name of 16 characters",
       JobWith(R"("ports":[{"containerPort":80,"name":"abcdefghijklmnop"}],)", ""), true,
       "ports[0].name"},
      {"duplicate port names",
       JobWith(
           R"("ports":[{"containerPort":80,"name":"http"},{"containerPort":81,"name":"http"}],)",
           ""),
       true, "ports[1].name"},
      {"protocol FOO", JobWith(R"("ports":[{"containerPort":80,"protocol":"FOO"}],)", ""), true,
       "ports[0].protocol"},
      {"hostPort differs with hostNetwork",
       JobWith(R"("ports":[{"containerPort":80,"hostPort":81}],)", R"("hostNetwork":true,)"), true,
       "ports[0].hostPort"},
      {"restartPolicy Sometimes", JobWith("", R"("restartPolicy":"Sometimes",)"), true,
       "restartPolicy"},
      {"imagePullPolicy Sometimes", JobWith(R"("imagePullPolicy":"Sometimes",)", ""), true,
       "containers[0].imagePullPolicy"},
      {"dnsPolicy Bogus", JobWith("", R"("dnsPolicy":"Bogus",)"), true, "dnsPolicy"},
      {"terminationMessagePolicy Bogus", JobWith(R"("terminationMessagePolicy":"Bogus",)", ""),
       true, "terminationMessagePolicy"},
      {"nodeSelector key with a space", JobWith("", R"("nodeSelector":{"bad key":"x"},)"), true,
       "nodeSelector.bad key"},
      {"toleration operator Bogus",
       JobWith("", R"("tolerations":[{"key":"k","operator":"Bogus"}],)"), true,
       "tolerations[0].operator"},
      {"template label value with a space",
       JobWith("", "", R"("metadata":{"labels":{"a":"b c"}},)"), true, "metadata.labels.a"},
      {"containers not a list", JobWith("", R"("initContainers":{"name":"c"},)"), true,
       "initContainers"},
      {"container is a string", JobWith("", R"("initContainers":["c"],)"), true,
       "initContainers[0]"},
      {"workingDir a number", JobWith(R"("workingDir":5,)", ""), true, "workingDir"},
      {"activeDeadlineSeconds 0", JobWith("", R"("activeDeadlineSeconds":0,)"), true,
       "activeDeadlineSeconds"},
      {"terminationGracePeriodSeconds -5", JobWith("", R"("terminationGracePeriodSeconds":-5,)"),
       false, ""},
      {"serviceAccountName Bad_SA", JobWith("", R"("serviceAccountName":"Bad_SA",)"), true,
       "serviceAccountName"},
      {"hostname Bad_Host", JobWith("", R"("hostname":"Bad_Host",)"), true, "hostname"},
      {"priorityClassName Bad_PC", JobWith("", R"("priorityClassName":"Bad_PC",)"), true,
       "priorityClassName"},
      {"securityContext runAsUser -1", JobWith(R"("securityContext":{"runAsUser":-1},)", ""), true,
       "securityContext.runAsUser"},
      {"sidecar init container",
       JobWith("", R"("initContainers":[{"name":"s","image":"x","restartPolicy":"Always"}],)"),
       false, ""},
      {"restartPolicy on a regular container", JobWith(R"("restartPolicy":"Always",)", ""), true,
       "containers[0].restartPolicy"},
      {"overhead", JobWith("", R"("overhead":{"cpu":"1"},)"), false, ""},
  };
  api::StaticQueueLookup queues = testing::TestQueues();
  testing::StaticNamespaces namespaces;
  testing::TestRouter router(queues, namespaces);
  for (const Case& c : cases) {
    CAPTURE(c.name);
    std::string message = Admit(router, c.job);
    CAPTURE(message);
    CHECK(message.empty() == !c.volcano_refuses);
    if (c.volcano_refuses) CHECK(message.find(c.path) != std::string::npos);
  }
}

TEST_CASE("A pod template error names the whole field path") {
  api::StaticQueueLookup queues = testing::TestQueues();
  testing::StaticNamespaces namespaces;
  testing::TestRouter router(queues, namespaces);
  CHECK(Admit(router, JobWith(R"("command":true,)", "")) ==
        "spec.tasks[0].template.spec.containers[0].command: must be a list of strings, not "
        "boolean");
}

}  // namespace
}  // namespace tephra::webhooks
