#include "scheduler/app/scheduler.h"

#include <fstream>
#include <optional>
#include <sstream>
#include <sys/stat.h>
#include <tuple>

#include <glog/logging.h>

#include "api/codec.h"
#include "api/core.h"
#include "api/informers/informers.h"
#include "api/kinds.h"
#include "api/labels.h"
#include "api/scheduling.h"
#include "api/storage.h"
#include "api/topology.h"
#include "kube/meta/object.h"
#include "kube/meta/resource.h"
#include "scheduler/app/pod_decoders.h"
#include "scheduler/builtins.h"

namespace tephra::scheduler {
namespace {

// Marks PodGroups converted from scheduling.x-k8s.io so their status goes back there.
constexpr char kSourceAnnotation[] = "tephra.dev/podgroup-source";
// How often the scheduler looks for the scheduling.x-k8s.io CRD while it is not installed.
constexpr std::chrono::seconds kSchedPluginsProbePeriod{10};

// Decodes a storage object for the cache, keeping only what placement reads of its metadata:
// its annotations are fields now, and a claim's labels are never matched (a PV's are, by claim
// selectors and zones). 100,000 claims would otherwise keep every kubectl last-applied copy.
template <typename T>
kube::ObjectDecoder StorageDecoder(
    StatusOr<std::shared_ptr<T>> (*decode)(const json::Value&, const api::DecodeOptions&),
    bool keep_labels) {
  return api::InformerDecoder<T>([decode, keep_labels](const json::Value& v) {
    StatusOr<std::shared_ptr<T>> object = decode(v, {});
    if (object.ok()) {
      (*object)->metadata.annotations.clear();
      if (!keep_labels) (*object)->metadata.labels.clear();
    }
    return object;
  });
}

int64_t MtimeOf(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return -2;
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

}  // namespace

Scheduler::Scheduler(std::shared_ptr<kube::Client> client, SchedulerOptions options,
                     metrics::Registry* registry, kube::EventRecorder* events)
    : client_(client),
      options_(std::move(options)),
      registry_(registry),
      events_(events),
      cache_(CacheOptions{options_.scheduler_names, options_.default_queue}),
      interner_(std::make_shared<SpecInterner>()),
      informers_(client),
      recorder_({options_.explain_capacity, options_.keep_decision_snapshot}) {
  Status registered = RegisterBuiltins(plugins_);
  CHECK(registered.ok()) << registered.ToString();  // a duplicate builtin is a programming error
  auto conf = ParseSchedulerConf(DefaultSchedulerConfYaml(), plugins_.Names());
  CHECK(conf.ok()) << conf.status().ToString();
  conf_ = std::move(*conf);
  binder_ = std::make_unique<KubeBinder>(client_, cache_, events_, registry_, options_.binder);
  writer_ =
      std::make_unique<StatusWriter>(client_, &cache_, events_, registry_, options_.status_workers);
  if (registry_ != nullptr) {
    auto ms = metrics::ExponentialBuckets(1, 2, 16);
    e2e_ = &registry_->AddHistogram("volcano_e2e_scheduling_latency_milliseconds",
                                    "Duration of a whole scheduling cycle.", ms);
    open_ = &registry_->AddHistogram("volcano_open_session_duration_milliseconds",
                                     "Time to open a session.", ms);
    action_latency_ = &registry_->AddHistogramVec("volcano_action_scheduling_latency_milliseconds",
                                                  "Time spent in each action.", {"action"}, ms);
    attempts_ = &registry_->AddCounterVec("volcano_schedule_attempts_total",
                                          "Scheduling attempts by result.", {"result"});
    skipped_ = &registry_->AddCounter(
        "tephra_scheduler_sessions_skipped_total",
        "Periodic sessions not run because nothing changed since one that had nothing to do.");
    unschedulable_tasks_ = &registry_->AddGauge("volcano_unschedule_task_count",
                                                "Pending tasks left unplaced by the last cycle.");
    unschedulable_jobs_ = &registry_->AddGauge("volcano_unschedule_job_count",
                                               "Jobs with unplaced tasks after the last cycle.");
    registry_->AddGaugeFunc("tephra_scheduler_cache_pods", "Pods in the scheduler cache.",
                            [this] { return static_cast<double>(cache_.PodCount()); });
    registry_->AddGaugeFunc("tephra_scheduler_cache_nodes", "Nodes in the scheduler cache.",
                            [this] { return static_cast<double>(cache_.NodeCount()); });
    registry_->AddGaugeFunc("tephra_scheduler_interned_specs", "Distinct pod scheduling specs.",
                            [this] { return static_cast<double>(interner_->size()); });
    unsupported_ = &registry_->AddGaugeVec(
        "tephra_scheduler_conf_unsupported_plugins",
        "1 for each Volcano plugin or action the loaded configuration names that Tephra does not "
        "implement (left out).",
        {"kind", "name"});
    registry_->AddGaugeFunc(
        "tephra_scheduler_sched_plugins_podgroups_served",
        "1 once scheduling.x-k8s.io PodGroups are watched (their CRD is installed).",
        [this] { return sched_plugins_served_ ? 1.0 : 0.0; });
  }
}

Scheduler::~Scheduler() {
  Stop();
}

void Scheduler::Stop() {
  if (stopped_.exchange(true)) return;
  informers_.Stop();
  binder_->Stop();
  writer_->Stop();
}

std::chrono::steady_clock::time_point Scheduler::last_cycle() const {
  return std::chrono::steady_clock::time_point(std::chrono::nanoseconds(last_cycle_ns_.load()));
}

bool Scheduler::ReloadConfIfChanged() {
  if (options_.conf_file.empty()) return false;
  std::vector<std::string> warnings;
  {
    sync::MutexLock l(conf_mu_);
    if (!LoadConfIfChanged()) return false;
    warnings = conf_.Warnings();
    for (auto& p : plugins_.ArgumentProblems(conf_)) warnings.push_back(std::move(p));
    for (const auto& w : warnings) LOG(WARNING) << "scheduler: " << options_.conf_file << ": " << w;
    ShowUnsupported(conf_);
  }
  // The API call goes without the lock.
  if (!warnings.empty()) WarnOnConfigMap(warnings);
  return true;
}

bool Scheduler::LoadConfIfChanged() {
  int64_t mtime = MtimeOf(options_.conf_file);
  if (mtime == conf_mtime_) return false;
  conf_mtime_ = mtime;
  std::ifstream in(options_.conf_file);
  if (!in) {
    LOG(ERROR) << "scheduler: cannot read " << options_.conf_file
               << "; keeping the current configuration";
    return false;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  auto conf = ParseSchedulerConf(ss.str(), plugins_.Names());
  if (!conf.ok()) {
    LOG(ERROR) << "scheduler: " << options_.conf_file << " is invalid (" << conf.status().message()
               << "); keeping the current configuration";
    return false;
  }
  conf_ = std::move(*conf);
  std::string actions;
  for (const auto& a : conf_.actions) actions += (actions.empty() ? "" : ", ") + a;
  LOG(INFO) << "scheduler: loaded " << options_.conf_file << " (actions: " << actions << ")";
  return true;
}

void Scheduler::ShowUnsupported(const SchedulerConf& conf) {
  if (unsupported_ == nullptr) return;
  std::set<std::pair<std::string, std::string>> now;
  for (const auto& u : conf.unsupported) now.emplace(u.kind, u.name);
  for (const auto& [kind, name] : unsupported_shown_) {
    if (!now.count({kind, name})) unsupported_->WithLabels({kind, name}).Set(0);
  }
  for (const auto& [kind, name] : now) unsupported_->WithLabels({kind, name}).Set(1);
  unsupported_shown_ = std::move(now);
}

void Scheduler::WarnOnConfigMap(const std::vector<std::string>& warnings) {
  if (events_ == nullptr || options_.conf_configmap.empty()) return;
  // The Event names the ConfigMap by uid, so `kubectl describe configmap` shows it.
  const auto [ns, name] = kube::SplitObjectKey(options_.conf_configmap);
  StatusOr<std::string> body = client_->Get(kube::resources::kConfigMaps, ns, name);
  StatusOr<std::shared_ptr<kube::Object>> configmap =
      body.ok() ? api::DecodeTypedObjectText<kube::Object>(
                      *body, {}, "ConfigMap", [](const json::Reader&, kube::Object*) {})
                : StatusOr<std::shared_ptr<kube::Object>>(body.status());
  if (!configmap.ok()) {
    LOG(WARNING) << "scheduler: reading ConfigMap " << options_.conf_configmap
                 << " for its uid: " << configmap.status().ToString() << "; no Event";
    return;
  }
  std::string message;
  for (const auto& w : warnings) message += (message.empty() ? "" : "; ") + w;
  events_->Record(kube::ObjectReference::To(**configmap), kube::EventType::kWarning,
                  "UnsupportedSchedulerConf", message);
}

namespace {

// The labels an equality-only selector ("a=b,c==d") requires, so the queue the scheduler
// creates is one it selects; nullopt when the selector has other terms.
std::optional<std::map<std::string, std::string>> LabelsRequiredBy(const std::string& selector) {
  std::map<std::string, std::string> labels;
  std::stringstream terms(selector);
  for (std::string term; std::getline(terms, term, ',');) {
    size_t eq = term.find('=');
    if (eq == std::string::npos || eq == 0 || term[eq - 1] == '!' ||
        term.find('(') != std::string::npos) {
      return std::nullopt;
    }
    size_t value_at = term.compare(eq, 2, "==") == 0 ? eq + 2 : eq + 1;
    auto trim = [](std::string v) {
      v.erase(0, v.find_first_not_of(' '));
      v.erase(v.find_last_not_of(' ') + 1);
      return v;
    };
    labels[trim(term.substr(0, eq))] = trim(term.substr(value_at));
  }
  return labels;
}

}  // namespace

Status Scheduler::CheckSelectors() {
  kube::ListOptions probe;
  probe.limit = 1;
  for (const auto& [flag, resource, selector] :
       {std::tuple{"--node-selector", &kube::resources::kNodes, options_.node_selector},
        std::tuple{"--queue-label-selector", &api::kQueues, options_.queue_selector}}) {
    if (selector.empty()) continue;
    probe.label_selector = selector;
    StatusOr<kube::ListPage> page = client_->List(*resource, "", probe);
    if (!page.ok() && page.status().code() == StatusCode::kInvalidArgument) {
      return InvalidArgument(std::string(flag) + " \"" + selector +
                             "\": " + page.status().message());
    }
  }
  return Status::Ok();
}

Status Scheduler::EnsureQueue(const std::string& name, bool reclaimable,
                              const std::map<std::string, std::string>& labels) {
  StatusOr<std::string> got = client_->Get(api::kQueues, "", name);
  if (got.ok()) return Status::Ok();
  if (got.status().code() != StatusCode::kNotFound) return got.status();
  api::Queue queue;
  queue.api_version = std::string(api::kSchedulingApiVersion);
  queue.kind = std::string(api::kQueueKind);
  queue.metadata.name = name;
  queue.metadata.labels = labels;
  queue.spec.weight = 1;
  queue.spec.reclaimable = reclaimable;
  StatusOr<std::string> created = client_->Create(api::kQueues, "", api::EncodeQueue(queue));
  if (created.ok() || created.status().code() == StatusCode::kAlreadyExists) {
    LOG(INFO) << "scheduler: created queue " << name;
    return Status::Ok();
  }
  return created.status();
}

void Scheduler::RegisterInformers() {
  SchedulerCache* cache = &cache_;
  kube::InformerScope node_scope;
  node_scope.label_selector = options_.node_selector;
  informers_.For(kube::resources::kNodes, api::NodeDecoder(), node_scope)
      ->AddEventHandler(api::UpsertRemoveHandlers<api::Node>(
          [cache](auto node) { cache->UpsertNode(std::move(node)); },
          [cache](const api::Node& node) { cache->DeleteNode(node.metadata.name); }));
  informers_
      .For(kube::resources::kPods, PodInfoDecoder(interner_), {}, std::chrono::milliseconds(0),
           PodInfoProtobufDecoder(interner_))
      ->AddEventHandler(api::UpsertRemoveHandlers<PodInfo>(
          [cache](auto pod) { cache->UpsertPod(std::move(pod)); },
          [cache](const PodInfo& pod) { cache->DeletePod(pod); }));
  informers_.For(api::kPodGroups, api::PodGroupDecoder())
      ->AddEventHandler(api::UpsertRemoveHandlers<api::PodGroup>(
          [cache](auto pg) { cache->UpsertPodGroup(std::move(pg)); },
          [cache](const api::PodGroup& pg) {
            cache->DeletePodGroup(pg.metadata.namespace_, pg.metadata.name);
          }));
  kube::InformerScope queue_scope;
  queue_scope.label_selector = options_.queue_selector;
  informers_.For(api::kQueues, api::QueueDecoder(), queue_scope)
      ->AddEventHandler(api::UpsertRemoveHandlers<api::Queue>(
          [cache](auto queue) { cache->UpsertQueue(std::move(queue)); },
          [cache](const api::Queue& queue) { cache->DeleteQueue(queue.metadata.name); }));
  informers_.For(kube::resources::kPriorityClasses, api::PriorityClassDecoder())
      ->AddEventHandler(api::UpsertRemoveHandlers<api::PriorityClass>(
          [cache](auto pc) { cache->UpsertPriorityClass(std::move(pc)); },
          [cache](const api::PriorityClass& pc) { cache->DeletePriorityClass(pc.metadata.name); }));
  informers_.For(kube::resources::kNamespaces, api::NamespaceDecoder())
      ->AddEventHandler(api::UpsertRemoveHandlers<api::Namespace>(
          [cache](auto ns) { cache->UpsertNamespace(std::move(ns)); },
          [cache](const api::Namespace& ns) { cache->DeleteNamespace(ns.metadata.name); }));
  informers_.For(kube::resources::kPodDisruptionBudgets, api::InformerDecoder<PdbInfo>(DecodePdb))
      ->AddEventHandler(api::UpsertRemoveHandlers<PdbInfo>(
          [cache](auto pdb) { cache->UpsertPdb(std::move(pdb)); },
          [cache](const PdbInfo& pdb) { cache->DeletePdb(pdb.metadata.Key()); }));
  informers_
      .For(kube::resources::kResourceQuotas, api::InformerDecoder<QuotaInfo>(DecodeResourceQuota))
      ->AddEventHandler(api::UpsertRemoveHandlers<QuotaInfo>(
          [cache](auto quota) { cache->UpsertQuota(std::move(quota)); },
          [cache](const QuotaInfo& quota) { cache->DeleteQuota(quota.metadata.Key()); }));
  informers_
      .For(api::kHyperNodes, api::InformerDecoder<api::HyperNode>(
                                 [](const json::Value& v) { return api::DecodeHyperNode(v); }))
      ->AddEventHandler(api::UpsertRemoveHandlers<api::HyperNode>(
          [cache](auto hn) { cache->UpsertHyperNode(std::move(hn)); },
          [cache](const api::HyperNode& hn) { cache->DeleteHyperNode(hn.metadata.name); }));

  // Storage (docs/scheduler.md, "Storage").
  informers_
      .For(kube::resources::kPersistentVolumeClaims,
           StorageDecoder<api::PersistentVolumeClaim>(api::DecodePersistentVolumeClaim, false))
      ->AddEventHandler(api::UpsertRemoveHandlers<api::PersistentVolumeClaim>(
          [cache](auto claim) { cache->UpsertClaim(std::move(claim)); },
          [cache](const api::PersistentVolumeClaim& claim) {
            cache->DeleteClaim(claim.metadata.Key());
          }));
  informers_
      .For(kube::resources::kPersistentVolumes,
           StorageDecoder<api::PersistentVolume>(api::DecodePersistentVolume, true))
      ->AddEventHandler(api::UpsertRemoveHandlers<api::PersistentVolume>(
          [cache](auto volume) { cache->UpsertVolume(std::move(volume)); },
          [cache](const api::PersistentVolume& volume) {
            cache->DeleteVolume(volume.metadata.name);
          }));
  informers_
      .For(kube::resources::kStorageClasses,
           StorageDecoder<api::StorageClass>(api::DecodeStorageClass, false))
      ->AddEventHandler(api::UpsertRemoveHandlers<api::StorageClass>(
          [cache](auto klass) { cache->UpsertStorageClass(std::move(klass)); },
          [cache](const api::StorageClass& klass) {
            cache->DeleteStorageClass(klass.metadata.name);
          }));
  informers_
      .For(kube::resources::kCSINodes, StorageDecoder<api::CSINode>(api::DecodeCSINode, false))
      ->AddEventHandler(api::UpsertRemoveHandlers<api::CSINode>(
          [cache](auto node) { cache->UpsertCSINode(std::move(node)); },
          [cache](const api::CSINode& node) { cache->DeleteCSINode(node.metadata.name); }));
  informers_
      .For(kube::resources::kCSIDrivers,
           StorageDecoder<api::CSIDriver>(api::DecodeCSIDriver, false))
      ->AddEventHandler(api::UpsertRemoveHandlers<api::CSIDriver>(
          [cache](auto driver) { cache->UpsertCSIDriver(std::move(driver)); },
          [cache](const api::CSIDriver& driver) { cache->DeleteCSIDriver(driver.metadata.name); }));

  if (!WatchSchedPluginsPodGroups()) {
    LOG(INFO) << "scheduler: scheduling.x-k8s.io PodGroups are not served yet (their CRD is not "
                 "installed); "
                 "the scheduler looks again every "
              << std::chrono::duration_cast<std::chrono::seconds>(kSchedPluginsProbePeriod).count()
              << "s and serves them once it is";
  }
}

bool Scheduler::WatchSchedPluginsPodGroups() {
  kube::ListOptions one;
  one.limit = 1;
  StatusOr<kube::ListPage> probe = client_->List(api::kSchedPluginsPodGroups, "", one);
  if (!probe.ok()) {
    VLOG(1) << "scheduler: scheduling.x-k8s.io PodGroups not served: " << probe.status().message();
    return false;
  }
  SchedulerCache* cache = &cache_;
  std::string default_queue = options_.default_queue;
  auto convert = [default_queue](const std::shared_ptr<const api::SchedPluginsPodGroup>& pg) {
    std::string queue = pg->metadata.Annotation(api::kSchedulingQueueNameAnnotation);
    auto converted = std::make_shared<api::PodGroup>(
        api::ToVolcanoPodGroup(*pg, queue.empty() ? default_queue : queue));
    converted->metadata.annotations[kSourceAnnotation] = "scheduling.x-k8s.io";
    return converted;
  };
  informers_.For(api::kSchedPluginsPodGroups, api::SchedPluginsPodGroupDecoder())
      ->AddEventHandler(api::UpsertRemoveHandlers<api::SchedPluginsPodGroup>(
          [cache, convert](auto pg) { cache->UpsertPodGroup(convert(pg)); },
          [cache](const api::SchedPluginsPodGroup& pg) {
            cache->DeletePodGroup(pg.metadata.namespace_, pg.metadata.name);
          }));
  sched_plugins_served_ = true;
  LOG(INFO) << "scheduler: scheduling.x-k8s.io PodGroups are served too";
  return true;
}

Status Scheduler::Start(std::chrono::milliseconds timeout) {
  ReloadConfIfChanged();
  TEPHRA_RETURN_IF_ERROR(CheckSelectors());
  RegisterInformers();
  informers_.Start();
  if (!informers_.WaitForCacheSync(timeout)) {
    return DeadlineExceeded("informers did not sync within " + std::to_string(timeout.count()) +
                            " ms");
  }
  synced_ = true;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  // A default queue created under a queue selector carries the labels that select it.
  std::optional<std::map<std::string, std::string>> selected_by =
      LabelsRequiredBy(options_.queue_selector);
  if (!selected_by) {
    LOG(WARNING) << "scheduler: --queue-label-selector \"" << options_.queue_selector
                 << "\" is not made of key=value terms; the default queue "
                 << options_.default_queue << " is served only if its labels match it";
  }
  using Labels = std::map<std::string, std::string>;
  for (const auto& [name, reclaimable, labels] :
       {std::tuple{std::string(api::kRootQueue), false, Labels()},
        std::tuple{options_.default_queue, true,
                   options_.queue_selector.empty() ? Labels() : selected_by.value_or(Labels())}}) {
    Status s;
    while (!(s = EnsureQueue(name, reclaimable, labels)).ok()) {
      if (std::chrono::steady_clock::now() > deadline)
        return s.WithContext("creating queue " + name);
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
  }
  LOG(INFO) << "scheduler: caches synced (" << cache_.NodeCount() << " nodes, " << cache_.PodCount()
            << " pods, " << cache_.JobCount() << " jobs)";
  return Status::Ok();
}

CycleResult Scheduler::RunOnce() {
  ReloadConfIfChanged();
  SchedulerConf conf;
  {
    sync::MutexLock l(conf_mu_);
    conf = conf_;
  }
  SessionOptions so;
  so.uid = "tephra-" + std::to_string(++cycles_);
  // Binds and evictions pass through the log on their way to the binder, so that the recorder
  // knows what this session decided.
  DecisionLog decisions(binder_.get(), binder_.get());
  so.binder = &decisions;
  so.evictor = &decisions;
  so.sampling = options_.sampling;
  auto start = std::chrono::steady_clock::now();
  size_t unplaced_tasks = 0, unplaced_jobs = 0;
  std::optional<SessionSample> sample;
  std::shared_ptr<const Snapshot> snapshot = cache_.TakeSnapshot();
  const uint64_t generation = snapshot->generation;
  bool waiting = false;  // work a later session might do with nothing changed
  for (const auto& job : snapshot->jobs) {
    if (job->IsPending() || job->Count(TaskStatus::kPending) > 0 ||
        job->Count(TaskStatus::kPipelined) > 0) {
      waiting = true;
      break;
    }
  }
  CycleResult r = RunCycle(std::move(snapshot), conf, plugins_, so, [&](const Session& ssn) {
    for (size_t j = 0; j < ssn.job_count(); ++j) {
      const auto* errors = ssn.JobFitErrors(j);
      if (errors == nullptr) continue;
      ++unplaced_jobs;
      unplaced_tasks += errors->size();
    }
    Decisions taken = decisions.Take(ssn);
    sample = SampleSession(ssn, taken, ssn.Now());
    recorder_.Record(ssn, std::move(taken), ssn.Now());
  });
  // Tag PodGroups that came from scheduling.x-k8s.io so their status is written there.
  for (auto& u : r.outcome.pod_groups) {
    auto job = cache_.Job(u.job);
    if (job && job->pod_group && !job->pod_group->metadata.Annotation(kSourceAnnotation).empty()) {
      u.sched_plugins = true;
    }
  }
  writer_->Apply(r.outcome);
  WarnAboutQueues(r.outcome.queue_warnings);
  // Quiet: nothing waited and the session changed nothing (a bind, eviction or status it
  // decided moves the generation on).
  if (waiting || cache_.generation() != generation) {
    quiet_generation_.reset();
  } else if (quiet_generation_ != generation) {
    quiet_generation_ = generation;
    VLOG(1) << "scheduler: nothing waits and nothing changed; sessions pause until the cache "
               "changes";
  }
  quiet_checked_ = std::chrono::steady_clock::now();
  auto elapsed = std::chrono::steady_clock::now() - start;
  if (sample) {
    sample->duration = elapsed;
    history_.Add(std::move(*sample));
  }
  last_cycle_ns_ = std::chrono::duration_cast<std::chrono::nanoseconds>(
                       std::chrono::steady_clock::now().time_since_epoch())
                       .count();
  if (registry_ != nullptr) {
    auto ms = [](auto d) { return std::chrono::duration<double, std::milli>(d).count(); };
    e2e_->Observe(ms(elapsed));
    open_->Observe(ms(r.open));
    for (const auto& [name, d] : r.actions) action_latency_->WithLabels({name}).Observe(ms(d));
    unschedulable_tasks_->Set(static_cast<double>(unplaced_tasks));
    unschedulable_jobs_->Set(static_cast<double>(unplaced_jobs));
    attempts_->WithLabels({unplaced_jobs == 0 ? "scheduled" : "unschedulable"}).Inc();
  }
  VLOG(2) << "scheduler: cycle " << cycles_ << " over " << r.nodes << " nodes and " << r.jobs
          << " jobs took " << std::chrono::duration<double, std::milli>(elapsed).count() << " ms";
  return r;
}

void Scheduler::WarnAboutQueues(const std::vector<QueueWarning>& warnings) {
  std::map<std::string, std::string> now;
  for (const auto& w : warnings) {
    now[w.name] = w.message;
    auto before = queue_warnings_.find(w.name);
    if (before != queue_warnings_.end() && before->second == w.message) continue;
    LOG(WARNING) << "scheduler: queue " << w.name << ": " << w.message;
    if (events_ == nullptr) continue;
    kube::ObjectReference queue;
    queue.api_version = std::string(api::kSchedulingApiVersion);
    queue.kind = std::string(api::kQueueKind);
    queue.name = w.name;
    events_->Record(queue, kube::EventType::kWarning, w.reason, w.message);
  }
  queue_warnings_ = std::move(now);
}

void Scheduler::Run(const std::function<bool()>& keep_running) {
  uint64_t seen_work = 0;
  auto last_start = std::chrono::steady_clock::now() - options_.period;
  auto next_probe = last_start + kSchedPluginsProbePeriod;
  while (keep_running() && !stopped_) {
    auto now = std::chrono::steady_clock::now();
    if (!sched_plugins_served_ && now >= next_probe) {
      // The scheduler-plugins CRD may be installed after the scheduler started.
      if (WatchSchedPluginsPodGroups()) informers_.Start();
      next_probe = now + kSchedPluginsProbePeriod;
    }
    auto periodic = last_start + options_.period;
    if (now < periodic) {
      // Wake early for new work, but not before the minimum gap.
      auto earliest = last_start + options_.min_gap;
      if (now < earliest) std::this_thread::sleep_until(earliest);
      uint64_t work =
          cache_.WaitForWork(seen_work, std::min(periodic, now + std::chrono::milliseconds(200)));
      if (work == seen_work && std::chrono::steady_clock::now() < periodic) continue;
      seen_work = work;
    }
    last_start = std::chrono::steady_clock::now();
    if (ReloadConfIfChanged()) quiet_generation_.reset();
    if (quiet_generation_ == cache_.generation() && last_start - quiet_checked_ < kQuietRecheck) {
      if (skipped_ != nullptr) skipped_->Inc();
      last_cycle_ns_ =
          std::chrono::duration_cast<std::chrono::nanoseconds>(last_start.time_since_epoch())
              .count();
      continue;
    }
    RunOnce();
  }
}

}  // namespace tephra::scheduler
