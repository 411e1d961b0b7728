#include "scheduler/framework/outcome.h"

#include <algorithm>
#include <map>

#include "api/labels.h"

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

api::PodGroup WrittenPodGroup(const api::PodGroup& pg, const PodGroupUpdate& update) {
  api::PodGroup out = pg;
  out.status = update.status;
  if (!update.allocated_hypernode.empty()) {
    out.metadata.annotations[std::string(api::kJobAllocatedHyperNodeAnnotation)] =
        update.allocated_hypernode;
  }
  return out;
}

SessionOutcome ComputeOutcome(const Session& ssn) {
  SessionOutcome out;
  // Whole seconds, as the API server keeps them: the written status then equals its echo.
  const base::Time now = std::chrono::floor<std::chrono::seconds>(ssn.Now());
  std::map<std::string, api::Resources> queue_allocated;  // pods included until the end
  // Jobs of one queue tend to be adjacent: the last queue's sum saves a map lookup per job.
  const std::string* last_queue = nullptr;
  api::Resources* last_sum = nullptr;
  for (size_t j = 0; j < ssn.job_count(); ++j) {
    const JobInfo& job = ssn.job(j);
    if (last_queue == nullptr || *last_queue != job.queue) {
      last_queue = &job.queue;
      last_sum = &queue_allocated[job.queue];
    }
    last_sum->Add(job.allocated);
    if (!job.pod_group) continue;
    // Where a job with a network topology is, said on its PodGroup whenever that changed (so
    // also after a lost write or a restart).
    const HyperNodeInfo* occupied = nullptr;
    if (job.network_topology && ssn.TopologyAware()) {
      occupied = ssn.OccupiedHyperNode(j);
      if (occupied != nullptr && occupied->name == job.pod_group->metadata.Annotation(
                                                       api::kJobAllocatedHyperNodeAnnotation)) {
        occupied = nullptr;
      }
    }
    const std::string* hypernode = occupied ? &occupied->name : nullptr;
    if (StatusChanges(ssn, j) || hypernode != nullptr) {
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
      bool acted_on =
          phase != was &&
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
      out.pod_groups.push_back(std::move(u));
    }
    // Pods left pending for a reason: PodScheduled=False with that reason, when it changed.
    // Pods the session did not try (the gang was already lost) carry the gang's reason.
    const auto* errors = ssn.JobFitErrors(j);
    const auto& cond = ssn.JobCondition(j);
    bool gang_blocked = cond && cond->type == "Unschedulable";
    if (errors == nullptr && !gang_blocked) continue;
    for (const auto& [uid, task] : job.tasks) {
      bool pipelined = task.status == TaskStatus::kPipelined;
      if (task.status != TaskStatus::kPending && !pipelined) continue;
      // A gated pod's PodScheduled condition is the API server's (SchedulingGated).
      if (!task.pod->spec->scheduling_gates.empty()) continue;
      std::string message;
      if (errors != nullptr) {
        auto e = errors->find(task.uid());
        if (e != errors->end()) message = e->second.ToString();
      }
      if (message.empty() && pipelined) {
        message = "waiting on node " + task.node + " for resources being released";
      }
      if (message.empty()) {
        if (!gang_blocked) continue;
        message = cond->message;
      }
      ScheduledCondition want{"False", "Unschedulable", std::move(message)};
      std::string nominated = pipelined ? task.node : "";
      const auto& have = task.pod->scheduled;
      bool same_node = nominated.empty() || nominated == task.pod->nominated_node;
      if (have && have->status == want.status && have->reason == want.reason &&
          have->message == want.message && same_node) {
        continue;
      }
      out.pods.push_back(
          {job.namespace_, task.name(), task.uid(), std::move(want), std::move(nominated)});
    }
  }
  for (auto& [name, used] : queue_allocated) used.Erase(api::kResourcePods);
  // Roll usage up the queue hierarchy.
  std::map<std::string, api::Resources> rolled = queue_allocated;
  for (const auto& [name, used] : queue_allocated) {
    std::string parent = ssn.queue(name) != nullptr ? ssn.queue(name)->parent : "";
    for (int depth = 0; !parent.empty() && depth < 16; ++depth) {
      rolled[parent].Add(used);
      const QueueInfo* p = ssn.queue(parent);
      parent = p != nullptr && p->name != "root" ? p->parent : "";
    }
  }
  const api::Resources cluster = WithoutPods(ssn.total_resource());
  for (const auto& [name, q] : ssn.queues()) {
    std::vector<std::string> beyond =
        cluster.IsEmpty() ? std::vector<std::string>{} : q->GuaranteeBeyond(cluster);
    if (beyond.empty()) continue;
    api::Resources asked, has;
    for (const auto& r : beyond) {
      asked.Set(r, q->guarantee.Get(r));
      has.Set(r, cluster.Get(r));
    }
    out.queue_warnings.push_back({name, "GuaranteeNotHonoured",
                                  "guarantee " + asked.ToString() + " exceeds the whole cluster (" +
                                      has.ToString() +
                                      "): it is not honoured, and the queue shares the cluster by "
                                      "weight until the guarantee fits"});
  }
  for (const auto& [name, q] : ssn.queues()) {
    api::Resources want = rolled[name];
    api::Resources have = q->queue
                              ? WithoutPods(api::Resources::FromList(q->queue->status.allocated))
                              : api::Resources{};
    // Compare on the values that matter, ignoring dimensions present with zero.
    if (want.LessEqual(have, api::Resources::Missing::kZero) &&
        have.LessEqual(want, api::Resources::Missing::kZero)) {
      continue;
    }
    api::ResourceList list = want.ToList();
    list.Erase(api::kResourcePods);
    out.queues.push_back({name, std::move(list)});
  }
  return out;
}

}  // namespace tephra::scheduler
