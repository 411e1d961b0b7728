#include "scheduler/model/model.h"

#include <cstdlib>

#include "api/batch.h"

namespace tephra::scheduler {

api::Resources WithoutPods(const api::Resources& r) {
  // Erased rather than set to zero, so that no "pods 0" shows in messages.
  api::Resources out = r;
  out.Erase(api::kResourcePods);
  return out;
}

std::string_view TaskStatusName(TaskStatus s) {
  switch (s) {
    case TaskStatus::kPending:
      return "Pending";
    case TaskStatus::kAllocated:
      return "Allocated";
    case TaskStatus::kPipelined:
      return "Pipelined";
    case TaskStatus::kBinding:
      return "Binding";
    case TaskStatus::kBound:
      return "Bound";
    case TaskStatus::kRunning:
      return "Running";
    case TaskStatus::kReleasing:
      return "Releasing";
    case TaskStatus::kSucceeded:
      return "Succeeded";
    case TaskStatus::kFailed:
      return "Failed";
    case TaskStatus::kUnknown:
      return "Unknown";
  }
  return "?";
}

bool HoldsPlace(TaskStatus s) {
  return s == TaskStatus::kAllocated || s == TaskStatus::kPipelined || s == TaskStatus::kBinding ||
         s == TaskStatus::kBound || s == TaskStatus::kRunning;
}

bool OccupiesNode(TaskStatus s) {
  return s == TaskStatus::kAllocated || s == TaskStatus::kBinding || s == TaskStatus::kBound ||
         s == TaskStatus::kRunning || s == TaskStatus::kReleasing;
}

bool IsAllocatedStatus(TaskStatus s) {
  return s == TaskStatus::kAllocated || s == TaskStatus::kBinding || s == TaskStatus::kBound ||
         s == TaskStatus::kRunning;
}

TaskStatus StatusFromPod(const PodInfo& pod) {
  if (pod.phase == api::pod_phase::kRunning) {
    return pod.terminating ? TaskStatus::kReleasing : TaskStatus::kRunning;
  }
  if (pod.phase == api::pod_phase::kSucceeded) return TaskStatus::kSucceeded;
  if (pod.phase == api::pod_phase::kFailed) return TaskStatus::kFailed;
  if (pod.phase == api::pod_phase::kUnknown) return TaskStatus::kUnknown;
  // Pending (or no phase yet).
  if (pod.terminating) return pod.node_name.empty() ? TaskStatus::kFailed : TaskStatus::kReleasing;
  return pod.node_name.empty() ? TaskStatus::kPending : TaskStatus::kBound;
}

std::vector<std::string> QueueInfo::GuaranteeBeyond(const api::Resources& cluster) const {
  return WithoutPods(guarantee).Exceeding(cluster, api::Resources::Missing::kZero);
}

int TaskInfo::index() const {
  const std::string& n = pod->metadata.name;
  size_t dash = n.rfind('-');
  if (dash == std::string::npos || dash + 1 >= n.size()) return -1;
  char* end = nullptr;
  long v = std::strtol(n.c_str() + dash + 1, &end, 10);
  return end != nullptr && *end == '\0' ? static_cast<int>(v) : -1;
}

api::Resources NodeInfo::Idle() const {
  api::Resources idle = allocatable;
  idle.Sub(used);
  return idle;
}

api::Resources NodeInfo::FutureIdle() const {
  api::Resources f = Idle();
  f.Add(releasing);
  f.Sub(pipelined);
  return f;
}

namespace {

// used + request <= allocatable + extra - minus, per dimension of the request.
bool Fits(const api::Resources& req, const NodeInfo& n, const api::Resources* plus,
          const api::Resources* minus, const char** reason) {
  auto check = [&](int64_t r, int64_t alloc, int64_t used, int64_t p, int64_t m) {
    return r <= 0 || used + r <= alloc + p - m;
  };
  auto fixed = [&](auto get, const char* why) {
    if (check(get(req), get(n.allocatable), get(n.used), plus ? get(*plus) : 0,
              minus ? get(*minus) : 0)) {
      return true;
    }
    if (reason != nullptr) *reason = why;
    return false;
  };
  if (!fixed([](const api::Resources& x) { return x.milli_cpu(); }, "Insufficient cpu"))
    return false;
  if (!fixed([](const api::Resources& x) { return x.memory(); }, "Insufficient memory"))
    return false;
  if (!fixed([](const api::Resources& x) { return x.pods(); }, "Too many pods")) return false;
  if (!fixed([](const api::Resources& x) { return x.ephemeral_storage(); },
             "Insufficient ephemeral-storage")) {
    return false;
  }
  for (const auto& s : req.scalars()) {
    const std::string& name = api::ResourceIdName(s.id);
    if (!check(s.value, n.allocatable.Get(name), n.used.Get(name), plus ? plus->Get(name) : 0,
               minus ? minus->Get(name) : 0)) {
      if (reason != nullptr) *reason = "Insufficient extended resource";
      return false;
    }
  }
  return true;
}

}  // namespace

bool NodeInfo::FitsIdle(const api::Resources& request, const char** reason) const {
  return Fits(request, *this, nullptr, nullptr, reason);
}

bool NodeInfo::FitsFutureIdle(const api::Resources& request, const char** reason) const {
  return Fits(request, *this, &releasing, &pipelined, reason);
}

namespace {

bool HasRequiredAntiAffinity(const PodInfo& pod) {
  const auto& a = pod.spec->affinity;
  return a && a->pod_anti_affinity && !a->pod_anti_affinity->required.empty();
}

}  // namespace

void NodeInfo::AddTask(const TaskInfo& task) {
  // One lookup on the hot path (a task new to the node); a task already here is replaced, and
  // its entry re-made, since the key views the uid of the pod the entry holds.
  bool fresh = tasks.try_emplace(task.uid(), NodeTask{task.pod, task.status}).second;
  if (!fresh) {
    RemoveTask(task.uid());
    tasks.emplace(task.uid(), NodeTask{task.pod, task.status});
  }
  if (HasRequiredAntiAffinity(*task.pod)) ++anti_affinity_pods;
  if (task.status == TaskStatus::kPipelined) {
    pipelined.Add(task.request());
    return;
  }
  if (!OccupiesNode(task.status)) return;
  used.Add(task.request());
  if (task.status == TaskStatus::kReleasing) releasing.Add(task.request());
}

void NodeInfo::RemoveTask(std::string_view uid) {
  auto it = tasks.find(uid);
  if (it == tasks.end()) return;
  const NodeTask& t = it->second;
  if (HasRequiredAntiAffinity(*t.pod)) --anti_affinity_pods;
  if (t.status == TaskStatus::kPipelined) {
    pipelined.Sub(t.pod->request());
  } else if (OccupiesNode(t.status)) {
    used.Sub(t.pod->request());
    if (t.status == TaskStatus::kReleasing) releasing.Sub(t.pod->request());
  }
  tasks.erase(it);
}

const std::vector<api::Taint>& NodeInfo::taints() const {
  static const std::vector<api::Taint> kNone;
  return node ? node->spec.taints : kNone;
}

const std::map<std::string, std::string>& NodeInfo::labels() const {
  static const std::map<std::string, std::string> kNone;
  return node ? node->metadata.labels : kNone;
}

int32_t JobInfo::ReadyCount() const {
  return Count(TaskStatus::kAllocated) + Count(TaskStatus::kBinding) + Count(TaskStatus::kBound) +
         Count(TaskStatus::kRunning) + Count(TaskStatus::kSucceeded) + pending_best_effort;
}

int32_t JobInfo::ValidCount() const {
  return Count(TaskStatus::kPending) + Count(TaskStatus::kAllocated) +
         Count(TaskStatus::kPipelined) + Count(TaskStatus::kBinding) + Count(TaskStatus::kBound) +
         Count(TaskStatus::kRunning) + Count(TaskStatus::kSucceeded);
}

bool JobInfo::TaskMinimumsApply() const {
  if (min_task_member.empty()) return false;
  int64_t sum = 0;
  for (const auto& [role, min] : min_task_member) sum += min;
  return min_available >= sum;
}

api::Resources JobInfo::UngatedMinResources() const {
  if (!min_resources) return {};
  api::Resources reserve = *min_resources;
  for (const auto& [task_uid, t] : tasks) {
    if (t.status == TaskStatus::kPending && !t.pod->spec->scheduling_gates.empty())
      reserve.Sub(t.request());
  }
  return reserve;
}

GangSlack::GangSlack(const JobInfo& job) : job_(&job), ready_(job.ReadyCount()) {
  if (!job.TaskMinimumsApply()) return;
  for (const auto& [task_uid, t] : job.tasks) {
    bool ready = t.status == TaskStatus::kAllocated || t.status == TaskStatus::kBinding ||
                 t.status == TaskStatus::kBound || t.status == TaskStatus::kRunning ||
                 t.status == TaskStatus::kSucceeded ||
                 (t.status == TaskStatus::kPending && t.best_effort());
    if (ready) ++role_ready_[t.pod->task_role];
  }
}

bool GangSlack::Take(const std::string& role) {
  if (ready_ - 1 < job_->min_available) return false;
  int32_t* role_ready = nullptr;
  if (!role_ready_.empty()) {
    auto min = job_->min_task_member.find(role);
    if (min != job_->min_task_member.end()) {
      role_ready = &role_ready_[role];
      if (*role_ready - 1 < min->second) return false;
    }
  }
  --ready_;
  if (role_ready != nullptr) --*role_ready;
  return true;
}

namespace {

void Account(JobInfo& job, const TaskInfo& t, int sign) {
  job.counts[static_cast<size_t>(t.status)] += sign;
  if (t.status == TaskStatus::kPending) {
    if (t.best_effort()) job.pending_best_effort += sign;
    if (sign > 0) {
      job.pending.Add(t.request());
    } else {
      job.pending.Sub(t.request());
    }
  }
  if (IsAllocatedStatus(t.status)) {
    if (sign > 0) {
      job.allocated.Add(t.request());
    } else {
      job.allocated.Sub(t.request());
    }
  }
  if (sign > 0) {
    job.total_request.Add(t.request());
  } else {
    job.total_request.Sub(t.request());
  }
}

}  // namespace

const JobId& TaskInfo::job() const {
  static const JobId kNoJob;
  return job_id ? *job_id : kNoJob;
}

void JobInfo::AddTask(TaskInfo task) {
  RemoveTask(task.uid());
  if (!tasks.empty()) {
    task.job_id = tasks.begin()->second.job_id;
  } else if (!task.job_id || *task.job_id != id) {
    task.job_id = std::make_shared<const JobId>(id);
  }
  Account(*this, task, +1);
  std::string_view key = task.uid();  // points into task.pod, which the entry keeps
  tasks.emplace(key, std::move(task));
}

void JobInfo::RemoveTask(std::string_view task_uid) {
  auto it = tasks.find(task_uid);
  if (it == tasks.end()) return;
  Account(*this, it->second, -1);
  tasks.erase(it);
}

void JobInfo::SetStatus(std::string_view task_uid, TaskStatus status, const std::string& node) {
  auto it = tasks.find(task_uid);
  if (it == tasks.end()) return;
  Account(*this, it->second, -1);
  it->second.status = status;
  it->second.node = node;
  Account(*this, it->second, +1);
}

}  // namespace tephra::scheduler

namespace tephra::scheduler {

StatusOr<std::shared_ptr<PdbInfo>> DecodePdb(const json::Value& value) {
  json::Errors errors;
  json::Reader r(&value, &errors);
  auto pdb = std::make_shared<PdbInfo>();
  kube::DecodeObjectHeader(r, pdb.get());
  if (json::Reader sel = r["spec"]["selector"]; sel.present())
    api::DecodeLabelSelector(sel, &pdb->selector);
  pdb->disruptions_allowed = r["status"]["disruptionsAllowed"].Int32();
  TEPHRA_RETURN_IF_ERROR(errors.ToStatus("PodDisruptionBudget " + pdb->metadata.Key()));
  return pdb;
}

StatusOr<std::shared_ptr<QuotaInfo>> DecodeResourceQuota(const json::Value& value) {
  json::Errors errors;
  json::Reader r(&value, &errors);
  auto quota = std::make_shared<QuotaInfo>();
  kube::DecodeObjectHeader(r, quota.get());
  quota->hard = api::DecodeResourceList(r["status"]["hard"]);
  quota->used = api::DecodeResourceList(r["status"]["used"]);
  TEPHRA_RETURN_IF_ERROR(errors.ToStatus("ResourceQuota " + quota->metadata.Key()));
  return quota;
}

std::string OwningVolcanoJob(const JobInfo& job) {
  if (!job.pod_group) return "";
  const kube::OwnerReference* owner = job.pod_group->metadata.ControllerRef();
  return owner != nullptr && owner->kind == api::kJobKind ? owner->name : "";
}

std::string_view ShownPhase(const JobInfo& job) {
  return api::ToString(job.IsPending() ? api::PodGroupPhase::kPending : job.phase);
}

}  // namespace tephra::scheduler
