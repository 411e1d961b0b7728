// vcctl mode: tephractl run as `vcctl` (a link of that name, or a leading --vcctl) takes Volcano
// vcctl's commands and flags and prints what vcctl prints, so scripts written for vcctl keep
// working (docs/compatibility.md §6, cli/README.md "vcctl mode").
//
// The printers are separate from the commands so the exact layouts (fixed printf-style column
// widths, dates, headers) are unit-tested without an API server.
#pragma once

#include <iosfwd>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "api/batch.h"
#include "api/core.h"
#include "api/scheduling.h"
#include "base/time.h"

namespace tephra::cli {

// Whether argv[0] and the arguments ask for vcctl mode: the program is named `vcctl`, or the first
// argument is --vcctl (which is then removed from `args`).
bool IsVcctlInvocation(const std::string& program, std::vector<std::string>* args);

// Runs one vcctl command line (`args` without the program). Returns the exit code vcctl would:
// 0, 255 when the operation failed, 2 when the command line is wrong.
int RunVcctl(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// ---- the printers (vcctl's layouts) ----

// "2006-01-02" of `t` in the local time zone, as vcctl prints creation dates.
std::string VcctlDate(base::Time t);
// Kubernetes' short human duration ("45s", "5m30s", "3h", "2d4h", "1y30d").
std::string VcctlDuration(base::Time since, base::Time now);

// `job list`: Name, Creation, Phase, JobType, Replicas, Min, Pending, Running, Succeeded, Failed,
// Unknown, RetryCount (Namespace first with --all-namespaces).
std::string VcctlJobList(const std::vector<std::shared_ptr<api::Job>>& jobs, bool all_namespaces);

// `job view`: the job's fields, indented two spaces per level; `events` are the job's events
// (type, reason, age, source, message), printed after it.
struct VcctlEvent {
  std::string type;
  std::string reason;
  std::string age;
  std::string source;
  std::string message;
};
std::string VcctlJobView(const api::Job& job, const std::vector<VcctlEvent>& events);

// PodGroups per phase of one queue.
using VcctlPhaseCounts = std::map<std::string, int>;
// `queue list`: Name, Weight, State, Parent, Inqueue, Pending, Running, Unknown, Completed.
// `counts` is keyed by queue name.
std::string VcctlQueueList(const std::vector<std::shared_ptr<api::Queue>>& queues,
                           const std::map<std::string, VcctlPhaseCounts>& counts);

// `pod list`: Name, Ready, Status, Restart, Age, each column as wide as its widest cell plus 8.
std::string VcctlPodList(const std::vector<std::shared_ptr<api::Pod>>& pods, base::Time now);

}  // namespace tephra::cli
