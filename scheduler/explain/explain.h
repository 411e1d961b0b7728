// Why a job is where it is: the scheduler's own last decision about it, kept per job.
//
// At the close of every session the recorder (recorder.h) turns what the session concluded
// about each job it considered — per-task fit errors, the gang rule, plugin notes (why a job
// was not admitted), the queue's entitlement — into a JobExplanation. Nothing here is
// recomputed later: the explanation is the decision, aggregated.
//
// Aggregation: failed tasks are grouped by (pod spec, fit errors); a task the session did not
// try because its gang could no longer be complete joins the group of a failed task with the
// same spec (it would fail the same way: allocate's predicate-error cache makes the same
// assumption). The summary reads
//
//   6/10 tasks fit; 4 need 8 CPU: 3,200 nodes Insufficient cpu, 1,800 nodes had untolerated
//   taint gpu=true:NoSchedule
//
// Building an explanation copies a few strings per failed task group; the text (summary,
// hints) is produced only when somebody asks.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "api/resources.h"
#include "base/time.h"
#include "scheduler/framework/session.h"
#include "scheduler/model/model.h"

namespace tephra::scheduler {

struct ReasonNodes {
  std::string reason;  // "Insufficient cpu", "node(s) had untolerated taint gpu=true:NoSchedule"
  int32_t nodes = 0;
  bool operator==(const ReasonNodes&) const = default;
};

// Tasks of one job that found no node, for the same reasons.
struct UnplacedGroup {
  int32_t tasks = 0;
  std::string role;        // volcano.sh/task-spec
  api::Resources request;  // one task's request, without the pod count
  int32_t nodes_examined = 0;
  std::vector<ReasonNodes> reasons;       // most nodes first
  std::string other;                      // a reason not tied to nodes
  std::vector<std::string> example_pods;  // at most kExamplePods
  // The largest free amount on any node, per requested resource the nodes lacked (for hints).
  std::map<std::string, int64_t> largest_free;
};

// A queue as the session saw it: its spec, its state, and the entitlement the share plugin
// (proportion or capacity) computed.
struct QueueView {
  std::string name;
  std::string state;  // Open, Closed, Closing, Unknown ("" reads as Open)
  int32_t weight = 1;
  int32_t priority = 0;
  std::string parent;
  bool reclaimable = true;
  api::Resources capability;  // empty: unlimited
  api::Resources guarantee;
  api::Resources allocated;
  api::Resources pending;  // pending pods' requests, plus minResources of jobs not admitted
  int32_t jobs = 0;
  int32_t pending_jobs = 0;  // PodGroup phase Pending (not admitted)
  // From the share plugin; `share_plugin` is empty when no plugin reported.
  std::string share_plugin;
  api::Resources deserved;
  api::Resources real_capability;
  api::Resources inqueue;
  double share = 0;
};

struct JobExplanation {
  JobId id;  // namespace/podgroup
  std::string namespace_;
  std::string pod_group;
  std::string owner_job;  // the Volcano Job owning the PodGroup, if any
  std::string queue;
  std::string phase;       // PodGroup phase after the session
  bool admitted = true;    // phase is not Pending
  bool scheduled = false;  // the gang is ready (nothing holds it back)
  std::string session;
  base::Time time;

  int32_t min_available = 0;
  std::map<std::string, int32_t> min_task_member;
  std::optional<api::Resources> min_resources;
  int32_t tasks = 0;
  int32_t ready = 0;
  int32_t fit = 0;
  int32_t unplaced = 0;
  int32_t not_tried = 0;
  std::vector<UnplacedGroup> groups;  // most tasks first

  std::optional<QueueView> queue_view;
  std::vector<JobNote> notes;
  std::optional<JobConditionOut> condition;

  // Its expected start: where JobOrder put it among its queue's waiting jobs (1: next; 0: not
  // waiting), of how many, and the first few ahead of it — a queue admits and places in that
  // order, so those go first unless they do not fit where it does.
  int32_t queue_position = 0;
  int32_t queue_waiting = 0;
  std::vector<JobId> ahead;  // at most kMaxAhead, nearest last
};

inline constexpr size_t kMaxAhead = 3;

inline constexpr size_t kExamplePods = 3;
inline constexpr size_t kMaxGroups = 8;
inline constexpr size_t kMaxReasons = 8;

// Groups the failed tasks of `job` (errors: the session's fit errors of the job, may be null;
// withdrawn: tasks that found a node but were withdrawn with the gang, may be null — they fit,
// so they are in no group). `not_tried` receives the other pending tasks with neither errors
// nor a group of the same spec.
std::vector<UnplacedGroup> GroupUnplaced(const JobInfo& job,
                                         const std::unordered_map<std::string, FitErrors>* errors,
                                         const std::vector<std::string>* withdrawn,
                                         int32_t* not_tried);

// The explanation of job `j` of a closed session. `queue` is the job's queue as the session saw
// it (QueueViews), or null when the queue is unknown; `largest_free` (LargestFree), when given,
// lets hints say how much the best node has left.
JobExplanation ExplainSessionJob(const Session& ssn, size_t j, const QueueView* queue,
                                 const std::map<std::string, int64_t>* largest_free,
                                 base::Time now);

// Per resource dimension, the most any node of the session has free after it closed.
std::map<std::string, int64_t> LargestFree(const Session& ssn);

// Every queue of a closed session with its usage and reported shares.
std::map<std::string, QueueView> QueueViews(const Session& ssn);
// The same over a snapshot (no session: no deserved shares), for "now" views.
std::map<std::string, QueueView> QueueViewsOf(const Snapshot& snapshot);
// Fills the share plugin's figures (deserved, real capability, ...) into `views`.
void ApplyShares(const std::map<std::string, QueueShareReport>& shares,
                 std::map<std::string, QueueView>* views);

// Why a job no session has considered is where it is, from the cache alone: a summary, and what
// to do about it ("" when nothing).
struct NotConsidered {
  std::string summary;
  std::string hint;
};
NotConsidered ExplainNotConsidered(const JobInfo& job, bool queue_exists);

// One line, as in the header comment.
std::string Summarize(const JobExplanation& e);
// "3rd of 7 waiting in queue q, after ns/a, ns/b and 1 more: ...", or "" when it is not waiting.
std::string ExpectedStart(const JobExplanation& e);
// What would have to change for the job to be placed, most specific first.
std::vector<std::string> Hints(const JobExplanation& e);

// `r` without the pod-count dimension (which every task request carries).
api::Resources DropPods(const api::Resources& r);

// Text helpers shared with tephractl-facing output.
std::string FormatCount(int64_t n);                    // 3200 -> "3,200"
std::string Ordinal(int64_t n);                        // 2 -> "2nd", 1011 -> "1,011th"
std::string DescribeRequest(const api::Resources& r);  // "8 CPU, 16Gi memory, 1 nvidia.com/gpu"
// "cpu 8, memory 16Gi" style value of one dimension ("8", "16Gi").
std::string FormatDimension(const std::string& name, int64_t value);
// A reason as it reads after "N nodes": "Insufficient cpu", "had untolerated taint ...".
std::string ShortReason(const std::string& reason);

}  // namespace tephra::scheduler
