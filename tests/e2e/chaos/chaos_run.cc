// chaos_run: the three Tephra daemons (two replicas of the controller manager and the
// scheduler, one admission webhook) against a real control plane, a seeded mixed workload of
// gang Jobs, and seeded faults: SIGKILL of any replica or of the leader, kube-apiserver stopped
// for 10-30 s, etcd compaction, the webhook down for a while, a burst of pods. The invariant
// checker samples the cluster throughout; the run fails on any violation, on a Job that does
// not end as its policies imply, or on a fault kind never injected. Usage: README.md.
#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <glog/logging.h>

#include "api/core.h"
#include "api/kinds.h"
#include "api/labels.h"
#include "kube/config.h"
#include "kube/informer.h"
#include "tests/e2e/chaos/cluster_view.h"
#include "tests/e2e/chaos/daemons.h"
#include "tests/e2e/chaos/report.h"
#include "tests/e2e/chaos/stats.h"
#include "tests/e2e/chaos/workload.h"
#include "tests/support/cluster.h"
#include "tests/support/process.h"

namespace tephra::chaos {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::ClusterEnv;
using testing::Kubectl;

const std::string kSource = TEPHRA_SOURCE_DIR;
const std::string kSuiteNamespace = "tephra-system";

struct Options {
  uint64_t seed = 1;
  int duration = 180;  // seconds of faults
  int jobs = 120;
  int nodes = 6;
  std::string node_cpu = "8";
  int burst_pods = 1000;
  int fault_gap_min = 8, fault_gap_max = 20;  // seconds between faults
  int grace = 60;                             // seconds a contradiction may last
  int settle = 300;                           // seconds for jobs to finish after the faults
  int sample_ms = 2000;
  int memory_interval = 10;  // seconds
  int lease_seconds = 8;
  std::string faults = "all";  // comma list of kinds, or all
  std::string report;          // also write the report here
  std::string memory_csv;      // memory samples (seconds,daemon,replica,incarnation,kib)
};

double Since(Clock::time_point start, Clock::time_point t = Clock::now()) {
  return std::chrono::duration<double>(t - start).count();
}

class ChaosRun {
 public:
  explicit ChaosRun(Options o)
      : o_(std::move(o)),
        rng_(o_.seed),
        kubectl_(ClusterEnv::Get().kubeconfig),
        id_(testing::RandomSuffix(5)),
        ns_("chaos-" + id_),
        scheduler_("tephra-chaos-" + id_) {}

  int Run();

 private:
  void Setup();
  void StartDaemons();
  void RegisterWebhooks();
  void Cleanup();
  std::shared_ptr<kube::Client> Connect(const std::string& kubeconfig, double qps);

  // Threads.
  void Submitter();
  void Sampler();
  void Supervisor();
  void WatchBinds();

  // Faults.
  std::vector<std::string> SelectedKinds() const;
  std::vector<std::string> PlanFaults();
  FaultRecord Begin(std::string kind) {
    FaultRecord f;
    f.kind = std::move(kind);
    f.at = Since(start_);
    return f;
  }
  FaultRecord Inject(const std::string& kind);
  FaultRecord KillReplica(DaemonGroup& g, bool leader);
  std::string LeaseRbac() const;
  // The chart release the run's admission objects belong to (a name with "tephra" in it, so
  // the chart names its objects after the release alone).
  std::string Release() const { return "tephra-" + ns_; }
  FaultRecord StopApiServer();
  FaultRecord CompactUnderWatches();
  FaultRecord WebhookDown();
  FaultRecord Burst();
  void WaitHealthy(seconds timeout);

  bool Outcomes(std::vector<std::string>* problems);
  // On failure: what the API server holds for the jobs that ended wrong, printed, and the
  // namespace's whole state kept in the log directory.
  void DumpProblemJobs();
  int Report(bool outcomes_ok, const std::vector<std::string>& problems);
  void Log(const std::string& line) {
    std::lock_guard<std::mutex> l(log_mu_);
    std::cerr << "[chaos " << FormatFixed(Since(start_)) << "s] " << line << std::endl;
  }

  Options o_;
  std::mt19937_64 rng_;
  Kubectl kubectl_;
  std::string id_, ns_, scheduler_;
  std::string dir_;
  std::string admission_rbac_;
  std::vector<std::string> queues_, priority_classes_, nodes_;
  std::shared_ptr<kube::Client> client_;
  Clock::time_point start_ = Clock::now();
  std::atomic<bool> stop_{false};
  std::mutex log_mu_;

  std::mutex daemons_mu_;  // replicas are started and killed by the fault loop and the supervisor
  DaemonGroup cm_, sched_, adm_;
  uint16_t adm_port_ = 0, adm_health_port_ = 0;
  std::map<std::string, int> unplanned_exits_;

  std::vector<JobPlan> plans_;
  std::mutex submit_mu_;
  std::set<std::string> submitted_;
  std::map<std::string, std::string> rejected_;  // job -> error that was not transient
  std::atomic<int> submit_retries_{0};

  std::mutex check_mu_;
  InvariantChecker checker_{seconds(45)};
  std::vector<Violation> violations_;
  std::atomic<int> samples_{0}, failed_samples_{0};

  std::mutex binds_mu_;
  std::vector<Clock::time_point> binds_;

  std::vector<FaultRecord> faults_;
  size_t job_problems_ = 0;
  std::vector<std::string> problem_jobs_;  // names, from the last Outcomes()
  int bursts_ = 0;
  std::vector<MemorySample> memory_;
};

std::shared_ptr<kube::Client> ChaosRun::Connect(const std::string& kubeconfig, double qps) {
  StatusOr<kube::RestConfig> cfg = kube::LoadKubeconfig({kubeconfig, ""});
  if (!cfg.ok()) throw std::runtime_error(cfg.status().ToString());
  cfg->qps = qps;
  cfg->burst = static_cast<int>(qps * 2);
  StatusOr<std::shared_ptr<kube::Client>> c = kube::Client::FromConfig(*cfg);
  if (!c.ok()) throw std::runtime_error(c.status().ToString());
  return *c;
}

// Leases in the run's namespace for the controller-manager and scheduler identities.
std::string ChaosRun::LeaseRbac() const {
  return R"({"apiVersion":"v1","kind":"List","items":[
    {"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"chaos-leases","namespace":")" +
         ns_ +
         R"("},"rules":[{"apiGroups":["coordination.k8s.io"],"resources":["leases"],"verbs":["get","create","update"]}]},
    {"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"chaos-leases","namespace":")" +
         ns_ +
         R"("},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"chaos-leases"},
     "subjects":[{"kind":"ServiceAccount","name":"tephra-controller-manager","namespace":")" +
         kSuiteNamespace +
         R"("},{"kind":"ServiceAccount","name":"tephra-scheduler","namespace":")" +
         kSuiteNamespace + R"("}]}]})";
}

void ChaosRun::Setup() {
  dir_ = "/tmp/tephra-chaos-" + id_;
  std::filesystem::create_directories(dir_);
  checker_ = InvariantChecker(seconds(o_.grace));
  client_ = Connect(ClusterEnv::Get().kubeconfig, 300);
  kubectl_.ApplyShared({"-f", kSource + "/crds/"});
  kubectl_.MustRun({"wait", "--for=condition=Established", "--timeout=60s",
                    "crd/jobs.batch.volcano.sh", "crd/podgroups.scheduling.volcano.sh",
                    "crd/queues.scheduling.volcano.sh", "crd/commands.bus.volcano.sh"});
  kubectl_.Run({"create", "namespace", kSuiteNamespace});  // AlreadyExists is fine
  // The chart's RBAC for the daemons' identities (tephra-system service accounts), without the
  // chart's lease Role: this run's leases live in its own namespace (a Role below).
  for (const char* templ :
       {"templates/rbac-controller-manager.yaml", "templates/rbac-scheduler.yaml"}) {
    kubectl_.MustRun({"apply", "-f", "-"},
                     testing::RenderChart("tephra", kSuiteNamespace, templ,
                                          {"--set", "leaderElection.enabled=false"}));
  }
  // The admission identity's RBAC and certificate Secret, as a chart release named after the run.
  admission_rbac_ =
      testing::RenderChart(Release(), kSuiteNamespace, "templates/rbac-admission.yaml",
                           {"--set", "admission.serviceAccount.name=tephra-admission"});
  kubectl_.MustRun({"create", "namespace", ns_});
  kubectl_.MustRun({"label", "namespace", ns_, "tephra.dev/chaos=" + id_});
  kubectl_.MustRun({"apply", "-f", "-"}, admission_rbac_);
  kubectl_.MustRun({"apply", "-f", "-"}, LeaseRbac());

  std::string list = R"({"apiVersion":"v1","kind":"List","items":[)";
  for (int i = 0; i < o_.nodes; ++i) {
    nodes_.push_back(ns_ + "-node-" + std::to_string(i));
    list +=
        std::string(i ? "," : "") + R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")" +
        nodes_.back() +
        R"(","annotations":{"kwok.x-k8s.io/node":"fake"},"labels":{"type":"kwok","tephra.dev/chaos-pool":")" +
        id_ + R"("}},"status":{"allocatable":{"cpu":")" + o_.node_cpu +
        R"(","memory":"64Gi","pods":"110"},"capacity":{"cpu":")" + o_.node_cpu +
        R"(","memory":"64Gi","pods":"110"}}})";
  }
  for (int i = 0; i < 3; ++i) {
    queues_.push_back(ns_ + "-q" + std::to_string(i));
    list +=
        R"(,{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","metadata":{"name":")" +
        queues_.back() + R"(","labels":{"tephra.dev/chaos":")" + id_ + R"("}},"spec":{"weight":)" +
        std::to_string(1 << i) + R"(,"reclaimable":true}})";
  }
  for (auto [name, value] : {std::pair{"high", 1000}, std::pair{"low", 10}}) {
    priority_classes_.push_back(ns_ + "-" + name);
    list += R"(,{"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":")" +
            priority_classes_.back() + R"("},"value":)" + std::to_string(value) + "}";
  }
  kubectl_.MustRun({"create", "-f", "-"}, list + "]}");
  bool ready = testing::Eventually(
      [&] {
        auto r = kubectl_.Run(
            {"get", "nodes", "-l", "tephra.dev/chaos-pool=" + id_, "-o",
             R"(jsonpath={range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end})"});
        return r.ok() && std::count(r.out.begin(), r.out.end(), 'T') == o_.nodes;
      },
      seconds(90), milliseconds(500));
  if (!ready) throw std::runtime_error("kwok nodes did not become Ready");
}

void ChaosRun::StartDaemons() {
  const ClusterEnv& env = ClusterEnv::Get();
  std::string lease = std::to_string(o_.lease_seconds) + "s";
  std::string renew = std::to_string(o_.lease_seconds * 2 / 3) + "s";
  auto elect = [&](const std::string& name) {
    return std::vector<std::string>{"--leader-elect=true",
                                    "--leader-elect-resource-namespace=" + ns_,
                                    "--leader-elect-resource-name=" + name,
                                    "--leader-elect-lease-duration=" + lease,
                                    "--leader-elect-renew-deadline=" + renew,
                                    "--leader-elect-retry-period=1s"};
  };
  cm_ = {"controller-manager", ns_, "cm-" + id_, {}};
  sched_ = {"scheduler", ns_, "sched-" + id_, {}};
  adm_ = {"admission", "", "", {}};
  for (int i = 0; i < 2; ++i) {
    std::vector<std::string> cm{CONTROLLER_MANAGER_PATH,
                                "--kubeconfig=" + env.kubeconfig_controller_manager,
                                "--namespace=" + ns_,
                                "--queue-label-selector=tephra.dev/chaos=" + id_,
                                "--scheduler-name=" + scheduler_,
                                "--default-queue=" + queues_[0],
                                "--healthz-address=0",
                                "--kube-api-qps=100",
                                "--kube-api-burst=200",
                                "-v=1"};
    for (auto& a : elect(cm_.lease_name)) cm.push_back(a);
    cm_.replicas.push_back(
        std::make_unique<Replica>(cm, dir_ + "/controller-manager-" + std::to_string(i) + ".log"));
    std::vector<std::string> sc{TEPHRA_SCHEDULER_PATH,
                                "--kubeconfig=" + env.kubeconfig_scheduler,
                                "--scheduler-name=" + scheduler_,
                                "--node-selector=tephra.dev/chaos-pool=" + id_,
                                "--queue-label-selector=tephra.dev/chaos=" + id_,
                                "--default-queue=" + queues_[0],
                                "--listen-address=127.0.0.1:0",
                                "--schedule-period=500ms",
                                "-v=1"};
    for (auto& a : elect(sched_.lease_name)) sc.push_back(a);
    sched_.replicas.push_back(
        std::make_unique<Replica>(sc, dir_ + "/scheduler-" + std::to_string(i) + ".log"));
  }
  adm_port_ = testing::FreeLoopbackPort();
  adm_health_port_ = testing::FreeLoopbackPort();
  adm_.replicas.push_back(std::make_unique<Replica>(
      std::vector<std::string>{TEPHRA_ADMISSION_PATH, "--kubeconfig=" + env.kubeconfig_admission,
                               "--address=127.0.0.1", "--port=" + std::to_string(adm_port_),
                               "--healthz-address=127.0.0.1:" + std::to_string(adm_health_port_),
                               "--extra-san=IP:127.0.0.1", "--namespace=" + kSuiteNamespace,
                               "--secret-name=" + Release() + "-admission-certs",
                               "--cert-dir=" + dir_ + "/certs",
                               "--webhook-config-name-prefix=" + Release() + "-admission", "-v=1"},
      dir_ + "/admission-0.log"));
  std::lock_guard<std::mutex> l(daemons_mu_);
  for (DaemonGroup* g : {&cm_, &sched_, &adm_}) {
    for (auto& r : g->replicas) r->Start();
  }
}

void ChaosRun::RegisterWebhooks() {
  bool ready = testing::Eventually(
      [&] {
        return testing::RunCommand(
                   {"curl", "-sS", "--max-time", "2",
                    "http://127.0.0.1:" + std::to_string(adm_health_port_) + "/readyz"})
                   .out == "ok";
      },
      seconds(60));
  if (!ready)
    throw std::runtime_error("tephra-admission not ready:\n" + adm_.replicas[0]->LogTail());
  // The chart's webhook configurations in local mode, scoped to this run's namespace and queues.
  kubectl_.MustRun(
      {"apply", "-f", "-"},
      testing::RenderChart(
          Release(), kSuiteNamespace, "templates/webhooks.yaml",
          {"--set", "local.enabled=true", "--set", "admission.port=" + std::to_string(adm_port_),
           "--set-json",
           R"(admission.webhook.namespaceSelector={"matchLabels":{"tephra.dev/chaos":")" + id_ +
               R"("}})",
           "--set-json",
           R"(admission.webhook.queueObjectSelector={"matchExpressions":[{"key":"tephra.dev/chaos","operator":"Exists"}]})"}));
  // The hooks answer once the daemon has written their caBundle: a dry-run Job naming a missing
  // queue is then denied by the webhook (without it the API server would accept it).
  ready = testing::Eventually(
      [&] {
        auto r = kubectl_.Run(
            {"-n", ns_, "create", "--dry-run=server", "-f", "-"},
            R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{"name":"probe"},)"
            R"("spec":{"queue":"no-such-queue","tasks":[{"replicas":1,"template":{"spec":)"
            R"({"containers":[{"name":"c","image":"busybox"}]}}}]}})");
        return !r.ok() && r.err.find("no-such-queue") != std::string::npos;
      },
      seconds(60), milliseconds(500));
  if (!ready) throw std::runtime_error("webhooks never answered:\n" + adm_.replicas[0]->LogTail());
}

void ChaosRun::Cleanup() {
  // Fail-closed hooks go before the daemon serving them.
  kubectl_.Run({"delete", "mutatingwebhookconfigurations,validatingwebhookconfigurations", "-l",
                "app.kubernetes.io/instance=" + Release(), "--ignore-not-found"});
  {
    std::lock_guard<std::mutex> l(daemons_mu_);
    for (DaemonGroup* g : {&cm_, &sched_, &adm_}) {
      for (auto& r : g->replicas) r->Kill();
    }
  }
  kubectl_.Run({"delete", "namespace", ns_, "--wait=false", "--ignore-not-found"});
  for (const auto& n : nodes_)
    kubectl_.Run({"delete", "node", n, "--wait=false", "--ignore-not-found"});
  for (const auto& q : queues_)
    kubectl_.Run({"delete", "queue", q, "--wait=false", "--ignore-not-found"});
  for (const auto& p : priority_classes_)
    kubectl_.Run({"delete", "priorityclass", p, "--ignore-not-found"});
  if (!admission_rbac_.empty())
    kubectl_.Run({"delete", "-f", "-", "--ignore-not-found"}, admission_rbac_);
  kubectl_.Run({"-n", kSuiteNamespace, "delete", "secret", Release() + "-admission-certs",
                "--ignore-not-found"});
}

// Submits each planned Job at its time; transient failures (API server or webhook down) are
// retried as a user's tooling would, a denial is recorded.
void ChaosRun::Submitter() {
  for (const JobPlan& p : plans_) {
    while (!stop_ && Since(start_) < p.submit_at) std::this_thread::sleep_for(milliseconds(100));
    while (!stop_) {
      StatusOr<std::string> r = client_->Create(api::kJobs, ns_, p.manifest);
      if (r.ok() || r.status().code() == StatusCode::kAlreadyExists) {
        std::lock_guard<std::mutex> l(submit_mu_);
        submitted_.insert(p.name);
        break;
      }
      const Status st = r.status();
      const StatusCode c = st.code();
      bool transient = c == StatusCode::kUnavailable || c == StatusCode::kDeadlineExceeded ||
                       c == StatusCode::kTooManyRequests || c == StatusCode::kInternal ||
                       st.message().find("failed calling webhook") != std::string::npos;
      if (!transient) {
        std::lock_guard<std::mutex> l(submit_mu_);
        rejected_[p.name] = st.ToString();
        break;
      }
      ++submit_retries_;
      std::this_thread::sleep_for(seconds(1));
    }
  }
}

void ChaosRun::Sampler() {
  ViewScope scope{ns_, "tephra.dev/chaos-pool=" + id_, "tephra.dev/chaos=" + id_};
  auto reader = Connect(ClusterEnv::Get().kubeconfig, 100);
  while (!stop_) {
    StatusOr<Snapshot> s = ReadSnapshot(*reader, scope);
    if (s.ok()) {
      ++samples_;
      std::lock_guard<std::mutex> l(check_mu_);
      for (Violation& v : checker_.Check(*s)) {
        Log("VIOLATION " + v.rule + " " + v.object + ": " + v.detail);
        violations_.push_back(std::move(v));
      }
    } else {
      ++failed_samples_;  // the API server is down: nothing to judge
    }
    std::this_thread::sleep_for(milliseconds(o_.sample_ms));
  }
}

// Restarts replicas that exited by themselves, as a kubelet would (a daemon that lost its lease
// exits on purpose), and samples their memory.
void ChaosRun::Supervisor() {
  Clock::time_point next_memory = Clock::now();
  while (!stop_) {
    {
      std::lock_guard<std::mutex> l(daemons_mu_);
      for (DaemonGroup* g : {&cm_, &sched_, &adm_}) {
        for (auto& r : g->replicas) {
          if (std::optional<int> code = r->Reap()) {
            ++unplanned_exits_[g->kind + " exit " + std::to_string(*code)];
            Log(g->kind + " exited with " + std::to_string(*code) + "; restarting");
          }
          if (!r->running() && !r->held_down) r->Start();
        }
      }
      if (Clock::now() >= next_memory) {
        next_memory += seconds(o_.memory_interval);
        for (DaemonGroup* g : {&cm_, &sched_, &adm_}) {
          for (size_t i = 0; i < g->replicas.size(); ++i) {
            if (auto kib = g->replicas[i]->RssKiB()) {
              memory_.push_back({Since(start_), g->kind, static_cast<int>(i),
                                 g->replicas[i]->incarnation(), *kib});
            }
          }
        }
      }
    }
    std::this_thread::sleep_for(milliseconds(500));
  }
}

// Records when pods of the workload namespace get bound: recovery is the time from the end of
// a fault to the next bind. An informer, so a watch broken by a fault relists and goes on.
void ChaosRun::WatchBinds() {
  kube::InformerOptions io;
  io.resource = kube::resources::kPods;
  io.namespace_ = ns_;
  io.decoder = [](const json::Value& v) -> StatusOr<kube::ObjectPtr> {
    auto p = api::DecodePod(v);
    if (!p.ok()) return p.status();
    return kube::ObjectPtr(*p);
  };
  io.backoff_max = milliseconds(2000);
  kube::Informer informer(Connect(ClusterEnv::Get().kubeconfig, 100), io);
  auto bound = [](const kube::ObjectPtr& o) {
    return o && !kube::As<api::Pod>(o)->spec.node_name.empty();
  };
  kube::EventHandlers h;
  h.on_add = [&](const kube::ObjectPtr& o) {
    if (!bound(o) || !informer.HasSynced()) return;
    std::lock_guard<std::mutex> l(binds_mu_);
    binds_.push_back(Clock::now());
  };
  h.on_update = [&](const kube::ObjectPtr& old_o, const kube::ObjectPtr& new_o) {
    if (bound(old_o) || !bound(new_o)) return;
    std::lock_guard<std::mutex> l(binds_mu_);
    binds_.push_back(Clock::now());
  };
  informer.AddEventHandler(h);
  informer.Start();
  while (!stop_) std::this_thread::sleep_for(milliseconds(200));
  informer.Stop();
}

std::vector<std::string> ChaosRun::SelectedKinds() const {
  std::vector<std::string> all{"kill-controller-manager",
                               "kill-scheduler",
                               "kill-admission",
                               "kill-leader-controller-manager",
                               "kill-leader-scheduler",
                               "apiserver-stop",
                               "etcd-compact",
                               "webhook-down",
                               "burst"};
  std::vector<std::string> kinds;
  for (const auto& k : all) {
    if (o_.faults == "all" || ("," + o_.faults + ",").find("," + k + ",") != std::string::npos)
      kinds.push_back(k);
  }
  return kinds;
}

std::vector<std::string> ChaosRun::PlanFaults() {
  std::vector<std::string> kinds = SelectedKinds();
  // Every kind once, in seeded order, then seeded picks; a single burst per run unless the run
  // is long (a burst is the heaviest load).
  std::vector<std::string> plan = kinds;
  std::shuffle(plan.begin(), plan.end(), rng_);
  for (int i = 0; i < 400 && !kinds.empty(); ++i) {
    std::string k = kinds[std::uniform_int_distribution<size_t>(0, kinds.size() - 1)(rng_)];
    if (k == "burst" && o_.duration < 1200) continue;
    plan.push_back(k);
  }
  return plan;
}

void ChaosRun::WaitHealthy(seconds timeout) {
  testing::Eventually([&] { return client_->Get(kube::resources::kNamespaces, "", ns_).ok(); },
                      timeout, milliseconds(250));
}

FaultRecord ChaosRun::KillReplica(DaemonGroup& g, bool leader) {
  FaultRecord f;
  f.kind = std::string(leader ? "kill-leader-" : "kill-") + g.kind;
  f.at = Since(start_);
  int victim = -1;
  std::string old_holder;
  if (leader) {
    // The leader as the lease names it; wait a little if a hand-over is still under way.
    testing::Eventually(
        [&] {
          std::lock_guard<std::mutex> l(daemons_mu_);
          victim = g.LeaderIndex(*client_);
          return victim >= 0;
        },
        seconds(30), milliseconds(250));
    old_holder = g.Holder(*client_);
    if (victim < 0) {
      f.note = "no leader found";
      f.end = Since(start_);
      return f;
    }
  } else {
    victim = std::uniform_int_distribution<int>(0, static_cast<int>(g.replicas.size()) - 1)(rng_);
  }
  Replica& r = *g.replicas[static_cast<size_t>(victim)];
  {
    std::lock_guard<std::mutex> l(daemons_mu_);
    r.held_down = true;
    r.Kill();
  }
  Clock::time_point killed = Clock::now();
  f.note = "replica " + std::to_string(victim);
  if (leader) {
    bool moved = testing::Eventually(
        [&] {
          std::string h = g.Holder(*client_);
          return !h.empty() && h != old_holder;
        },
        seconds(120), milliseconds(100));
    if (moved)
      f.handover = Since(killed);
    else
      f.note += "; lease never moved";
  } else {
    std::this_thread::sleep_for(milliseconds(std::uniform_int_distribution<int>(500, 5000)(rng_)));
  }
  {
    std::lock_guard<std::mutex> l(daemons_mu_);
    r.held_down = false;
    r.Start();
  }
  f.end = Since(start_);
  return f;
}

FaultRecord ChaosRun::StopApiServer() {
  FaultRecord f = Begin("apiserver-stop");
  int down = std::uniform_int_distribution<int>(10, 30)(rng_);
  Status s = testing::StopComponent("kube-apiserver");
  if (!s.ok()) f.note = s.ToString();
  std::this_thread::sleep_for(seconds(down));
  Status st = testing::StartComponent("kube-apiserver");
  if (!st.ok()) f.note += " " + st.ToString();
  WaitHealthy(seconds(120));
  f.end = Since(start_);
  f.note += "down " + std::to_string(down) + "s";
  return f;
}

FaultRecord ChaosRun::WebhookDown() {
  FaultRecord f = Begin("webhook-down");
  int down = std::uniform_int_distribution<int>(10, 20)(rng_);
  Replica& r = *adm_.replicas[0];
  {
    std::lock_guard<std::mutex> l(daemons_mu_);
    r.held_down = true;
    r.Kill();
  }
  std::this_thread::sleep_for(seconds(down));
  {
    std::lock_guard<std::mutex> l(daemons_mu_);
    r.held_down = false;
    r.Start();
  }
  f.end = Since(start_);
  f.note = "down " + std::to_string(down) + "s";
  return f;
}

// A burst of plain pods in one PodGroup (minMember 1), created by 4 writers; they finish after
// a second, so they pass through the pool without holding it.
FaultRecord ChaosRun::Burst() {
  FaultRecord f = Begin("burst");
  // Earlier bursts' finished pods go first, as their owner would clean up: a soak's cluster
  // should not grow burst after burst, or the daemons' memory grows with it.
  kubectl_.Run({"-n", ns_, "delete", "pods", "-l", "tephra.dev/burst",
                "--field-selector=status.phase=Succeeded", "--wait=false"});
  std::string group = "burst-" + std::to_string(bursts_++);
  Status s =
      client_
          ->Create(
              api::kPodGroups, ns_,
              R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":{"name":")" +
                  group + R"("},"spec":{"minMember":1,"queue":")" + queues_[0] + R"("}})")
          .status();
  std::atomic<int> created{0}, failed{0};
  std::vector<std::thread> writers;
  for (int w = 0; w < 4; ++w) {
    writers.emplace_back([&, w] {
      for (int i = w; i < o_.burst_pods && !stop_; i += 4) {
        std::string pod =
            R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + group + "-" +
            std::to_string(i) + R"(","labels":{"tephra.dev/burst":")" + group +
            R"("},"annotations":{"scheduling.k8s.io/group-name":")" + group +
            R"(","sim.tephra.dev/result":"Succeeded","sim.tephra.dev/duration":"1s"}},)"
            R"("spec":{"schedulerName":")" +
            scheduler_ +
            R"(","restartPolicy":"Never","containers":[{"name":"c","image":"busybox",)"
            R"("resources":{"requests":{"cpu":"100m","memory":"64Mi"}}}]}})";
        for (int attempt = 0; attempt < 5; ++attempt) {
          auto r = client_->Create(kube::resources::kPods, ns_, pod);
          if (r.ok() || r.status().code() == StatusCode::kAlreadyExists) {
            ++created;
            break;
          }
          if (attempt == 4) ++failed;
          std::this_thread::sleep_for(milliseconds(500));
        }
      }
    });
  }
  for (auto& t : writers) t.join();
  f.end = Since(start_);
  f.note = std::to_string(created.load()) + " pods in " + FormatFixed(f.end - f.at) + "s" +
           (failed ? ", " + std::to_string(failed.load()) + " failed" : "") +
           (s.ok() ? "" : " " + s.ToString());
  return f;
}

FaultRecord ChaosRun::Inject(const std::string& kind) {
  if (kind == "kill-controller-manager") return KillReplica(cm_, false);
  if (kind == "kill-scheduler") return KillReplica(sched_, false);
  if (kind == "kill-admission") return KillReplica(adm_, false);
  if (kind == "kill-leader-controller-manager") return KillReplica(cm_, true);
  if (kind == "kill-leader-scheduler") return KillReplica(sched_, true);
  if (kind == "apiserver-stop") return StopApiServer();
  if (kind == "webhook-down") return WebhookDown();
  if (kind == "burst") return Burst();
  return CompactUnderWatches();
}

// Compaction alone ends no open watch; the API server is killed around it so that every
// daemon resumes its watches from a compacted revision: 410 Gone from etcd for resources
// served without the watch cache, "too old resource version" from the fresh cache for others.
FaultRecord ChaosRun::CompactUnderWatches() {
  FaultRecord f = Begin("etcd-compact");
  std::vector<std::string> errors;
  for (Status s : {testing::StopComponent("kube-apiserver", /*hard_kill=*/true),
                   testing::CompactEtcd(), testing::StartComponent("kube-apiserver")}) {
    if (!s.ok()) errors.push_back(s.ToString());
  }
  WaitHealthy(seconds(120));
  f.end = Since(start_);
  for (const auto& e : errors) f.note += (f.note.empty() ? "" : "; ") + e;
  return f;
}

// Whether every planned Job ended as its policies imply; `problems` says which did not.
bool ChaosRun::Outcomes(std::vector<std::string>* problems) {
  problems->clear();
  problem_jobs_.clear();
  std::lock_guard<std::mutex> l1(submit_mu_), l2(check_mu_);
  for (const JobPlan& p : plans_) {
    if (rejected_.count(p.name)) {
      problems->push_back(p.name + ": rejected: " + rejected_[p.name]);
      continue;
    }
    auto it = checker_.jobs().find(p.name);
    if (!submitted_.count(p.name) || it == checker_.jobs().end()) {
      problems->push_back(p.name + ": never seen");
      continue;
    }
    const auto& r = it->second;
    bool ok = p.expected == "deleted" ? r.gone : (!r.gone && r.phase == p.expected);
    if (!ok) {
      problem_jobs_.push_back(p.name);
      problems->push_back(p.name + " (" + p.kind + "): expected " + p.expected + ", is " +
                          (r.gone            ? "deleted"
                           : r.phase.empty() ? "<no phase>"
                                             : r.phase));
    }
  }
  return problems->empty();
}

int ChaosRun::Run() {
  std::cerr << "chaos: seed " << o_.seed << " (replay: --seed=" << o_.seed << ")" << std::endl;
  try {
    Setup();
    StartDaemons();
    RegisterWebhooks();
  } catch (...) {
    Cleanup();
    throw;
  }
  WorkloadOptions wo;
  wo.jobs = o_.jobs;
  wo.spread_seconds = std::max(10.0, o_.duration * 0.8);
  wo.namespace_ = ns_;
  wo.scheduler_name = scheduler_;
  wo.queues = queues_;
  wo.priority_classes = priority_classes_;
  plans_ = PlanJobs(wo, rng_);
  std::vector<std::string> fault_plan = PlanFaults();
  start_ = Clock::now();
  Log("namespace " + ns_ + ", " + std::to_string(plans_.size()) + " jobs, logs in " + dir_);

  std::thread supervisor([&] { Supervisor(); });
  std::thread binds([&] { WatchBinds(); });
  std::thread sampler([&] { Sampler(); });
  std::thread submitter([&] { Submitter(); });

  // Faults, one at a time, until the duration is used up (the first after a warm-up gap).
  std::set<std::string> injected;
  const size_t kinds = SelectedKinds().size();
  for (const std::string& kind : fault_plan) {
    int gap = std::uniform_int_distribution<int>(o_.fault_gap_min, o_.fault_gap_max)(rng_);
    // The duration may run over until every kind has had its turn, by at most half again.
    bool all_seen = injected.size() == kinds;
    if (Since(start_) + gap >= o_.duration * (all_seen ? 1.0 : 1.5)) break;
    std::this_thread::sleep_for(seconds(gap));
    Log("fault " + kind);
    FaultRecord f = Inject(kind);
    Log("fault " + kind + " over after " + FormatFixed(f.end - f.at) + "s" +
        (f.handover ? ", hand-over " + FormatFixed(*f.handover) + "s" : "") +
        (f.note.empty() ? "" : " (" + f.note + ")"));
    {
      std::lock_guard<std::mutex> l(check_mu_);
      checker_.NoteDisruption(start_ + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(f.end)));
    }
    faults_.push_back(f);
    injected.insert(kind);
  }
  Log("faults over; waiting up to " + std::to_string(o_.settle) + "s for the jobs to finish");
  submitter.join();
  std::vector<std::string> problems;
  Clock::time_point settle_end = Clock::now() + seconds(o_.settle);
  while (Clock::now() < settle_end && !Outcomes(&problems)) std::this_thread::sleep_for(seconds(2));
  // One more full sample after the last change, then stop.
  std::this_thread::sleep_for(milliseconds(o_.sample_ms * 2));
  bool outcomes_ok = Outcomes(&problems);
  job_problems_ = problems.size();
  for (const auto& k : SelectedKinds()) {
    if (!injected.count(k))
      problems.push_back("fault kind " + k + " was never injected (run longer)");
  }
  stop_ = true;
  sampler.join();
  binds.join();
  supervisor.join();
  // On failure the daemons' log tails come first and the report last, so that a log cut to
  // its ends still shows what failed.
  bool ok = outcomes_ok && problems.empty() && violations_.empty();
  if (!ok) {
    DumpProblemJobs();
    for (DaemonGroup* g : {&cm_, &sched_, &adm_}) {
      for (auto& r : g->replicas) std::cerr << "---- " << r->log() << "\n" << r->LogTail(20);
    }
    std::cerr << std::flush;
  }
  int code = Report(ok, problems);
  Cleanup();
  if (code == 0) std::filesystem::remove_all(dir_);  // the daemons' logs matter only on failure
  return code;
}

// The lines of `text` that start with one of `prefixes` (a table's header and its rows).
std::string LinesStartingWith(const std::string& text, const std::vector<std::string>& prefixes) {
  std::istringstream in(text);
  std::string out, line;
  while (std::getline(in, line)) {
    for (const auto& p : prefixes) {
      if (line.rfind(p, 0) == 0) {
        out += line + "\n";
        break;
      }
    }
  }
  return out;
}

void ChaosRun::DumpProblemJobs() {
  auto get = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"-n", ns_, "get"});
    testing::CommandResult r = kubectl_.Run(args);
    return r.ok() ? r.out : r.err;
  };
  std::ofstream(dir_ + "/final-state.yaml")
      << get({"jobs.batch.volcano.sh,podgroups.scheduling.volcano.sh,pods,events", "-o", "yaml"});
  std::ofstream(dir_ + "/nodes.txt")
      << kubectl_.Run({"describe", "nodes", "-l", "tephra.dev/chaos-pool=" + id_}).out;
  const size_t shown = std::min<size_t>(problem_jobs_.size(), 3);
  for (size_t i = 0; i < shown; ++i) {
    const std::string& name = problem_jobs_[i];
    std::cerr << "---- " << name << ": status\n"
              << get({"jobs.batch.volcano.sh", name, "-o", "jsonpath={.status}"}) << "\n"
              << "---- " << name << ": PodGroups\n"
              << LinesStartingWith(
                     get({"podgroups.scheduling.volcano.sh", "-o",
                          "custom-columns=NAME:.metadata.name,PHASE:.status.phase,"
                          "MIN:.spec.minMember,CONDITIONS:.status.conditions[*].message"}),
                     {"NAME", name + "-"})
              << "---- " << name << ": pods\n"
              << get({"pods", "-o", "wide", "-l", std::string(api::kJobNameKey) + "=" + name});
  }
  std::cerr << "(the namespace's objects are in " << dir_ << "/final-state.yaml, the nodes in "
            << dir_ << "/nodes.txt)" << std::endl;
}

int ChaosRun::Report(bool ok, const std::vector<std::string>& problems) {
  RunSummary s;
  s.seed = o_.seed;
  s.seconds = Since(start_);
  s.namespace_ = ns_;
  std::vector<double> binds;
  {
    std::lock_guard<std::mutex> l(binds_mu_);
    for (Clock::time_point t : binds_) binds.push_back(Since(start_, t));
  }
  s.faults = faults_;
  FillRecovery(std::move(binds), &s.faults);
  s.daemon_exits = unplanned_exits_;
  s.jobs_planned = plans_.size();
  s.jobs_submitted = submitted_.size();
  s.jobs_as_expected = plans_.size() - std::min(plans_.size(), job_problems_);
  s.create_retries = submit_retries_.load();
  {
    std::lock_guard<std::mutex> l(check_mu_);
    for (const auto& [name, rec] : checker_.jobs()) {
      ++s.jobs_by_end[rec.gone ? "deleted" : rec.phase.empty() ? "<none>" : rec.phase];
    }
  }
  s.samples = samples_.load();
  s.unreadable_samples = failed_samples_.load();
  s.violations = violations_;
  s.memory = memory_;
  s.problems = problems;
  bool pass = ok && violations_.empty();
  std::string report = RenderReport(s, pass);
  std::cout << report << std::flush;
  if (!o_.report.empty()) std::ofstream(o_.report) << report;
  if (!o_.memory_csv.empty()) std::ofstream(o_.memory_csv) << MemoryCsv(memory_);
  return pass ? 0 : 1;
}

Options ParseFlags(int argc, char** argv) {
  Options o;
  if (const char* s = std::getenv("TEPHRA_CHAOS_SEED"); s != nullptr && *s) o.seed = std::stoull(s);
  std::map<std::string, int*> ints{{"duration", &o.duration},
                                   {"jobs", &o.jobs},
                                   {"nodes", &o.nodes},
                                   {"burst-pods", &o.burst_pods},
                                   {"fault-gap-min", &o.fault_gap_min},
                                   {"fault-gap-max", &o.fault_gap_max},
                                   {"grace", &o.grace},
                                   {"settle", &o.settle},
                                   {"sample-ms", &o.sample_ms},
                                   {"memory-interval", &o.memory_interval},
                                   {"lease-seconds", &o.lease_seconds}};
  std::map<std::string, std::string*> strings{{"node-cpu", &o.node_cpu},
                                              {"faults", &o.faults},
                                              {"report", &o.report},
                                              {"memory-csv", &o.memory_csv}};
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    size_t eq = a.find('=');
    if (a.rfind("--", 0) != 0 || eq == std::string::npos)
      throw std::invalid_argument("expected --flag=value: " + a);
    std::string k = a.substr(2, eq - 2), v = a.substr(eq + 1);
    if (k == "seed") {
      o.seed = v == "random" ? std::random_device{}() : std::stoull(v);
    } else if (ints.count(k)) {
      *ints[k] = std::stoi(v);
    } else if (strings.count(k)) {
      *strings[k] = v;
    } else {
      throw std::invalid_argument("unknown flag --" + k);
    }
  }
  return o;
}

}  // namespace
}  // namespace tephra::chaos

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  // The kube library logs every broken watch; during a run those are the faults themselves.
  FLAGS_logtostderr = true;
  FLAGS_minloglevel = google::GLOG_ERROR;
  google::InitGoogleLogging(argv[0]);
  try {
    tephra::chaos::ChaosRun run(tephra::chaos::ParseFlags(argc, argv));
    return run.Run();
  } catch (const std::exception& e) {
    std::cerr << "chaos: " << e.what() << std::endl;
    return 2;
  }
}
