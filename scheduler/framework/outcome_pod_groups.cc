// PodGroup status after a session (Volcano's PodGroup phase rules, docs/compatibility.md §4.3):
// the piece of ComputeOutcome (outcome.h) for PodGroups.
#include <algorithm>

#include "api/labels.h"
#include "scheduler/framework/outcome.h"

namespace tephra::scheduler {
namespace {

// Replaces the condition of the same type when what it says changed; returns whether it did.
bool SetCondition(std::vector<api::PodGroupCondition>* conditions,
                  const api::PodGroupCondition& want) {
  for (auto& c : *conditions) {
    if (c.type != want.type) continue;
    if (c.status == want.status && c.reason == want.reason && c.message == want.message)
      return false;
    c = want;
    return true;
  }
  conditions->push_back(want);
  return true;
}

// The phase Volcano's rules give a job after the session (docs/compatibility.md §4.3).
api::PodGroupPhase PhaseAfter(const JobInfo& job, bool unschedulable) {
  // Tasks that got a node at some point, finished ones included.
  int32_t scheduled = job.Count(TaskStatus::kAllocated) + job.Count(TaskStatus::kBinding) +
                      job.Count(TaskStatus::kBound) + job.Count(TaskStatus::kRunning) +
                      job.Count(TaskStatus::kReleasing) + job.Count(TaskStatus::kSucceeded) +
                      job.Count(TaskStatus::kFailed);
  using api::PodGroupPhase;
  if (job.Count(TaskStatus::kRunning) > 0 && unschedulable) {
    // A running gang that lost members and cannot get them back.
    return PodGroupPhase::kUnknown;
  }
  if (scheduled >= job.min_available && !job.tasks.empty()) {
    // Completed once nothing is running or about to.
    int32_t active = scheduled - job.Count(TaskStatus::kSucceeded) -
                     job.Count(TaskStatus::kFailed) + job.Count(TaskStatus::kPending) +
                     job.Count(TaskStatus::kPipelined);
    return active == 0 ? PodGroupPhase::kCompleted : PodGroupPhase::kRunning;
  }
  // Not admitted, or fell below its gang (pods deleted): enqueue admits it again.
  return job.phase != PodGroupPhase::kInqueue ? PodGroupPhase::kPending : PodGroupPhase::kInqueue;
}

bool IsUnschedulable(const std::optional<JobConditionOut>& cond) {
  return cond && cond->type == "Unschedulable";
}

// Whether PodGroupStatusAfter differs from the PodGroup's status, without building it: most
// jobs of a session stay as they were, and copying each one's status would cost more than the
// whole session otherwise does.
bool StatusChanges(const Session& ssn, size_t j) {
  const JobInfo& job = ssn.job(j);
  const api::PodGroupStatus& have = job.pod_group->status;
  const auto& cond = ssn.JobCondition(j);
  if (have.phase != api::ToString(PhaseAfter(job, IsUnschedulable(cond))) ||
      have.running != job.Count(TaskStatus::kRunning) ||
      have.succeeded != job.Count(TaskStatus::kSucceeded) ||
      have.failed != job.Count(TaskStatus::kFailed)) {
    return true;
  }
  if (!cond) return false;
  // As SetCondition and the Scheduled rule below would change the conditions.
  auto same = std::find_if(have.conditions.begin(), have.conditions.end(),
                           [&](const auto& c) { return c.type == cond->type; });
  if (same == have.conditions.end() || same->status != cond->status ||
      same->reason != cond->reason || same->message != cond->message) {
    return true;
  }
  return cond->type == "Scheduled" &&
         std::any_of(have.conditions.begin(), have.conditions.end(),
                     [](const auto& c) { return c.type == "Unschedulable" && c.status == "True"; });
}

// The HyperNode a job with a network topology occupies, when its PodGroup does not say so yet
// (so also after a lost write or a restart); nullptr otherwise.
const std::string* NewlyOccupiedHyperNode(const Session& ssn, size_t j) {
  const JobInfo& job = ssn.job(j);
  if (!job.network_topology || !ssn.TopologyAware()) return nullptr;
  const HyperNodeInfo* occupied = ssn.OccupiedHyperNode(j);
  if (occupied == nullptr ||
      occupied->name == job.pod_group->metadata.Annotation(api::kJobAllocatedHyperNodeAnnotation)) {
    return nullptr;
  }
  return &occupied->name;
}

}  // namespace

api::PodGroupStatus PodGroupStatusAfter(const Session& ssn, size_t j, base::Time now) {
  const JobInfo& job = ssn.job(j);
  api::PodGroupStatus status = job.pod_group ? job.pod_group->status : api::PodGroupStatus{};
  const auto& cond = ssn.JobCondition(j);
  const api::PodGroupPhase phase = PhaseAfter(job, IsUnschedulable(cond));
  status.phase = api::ToString(phase);
  status.running = job.Count(TaskStatus::kRunning);
  status.succeeded = job.Count(TaskStatus::kSucceeded);
  status.failed = job.Count(TaskStatus::kFailed);
  if (cond) {
    api::PodGroupCondition c;
    c.type = cond->type;
    c.status = cond->status;
    c.reason = cond->reason;
    c.message = cond->message;
    c.transition_id = ssn.uid();
    c.last_transition_time = now;
    SetCondition(&status.conditions, c);
    if (cond->type == "Scheduled") {
      // The gang fits now: an earlier Unschedulable condition no longer holds.
      for (auto& other : status.conditions) {
        if (other.type == "Unschedulable" && other.status == "True") {
          other.status = "False";
          other.transition_id = ssn.uid();
          other.last_transition_time = now;
        }
      }
    }
  }
  return status;
}

std::optional<PodGroupUpdate> PodGroupUpdateAfter(const Session& ssn, size_t j, base::Time now) {
  const JobInfo& job = ssn.job(j);
  if (!job.pod_group) return std::nullopt;
  const std::string* hypernode = NewlyOccupiedHyperNode(ssn, j);
  if (!StatusChanges(ssn, j) && hypernode == nullptr) return std::nullopt;
  api::PodGroupStatus status = PodGroupStatusAfter(ssn, j, now);
  PodGroupUpdate u;
  u.job = job.id;
  u.namespace_ = job.namespace_;
  u.name = job.name;
  const auto& cond = ssn.JobCondition(j);
  // Others act on Inqueue (the job controller creates pods), Pending (admission taken
  // back) and Unknown (JobUnknown policies), and a group leaving Pending must not show it
  // while its pods run (a plain pod goes from Pending to Running in one session); Running,
  // Completed, counts and the Scheduled condition are for people and may wait a moment to
  // share one write (a longer moment while its pods are starting, so that the write
  // carries their start too).
  const api::PodGroupPhase phase = api::PodGroupPhaseFromString(status.phase);
  const api::PodGroupPhase was = api::PodGroupPhaseFromString(job.pod_group->status.phase);
  bool acted_on = phase != was &&
                  (phase == api::PodGroupPhase::kInqueue || phase == api::PodGroupPhase::kPending ||
                   phase == api::PodGroupPhase::kUnknown || was == api::PodGroupPhase::kPending);
  bool newly_unschedulable = cond && cond->type == "Unschedulable" &&
                             status.conditions != job.pod_group->status.conditions;
  u.urgent = acted_on || newly_unschedulable;
  u.awaiting_object = job.provisional_group;
  u.pods_starting = job.Count(TaskStatus::kAllocated) + job.Count(TaskStatus::kBinding) +
                        job.Count(TaskStatus::kBound) >
                    0;
  if (hypernode != nullptr) u.allocated_hypernode = *hypernode;
  u.status = std::move(status);
  bool condition_changed = false;
  if (cond) {
    const auto& old = job.pod_group->status.conditions;
    condition_changed = true;
    for (const auto& c : old) {
      if (c.type == cond->type && c.status == cond->status && c.message == cond->message) {
        condition_changed = false;
      }
    }
  }
  // A bare pod's group is told about by its pod's own Scheduled event; any other group
  // (a Job's, a workload's) gets one of its own, as in Volcano.
  const kube::OwnerReference* owner = job.pod_group->metadata.ControllerRef();
  bool bare_pods_group = job.provisional_group || (owner != nullptr && owner->kind == "Pod");
  bool worth_event = cond && (cond->type == "Unschedulable" || !bare_pods_group);
  if (condition_changed && worth_event) {
    bool bad = cond->type == "Unschedulable";
    u.event_type = bad ? "Warning" : "Normal";
    u.event_reason = bad ? "Unschedulable" : "Scheduled";
    u.event_message = bad ? cond->message : "all tasks of the gang are scheduled";
  }
  return u;
}

}  // namespace tephra::scheduler
