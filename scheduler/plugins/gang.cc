// gang: all-or-nothing placement of a job's minAvailable tasks (and each task role's
// minTaskMember, when minAvailable is at least their sum: JobInfo::TaskMinimumsApply).
//   JobValid      enough valid pods exist to ever satisfy the gang
//   JobReady      ready tasks >= minAvailable and every role >= its minimum
//   JobPipelined  ready + pipelined tasks would satisfy the gang (Permit) or not (Reject)
//   JobOrder      jobs not yet ready go first
//   JobStarving   ready + pipelined < minAvailable
//   victims       (veto) a running gang keeps minAvailable tasks and each role its minimum
//   close         PodGroup condition: Unschedulable (why, per task reason) or Scheduled
#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/framework/session.h"
#include "scheduler/plugins/plugins.h"

namespace tephra::scheduler {
namespace {

struct RoleCount {
  int32_t valid = 0;
  int32_t ready = 0;
  int32_t waiting = 0;
};

constexpr std::string_view kScheduledReason = "tasks in gang are ready to be scheduled";

// Whether the job's PodGroup carries exactly the condition a ready gang gets, and no
// Unschedulable condition that the Scheduled one would turn False.
bool SaysScheduled(const JobInfo& job) {
  if (!job.pod_group) return false;
  bool scheduled = false;
  for (const auto& c : job.pod_group->status.conditions) {
    if (c.type == "Unschedulable" && c.status == "True") return false;
    if (c.type == "Scheduled") {
      scheduled = c.status == "True" && c.reason == kScheduledReason && c.message.empty();
    }
  }
  return scheduled;
}

// "gang not whole: 1 ready of minAvailable 2 (1 Running, 1 Failed)".
std::string LostMembers(const JobInfo& job) {
  std::string counts;
  for (TaskStatus status : {TaskStatus::kRunning, TaskStatus::kSucceeded, TaskStatus::kFailed,
                            TaskStatus::kReleasing}) {
    if (int32_t n = job.Count(status)) {
      counts += (counts.empty() ? "" : ", ") + std::to_string(n) + " " +
                std::string(TaskStatusName(status));
    }
  }
  return "gang not whole: " + std::to_string(job.ReadyCount()) + " ready of minAvailable " +
         std::to_string(job.min_available) + " (" + counts + ")";
}

std::map<std::string, RoleCount> CountRoles(const JobInfo& job) {
  std::map<std::string, RoleCount> out;
  for (const auto& [uid, t] : job.tasks) {
    RoleCount& c = out[t.pod->task_role];
    switch (t.status) {
      case TaskStatus::kAllocated:
      case TaskStatus::kBinding:
      case TaskStatus::kBound:
      case TaskStatus::kRunning:
      case TaskStatus::kSucceeded:
        ++c.ready;
        ++c.valid;
        break;
      case TaskStatus::kPipelined:
        ++c.waiting;
        ++c.valid;
        break;
      case TaskStatus::kPending:
        ++c.valid;
        if (t.best_effort()) ++c.ready;
        break;
      default:
        break;
    }
  }
  return out;
}

// Every role with a minimum has at least that many tasks counted by `pick`.
template <typename Pick>
bool RolesSatisfied(const JobInfo& job, Pick pick) {
  if (!job.TaskMinimumsApply()) return true;
  auto counts = CountRoles(job);
  for (const auto& [role, min] : job.min_task_member) {
    auto it = counts.find(role);
    int32_t have = it == counts.end() ? 0 : pick(it->second);
    if (have < min) return false;
  }
  return true;
}

class GangPlugin : public Plugin {
 public:
  std::string_view name() const override { return "gang"; }

  void OnSessionOpen(Session& ssn) override {
    ssn.AddJobValidFn(name(), [](const JobInfo& job) -> std::optional<ValidateResult> {
      if (job.TaskMinimumsApply()) {
        auto counts = CountRoles(job);
        for (const auto& [role, min] : job.min_task_member) {
          auto it = counts.find(role);
          int32_t have = it == counts.end() ? 0 : it->second.valid;
          if (have < min) {
            return ValidateResult{false, "NotEnoughPodsOfTask",
                                  "Not enough valid pods of task " + role +
                                      " for gang-scheduling, valid: " + std::to_string(have) +
                                      ", min: " + std::to_string(min)};
          }
        }
      }
      if (job.ValidCount() < job.min_available) {
        return ValidateResult{false, "NotEnoughTasks",
                              "Not enough valid tasks for gang-scheduling, valid: " +
                                  std::to_string(job.ValidCount()) +
                                  ", min: " + std::to_string(job.min_available)};
      }
      return std::nullopt;
    });
    ssn.AddJobReadyFn(name(), [](const JobInfo& job) {
      return job.ReadyCount() >= job.min_available &&
             RolesSatisfied(job, [](const RoleCount& c) { return c.ready; });
    });
    ssn.AddJobPipelinedFn(name(), [](const JobInfo& job) {
      bool ok = job.ReadyCount() + job.WaitingCount() >= job.min_available &&
                RolesSatisfied(job, [](const RoleCount& c) { return c.ready + c.waiting; });
      return ok ? Vote::kPermit : Vote::kReject;
    });
    ssn.AddJobOrderFn(name(), [](const JobInfo& l, const JobInfo& r) {
      bool lr = l.ReadyCount() >= l.min_available;
      bool rr = r.ReadyCount() >= r.min_available;
      if (lr == rr) return 0;
      return lr ? 1 : -1;
    });
    ssn.AddJobStarvingFn(name(), [](const JobInfo& job) {
      return job.ReadyCount() + job.WaitingCount() < job.min_available;
    });
    // Victims: a running gang gives up only tasks above its minimum (and, where task minimums
    // apply, above its role's minimum), unless the whole gang is offered at once (then it is
    // taken completely, never left half-running).
    Session* s = &ssn;
    VictimsFn keep_gangs = [s](const TaskInfo&, const std::vector<const TaskInfo*>& candidates)
        -> std::optional<std::vector<const TaskInfo*>> {
      std::map<JobId, int32_t> offered;
      for (const TaskInfo* c : candidates) ++offered[c->job()];
      std::map<JobId, GangSlack> slack;
      std::vector<const TaskInfo*> victims;
      for (const TaskInfo* c : candidates) {
        auto j = s->JobIndex(c->job());
        if (!j) continue;
        const JobInfo& job = s->job(*j);
        if (offered[c->job()] >= job.ReadyCount()) {
          victims.push_back(c);  // the whole gang is offered
          continue;
        }
        if (slack.try_emplace(c->job(), job).first->second.Take(c->pod->task_role))
          victims.push_back(c);
      }
      return victims;
    };
    ssn.AddPreemptableVetoFn(name(), keep_gangs);
    ssn.AddReclaimableVetoFn(name(), keep_gangs);
  }

  void OnSessionClose(Session& ssn) override {
    for (size_t i = 0; i < ssn.job_count(); ++i) {
      const JobInfo& job = ssn.job(i);
      if (job.IsPending()) continue;  // not admitted yet: enqueue explains
      int32_t ready = job.ReadyCount();
      if (ready >= job.min_available) {
        const bool touched = ssn.touched_jobs()[i];
        // A settled job whose group already says so is left alone: saying it again would cost
        // every session a copy per running job, and the outcome would be no write anyway.
        if (touched || (job.Count(TaskStatus::kPending) == 0 && !SaysScheduled(job))) {
          ssn.SetJobCondition(i, {"Scheduled", "True", std::string(kScheduledReason), ""});
        }
        continue;
      }
      int32_t unready = static_cast<int32_t>(job.tasks.size()) - ready;
      const auto* errors = ssn.JobFitErrors(i);
      if (errors == nullptr) {
        // Nothing was tried. A running gang with nothing left to place that lost members
        // (failed, or deleted before their replacements exist) cannot be whole: Unschedulable,
        // which makes it Unknown, as in Volcano. Members still terminating count as there.
        if (job.Count(TaskStatus::kPending) == 0 && job.Count(TaskStatus::kRunning) > 0 &&
            ready + job.Count(TaskStatus::kReleasing) < job.min_available) {
          ssn.SetJobCondition(i, {"Unschedulable", "True", "NotEnoughResources",
                                  std::to_string(unready) + "/" + std::to_string(job.tasks.size()) +
                                      " tasks in gang unschedulable: " + LostMembers(job)});
        }
        continue;
      }
      // One clause per distinct explanation, most common first: "2 tasks: 0/4 nodes are
      // available: 4 Insufficient cpu".
      std::map<std::string, int> distinct;
      for (const auto& [uid, e] : *errors) ++distinct[e.ToString()];
      std::vector<std::pair<int, std::string>> clauses;
      for (const auto& [text, n] : distinct) clauses.emplace_back(n, text);
      std::sort(clauses.begin(), clauses.end(),
                [](const auto& a, const auto& b) { return a.first > b.first; });
      std::string why;
      for (size_t k = 0; k < clauses.size() && k < 3; ++k) {
        if (!why.empty()) why += "; ";
        why += std::to_string(clauses[k].first) + (clauses[k].first == 1 ? " task: " : " tasks: ") +
               clauses[k].second;
      }
      std::string message = std::to_string(unready) + "/" + std::to_string(job.tasks.size()) +
                            " tasks in gang unschedulable: " + why;
      ssn.SetJobCondition(i, {"Unschedulable", "True", "NotEnoughResources", message});
    }
  }
};

}  // namespace

std::unique_ptr<Plugin> NewGangPlugin(const PluginOption&) {
  return std::make_unique<GangPlugin>();
}

}  // namespace tephra::scheduler
