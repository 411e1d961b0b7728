// A job's sub-gangs: the tasks of each PodGroup subGroupPolicy entry (a Volcano Job task's
// partitionPolicy becomes one), grouped by the values of the entry's matchLabelKeys (the
// partition id). allocate places each whole, inside its own network topology
// (docs/scheduler.md, "Network topology").
#pragma once

#include <string>
#include <vector>

#include "api/scheduling.h"
#include "scheduler/framework/session.h"

namespace tephra::scheduler {

struct SubGroup {
  const api::SubGroupPolicy* policy = nullptr;
  std::string name;                  // "<policy name>/<label values>", e.g. "worker/1"
  std::vector<std::string> pending;  // its schedulable pending tasks, in TaskOrder
  std::vector<size_t> held;          // the nodes its placed tasks hold
};

// The sub-gangs of job j with tasks, in policy order, then by label values (numbers in
// numeric order); empty when its PodGroup has no subGroupPolicy. A task belongs to the first
// policy whose labelSelector matches its pod.
std::vector<SubGroup> SubGroupsOf(const Session& ssn, size_t j);

}  // namespace tephra::scheduler
