// tephra-admission against the real kube-apiserver: the daemon runs as a local process with
// the admission identity (RBAC rendered from the Helm chart, charts/tephra), generates its
// certificates into the chart's Secret, fills in the caBundle of the chart's webhook
// configurations (local mode: url https://127.0.0.1:PORT/...), and kubectl sees its answers.
//
// Tests run in parallel with others on one control plane, so every test renders the chart as a
// release of its own (tephra-it-<id>) and scopes its hooks: to namespaces carrying a label unique
// to the test, and (queues being cluster-scoped) to queues carrying that label. Cleanup removes
// the webhook configurations before the daemon goes.
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <signal.h>
#include <string>
#include <unistd.h>
#include <vector>

#include <catch2/catch.hpp>

#include "base/base64.h"
#include "tests/support/cluster.h"

namespace tephra::testing {
namespace {

const std::string kSource = TEPHRA_SOURCE_DIR;
const std::string kDaemon = TEPHRA_ADMISSION_PATH;

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Every admission path, so that the rendered RBAC covers whichever hooks a test registers.
const char kAllPaths[] =
    "{/jobs/mutate,/jobs/validate,/podgroups/mutate,/podgroups/validate,/queues/mutate,"
    "/queues/validate,/pods/mutate,/pods/validate,/hypernodes/validate}";

std::string SuiteNamespace() {
  const char* ns = std::getenv("TEPHRA_NAMESPACE");
  return ns != nullptr && *ns != '\0' ? ns : "tephra-system";
}

// One tephra-admission process.
struct Replica {
  uint16_t port = 0;
  uint16_t health_port = 0;
  std::string log;
  std::string cert_dir;  // removed by the suite (a killed daemon cannot)
  std::unique_ptr<BackgroundProcess> process;

  std::string Log() const { return ReadFile(log); }
  // GET on the plain-HTTP health port.
  CommandResult Health(const std::string& path) const {
    return RunCommand({"curl", "-sS", "--max-time", "5",
                       "http://127.0.0.1:" + std::to_string(health_port) + path});
  }
};

// Everything one test sets up, torn down in an order that never leaves a fail-closed hook
// pointing at a dead process: labels first, webhook configurations, then the daemons, then
// RBAC and the Secret.
class Suite {
 public:
  Suite()
      : k_(ClusterEnv::Get().kubeconfig),
        id_(RandomSuffix()),
        label_("tephra-it-" + id_),
        release_("tephra-it-" + id_),
        secret_(release_ + "-admission-certs"),
        namespace_(SuiteNamespace()) {
    InstallCrds();
    k_.Run({"create", "namespace", namespace_});  // AlreadyExists is fine
    // The chart's admission RBAC and (empty) certificate Secret, bound to the control plane's
    // admission identity.
    rbac_ = RenderChart(release_, namespace_, "templates/rbac-admission.yaml",
                        {"--set", "admission.serviceAccount.name=tephra-admission", "--set",
                         std::string("admission.enabledAdmissions=") + kAllPaths});
    k_.MustRun({"apply", "-f", "-"}, rbac_);
  }

  ~Suite() {
    for (auto it = undo_.rbegin(); it != undo_.rend(); ++it) k_.Run(*it);
    k_.Run({"delete", "mutatingwebhookconfigurations,validatingwebhookconfigurations", "-l",
            "app.kubernetes.io/instance=" + release_, "--ignore-not-found"});
    for (auto& r : replicas_) {
      if (r->process->started()) {
        r->process->Signal(SIGKILL);
        r->process->Wait(std::chrono::seconds(5));
      }
      ::unlink(r->log.c_str());
      for (const char* f : {"/tls.crt", "/tls.key", "/ca.crt"}) ::unlink((r->cert_dir + f).c_str());
      ::rmdir(r->cert_dir.c_str());
    }
    k_.Run({"delete", "-f", "-", "--ignore-not-found"}, rbac_);
    k_.Run({"delete", "secret", "-n", namespace_, secret_, "--ignore-not-found"});
    for (const std::string& ns : namespaces_) {
      k_.Run({"delete", "namespace", ns, "--wait=false", "--ignore-not-found"});
    }
  }

  const Kubectl& k() const { return k_; }
  const std::string& id() const { return id_; }
  const std::string& label() const { return label_; }
  const std::string& secret() const { return secret_; }
  const std::string& suite_namespace() const { return namespace_; }

  // Starts a replica with the admission identity and waits until it is ready.
  Replica& Start(const std::string& paths) {
    auto r = std::make_unique<Replica>();
    r->port = FreeLoopbackPort();
    r->health_port = FreeLoopbackPort();
    std::string base = "/tmp/tephra-admission-it-" + id_ + "-" + std::to_string(replicas_.size());
    r->log = base + ".log";
    r->cert_dir = base + ".certs";
    r->process = std::make_unique<BackgroundProcess>(
        std::vector<std::string>{kDaemon, "--kubeconfig=" + ClusterEnv::Get().kubeconfig_admission,
                                 "--address=127.0.0.1", "--port=" + std::to_string(r->port),
                                 "--healthz-address=127.0.0.1:" + std::to_string(r->health_port),
                                 "--extra-san=IP:127.0.0.1", "--namespace=" + namespace_,
                                 "--secret-name=" + secret_, "--cert-dir=" + r->cert_dir,
                                 "--webhook-config-name-prefix=" + release_ + "-admission",
                                 "--enabled-admission=" + paths, "-v=2"},
        r->log);
    REQUIRE(r->process->started());
    Replica& replica = *r;
    replicas_.push_back(std::move(r));
    bool ready =
        Eventually([&] { return replica.Health("/readyz").out == "ok"; }, std::chrono::seconds(30));
    INFO(replica.Log());
    REQUIRE(ready);
    return replica;
  }

  // The chart's webhook configurations (local mode) for `paths` served by `port`, scoped to
  // this test.
  void RegisterWebhooks(uint16_t port, const std::string& paths) {
    std::string manifest = RenderChart(
        release_, namespace_, "templates/webhooks.yaml",
        {"--set", "local.enabled=true", "--set", "admission.port=" + std::to_string(port), "--set",
         "admission.enabledAdmissions={" + paths + "}", "--set-json",
         R"(admission.webhook.namespaceSelector={"matchLabels":{")" + label_ + R"(":"true"}})",
         "--set-json",
         R"(admission.webhook.queueObjectSelector={"matchExpressions":[{"key":")" + label_ +
             R"(","operator":"Exists"}]})"});
    k_.MustRun({"apply", "-f", "-"}, manifest);
  }

  // A namespace whose objects this test's hooks see.
  std::string Namespace() {
    std::string ns = "it-adm-" + id_ + "-" + std::to_string(namespaces_.size());
    k_.MustRun({"create", "namespace", ns});
    namespaces_.push_back(ns);
    k_.MustRun({"label", "namespace", ns, label_ + "=true"});
    return ns;
  }

  // Puts this test's label on an object until the test ends.
  void Label(const std::string& kind, const std::string& name, const std::string& ns = "") {
    std::vector<std::string> args{"label", kind, name, label_ + "=true", "--overwrite"};
    std::vector<std::string> undo{"label", kind, name, label_ + "-"};
    if (!ns.empty()) {
      args.insert(args.end(), {"-n", ns});
      undo.insert(undo.end(), {"-n", ns});
    }
    k_.MustRun(args);
    undo_.push_back(undo);
  }

  // Runs `args` at the end of the test, before the webhook configurations go.
  void AtEnd(std::vector<std::string> args) { undo_.push_back(std::move(args)); }

  // Waits until the API server calls the hooks: a dry-run Job in a missing queue is denied.
  void WaitUntilCalled(const std::string& ns) {
    std::string probe = R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job",
        "metadata":{"name":"probe"},"spec":{"queue":"tephra-probe-missing","tasks":[
        {"name":"a","replicas":1,"template":{"spec":{"containers":[{"name":"c","image":"i"}]}}}]}})";
    std::string last;
    bool called = Eventually(
        [&] {
          CommandResult r = k_.Run({"create", "-n", ns, "--dry-run=server", "-f", "-"}, probe);
          last = r.err;
          return Contains(r.err, "queue \"tephra-probe-missing\" does not exist");
        },
        std::chrono::seconds(60), std::chrono::milliseconds(500));
    INFO(last);
    INFO((replicas_.empty() ? std::string() : replicas_.back()->Log()));
    REQUIRE(called);
  }

  // The usual start of a test: a replica serving `paths`, its hooks registered, and a namespace
  // they see, once the API server calls them.
  struct Served {
    Replica& replica;
    std::string ns;
  };
  Served Serve(const std::string& paths) {
    Replica& replica = Start(paths);
    RegisterWebhooks(replica.port, paths);
    std::string ns = Namespace();
    WaitUntilCalled(ns);
    return {replica, ns};
  }

  // The queue `default`, Open, as the controller would leave it.
  void EnsureDefaultQueue() {
    k_.Run({"create", "-f", "-"}, R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue",
        "metadata":{"name":"default"},"spec":{"weight":1,"reclaimable":true}})");
    k_.MustRun({"patch", "queue", "default", "--subresource=status", "--type=merge", "-p",
                R"({"status":{"state":"Open"}})"});
  }

 private:
  void InstallCrds() {
    k_.ApplyShared({"-f", kSource + "/crds/"});
    k_.MustRun({"wait", "--for=condition=Established", "--timeout=60s", "crd/jobs.batch.volcano.sh",
                "crd/queues.scheduling.volcano.sh", "crd/podgroups.scheduling.volcano.sh"});
  }

  Kubectl k_;
  std::string id_;
  std::string label_;
  std::string release_;
  std::string secret_;
  std::string namespace_;
  std::string rbac_;
  std::vector<std::string> namespaces_;
  std::vector<std::vector<std::string>> undo_;
  std::vector<std::unique_ptr<Replica>> replicas_;
};

const std::string kDefaultPaths =
    "/jobs/mutate,/jobs/validate,/podgroups/mutate,/podgroups/validate,/queues/mutate,"
    "/queues/validate";

// kubectl apply of a manifest; returns the result.
CommandResult Apply(const Kubectl& k, const std::string& ns, const std::string& manifest,
                    bool dry_run = false) {
  std::vector<std::string> args{"apply", "-f", "-"};
  if (!ns.empty()) args.insert(args.end(), {"-n", ns});
  if (dry_run) args.insert(args.end(), {"--dry-run=server", "-o", "yaml"});
  return k.Run(args, manifest);
}

TEST_CASE("kubectl apply of bad Jobs, Queues and PodGroups prints every problem") {
  Suite suite;
  auto [replica, ns] = suite.Serve(kDefaultPaths);
  suite.EnsureDefaultQueue();

  CommandResult job = Apply(suite.k(), ns, R"(
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: bad}
spec:
  queue: nowhere
  minAvailable: 9
  policies: [{event: PodFailed, exitCode: 3, action: AbortJob}]
  tasks:
  - name: worker
    replicas: 3
    minAvailable: 5
    template: {spec: {containers: [{name: c, image: busybox}]}}
  - name: worker
    replicas: 1
    template: {spec: {containers: [{name: c, image: busybox}]}}
)");
  INFO(job.err);
  CHECK_FALSE(job.ok());
  CHECK(Contains(job.err,
                 "admission webhook \"validatejob.volcano.sh\" denied the request: "
                 "spec.tasks[0].minAvailable: must be less than or equal to replicas (3); "
                 "spec.tasks[1].name: duplicate task name \"worker\"; spec.minAvailable: must be "
                 "less than or equal to the total replicas of all tasks (4); "
                 "spec.policies[0]: event(s) and exitCode are mutually exclusive; "
                 "spec.queue: queue \"nowhere\" does not exist"));

  // A queue deserving more than it may ever have; cluster-scoped, so it carries the label.
  std::string queue_name = "it-adm-" + suite.id() + "-q";
  CommandResult queue = Apply(suite.k(), "",
                              R"(
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: )" + queue_name + ", labels: {" +
                                  suite.label() + R"(: "true"}}
spec:
  capability: {cpu: "4"}
  deserved: {cpu: "8"}
  guarantee: {resource: {cpu: "9"}}
)");
  INFO(queue.err);
  CHECK_FALSE(queue.ok());
  CHECK(Contains(queue.err,
                 "admission webhook \"validatequeue.volcano.sh\" denied the request: "
                 "spec.deserved.cpu: must be less than or equal to capability (4); "
                 "spec.guarantee.resource.cpu: must be less than or equal to deserved (8); "
                 "spec.guarantee.resource.cpu: must be less than or equal to capability (4)"));

  CommandResult pg = Apply(suite.k(), ns, R"(
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: pg}
spec: {minMember: 2, queue: nowhere}
)");
  INFO(pg.err);
  CHECK_FALSE(pg.ok());
  CHECK(Contains(pg.err,
                 "admission webhook \"validatepodgroup.volcano.sh\" denied the request: "
                 "spec.queue: queue \"nowhere\" does not exist"));

  // Nothing was stored, and the daemon counted its verdicts.
  CHECK_FALSE(suite.k().Run({"get", "-n", ns, "vcjob", "bad"}).ok());
  std::string metrics = replica.Health("/metrics").out;
  CHECK(Contains(metrics,
                 R"(tephra_admission_requests_total{path="/jobs/validate",verdict="denied"})"));
  CHECK(Contains(metrics,
                 R"(tephra_admission_request_duration_seconds_bucket{path="/jobs/validate")"));
  CHECK(Contains(metrics, "tephra_admission_queue_cache_synced 1"));
}

TEST_CASE("A Job nested 200 levels deep is denied naming the path and the limit") {
  Suite suite;
  auto [replica, ns] = suite.Serve(kDefaultPaths);
  suite.EnsureDefaultQueue();
  // An affinity of 200 nested objects; the CRD keeps pod templates whole, so the API server
  // stores it and asks the webhooks.
  std::string deep;
  for (int i = 0; i < 200; ++i) deep += R"({"nodeAffinity":)";
  deep += "{}" + std::string(200, '}');
  const std::string job =
      R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{"name":"deep"},)"
      R"("spec":{"tasks":[{"name":"w","replicas":1,"template":{"spec":{"affinity":)" +
      deep + R"(,"containers":[{"name":"c","image":"busybox"}]}}}]}})";
  CommandResult r = suite.k().Run({"create", "-n", ns, "-f", "-"}, job);
  INFO(r.err);
  CHECK_FALSE(r.ok());
  // The mutating webhook is called first; its answer is a review denial, not an HTTP error.
  CHECK(Contains(r.err,
                 "admission webhook \"mutatejob.volcano.sh\" denied the request: "
                 "spec.tasks[0].template.spec.affinity.nodeAffinity.nodeAffinity."));
  CHECK(Contains(r.err,
                 ": nested more than 126 levels deep; tephra-admission reads objects up "
                 "to 126 levels deep"));
  CHECK_FALSE(Contains(r.err, "unknown reason"));
  CHECK_FALSE(suite.k().Run({"get", "-n", ns, "vcjob", "deep"}).ok());
  CHECK(Contains(replica.Health("/metrics").out,
                 R"(tephra_admission_requests_total{path="/jobs/mutate",verdict="denied"} 1)"));
}

TEST_CASE("Quantities beyond int64 accounting are refused, naming the field") {
  Suite suite;
  auto [replica, ns] = suite.Serve(kDefaultPaths);
  suite.EnsureDefaultQueue();
  // The API server itself stores such a quantity in a pod ("10e399"); a Job asking for it could
  // only wait for ever, so admission refuses it.
  CommandResult job = Apply(suite.k(), ns, R"(
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: huge}
spec:
  tasks:
  - name: worker
    replicas: 1
    template:
      spec:
        containers:
        - name: c
          image: busybox
          resources: {requests: {cpu: "1e400"}}
)");
  INFO(job.err);
  CHECK_FALSE(job.ok());
  CHECK(Contains(job.err,
                 "admission webhook \"validatejob.volcano.sh\" denied the request: "
                 "spec.tasks[0].template.spec.containers[0].resources.requests.cpu: must be at "
                 "most 9223372036854775807m (Kubernetes counts cpu in int64 milli-units), not "
                 "10e399"));
  CHECK_FALSE(suite.k().Run({"get", "-n", ns, "vcjob", "huge"}).ok());

  std::string queue_name = "it-adm-" + suite.id() + "-huge";
  CommandResult queue = Apply(suite.k(), "",
                              R"(
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: )" + queue_name + ", labels: {" +
                                  suite.label() +
                                  R"(: "true"}}
spec:
  capability: {memory: "1e400"}
)");
  INFO(queue.err);
  CHECK_FALSE(queue.ok());
  CHECK(Contains(queue.err,
                 "spec.capability.memory: must be at most 9223372036854775807 "
                 "(Kubernetes counts memory in int64 units), not 10e399"));

  CommandResult pg = Apply(suite.k(), ns, R"(
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: huge}
spec: {minMember: 1, queue: default, minResources: {cpu: "9223372036854775808m"}}
)");
  INFO(pg.err);
  CHECK_FALSE(pg.ok());
  CHECK(Contains(pg.err, "spec.minResources.cpu: must be at most 9223372036854775807m"));

  // The largest countable amount itself is a quantity like any other.
  CommandResult fits = Apply(suite.k(), ns, R"(
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: fits}
spec: {minMember: 1, queue: default, minResources: {cpu: "9223372036854775807m"}}
)",
                             /*dry_run=*/true);
  INFO(fits.err);
  CHECK(fits.ok());
}

TEST_CASE("A good Job comes back defaulted, and --dry-run=server stores nothing") {
  Suite suite;
  auto [replica, ns] = suite.Serve(kDefaultPaths);
  suite.EnsureDefaultQueue();
  const std::string job = R"(
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: good}
spec:
  plugins: {pytorch: ["--master=default0", "--worker=default1"]}
  tasks:
  - replicas: 1
    template: {spec: {containers: [{name: c, image: busybox}]}}
  - replicas: 3
    template: {spec: {containers: [{name: c, image: busybox}]}}
)";
  CommandResult dry = Apply(suite.k(), ns, job, /*dry_run=*/true);
  INFO(dry.err);
  REQUIRE(dry.ok());
  CHECK(Contains(dry.out, "queue: default"));
  CHECK_FALSE(suite.k().Run({"get", "-n", ns, "vcjob", "good"}).ok());

  CommandResult applied = Apply(suite.k(), ns, job);
  INFO(applied.err);
  REQUIRE(applied.ok());
  std::string spec = suite.k().MustRun(
      {"get", "-n", ns, "vcjob", "good", "-o",
       "jsonpath={.spec.queue} {.spec.schedulerName} {.spec.minAvailable} {.spec.maxRetry} "
       "{.spec.tasks[*].name} {.spec.tasks[*].minAvailable} {.spec.tasks[*].maxRetry} "
       "{.spec.plugins.svc}"});
  CHECK(spec == "default volcano 4 3 default0 default1 1 3 3 3 []");

  // Only minAvailable, priorityClassName and the tasks' replicas/minAvailable may change.
  CommandResult changed = suite.k().Run({"patch", "-n", ns, "vcjob", "good", "--type=merge", "-p",
                                         R"({"spec":{"queue":"elsewhere"}})"});
  CHECK(Contains(changed.err,
                 "spec.queue: may not be changed; job updates may only change "
                 "minAvailable, priorityClassName, tasks[*].replicas and "
                 "tasks[*].minAvailable"));
  CHECK(suite.k()
            .Run({"patch", "-n", ns, "vcjob", "good", "--type=json", "-p",
                  R"([{"op":"replace","path":"/spec/tasks/1/replicas","value":5}])"})
            .ok());

  // A PodGroup in the default queue moves to its namespace's queue.
  std::string team_queue = "it-adm-" + suite.id() + "-team";
  suite.AtEnd({"delete", "queue", team_queue, "--ignore-not-found", "--wait=false"});
  REQUIRE(Apply(suite.k(), "",
                "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\n"
                "metadata: {name: " +
                    team_queue + "}\nspec: {}\n")
              .ok());
  suite.k().MustRun({"patch", "queue", team_queue, "--subresource=status", "--type=merge", "-p",
                     R"({"status":{"state":"Open"}})"});
  suite.k().MustRun(
      {"annotate", "namespace", ns, "scheduling.volcano.sh/queue-name=" + team_queue});
  const std::string pg = R"(
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: pg}
spec: {minMember: 1, queue: default}
)";
  // The informers must have seen the queue and the annotation first.
  CommandResult made;
  CHECK(
      Eventually([&] { return (made = Apply(suite.k(), ns, pg)).ok(); }, std::chrono::seconds(10)));
  INFO(made.err);
  CHECK(suite.k().MustRun({"get", "-n", ns, "pg", "pg", "-o", "jsonpath={.spec.queue}"}) ==
        team_queue);
}

TEST_CASE("Queues: defaults, the hierarchy rules, and default and root cannot be deleted") {
  Suite suite;
  auto [replica, ns] = suite.Serve(kDefaultPaths);
  suite.EnsureDefaultQueue();
  suite.Label("queue", "default");

  CommandResult deleted = suite.k().Run({"delete", "queue", "default", "--dry-run=server"});
  INFO(deleted.err);
  CHECK_FALSE(deleted.ok());
  CHECK(Contains(deleted.err,
                 "admission webhook \"validatequeue.volcano.sh\" denied the request: "
                 "metadata.name: queue \"default\" cannot be deleted"));
  CHECK(suite.k().Run({"get", "queue", "default"}).ok());

  std::string parent = "it-adm-" + suite.id() + "-parent";
  std::string child = "it-adm-" + suite.id() + "-child";
  suite.AtEnd({"delete", "queue", child, parent, "--ignore-not-found", "--wait=false"});
  auto queue = [&](const std::string& name, const std::string& spec) {
    return "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: " + name +
           ", labels: {" + suite.label() + ": \"true\"}}\nspec: " + spec + "\n";
  };
  CommandResult made = Apply(suite.k(), "", queue(parent, R"({capability: {cpu: "10"}})"));
  INFO(made.err);
  REQUIRE(made.ok());
  CHECK(suite.k().MustRun({"get", "queue", parent, "-o",
                           "jsonpath={.spec.weight} {.spec.reclaimable}"}) == "1 true");
  // The informer must see the parent before a child can name it.
  CHECK(Eventually(
      [&] {
        return Apply(suite.k(), "",
                     queue(child, "{parent: " + parent + R"(, capability: {cpu: "4"}})"))
            .ok();
      },
      std::chrono::seconds(10)));
  CommandResult too_big =
      Apply(suite.k(), "", queue(child, "{parent: " + parent + R"(, capability: {cpu: "40"}})"));
  CHECK(Contains(too_big.err,
                 "spec.capability.cpu: must be less than or equal to the capability "
                 "of ancestor queue \"" +
                     parent + "\" (10)"));
  CommandResult parent_deleted = suite.k().Run({"delete", "queue", parent, "--dry-run=server"});
  CHECK(Contains(parent_deleted.err,
                 "metadata.name: queue \"" + parent + "\" has child queues and cannot be deleted"));
}

TEST_CASE("A second replica reuses the Secret, and its certificate chains to the same CA") {
  Suite suite;
  auto [first, ns] = suite.Serve(kDefaultPaths);
  auto secret_field = [&](const std::string& field) {
    return suite.k().MustRun({"get", "secret", "-n", suite.suite_namespace(), suite.secret(), "-o",
                              "jsonpath={" + field + "}"});
  };
  std::string version = secret_field(".metadata.resourceVersion");
  std::optional<std::string> ca = base::Base64Decode(secret_field(".data.ca\\.crt"));
  REQUIRE(ca.has_value());
  CHECK(Contains(*ca, "BEGIN CERTIFICATE"));
  std::string bundle = suite.k().MustRun({"get", "validatingwebhookconfiguration",
                                          "tephra-it-" + suite.id() + "-admission-jobs-validate",
                                          "-o", "jsonpath={.webhooks[0].clientConfig.caBundle}"});
  CHECK(base::Base64Decode(bundle) == ca);

  Replica& second = suite.Start(kDefaultPaths);
  CHECK(secret_field(".metadata.resourceVersion") == version);
  std::string ca_file = "/tmp/tephra-admission-it-" + suite.id() + "-ca.crt";
  std::ofstream(ca_file) << *ca;
  CommandResult tls = RunCommand({"curl", "-sS", "--max-time", "5", "--cacert", ca_file,
                                  "https://127.0.0.1:" + std::to_string(second.port) + "/healthz"});
  ::unlink(ca_file.c_str());
  INFO(tls.err);
  CHECK(tls.out == "ok");

  // Damage the Secret: the replicas watch it and repair it at once, keeping the CA.
  suite.k().MustRun({"patch", "secret", "-n", suite.suite_namespace(), suite.secret(),
                     "--type=json", "-p", R"([{"op":"remove","path":"/data/tls.crt"}])"});
  CHECK(Eventually([&] { return !secret_field(".data.tls\\.crt").empty(); },
                   std::chrono::seconds(10)));
  CHECK(base::Base64Decode(secret_field(".data.ca\\.crt")) == ca);

  // Point the hooks at the second replica and stop the first: requests keep being answered.
  suite.RegisterWebhooks(second.port, kDefaultPaths);
  first.process->Signal(SIGTERM);
  CHECK(first.process->Wait(std::chrono::seconds(15)) == 0);
  suite.WaitUntilCalled(ns);
  CHECK(Contains(second.Log(), "/jobs/validate CREATE Job " + ns + "/probe"));
}

TEST_CASE("With the daemon gone Job creates fail closed, pods in kube-system are unaffected") {
  Suite suite;
  const std::string paths = kDefaultPaths + ",/pods/validate";
  auto [replica, ns] = suite.Serve(paths);
  // kube-system carries the label too: only the hooks' own exclusion keeps its pods out.
  suite.Label("namespace", "kube-system");
  const std::string pod = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p",
      "annotations":{"volcano.sh/jdb-min-available":"0"}},
      "spec":{"schedulerName":"volcano","containers":[{"name":"c","image":"busybox"}]}})";
  CommandResult bad_pod = suite.k().Run({"create", "-n", ns, "--dry-run=server", "-f", "-"}, pod);
  CHECK(Contains(bad_pod.err,
                 "admission webhook \"validatepod.volcano.sh\" denied the request: "
                 "metadata.annotations[volcano.sh/jdb-min-available]: must be a "
                 "positive integer or a percentage from 1% to 99%, not \"0\""));

  replica.process->Signal(SIGKILL);
  REQUIRE(replica.process->Wait(std::chrono::seconds(10)) >= 0);
  const std::string job = R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job",
      "metadata":{"name":"j"},"spec":{"tasks":[{"name":"a","replicas":1,
      "template":{"spec":{"containers":[{"name":"c","image":"i"}]}}}]}})";
  CommandResult job_create =
      suite.k().Run({"create", "-n", ns, "--dry-run=server", "-f", "-"}, job);
  INFO(job_create.err);
  CHECK_FALSE(job_create.ok());
  CHECK(Contains(job_create.err, "failed calling webhook \"mutatejob.volcano.sh\""));
  CHECK_FALSE(suite.k().Run({"create", "-n", ns, "--dry-run=server", "-f", "-"}, pod).ok());
  CommandResult system_pod =
      suite.k().Run({"create", "-n", "kube-system", "--dry-run=server", "-f", "-"}, pod);
  INFO(system_pod.err);
  CHECK(system_pod.ok());
}

}  // namespace
}  // namespace tephra::testing
