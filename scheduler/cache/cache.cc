#include "scheduler/cache/cache.h"

#include <algorithm>

#include <glog/logging.h>

#include "api/labels.h"
#include "base/time.h"
#include "kube/meta/object.h"

namespace tephra::scheduler {

QueueInfo MakeQueueInfo(const api::Queue& q) {
  QueueInfo info;
  info.name = q.metadata.name;
  info.weight = q.spec.weight > 0 ? q.spec.weight : 1;
  info.capability = api::Resources::FromList(q.spec.capability);
  info.deserved = api::Resources::FromList(q.spec.deserved);
  if (q.spec.guarantee) info.guarantee = api::Resources::FromList(*q.spec.guarantee);
  info.parent = q.ParentName();
  info.state = q.status.state;
  info.reclaimable = q.spec.reclaimable.value_or(true);
  info.priority = q.spec.priority;
  return info;
}

// Counted as they are, negative amounts would hand the queue room it does not have, and the
// quota-style names would count each request twice, as resources no node offers. The pod count
// is a bound on the gang's size, not a reservation, as in Volcano.
api::Resources ReservedMinResources(const api::ResourceList& min_resources) {
  api::ResourceList kept;
  for (const auto& [name, quantity] : min_resources) {
    if (quantity.Sign() >= 0 && name != api::kResourcePods && !api::IsQuotaOnlyName(name))
      kept.Set(name, quantity);
  }
  return api::Resources::FromList(kept);
}

SchedulerCache::SchedulerCache(CacheOptions options, base::ClockInterface& clock)
    : options_(std::move(options)), clock_(clock) {}

bool SchedulerCache::Ours(const PodInfo& pod) const {
  const auto& names = options_.scheduler_names;
  return std::find(names.begin(), names.end(), pod.spec->scheduler_name) != names.end();
}

// A shared_ptr held only by the cache can be changed in place; one a snapshot also holds is
// copied first, so the snapshot keeps seeing the old version. Snapshots take their references
// under mu_, which every caller of these holds, so use_count() cannot grow meanwhile.
NodeInfo* SchedulerCache::MutableNode(const std::string& name, bool create) {
  auto it = nodes_.find(name);
  if (it == nodes_.end()) {
    if (!create) return nullptr;
    auto fresh = std::make_shared<NodeInfo>();
    fresh->name = name;
    it = nodes_.emplace(name, std::move(fresh)).first;
  } else if (it->second.use_count() > 1) {
    it->second = std::make_shared<NodeInfo>(*it->second);
  }
  return it->second.get();
}

JobInfo* SchedulerCache::MutableJob(const JobId& id, bool create) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) {
    if (!create) return nullptr;
    auto fresh = std::make_shared<JobInfo>();
    fresh->id = id;
    auto slash = id.find('/');
    fresh->namespace_ = id.substr(0, slash);
    fresh->name = id.substr(slash + 1);
    fresh->queue = options_.default_queue;
    it = jobs_.emplace(id, std::move(fresh)).first;
  } else if (it->second.use_count() > 1) {
    it->second = std::make_shared<JobInfo>(*it->second);
  }
  return it->second.get();
}

void SchedulerCache::ChangedLocked(bool may_unblock_pending) {
  ++generation_;
  if (may_unblock_pending) {
    ++work_generation_;
    work_cv_.NotifyAll();
  }
}

int32_t SchedulerCache::ClassValueLocked(const std::string& class_name) const {
  if (!class_name.empty()) {
    auto it = priority_classes_.find(class_name);
    if (it != priority_classes_.end()) return it->second->value;
  }
  for (const auto& [name, pc] : priority_classes_) {
    if (pc->global_default) return pc->value;
  }
  return 0;
}

int32_t SchedulerCache::TaskPriorityLocked(const PodInfo& pod) const {
  if (pod.task_priority) return *pod.task_priority;
  // The API server's Priority admission resolves spec.priority at creation.
  if (pod.spec->priority) return *pod.spec->priority;
  return ClassValueLocked(pod.spec->priority_class_name);
}

void SchedulerCache::RefreshJobFromPodGroupLocked(JobInfo& job) const {
  if (!job.pod_group) return;
  const api::PodGroup& pg = *job.pod_group;
  job.uid = pg.metadata.uid;
  job.queue = pg.spec.queue.empty() ? options_.default_queue : pg.spec.queue;
  job.min_available = std::max(pg.spec.min_member, 0);
  job.min_task_member = pg.spec.min_task_member;
  job.min_resources.reset();
  if (pg.spec.min_resources) job.min_resources = ReservedMinResources(*pg.spec.min_resources);
  job.network_topology = api::NetworkTopologyOf(pg);
  const api::PodGroupPhase before = job.phase;
  job.phase = api::PodGroupPhaseFromString(pg.status.phase);
  if (job.phase != api::PodGroupPhase::kInqueue) {
    job.admitted_since.reset();
  } else if (before != api::PodGroupPhase::kInqueue || !job.admitted_since) {
    job.admitted_since = clock_.Now();  // at a restart: when this scheduler first saw it
  }
  if (job.phase != api::PodGroupPhase::kPending) {
    job.timed_out_at.reset();
  } else {
    for (const auto& c : pg.status.conditions) {
      if (c.type == "Unschedulable" && c.status == "True" && c.reason == kScheduleTimeoutReason &&
          c.last_transition_time)
        job.timed_out_at = c.last_transition_time;
    }
  }
  job.schedule_timeout =
      base::ParsePositiveDuration(pg.metadata.Annotation(api::kScheduleTimeoutKey));
  job.schedule_backoff =
      base::ParsePositiveDuration(pg.metadata.Annotation(api::kScheduleBackoffKey));
  job.priority = ClassValueLocked(pg.spec.priority_class_name);
  job.creation = pg.metadata.creation_timestamp;
  std::string preemptable = pg.metadata.Annotation(api::kPreemptableKey);
  if (preemptable.empty()) preemptable = pg.metadata.Label(api::kPreemptableKey);
  job.preemptable = preemptable == "true";
}

// ---- nodes ----

void SchedulerCache::UpsertNode(std::shared_ptr<const api::Node> node) {
  sync::MutexLock l(mu_);
  NodeInfo* n = MutableNode(node->metadata.name, true);
  // The topology depends on which nodes are in the snapshot, and on their labels.
  if (!n->node || n->ready != node->Ready() || n->node->metadata.labels != node->metadata.labels) {
    topology_.reset();
  }
  // A status heartbeat changes nothing Tephra decodes (condition times are not kept), so it
  // cannot change any session's outcome: it starts no early session and does not even count as
  // a change, so an idle scheduler stays quiet. With thousands of nodes heartbeats would
  // otherwise start a session at the minimum gap, or at least every period.
  const bool same = n->node && n->node->metadata.uid == node->metadata.uid &&
                    n->node->spec == node->spec && n->node->status == node->status &&
                    n->node->metadata.labels == node->metadata.labels &&
                    n->node->metadata.annotations == node->metadata.annotations;
  n->allocatable = api::Resources::FromList(node->status.allocatable);
  n->ready = node->Ready();
  n->unschedulable = node->spec.unschedulable;
  n->node = std::move(node);
  if (!same) ChangedLocked(true);
}

void SchedulerCache::DeleteNode(const std::string& name) {
  sync::MutexLock l(mu_);
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return;
  topology_.reset();
  // Pods still bound to a vanished node keep it as a placeholder until they go.
  if (it->second->tasks.empty()) {
    nodes_.erase(it);
  } else {
    NodeInfo* n = MutableNode(name, false);
    n->node.reset();
    n->ready = false;
  }
  ChangedLocked(false);
}

// ---- pods ----

JobId SchedulerCache::RemovePodLocked(const std::string& uid, bool keep_job) {
  auto loc = pods_.find(uid);
  if (loc == pods_.end()) return {};
  if (!loc->second.node.empty()) {
    if (NodeInfo* n = MutableNode(loc->second.node, false)) {
      n->RemoveTask(uid);
      if (!n->node && n->tasks.empty()) nodes_.erase(loc->second.node);
    }
  }
  JobId job = std::move(loc->second.job);
  if (!job.empty()) {
    if (JobInfo* j = MutableJob(job, false)) j->RemoveTask(uid);
    if (!keep_job) EraseJobIfUnusedLocked(job);
  }
  loc->second.job.clear();
  loc->second.node.clear();
  return job;
}

void SchedulerCache::EraseJobIfUnusedLocked(const JobId& id) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return;
  const JobInfo& j = *it->second;
  if ((!j.pod_group || j.provisional_group) && j.tasks.empty()) jobs_.erase(it);
}

void SchedulerCache::ReplacePodLocked(const std::string& uid, const PodInfoPtr& pod) {
  const JobId was_in = RemovePodLocked(uid, /*keep_job=*/true);
  PlacePodLocked(pod);
  if (!was_in.empty()) EraseJobIfUnusedLocked(was_in);
}

void SchedulerCache::PlacePodLocked(const PodInfoPtr& pod) {
  const std::string& uid = pod->metadata.uid;
  TaskInfo task;
  task.pod = pod;
  task.status = StatusFromPod(*pod);
  task.node = pod->node_name;
  task.priority = TaskPriorityLocked(*pod);

  auto assumed = assumed_.find(uid);
  if (assumed != assumed_.end()) {
    if (!pod->node_name.empty() || task.status != TaskStatus::kPending) {
      assumed_.erase(assumed);  // the API server caught up with our bind
    } else {
      task.status = TaskStatus::kBinding;
      task.node = assumed->second.node;
    }
  }

  PodEntry& loc = pods_.at(uid);
  bool ours = Ours(*pod) && !pod->group_name.empty();
  if (ours) loc.job = pod->metadata.namespace_ + "/" + pod->group_name;
  bool on_node = !task.node.empty() && task.status != TaskStatus::kSucceeded &&
                 task.status != TaskStatus::kFailed;
  if (on_node) loc.node = task.node;
  if (loc.job.empty() && loc.node.empty()) return;  // neither ours nor using a node
  if (on_node) MutableNode(loc.node, true)->AddTask(task);
  if (!loc.job.empty()) {
    JobInfo* job = MutableJob(loc.job, true);
    job->AddTask(task);
    if (!job->pod_group && pod->implicit_pod_group) InstallProvisionalGroupLocked(*job, *pod);
  }
}

PodInfoPtr SchedulerCache::SetPodLocked(const PodInfoPtr& pod) {
  auto it = pods_.find(pod->metadata.uid);
  if (it == pods_.end()) {
    pods_.emplace(pod->metadata.uid, PodEntry{pod, {}, {}});
    return nullptr;
  }
  // The key views the old pod's uid, which dies with it: re-key the node (no allocation).
  auto entry = pods_.extract(it);
  PodInfoPtr old = std::exchange(entry.mapped().pod, pod);
  entry.key() = entry.mapped().pod->metadata.uid;
  pods_.insert(std::move(entry));
  return old;
}

void SchedulerCache::InstallProvisionalGroupLocked(JobInfo& job, const PodInfo& pod) {
  job.pod_group = pod.implicit_pod_group;
  job.provisional_group = true;
  // A status a session already decided for it (not written: the object does not exist yet).
  if (auto a = assumed_status_.find(job.id); a != assumed_status_.end()) {
    job.pod_group = WithStatus(*job.pod_group, a->second.status);
  }
  RefreshJobFromPodGroupLocked(job);
}

void SchedulerCache::UpsertPod(PodInfoPtr pod) {
  sync::MutexLock l(mu_);
  const std::string& uid = pod->metadata.uid;
  PodInfoPtr old = SetPodLocked(pod);
  bool was_pending = old != nullptr && StatusFromPod(*old) == TaskStatus::kPending;
  ReplacePodLocked(uid, pod);
  TaskStatus now = StatusFromPod(*pod);
  // New pending work, or resources freed: worth an early session.
  bool unblocks = (now == TaskStatus::kPending && Ours(*pod) && !was_pending) ||
                  now == TaskStatus::kSucceeded || now == TaskStatus::kFailed ||
                  now == TaskStatus::kReleasing;
  ChangedLocked(unblocks);
}

void SchedulerCache::DeletePod(const PodInfo& pod) {
  sync::MutexLock l(mu_);
  const std::string& uid = pod.metadata.uid;
  RemovePodLocked(uid);
  pods_.erase(uid);
  assumed_.erase(uid);
  ChangedLocked(true);
}

// ---- pod groups, queues, priority classes, namespaces ----

void SchedulerCache::UpsertPodGroup(std::shared_ptr<const api::PodGroup> pg) {
  JobId id = pg->metadata.namespace_ + "/" + pg->metadata.name;
  if (StorePodGroup(std::move(pg))) {
    // Outside mu_: the listener may call back into the cache.
    sync::MutexLock l(listener_mu_);
    if (on_group_arrived_) on_group_arrived_(id);
  }
}

void SchedulerCache::SetGroupArrivalListener(std::function<void(const JobId&)> listener) {
  sync::MutexLock l(listener_mu_);
  on_group_arrived_ = std::move(listener);
}

bool SchedulerCache::HasPodGroupObject(const JobId& id) const {
  sync::MutexLock l(mu_);
  auto it = jobs_.find(id);
  return it != jobs_.end() && it->second->pod_group && !it->second->provisional_group;
}

bool SchedulerCache::PodPlaced(const std::string& uid) const {
  sync::MutexLock l(mu_);
  if (assumed_.count(uid) != 0) return true;
  auto it = pods_.find(uid);
  return it != pods_.end() && !it->second.node.empty();
}

bool SchedulerCache::StorePodGroup(std::shared_ptr<const api::PodGroup> pg) {
  sync::MutexLock l(mu_);
  JobId id = pg->metadata.namespace_ + "/" + pg->metadata.name;
  if (auto a = assumed_status_.find(id); a != assumed_status_.end()) {
    if (pg->status == a->second.status || clock_.Monotonic() >= a->second.expires) {
      assumed_status_.erase(a);  // confirmed, or no longer trusted
    } else {
      a->second.observed = pg;  // an older status, or one the write has not reached yet
      pg = WithStatus(*pg, a->second.status);
    }
  }
  JobInfo* job = MutableJob(id, true);
  bool was_new = job->pod_group == nullptr;
  bool arrived = was_new || job->provisional_group;
  job->pod_group = std::move(pg);
  job->provisional_group = false;
  RefreshJobFromPodGroupLocked(*job);
  ChangedLocked(was_new);
  return arrived;
}

std::shared_ptr<const api::PodGroup> SchedulerCache::WithStatus(const api::PodGroup& observed,
                                                                const api::PodGroupStatus& status) {
  auto copy = std::make_shared<api::PodGroup>(observed);
  copy->status = status;
  return copy;
}

void SchedulerCache::AssumePodGroupStatus(const JobId& id, api::PodGroupStatus status) {
  sync::MutexLock l(mu_);
  auto it = jobs_.find(id);
  if (it == jobs_.end() || !it->second->pod_group || it->second->pod_group->status == status)
    return;
  AssumedStatus& a = assumed_status_[id];
  if (!a.observed) a.observed = it->second->pod_group;
  a.status = std::move(status);
  a.expires = clock_.Monotonic() + options_.assume_ttl;
  JobInfo* job = MutableJob(id, false);
  job->pod_group = WithStatus(*a.observed, a.status);
  RefreshJobFromPodGroupLocked(*job);
  ChangedLocked(false);
}

void SchedulerCache::ForgetPodGroupStatus(const JobId& id) {
  sync::MutexLock l(mu_);
  auto a = assumed_status_.find(id);
  if (a == assumed_status_.end()) return;
  std::shared_ptr<const api::PodGroup> observed = std::move(a->second.observed);
  assumed_status_.erase(a);
  JobInfo* job = MutableJob(id, false);
  if (job == nullptr || !job->pod_group) return;
  job->pod_group = std::move(observed);
  RefreshJobFromPodGroupLocked(*job);
  ChangedLocked(true);  // the next session computes the status again and writes it
}

void SchedulerCache::DeletePodGroup(const std::string& namespace_, const std::string& name) {
  sync::MutexLock l(mu_);
  JobId id = namespace_ + "/" + name;
  assumed_status_.erase(id);
  JobInfo* job = MutableJob(id, false);
  if (job == nullptr) return;
  if (job->tasks.empty()) {
    jobs_.erase(id);
  } else {
    job->pod_group.reset();  // its pods remain; they are ignored until a group appears
  }
  ChangedLocked(false);
}

void SchedulerCache::UpsertQueue(std::shared_ptr<const api::Queue> queue) {
  sync::MutexLock l(mu_);
  auto info = std::make_shared<QueueInfo>(MakeQueueInfo(*queue));
  info->queue = std::move(queue);
  queues_[info->name] = std::move(info);
  ChangedLocked(true);
}

void SchedulerCache::DeleteQueue(const std::string& name) {
  sync::MutexLock l(mu_);
  queues_.erase(name);
  ChangedLocked(false);
}

void SchedulerCache::UpsertPriorityClass(std::shared_ptr<const api::PriorityClass> pc) {
  sync::MutexLock l(mu_);
  priority_classes_[pc->metadata.name] = std::move(pc);
  for (auto& [id, job] : jobs_) {
    int32_t p = job->pod_group ? ClassValueLocked(job->pod_group->spec.priority_class_name) : 0;
    if (p != job->priority) MutableJob(id, false)->priority = p;
  }
  ChangedLocked(true);
}

void SchedulerCache::DeletePriorityClass(const std::string& name) {
  sync::MutexLock l(mu_);
  priority_classes_.erase(name);
  ChangedLocked(false);
}

void SchedulerCache::UpsertNamespace(std::shared_ptr<const api::Namespace> ns) {
  sync::MutexLock l(mu_);
  namespace_labels_[ns->metadata.name] = ns->metadata.labels;
  ChangedLocked(false);
}

void SchedulerCache::DeleteNamespace(const std::string& name) {
  sync::MutexLock l(mu_);
  namespace_labels_.erase(name);
  ChangedLocked(false);
}

void SchedulerCache::UpsertPdb(std::shared_ptr<const PdbInfo> pdb) {
  sync::MutexLock l(mu_);
  pdbs_[pdb->metadata.Key()] = std::move(pdb);
  ChangedLocked(false);
}

void SchedulerCache::DeletePdb(const std::string& key) {
  sync::MutexLock l(mu_);
  pdbs_.erase(key);
  ChangedLocked(false);
}

// A quota raised, or usage counted down, may admit a waiting job.
void SchedulerCache::UpsertQuota(std::shared_ptr<const QuotaInfo> quota) {
  sync::MutexLock l(mu_);
  quotas_[quota->metadata.Key()] = std::move(quota);
  ChangedLocked(true);
}

void SchedulerCache::DeleteQuota(const std::string& key) {
  sync::MutexLock l(mu_);
  quotas_.erase(key);
  ChangedLocked(true);
}

// A new topology may let a job with a tier limit fit.
void SchedulerCache::UpsertHyperNode(std::shared_ptr<const api::HyperNode> hypernode) {
  sync::MutexLock l(mu_);
  hypernodes_[hypernode->metadata.name] = std::move(hypernode);
  topology_.reset();
  ChangedLocked(true);
}

void SchedulerCache::DeleteHyperNode(const std::string& name) {
  sync::MutexLock l(mu_);
  hypernodes_.erase(name);
  topology_.reset();
  ChangedLocked(true);
}

// ---- storage ----

void SchedulerCache::StorageChangedLocked() {
  storage_.reset();
}

void SchedulerCache::UpsertClaim(std::shared_ptr<const api::PersistentVolumeClaim> claim) {
  sync::MutexLock l(mu_);
  std::string key = claim->metadata.Key();
  if (auto a = assumed_selected_.find(key); a != assumed_selected_.end()) {
    // Shown as assumed, bound meanwhile, or given another node: the API server's view is the
    // one to trust now.
    if (!claim->selected_node.empty() || !claim->spec.volume_name.empty())
      assumed_selected_.erase(a);
  }
  observed_storage_.claims[key] = std::move(claim);
  StorageChangedLocked();
  ChangedLocked(true);
}

void SchedulerCache::DeleteClaim(const std::string& key) {
  sync::MutexLock l(mu_);
  observed_storage_.claims.erase(key);
  assumed_selected_.erase(key);
  StorageChangedLocked();
  ChangedLocked(false);
}

void SchedulerCache::UpsertVolume(std::shared_ptr<const api::PersistentVolume> volume) {
  sync::MutexLock l(mu_);
  const std::string& name = volume->metadata.name;
  if (auto a = assumed_claim_refs_.find(name); a != assumed_claim_refs_.end()) {
    if (volume->spec.claim_ref) assumed_claim_refs_.erase(a);  // ours, or another claim's
  }
  observed_storage_.volumes[name] = std::move(volume);
  StorageChangedLocked();
  ChangedLocked(true);
}

void SchedulerCache::DeleteVolume(const std::string& name) {
  sync::MutexLock l(mu_);
  observed_storage_.volumes.erase(name);
  assumed_claim_refs_.erase(name);
  StorageChangedLocked();
  ChangedLocked(false);
}

void SchedulerCache::UpsertStorageClass(std::shared_ptr<const api::StorageClass> klass) {
  sync::MutexLock l(mu_);
  observed_storage_.classes[klass->metadata.name] = std::move(klass);
  StorageChangedLocked();
  ChangedLocked(true);
}

void SchedulerCache::DeleteStorageClass(const std::string& name) {
  sync::MutexLock l(mu_);
  observed_storage_.classes.erase(name);
  StorageChangedLocked();
  ChangedLocked(false);
}

void SchedulerCache::UpsertCSINode(std::shared_ptr<const api::CSINode> node) {
  sync::MutexLock l(mu_);
  observed_storage_.csi_nodes[node->metadata.name] = std::move(node);
  StorageChangedLocked();
  ChangedLocked(true);
}

void SchedulerCache::DeleteCSINode(const std::string& name) {
  sync::MutexLock l(mu_);
  observed_storage_.csi_nodes.erase(name);
  StorageChangedLocked();
  ChangedLocked(true);
}

void SchedulerCache::UpsertCSIDriver(std::shared_ptr<const api::CSIDriver> driver) {
  sync::MutexLock l(mu_);
  observed_storage_.csi_drivers[driver->metadata.name] = std::move(driver);
  StorageChangedLocked();
  ChangedLocked(true);
}

void SchedulerCache::DeleteCSIDriver(const std::string& name) {
  sync::MutexLock l(mu_);
  observed_storage_.csi_drivers.erase(name);
  StorageChangedLocked();
  ChangedLocked(true);
}

void SchedulerCache::AssumeVolumeSteps(const std::vector<PreBindStep>& steps) {
  sync::MutexLock l(mu_);
  const auto expires = clock_.Monotonic() + options_.assume_ttl;
  for (const PreBindStep& step : steps) {
    if (const auto* bind = std::get_if<BindVolumeStep>(&step.what)) {
      auto [ns, name] = kube::SplitObjectKey(bind->claim);
      api::ClaimReference ref{"v1", "PersistentVolumeClaim", ns,
                              name, bind->claim_uid,         bind->claim_resource_version};
      assumed_claim_refs_[bind->volume] = {std::move(ref), expires};
    } else if (const auto* provision = std::get_if<ProvisionVolumeStep>(&step.what)) {
      assumed_selected_[provision->claim] = {provision->node, expires};
    }
  }
  StorageChangedLocked();
  ChangedLocked(false);
}

void SchedulerCache::ForgetVolumeSteps(const std::vector<PreBindStep>& steps) {
  sync::MutexLock l(mu_);
  ForgetVolumeStepsLocked(steps);
}

void SchedulerCache::ForgetUnit(const std::vector<std::pair<JobId, std::string>>& binds,
                                const std::vector<PreBindStep>& steps) {
  sync::MutexLock l(mu_);
  ForgetVolumeStepsLocked(steps);
  for (const auto& [job, uid] : binds) ForgetBindingLocked(job, uid);
}

void SchedulerCache::ForgetVolumeStepsLocked(const std::vector<PreBindStep>& steps) {
  for (const PreBindStep& step : steps) {
    if (const auto* bind = std::get_if<BindVolumeStep>(&step.what)) {
      auto it = assumed_claim_refs_.find(bind->volume);
      if (it != assumed_claim_refs_.end() && it->second.ref.uid == bind->claim_uid)
        assumed_claim_refs_.erase(it);
    } else if (const auto* provision = std::get_if<ProvisionVolumeStep>(&step.what)) {
      auto it = assumed_selected_.find(provision->claim);
      if (it != assumed_selected_.end() && it->second.node == provision->node)
        assumed_selected_.erase(it);
    }
  }
  StorageChangedLocked();
  ChangedLocked(true);  // the next session decides again
}

std::shared_ptr<const api::PersistentVolumeClaim> SchedulerCache::ObservedClaim(
    const std::string& key) const {
  sync::MutexLock l(mu_);
  auto it = observed_storage_.claims.find(key);
  return it == observed_storage_.claims.end() ? nullptr : it->second;
}

std::shared_ptr<const api::PersistentVolume> SchedulerCache::ObservedVolume(
    const std::string& name) const {
  sync::MutexLock l(mu_);
  auto it = observed_storage_.volumes.find(name);
  return it == observed_storage_.volumes.end() ? nullptr : it->second;
}

bool SchedulerCache::HasPod(const std::string& uid) const {
  sync::MutexLock l(mu_);
  return pods_.count(uid) != 0;
}

std::shared_ptr<const StorageState> SchedulerCache::StorageLocked() {
  if (storage_) return storage_;
  auto state = std::make_shared<StorageState>(observed_storage_);
  for (const auto& [name, assumed] : assumed_claim_refs_) {
    auto it = state->volumes.find(name);
    if (it == state->volumes.end()) continue;
    auto volume = std::make_shared<api::PersistentVolume>(*it->second);
    volume->spec.claim_ref = assumed.ref;
    volume->bound_by_controller = true;
    it->second = std::move(volume);
  }
  for (const auto& [key, assumed] : assumed_selected_) {
    auto it = state->claims.find(key);
    if (it == state->claims.end()) continue;
    auto claim = std::make_shared<api::PersistentVolumeClaim>(*it->second);
    claim->selected_node = assumed.node;
    it->second = std::move(claim);
  }
  state->Index();
  storage_ = std::move(state);
  return storage_;
}

// ---- binding and eviction ----

Status SchedulerCache::AssumeBinding(const JobId& job_id, const std::string& uid,
                                     const std::string& node) {
  sync::MutexLock l(mu_);
  JobInfo* job = MutableJob(job_id, false);
  if (job == nullptr) return NotFound("job " + job_id + " is gone");
  auto it = job->tasks.find(uid);
  if (it == job->tasks.end()) return NotFound("pod " + uid + " of job " + job_id + " is gone");
  if (it->second.status != TaskStatus::kPending) {
    return FailedPrecondition("pod " + it->second.pod->metadata.Key() + " is " +
                              std::string(TaskStatusName(it->second.status)) + ", not Pending");
  }
  NodeInfo* n = MutableNode(node, false);
  if (n == nullptr) return NotFound("node " + node + " is gone");
  job->SetStatus(uid, TaskStatus::kBinding, node);
  n->AddTask(job->tasks.at(uid));
  if (auto e = pods_.find(uid); e != pods_.end()) e->second.node = node;
  assumed_[uid] = Assumed{job_id, node, clock_.Monotonic() + options_.assume_ttl};
  ChangedLocked(false);
  return Status::Ok();
}

void SchedulerCache::ForgetBinding(const JobId& job_id, const std::string& uid) {
  sync::MutexLock l(mu_);
  ForgetBindingLocked(job_id, uid);
}

void SchedulerCache::ForgetBindingLocked(const JobId& job_id, const std::string& uid) {
  assumed_.erase(uid);
  auto pod = pods_.find(uid);
  if (pod == pods_.end()) return;
  // Back to whatever the API server last said about the pod.
  ReplacePodLocked(uid, pod->second.pod);
  (void)job_id;
  ChangedLocked(true);
}

Status SchedulerCache::MarkReleasing(const JobId& job_id, const std::string& uid) {
  sync::MutexLock l(mu_);
  auto loc = pods_.find(uid);
  if (loc == pods_.end() || loc->second.node.empty()) {
    return NotFound("pod " + uid + " is not on a node");
  }
  std::string node = loc->second.node;
  if (!job_id.empty()) {
    JobInfo* job = MutableJob(job_id, false);
    if (job != nullptr && job->tasks.count(uid) != 0) {
      job->SetStatus(uid, TaskStatus::kReleasing, node);
      if (NodeInfo* n = MutableNode(node, false)) n->AddTask(job->tasks.at(uid));
      ChangedLocked(false);
      return Status::Ok();
    }
  }
  NodeInfo* n = MutableNode(node, false);
  if (n == nullptr) return NotFound("node " + node + " is gone");
  auto t = n->tasks.find(uid);
  if (t == n->tasks.end()) return NotFound("pod " + uid + " is not on node " + node);
  TaskInfo task;
  task.pod = t->second.pod;
  task.status = TaskStatus::kReleasing;
  task.node = node;
  n->AddTask(task);
  ChangedLocked(false);
  return Status::Ok();
}

namespace {

// Erases the volume assumptions (claimRefs, selected nodes) the informers never confirmed in
// time; how many it erased. (A function, not a lambda: lock analysis does not see into lambdas.)
template <typename Assumptions, typename Time>
size_t EraseExpiredVolumeAssumptions(Assumptions& assumptions, Time now) {
  size_t erased = 0;
  for (auto it = assumptions.begin(); it != assumptions.end();) {
    if (it->second.expires > now) {
      ++it;
      continue;
    }
    LOG(WARNING) << "cache: the volume assumption for " << it->first
                 << " was never confirmed; trusting the API server's view";
    it = assumptions.erase(it);
    ++erased;
  }
  return erased;
}

}  // namespace

void SchedulerCache::ExpireAssumedLocked() {
  auto now = clock_.Monotonic();
  // Statuses decided for groups that never arrived (their pods went first, or no controller
  // makes them): nothing will confirm them.
  for (auto it = assumed_status_.begin(); it != assumed_status_.end();) {
    auto job = jobs_.find(it->first);
    bool orphan = job == jobs_.end() || !job->second->pod_group;
    it = orphan && it->second.expires <= now ? assumed_status_.erase(it) : std::next(it);
  }
  if (EraseExpiredVolumeAssumptions(assumed_claim_refs_, now) +
          EraseExpiredVolumeAssumptions(assumed_selected_, now) >
      0) {
    StorageChangedLocked();
  }
  for (auto it = assumed_.begin(); it != assumed_.end();) {
    if (it->second.expires > now) {
      ++it;
      continue;
    }
    LOG(WARNING) << "cache: bind of pod " << it->first << " to " << it->second.node
                 << " was never confirmed; trusting the API server's view";
    std::string uid = it->first;
    it = assumed_.erase(it);
    auto pod = pods_.find(uid);
    if (pod != pods_.end()) ReplacePodLocked(uid, pod->second.pod);
  }
}

// ---- snapshots ----

std::shared_ptr<const Snapshot> SchedulerCache::TakeSnapshot() {
  auto snap = std::make_shared<Snapshot>();
  sync::MutexLock l(mu_);
  ExpireAssumedLocked();
  snap->generation = generation_;
  snap->nodes.reserve(nodes_.size());
  for (const auto& [name, node] : nodes_) {
    if (!node->node || !node->ready) continue;
    snap->nodes.push_back(node);
    snap->total.Add(node->allocatable);
  }
  // Stable order (by name) so sessions and tests are deterministic.
  std::sort(snap->nodes.begin(), snap->nodes.end(),
            [](const auto& a, const auto& b) { return a->name < b->name; });
  snap->jobs.reserve(jobs_.size());
  for (const auto& [id, job] : jobs_) {
    if (!job->pod_group) continue;
    if (queues_.count(job->queue) == 0) continue;
    bool live = job->tasks.size() > static_cast<size_t>(job->Count(TaskStatus::kSucceeded) +
                                                        job->Count(TaskStatus::kFailed));
    if (job->phase == api::PodGroupPhase::kCompleted && !live) continue;
    snap->jobs.push_back(job);
  }
  for (const auto& [name, q] : queues_) snap->queues.emplace(name, q);
  snap->namespace_labels = namespace_labels_;
  for (const auto& [key, pdb] : pdbs_) snap->pdbs.push_back(pdb);
  for (const auto& [key, quota] : quotas_) snap->quotas.push_back(quota);
  if (!topology_) {
    std::vector<std::shared_ptr<const api::HyperNode>> hypernodes;
    for (const auto& [name, hn] : hypernodes_) hypernodes.push_back(hn);
    std::vector<api::TopologyNode> nodes;
    for (const auto& n : snap->nodes) nodes.push_back({n->name, &n->labels()});
    std::vector<std::string> problems;
    topology_ = HyperNodeTree::Build(hypernodes, nodes, &problems);
    for (const auto& p : problems) LOG(WARNING) << "cache: topology: " << p;
  }
  snap->topology = topology_;
  snap->storage = StorageLocked();
  return snap;
}

uint64_t SchedulerCache::generation() const {
  sync::MutexLock l(mu_);
  return generation_;
}

uint64_t SchedulerCache::WaitForWork(uint64_t since,
                                     std::chrono::steady_clock::time_point deadline) {
  sync::MutexLock lock(mu_);
  clock_.WaitUntil(mu_, work_cv_, deadline,
                   [&]() REQUIRES(mu_) { return work_generation_ > since; });
  return work_generation_;
}

size_t SchedulerCache::NodeCount() const {
  sync::MutexLock l(mu_);
  return nodes_.size();
}

size_t SchedulerCache::JobCount() const {
  sync::MutexLock l(mu_);
  return jobs_.size();
}

size_t SchedulerCache::PodCount() const {
  sync::MutexLock l(mu_);
  return pods_.size();
}

size_t SchedulerCache::AssumedCount() const {
  sync::MutexLock l(mu_);
  return assumed_.size();
}

std::shared_ptr<const JobInfo> SchedulerCache::Job(const JobId& id) const {
  sync::MutexLock l(mu_);
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : it->second;
}

std::shared_ptr<const NodeInfo> SchedulerCache::Node(const std::string& name) const {
  sync::MutexLock l(mu_);
  auto it = nodes_.find(name);
  return it == nodes_.end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<const JobInfo>> SchedulerCache::JobsIn(
    const std::string& namespace_) const {
  sync::MutexLock l(mu_);
  std::vector<std::shared_ptr<const JobInfo>> out;
  for (const auto& [id, job] : jobs_) {
    if (job->namespace_ == namespace_) out.push_back(job);
  }
  return out;
}

std::shared_ptr<const JobInfo> SchedulerCache::JobOfVolcanoJob(const std::string& namespace_,
                                                               const std::string& job) const {
  std::shared_ptr<const JobInfo> newest;
  for (const auto& candidate : JobsIn(namespace_)) {
    if (OwningVolcanoJob(*candidate) != job) continue;
    if (!newest ||
        (candidate->creation && newest->creation && *candidate->creation > *newest->creation))
      newest = candidate;
  }
  return newest;
}

std::shared_ptr<const QueueInfo> SchedulerCache::Queue(const std::string& name) const {
  sync::MutexLock l(mu_);
  auto it = queues_.find(name);
  return it == queues_.end() ? nullptr : it->second;
}

}  // namespace tephra::scheduler
