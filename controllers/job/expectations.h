// What the job controller did to a job's pods and PodGroup that its caches may not show yet
// ("expectations"): pods it created, pods and the PodGroup it deleted. A pass counts them as
// done, so it neither creates a pod twice nor counts a deleted one as alive, and forgets them
// once the cache has caught up. Pure data: the controller keeps one per job, touched only by
// the job's worker.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "api/batch.h"
#include "api/core.h"
#include "base/time.h"

namespace tephra::controllers::job {

// A pod this process created but the cache does not show yet is assumed pending for this long.
inline constexpr auto kCreationExpectationTtl = std::chrono::seconds(30);

// The pods one pass created (name, task) and deleted (names), as CountPods (status.h) takes
// them.
struct PodWrites {
  std::vector<std::pair<std::string, std::string>> created;
  std::set<std::string> deleted;
};

struct Expectations {
  std::map<std::string, base::Time> created;  // pod name → when
  std::set<std::string> deleted_pod_uids;
  std::string deleted_podgroup_uid;
  // The HyperNode the deleted PodGroup recorded (volcano.sh/job-allocated-hypernode): the
  // PodGroup a restart creates keeps it, so the job goes back where it ran.
  std::string allocated_hypernode;
  int64_t plugins_updated_generation = -1;

  // Forgets what the cache (the job's `pods`) shows by now: created pods it lists, deleted pods
  // it no longer lists; and creations older than kCreationExpectationTtl at `now`.
  void CatchUp(const std::vector<std::shared_ptr<const api::Pod>>& pods, base::Time now);
  // Adds to `writes` the pods created or deleted earlier that the cache does not show yet: a
  // creation under one of the job's tasks not listed there, a deleted pod still in `pods`.
  void AddUnseen(const api::Job& job, const std::vector<std::shared_ptr<const api::Pod>>& pods,
                 PodWrites* writes) const;
};

}  // namespace tephra::controllers::job
