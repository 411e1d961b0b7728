#include "controllers/job/pod_plan.h"

#include <charconv>

#include "api/labels.h"
#include "controllers/job/builders.h"

namespace tephra::controllers::job {
namespace {

int32_t TaskIndexOf(const api::Pod& pod) {
  const std::string text = pod.metadata.Label(api::kTaskIndexKey);
  int32_t v = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || v < 0) return -1;
  return v;
}

bool PodReady(const api::Pod& pod) {
  if (pod.status.phase == api::pod_phase::kSucceeded) return true;
  if (pod.status.phase != api::pod_phase::kRunning) return false;
  if (const api::PodCondition* ready = pod.Condition("Ready")) return ready->status == "True";
  if (pod.status.container_statuses.empty()) return false;
  for (const auto& c : pod.status.container_statuses) {
    if (!c.ready) return false;
  }
  return true;
}

}  // namespace

std::vector<const api::Pod*> PodsToKill(const std::vector<std::shared_ptr<const api::Pod>>& pods,
                                        Kill kill, Action action, const Request& request,
                                        const std::set<std::string>& deleted_pod_uids) {
  std::vector<const api::Pod*> victims;
  for (const auto& p : pods) {
    if (p->metadata.deletion_timestamp || deleted_pod_uids.count(p->metadata.uid)) continue;
    const std::string& phase = p->status.phase;
    const bool finished = phase == api::pod_phase::kSucceeded || phase == api::pod_phase::kFailed;
    bool kill_it = false;
    switch (kill) {
      case Kill::kNone:
        break;
      case Kill::kSoft:
        kill_it = !finished;
        break;
      case Kill::kHard:
        kill_it = true;
        break;
      case Kill::kTarget: {
        const bool same_task = p->metadata.Label(api::kTaskSpecKey) == request.task;
        if (action == Action::kRestartPod) {
          kill_it = p->metadata.uid == request.pod_uid || p->metadata.name == request.pod_name;
        } else if (action == Action::kRestartPartition) {
          kill_it = same_task && p->metadata.Label(api::kPartitionIdLabel) == request.partition;
        } else {
          kill_it = same_task;
        }
        break;
      }
    }
    if (kill_it) victims.push_back(p.get());
  }
  return victims;
}

std::vector<const api::Pod*> SurplusPods(const api::Job& job,
                                         const std::vector<std::shared_ptr<const api::Pod>>& pods,
                                         const std::set<std::string>& deleted_pod_uids) {
  std::vector<const api::Pod*> surplus;
  for (const auto& p : pods) {
    if (p->metadata.deletion_timestamp || deleted_pod_uids.count(p->metadata.uid)) continue;
    const api::TaskSpec* task = job.Task(p->metadata.Label(api::kTaskSpecKey));
    const int32_t index = TaskIndexOf(*p);
    const bool out_of_sync =
        p->metadata.annotations.count(std::string(api::kControllerOutOfSyncAnnotation)) != 0;
    if (task == nullptr || index < 0 || index >= task->replicas || out_of_sync) {
      surplus.push_back(p.get());
    }
  }
  return surplus;
}

std::vector<PodToCreate> MissingPods(const api::Job& job,
                                     const std::vector<std::shared_ptr<const api::Pod>>& pods,
                                     const std::map<std::string, base::Time>& created) {
  std::set<std::string> cached;
  for (const auto& p : pods) cached.insert(p->metadata.name);

  // Which tasks may start: dependsOn waits for its dependencies to be ready.
  auto task_ready = [&](const std::string& name) {
    const api::TaskSpec* t = job.Task(name);
    if (t == nullptr) return false;
    int32_t ready = 0;
    for (const auto& p : pods) {
      if (p->metadata.Label(api::kTaskSpecKey) == name && PodReady(*p)) ++ready;
    }
    return ready >= t->min_available.value_or(t->replicas);
  };

  std::vector<PodToCreate> missing;
  for (const api::TaskSpec& task : job.spec.tasks) {
    if (task.depends_on && !task.depends_on->names.empty()) {
      size_t ready = 0;
      for (const std::string& dep : task.depends_on->names) ready += task_ready(dep) ? 1u : 0u;
      const bool any = task.depends_on->iteration == "any";
      if (any ? ready == 0 : ready < task.depends_on->names.size()) continue;
    }
    for (int32_t i = 0; i < task.replicas; ++i) {
      std::string name = PodName(job.metadata.name, task.name, i);
      if (cached.count(name) || created.count(name)) continue;
      missing.push_back({&task, i, std::move(name)});
    }
  }
  return missing;
}

}  // namespace tephra::controllers::job
