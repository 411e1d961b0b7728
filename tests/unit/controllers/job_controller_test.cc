// The job controller's reconcile passes against the in-memory FakeApiServer: PodGroup before
// pods, pods only once admitted, status through the status subresource, stale caches (409),
// server errors and AlreadyExists, out-of-sync marking before deletion, stale events, targeted
// restarts that keep the PodGroup, and a policy timeout on a FakeClock.
#include "controllers/job/job_controller.h"

#include <atomic>
#include <functional>
#include <optional>
#include <thread>

#include <catch2/catch.hpp>
#include <rapidjson/document.h>

#include "api/kinds.h"
#include "api/labels.h"
#include "controllers/framework/commands.h"
#include "metrics/metrics.h"
#include "tests/fakes/fake_apiserver.h"

namespace tephra::controllers::job {
namespace {

using tephra::testing::FakeApiServer;

const std::string kJobsPath = "/apis/batch.volcano.sh/v1alpha1/namespaces/ns/jobs";
const std::string kPodsPath = "/api/v1/namespaces/ns/pods";
const std::string kPodGroupsPath = "/apis/scheduling.volcano.sh/v1beta1/namespaces/ns/podgroups";
const std::string kCommandsPath = "/apis/bus.volcano.sh/v1alpha1/namespaces/ns/commands";
const std::string kQueuesPath = "/apis/scheduling.volcano.sh/v1beta1/queues";

std::string QueueJson(const std::string& name) {
  return R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","metadata":{"name":")" +
         name + R"("},"spec":{"weight":1},"status":{"state":"Open"}})";
}

std::string CommandJson(const std::string& name, const std::string& action, const std::string& job,
                        const std::string& uid) {
  return R"({"apiVersion":"bus.volcano.sh/v1alpha1","kind":"Command","metadata":{"name":")" + name +
         R"("},"action":")" + action +
         R"(","target":{"apiVersion":"batch.volcano.sh/v1alpha1",)"
         R"("kind":"Job","name":")" +
         job + R"(","uid":")" + uid + R"("}})";
}

bool Soon(const std::function<bool()>& f) {
  for (int i = 0; i < 400; ++i) {
    if (f()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return f();
}

std::string JobJson(int replicas, const std::string& extra = "") {
  return R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{"name":"j",)"
         R"("namespace":"ns"},"spec":{"minAvailable":)" +
         std::to_string(replicas) + extra + R"(,"tasks":[{"name":"w","replicas":)" +
         std::to_string(replicas) +
         R"(,"template":{"spec":{"containers":[{"name":"c","image":"x"}]}}}]}})";
}

std::string Field(const std::string& text, std::initializer_list<const char*> path) {
  json::Document doc;
  if (!json::Parse(text, &doc).ok()) return "";
  json::Errors errors;
  json::Reader r(&doc, &errors);
  for (const char* p : path) r = r[p];
  return r.is_string() ? r.String() : (r.present() ? json::Write(*r.value()) : "");
}

kube::ApiResponse StatusResponse(int code, const std::string& reason, const std::string& message) {
  kube::ApiResponse r;
  r.status = code;
  r.content_type = "application/json";
  r.body = R"({"kind":"Status","apiVersion":"v1","status":"Failure","reason":")" + reason +
           R"(","message":")" + message + R"(","code":)" + std::to_string(code) + "}";
  return r;
}

// Forwards to the fake, except that the next `lose_pod_creations` pod creations succeed on the
// server but answer 409 AlreadyExists, as a retry does after a response was lost, and that
// `fault` (when set before the controller starts) may answer a request with an error instead.
class LossyTransport : public kube::Transport {
 public:
  explicit LossyTransport(std::shared_ptr<FakeApiServer> fake) : fake_(std::move(fake)) {}
  StatusOr<kube::ApiResponse> RoundTrip(const kube::ApiRequest& request) override {
    if (fault) {
      if (std::optional<kube::ApiResponse> error = fault(request)) return *error;
    }
    const bool pod_creation = request.method == "POST" &&
                              request.target.find("/pods") != std::string::npos &&
                              request.target.find("/binding") == std::string::npos;
    if (pod_creation) {
      // How many pod creations are open at once, each held open for pod_creation_delay.
      int now = ++open_pod_creations;
      for (int most = most_open_pod_creations.load();
           now > most && !most_open_pod_creations.compare_exchange_weak(most, now);) {
      }
      std::this_thread::sleep_for(pod_creation_delay);
      --open_pod_creations;
    }
    auto r = fake_->RoundTrip(request);
    if (pod_creation && lose_pod_creations > 0 && r.ok() && r->status == 201) {
      --lose_pod_creations;
      return StatusResponse(409, "AlreadyExists", "pods already exists");
    }
    return r;
  }
  StatusOr<std::unique_ptr<kube::ResponseStream>> Stream(const kube::ApiRequest& request) override {
    return fake_->Stream(request);
  }
  std::function<std::optional<kube::ApiResponse>(const kube::ApiRequest&)> fault;
  std::atomic<int> lose_pod_creations{0};
  std::chrono::milliseconds pod_creation_delay{0};
  std::atomic<int> open_pod_creations{0}, most_open_pod_creations{0};

 private:
  std::shared_ptr<FakeApiServer> fake_;
};

struct Harness {
  Harness()
      : fake(std::make_shared<FakeApiServer>()), transport(std::make_shared<LossyTransport>(fake)) {
    kube::ClientOptions co;
    co.qps = 0;
    co.max_retries = 0;
    client = std::make_shared<kube::Client>(transport, co);
    informers = std::make_unique<kube::InformerFactory>(client);
    ctx.client = client;
    ctx.informers = informers.get();
    ctx.clock = &clock;
    ctx.metrics = &registry;
    ctx.options.namespace_ = "ns";
    fake->Put(kQueuesPath, QueueJson("default"));
  }
  ~Harness() {
    controller.Stop();
    informers->Stop();
  }
  void Start() {
    REQUIRE(controller.Initialize(ctx).ok());
    informers->Start();
    REQUIRE(informers->WaitForCacheSync(std::chrono::seconds(5)));
    jobs = informers->For(api::kJobs, nullptr, NamespacedScope(ctx.options));
    pods = informers->For(kube::resources::kPods, nullptr, NamespacedScope(ctx.options));
    pgs = informers->For(api::kPodGroups, nullptr, NamespacedScope(ctx.options));
  }
  // Waits until the informer shows the server's current version of the object.
  void Caught(const std::shared_ptr<kube::Informer>& informer, const std::string& path,
              const std::string& key) {
    REQUIRE(Soon([&] {
      auto server = fake->Object(path, key);
      auto cached = informer->store().Get(key);
      if (!server) return cached == nullptr;
      return cached &&
             cached->metadata.resource_version == Field(*server, {"metadata", "resourceVersion"});
    }));
  }
  void CaughtUp() {
    Caught(jobs, kJobsPath, "ns/j");
    REQUIRE(Soon([&] { return pods->store().size() == fake->Count(kPodsPath); }));
    for (const auto& key : pods->store().Keys()) Caught(pods, kPodsPath, key);
    REQUIRE(Soon([&] { return pgs->store().size() == fake->Count(kPodGroupsPath); }));
    for (const auto& key : pgs->store().Keys()) Caught(pgs, kPodGroupsPath, key);
  }
  Status Sync() {
    CaughtUp();
    return controller.Sync("ns/j");
  }
  std::string JobStatus(std::initializer_list<const char*> path) {
    auto job = fake->Object(kJobsPath, "ns/j");
    REQUIRE(job.has_value());
    std::vector<const char*> full = {"status"};
    full.insert(full.end(), path.begin(), path.end());
    json::Document doc;
    REQUIRE(json::Parse(*job, &doc).ok());
    json::Errors errors;
    json::Reader r(&doc, &errors);
    for (const char* p : full) r = r[p];
    return r.is_string() ? r.String() : (r.present() ? json::Write(*r.value()) : "");
  }
  std::string PodGroupName() {
    return "j-" + Field(*fake->Object(kJobsPath, "ns/j"), {"metadata", "uid"});
  }
  void AdmitPodGroup() {
    auto pg = fake->Object(kPodGroupsPath, "ns/" + PodGroupName());
    REQUIRE(pg.has_value());
    std::string admitted;
    REQUIRE(json::ApplyMergePatch(*pg, R"({"status":{"phase":"Inqueue"}})", &admitted).ok());
    fake->Put(kPodGroupsPath, admitted);
  }
  void SetPodPhase(const std::string& name, const std::string& phase, int exit_code = 0) {
    auto pod = fake->Object(kPodsPath, "ns/" + name);
    REQUIRE(pod.has_value());
    std::string patch = R"({"status":{"phase":")" + phase +
                        R"(","containerStatuses":[{"name":"c",)"
                        R"("state":{"terminated":{"exitCode":)" +
                        std::to_string(exit_code) + "}}}]}}";
    if (phase == "Running") patch = R"({"status":{"phase":"Running"}})";
    std::string updated;
    REQUIRE(json::ApplyMergePatch(*pod, patch, &updated).ok());
    fake->Put(kPodsPath, updated);
  }
  // Stores a Command and waits until the controller's informer has it.
  void AddCommand(const std::string& json) {
    size_t before = fake->Count(kCommandsPath);
    fake->Put(kCommandsPath, json);
    auto commands = informers->For(api::kCommands, nullptr, NamespacedScope(ctx.options));
    REQUIRE(Soon([&] { return commands->store().size() == before + 1; }));
  }
  size_t CountRequests(const std::string& prefix) {
    size_t n = 0;
    for (const auto& r : fake->requests()) n += r.rfind(prefix, 0) == 0 ? 1u : 0u;
    return n;
  }

  std::shared_ptr<FakeApiServer> fake;
  std::shared_ptr<LossyTransport> transport;
  std::shared_ptr<kube::Client> client;
  std::unique_ptr<kube::InformerFactory> informers;
  base::FakeClock clock;
  metrics::Registry registry;
  ControllerContext ctx;
  JobController controller;
  std::shared_ptr<kube::Informer> jobs, pods, pgs;
};

TEST_CASE("a new job gets status Pending and its PodGroup, and no pods until admitted") {
  Harness h;
  h.fake->Put(kJobsPath, JobJson(2));
  h.Start();
  REQUIRE(h.Sync().ok());
  CHECK(h.JobStatus({"state", "phase"}) == "Pending");
  CHECK(h.JobStatus({"minAvailable"}) == "2");
  auto pg = h.fake->Object(kPodGroupsPath, "ns/" + h.PodGroupName());
  REQUIRE(pg.has_value());
  CHECK(Field(*pg, {"spec", "minMember"}) == "2");
  CHECK(Field(*pg, {"spec", "queue"}) == "default");
  CHECK(Field(*pg, {"metadata", "ownerReferences"}).find("\"controller\":true") !=
        std::string::npos);
  REQUIRE(h.Sync().ok());
  CHECK(h.fake->Count(kPodsPath) == 0);

  h.AdmitPodGroup();
  REQUIRE(h.Sync().ok());
  CHECK(h.fake->Count(kPodsPath) == 2);
  CHECK(h.JobStatus({"pending"}) == "2");
  h.SetPodPhase("j-w-0", "Running");
  h.SetPodPhase("j-w-1", "Running");
  REQUIRE(h.Sync().ok());
  CHECK(h.JobStatus({"state", "phase"}) == "Running");
  CHECK(h.JobStatus({"running"}) == "2");
  // Nothing changed: the next pass writes nothing.
  size_t puts = h.CountRequests("PUT");
  REQUIRE(h.Sync().ok());
  CHECK(h.CountRequests("PUT") == puts);
}

TEST_CASE("pod creations in flight stay within max_pod_writes_in_flight") {
  Harness h;
  h.ctx.options.max_pod_writes_in_flight = 2;
  h.transport->pod_creation_delay = std::chrono::milliseconds(20);
  h.fake->Put(kJobsPath, JobJson(10));
  h.Start();
  REQUIRE(h.Sync().ok());
  h.AdmitPodGroup();
  REQUIRE(h.Sync().ok());
  CHECK(h.fake->Count(kPodsPath) == 10);
  // Ten creations on up to 16 threads would all be open at once without the bound.
  CHECK(h.transport->most_open_pod_creations.load() == 2);
}

TEST_CASE("a status write from a stale cache conflicts and is redone from fresh state") {
  Harness h;
  h.fake->Put(kJobsPath, JobJson(1));
  h.Start();
  h.fake->FailNext(1, 409, "PUT");
  Status s = h.Sync();
  CHECK(s.code() == StatusCode::kConflict);
  CHECK(h.JobStatus({"state", "phase"}).empty());
  REQUIRE(h.Sync().ok());
  CHECK(h.JobStatus({"state", "phase"}) == "Pending");
}

TEST_CASE("server errors fail the pass, AlreadyExists pods count as created") {
  Harness h;
  h.fake->Put(kJobsPath, JobJson(3));
  h.Start();
  REQUIRE(h.Sync().ok());
  h.AdmitPodGroup();
  h.transport->lose_pod_creations = 2;
  REQUIRE(h.Sync().ok());
  CHECK(h.fake->Count(kPodsPath) == 3);
  CHECK(h.JobStatus({"pending"}) == "3");
  // Two pods vanish; recreating the first one meets a server error.
  REQUIRE(h.fake->Remove(kPodsPath, "j-w-1"));
  REQUIRE(h.fake->Remove(kPodsPath, "j-w-2"));
  h.CaughtUp();
  h.fake->FailNext(1, 500, "POST");
  Status s = h.controller.Sync("ns/j");
  CHECK_FALSE(s.ok());
  CHECK(s.code() != StatusCode::kConflict);
  // The retry completes the work.
  REQUIRE(h.Sync().ok());
  CHECK(h.fake->Count(kPodsPath) == 3);
}

TEST_CASE("an AbortJob command marks pods out-of-sync before deleting them") {
  Harness h;
  h.fake->Put(kJobsPath, JobJson(2));
  h.Start();
  REQUIRE(h.Sync().ok());
  h.AdmitPodGroup();
  REQUIRE(h.Sync().ok());
  h.SetPodPhase("j-w-0", "Running");
  h.SetPodPhase("j-w-1", "Running");
  REQUIRE(h.Sync().ok());
  std::string uid = Field(*h.fake->Object(kJobsPath, "ns/j"), {"metadata", "uid"});
  h.AddCommand(CommandJson("stop", "AbortJob", "j", uid));
  REQUIRE(h.Sync().ok());
  CHECK(h.fake->Count(kCommandsPath) == 0);  // consumed
  CHECK(h.fake->Count(kPodsPath) == 0);
  CHECK(h.JobStatus({"state", "phase"}) == "Aborting");
  CHECK(h.JobStatus({"version"}) == "1");
  // Each pod: PATCH (out-of-sync annotation) strictly before its DELETE.
  auto requests = h.fake->requests();
  for (const std::string pod : {"j-w-0", "j-w-1"}) {
    size_t patch = requests.size(), del = requests.size();
    for (size_t i = 0; i < requests.size(); ++i) {
      if (requests[i].find("/pods/" + pod) == std::string::npos) continue;
      if (requests[i].rfind("PATCH", 0) == 0 && patch == requests.size()) patch = i;
      if (requests[i].rfind("DELETE", 0) == 0) del = i;
    }
    CHECK(patch < del);
    CHECK(del < requests.size());
  }
  // The PodGroup went with the full kill; once the pods are gone the job is Aborted.
  CHECK(h.fake->Count(kPodGroupsPath) == 0);
  REQUIRE(h.Sync().ok());
  CHECK(h.JobStatus({"state", "phase"}) == "Aborted");
}

TEST_CASE("a RestartPod policy kills one pod and keeps the PodGroup") {
  Harness h;
  h.fake->Put(kJobsPath,
              JobJson(2, R"(,"policies":[{"event":"PodFailed","action":"RestartPod"}])"));
  h.Start();
  REQUIRE(h.Sync().ok());
  h.AdmitPodGroup();
  REQUIRE(h.Sync().ok());
  h.SetPodPhase("j-w-0", "Running");
  h.SetPodPhase("j-w-1", "Running");
  REQUIRE(h.Sync().ok());
  REQUIRE(h.JobStatus({"state", "phase"}) == "Running");
  h.SetPodPhase("j-w-1", "Failed", 2);
  REQUIRE(h.Sync().ok());
  CHECK(h.JobStatus({"state", "phase"}) == "Restarting");
  CHECK(h.JobStatus({"retryCount"}) == "1");
  CHECK(h.JobStatus({"version"}).empty());  // 0: a targeted restart is not a new generation
  CHECK(h.fake->Object(kPodsPath, "ns/j-w-1") == std::nullopt);
  CHECK(h.fake->Object(kPodsPath, "ns/j-w-0").has_value());
  CHECK(h.fake->Count(kPodGroupsPath) == 1);
  // Back through Pending: the pod is recreated under the same PodGroup.
  REQUIRE(h.Sync().ok());
  CHECK(h.JobStatus({"state", "phase"}) == "Pending");
  REQUIRE(h.Sync().ok());
  CHECK(h.fake->Object(kPodsPath, "ns/j-w-1").has_value());
  CHECK(h.fake->Count(kPodGroupsPath) == 1);
}

TEST_CASE("events of pods from an earlier job incarnation are ignored") {
  Harness h;
  h.fake->Put(kJobsPath, JobJson(1, R"(,"policies":[{"event":"*","action":"AbortJob"}])"));
  // A leftover pod of a deleted job of the same name: same labels, another owner UID.
  h.fake->Put(
      kPodsPath,
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"j-w-0","namespace":"ns",)"
      R"("labels":{"volcano.sh/job-name":"j","volcano.sh/task-spec":"w","volcano.sh/task-index":"0"},)"
      R"("ownerReferences":[{"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","name":"j",)"
      R"("uid":"an-earlier-job","controller":true}]},"spec":{"containers":[{"name":"c","image":"x"}]},)"
      R"("status":{"phase":"Running"}})");
  h.Start();
  REQUIRE(h.Sync().ok());
  h.AdmitPodGroup();
  REQUIRE(h.Sync().ok());
  h.SetPodPhase("j-w-0", "Failed", 1);
  REQUIRE(h.Sync().ok());
  CHECK(h.JobStatus({"state", "phase"}) == "Pending");
  CHECK(h.JobStatus({"failed"}).empty());  // not counted either
}

TEST_CASE("a PodPending timeout restarts the pod when the clock says so") {
  Harness h;
  h.fake->Put(
      kJobsPath,
      JobJson(1, R"(,"policies":[{"event":"PodPending","action":"RestartPod","timeout":"30s"}])"));
  h.Start();
  REQUIRE(h.Sync().ok());
  h.AdmitPodGroup();
  REQUIRE(h.Sync().ok());
  REQUIRE(h.fake->Object(kPodsPath, "ns/j-w-0").has_value());
  std::string first_uid = Field(*h.fake->Object(kPodsPath, "ns/j-w-0"), {"metadata", "uid"});
  // The pod's add event registers the delayed restart; nothing happens before 30 s.
  REQUIRE(h.Sync().ok());
  h.clock.Advance(std::chrono::seconds(29));
  REQUIRE(h.Sync().ok());
  CHECK(Field(*h.fake->Object(kPodsPath, "ns/j-w-0"), {"metadata", "uid"}) == first_uid);
  CHECK(h.JobStatus({"retryCount"}).empty());
  h.clock.Advance(std::chrono::seconds(2));
  REQUIRE(h.Sync().ok());
  CHECK(h.fake->Object(kPodsPath, "ns/j-w-0") == std::nullopt);
  CHECK(h.JobStatus({"state", "phase"}) == "Restarting");
  CHECK(h.JobStatus({"retryCount"}) == "1");
}

TEST_CASE("an unknown plugin fails the job before anything is created") {
  Harness h;
  h.fake->Put(kJobsPath, JobJson(1, R"(,"plugins":{"horovod":[]})"));
  h.Start();
  REQUIRE(h.Sync().ok());
  CHECK(h.JobStatus({"state", "phase"}) == "Failed");
  CHECK(h.JobStatus({"state", "reason"}) == "InvalidJob");
  CHECK(h.JobStatus({"state", "message"})
            .find("spec.plugins.horovod: unknown job plugin \"horovod\"") != std::string::npos);
  CHECK(h.fake->Count(kPodGroupsPath) == 0);
}

TEST_CASE("a job that bypassed admission with a dependsOn cycle fails without a PodGroup or pods") {
  Harness h;
  h.fake->Put(kJobsPath,
              R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{"name":"j",)"
              R"("namespace":"ns"},"spec":{"tasks":[)"
              R"({"name":"a","replicas":1,"dependsOn":{"name":["b"]},)"
              R"("template":{"spec":{"containers":[{"name":"c","image":"x"}]}}},)"
              R"({"name":"b","replicas":1,"dependsOn":{"name":["a"]},)"
              R"("template":{"spec":{"containers":[{"name":"c","image":"x"}]}}}]}})");
  h.Start();
  REQUIRE(h.Sync().ok());
  CHECK(h.JobStatus({"state", "phase"}) == "Failed");
  CHECK(h.JobStatus({"state", "reason"}) == "InvalidJob");
  CHECK(h.JobStatus({"state", "message"}).find("dependsOn forms a cycle") != std::string::npos);
  // Failed is final: later passes create nothing either.
  REQUIRE(h.Sync().ok());
  CHECK(h.JobStatus({"state", "phase"}) == "Failed");
  CHECK(h.fake->Count(kPodGroupsPath) == 0);
  CHECK(h.fake->Count(kPodsPath) == 0);
}

TEST_CASE("a job whose queue does not exist waits without a PodGroup and starts once it does") {
  Harness h;
  h.fake->Put(kJobsPath, JobJson(1, R"(,"queue":"later")"));
  h.Start();
  REQUIRE(h.Sync().ok());
  CHECK(h.JobStatus({"state", "phase"}) == "Pending");
  CHECK(h.JobStatus({"state", "reason"}) == "QueueNotFound");
  CHECK(h.JobStatus({"state", "message"}).find("spec.queue: queue \"later\" does not exist") !=
        std::string::npos);
  CHECK(h.fake->Count(kPodGroupsPath) == 0);

  h.fake->Put(kQueuesPath, QueueJson("later"));
  auto queues = h.informers->For(api::kQueues, nullptr);
  REQUIRE(Soon([&] { return queues->store().Get("later") != nullptr; }));
  REQUIRE(h.Sync().ok());
  CHECK(h.fake->Count(kPodGroupsPath) == 1);
  CHECK(h.JobStatus({"state", "phase"}) == "Pending");
  CHECK(h.JobStatus({"state", "reason"}).empty());
  CHECK(h.JobStatus({"state", "message"}).empty());
}

TEST_CASE("a Command for a job that does not exist is deleted once its grace period is over") {
  Harness h;
  h.Start();
  h.AddCommand(CommandJson("stop-ghost", "AbortJob", "ghost", "u-ghost"));
  REQUIRE(h.controller.Sync("ns/ghost").ok());
  CHECK(h.fake->Count(kCommandsPath) == 1);  // the job may still be on its way
  h.clock.Advance(kCommandTargetGrace);
  REQUIRE(h.controller.Sync("ns/ghost").ok());
  CHECK(h.fake->Count(kCommandsPath) == 0);
}

TEST_CASE("a Command whose job appears within the grace period is carried out") {
  Harness h;
  h.Start();
  h.AddCommand(CommandJson("stop-soon", "AbortJob", "j", "u-earlier"));
  REQUIRE(h.controller.Sync("ns/j").ok());
  CHECK(h.fake->Count(kCommandsPath) == 1);
  h.fake->Put(kJobsPath, JobJson(1));
  REQUIRE(h.Sync().ok());
  CHECK(h.fake->Count(kCommandsPath) == 0);
  const std::string phase = h.JobStatus({"state", "phase"});
  CHECK((phase == "Aborting" || phase == "Aborted"));
}

TEST_CASE("a task that depends on another starts once that task is ready") {
  Harness h;
  h.fake->Put(
      kJobsPath,
      R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{"name":"j",)"
      R"("namespace":"ns"},"spec":{"minAvailable":1,"tasks":[)"
      R"({"name":"db","replicas":1,"template":{"spec":{"containers":[{"name":"c","image":"x"}]}}},)"
      R"({"name":"app","replicas":2,"minAvailable":0,"dependsOn":{"name":["db"]},)"
      R"("template":{"spec":{"containers":[{"name":"c","image":"x"}]}}}]}})");
  h.Start();
  REQUIRE(h.Sync().ok());
  h.AdmitPodGroup();
  REQUIRE(h.Sync().ok());
  CHECK(h.fake->Object(kPodsPath, "ns/j-db-0").has_value());
  CHECK(h.fake->Count(kPodsPath) == 1);
  // Running but not ready is not enough.
  h.SetPodPhase("j-db-0", "Running");
  REQUIRE(h.Sync().ok());
  CHECK(h.fake->Count(kPodsPath) == 1);
  auto pod = h.fake->Object(kPodsPath, "ns/j-db-0");
  std::string ready;
  REQUIRE(json::ApplyMergePatch(
              *pod, R"({"status":{"containerStatuses":[{"name":"c","ready":true}]}})", &ready)
              .ok());
  h.fake->Put(kPodsPath, ready);
  REQUIRE(h.Sync().ok());
  CHECK(h.fake->Count(kPodsPath) == 3);
}

// A job named `name` in namespace ns with one task of one replica.
std::string NamedJob(const std::string& name) {
  return R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{"name":")" + name +
         R"(","namespace":"ns"},"spec":{"minAvailable":1,"tasks":[{"name":"w","replicas":1,)"
         R"("template":{"spec":{"containers":[{"name":"c","image":"x"}]}}}]}})";
}

TEST_CASE("a job retries after write conflicts and a failed pass however many other jobs fail") {
  Harness h;
  h.ctx.clock = &base::RealClock();  // the workers' queue waits in real time
  h.ctx.options.max_requeue_num = -1;
  // Thirty jobs whose every pass fails, as in a namespace being deleted: their PodGroups are
  // refused. Each failure is retried through the controller's rate limiter. The faults never
  // reach the fake, so the hook counts them.
  std::atomic<bool> conflicts{false}, fail_once{false};
  std::atomic<int> doomed_attempts{0}, victim_writes{0};
  h.transport->fault = [&](const kube::ApiRequest& r) -> std::optional<kube::ApiResponse> {
    if (r.method == "POST" && r.target.find("/podgroups") != std::string::npos &&
        r.body.find(R"("name":"doomed-)") != std::string::npos) {
      ++doomed_attempts;
      return StatusResponse(403, "Forbidden", "namespace ns is being terminated");
    }
    if (r.method != "PUT" || r.target.find("/jobs/victim/status") == std::string::npos) {
      return std::nullopt;
    }
    ++victim_writes;
    // The victim's status writes: conflicts while a second writer is busy, then one failure.
    if (conflicts) return StatusResponse(409, "Conflict", "the object has been modified");
    if (fail_once.exchange(false)) return StatusResponse(503, "ServiceUnavailable", "try again");
    return std::nullopt;
  };
  h.Start();
  h.controller.Start();
  for (int i = 0; i < 30; ++i) h.fake->Put(kJobsPath, NamedJob("doomed-" + std::to_string(i)));
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));

  conflicts = true;
  h.fake->Put(kJobsPath, NamedJob("victim"));
  // The victim's passes meet nothing but conflicts for a while; each is retried shortly.
  REQUIRE(Soon([&] { return victim_writes >= 3; }));
  fail_once = true;
  conflicts = false;
  const auto stopped = std::chrono::steady_clock::now();
  // Once the conflicts stop and one more pass has failed, the job gets its status within 2 s.
  bool written = false;
  while (!written && std::chrono::steady_clock::now() - stopped < std::chrono::seconds(2)) {
    auto job = h.fake->Object(kJobsPath, "ns/victim");
    written = job && Field(*job, {"status", "state", "phase"}) == "Pending";
    if (!written) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  INFO("status writes of the victim: " << victim_writes.load());
  CHECK(written);
  CHECK_FALSE(fail_once.load());
  // The doomed jobs were still failing the whole time.
  CHECK(doomed_attempts > 100);
}

}  // namespace
}  // namespace tephra::controllers::job
