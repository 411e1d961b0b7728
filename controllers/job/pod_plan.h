// Which of a job's pods a pass deletes and which it creates: pure functions of the job, its
// pods as cached and what the controller did that the cache does not show yet
// (expectations.h). The job controller carries the plan out.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "api/batch.h"
#include "api/core.h"
#include "base/time.h"
#include "controllers/job/policy.h"
#include "controllers/job/state_machine.h"

namespace tephra::controllers::job {

// The pods a state-machine cell's `kill` deletes (state_machine.h, Kill), for `action` taken on
// `request`: kSoft every unfinished pod, kHard every pod, kTarget the request's pod
// (RestartPod), partition (RestartPartition) or task (the other actions). Pods already being
// deleted, or whose uid is in `deleted_pod_uids`, are left out.
std::vector<const api::Pod*> PodsToKill(const std::vector<std::shared_ptr<const api::Pod>>& pods,
                                        Kill kill, Action action, const Request& request,
                                        const std::set<std::string>& deleted_pod_uids);

// Live pods the job no longer wants: of a task that no longer exists, with an index beyond
// its replicas (scaled down) or none, or marked volcano.sh/controller-out-of-sync. Pods
// already being deleted, or whose uid is in `deleted_pod_uids`, are left out.
std::vector<const api::Pod*> SurplusPods(const api::Job& job,
                                         const std::vector<std::shared_ptr<const api::Pod>>& pods,
                                         const std::set<std::string>& deleted_pod_uids);

struct PodToCreate {
  const api::TaskSpec* task;  // in the job the plan was made for
  int32_t index;
  std::string name;
};

// The pods to create, task by task in the spec's order: every replica not among `pods` nor in
// `created` (created earlier, not cached yet), of the tasks that may start. A task with
// dependsOn starts once its dependencies are ready (all of them, or any with iteration "any"):
// a dependency is ready when at least its minAvailable (else its replicas) pods are Succeeded,
// or Running and Ready.
std::vector<PodToCreate> MissingPods(const api::Job& job,
                                     const std::vector<std::shared_ptr<const api::Pod>>& pods,
                                     const std::map<std::string, base::Time>& created);

}  // namespace tephra::controllers::job
