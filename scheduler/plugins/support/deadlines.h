// Job deadlines as JobOrder sees them: sla's (creation + waiting time) and priority's
// (tephra.dev/deadline) order jobs by the same rule.
#pragma once

#include <unordered_map>

#include "base/time.h"
#include "scheduler/framework/session.h"

namespace tephra::scheduler {

// Deadlines of a session's jobs that have one, read once a session.
using JobDeadlines = std::unordered_map<const JobInfo*, base::Time>;
// JobOrder by deadline: jobs with one before jobs without, the earliest first; 0 on a tie.
int CompareDeadlines(const JobDeadlines& deadlines, const JobInfo& l, const JobInfo& r);

}  // namespace tephra::scheduler
