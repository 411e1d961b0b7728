// Lifecycle policies (docs/compatibility.md §2.1): what happened to a job (a Request),
// which action it triggers, and actions delayed by a policy's timeout with their cancellation
// rules. Pure functions plus one clock-driven, thread-safe container.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/batch.h"
#include "api/core.h"
#include "base/clock.h"
#include "controllers/job/state_machine.h"
#include "sync/mutex.h"

namespace tephra::controllers::job {

// Something that happened to a job: a pod event, a PodGroup phase change, a Command.
struct Request {
  std::string event;   // api::job_event::*; empty for a plain sync
  std::string action;  // set by a Command: used verbatim
  std::string task;    // volcano.sh/task-spec of the pod
  std::string pod_name;
  std::string pod_uid;
  std::string partition;               // volcano.sh/partition-id of the pod
  std::string job_uid;                 // controller UID of the pod; empty when not from a pod
  std::optional<int32_t> job_version;  // volcano.sh/job-version of the pod
  std::optional<int32_t> exit_code;

  bool operator==(const Request&) const = default;
};

// The pod-derived fields of a Request (task, name, uid, partition, job uid, version).
Request RequestForPod(const api::Pod& pod, std::string_view event);

// The event of a pod update as Volcano derives it (TaskCompleted and TaskFailed are
// candidates the job's worker confirms against the whole task, see ConfirmTaskEvent):
//   pod carries the out-of-sync annotation → OutOfSync; phase became Failed → PodFailed with
//   the exit code of the first container; became Succeeded → TaskCompleted; Running/Pending
//   with a container restart count that grew → TaskFailed; became Running → PodRunning;
//   became Pending → PodPending; otherwise OutOfSync.
Request RequestForPodUpdate(const api::Pod& old_pod, const api::Pod& pod);
// A pod deletion: PodEvicted unless the controller marked the pod out-of-sync first.
Request RequestForPodDelete(const api::Pod& pod);
// A pod addition: PodPending unless out-of-sync, or PodFailed (with its exit code) for a pod
// that is already Failed when first seen.
Request RequestForPodAdd(const api::Pod& pod);

// Turns a candidate TaskCompleted / TaskFailed into OutOfSync unless the task as a whole
// qualifies: TaskCompleted needs every replica Succeeded; TaskFailed needs the restart counts
// of the task's live pods to sum to ≥ its maxRetry (0 reads as api::kDefaultMaxRetry, −1 is
// unlimited).
Request ConfirmTaskEvent(const api::Job& job,
                         const std::vector<std::shared_ptr<const api::Pod>>& pods, Request request);

struct Resolution {
  Action action = Action::kSyncJob;
  std::optional<std::chrono::nanoseconds> delay;  // the matched policy's timeout
  std::string reason;  // what matched, for events: "PodFailed → RestartJob (task worker)"
  bool stale = false;  // the request came from an earlier incarnation or job version

  bool operator==(const Resolution&) const = default;
};

// Policy resolution, in order: a Command's action is used verbatim (unknown → SyncJob);
// internal events (OutOfSync, CommandIssued, PodRunning) sync; a request from a pod of another
// job UID or an older job version syncs (stale); then the request task's policies, then the
// job's, first match wins. A policy matches when its event or events contain the event or
// "*" (PodPending only with a timeout), or when its exitCode equals the request's.
Resolution ResolveAction(const api::Job& job, const Request& request);

// The wait before a job's next restart under Tephra's retry back-off (docs/compatibility.md
// §2.1): for a restarting action (RestartJob, RestartTask, RestartPod, RestartPartition) of a
// Job annotated tephra.dev/restart-backoff with retries left, the annotation's duration doubled
// per restart so far (retryCount), at most tephra.dev/restart-backoff-max (default 5m).
// nullopt: restart at once, as Volcano does.
std::optional<std::chrono::nanoseconds> RestartBackoff(const api::Job& job, Action action);

// Actions waiting for a policy timeout, per job. Thread-safe; time from the clock.
class DelayedActions {
 public:
  struct Entry {
    Request request;  // the request that matched (its pod, task, partition and event)
    Action action = Action::kSyncJob;
    std::chrono::steady_clock::time_point due;
    std::string reason;
  };

  explicit DelayedActions(base::ClockInterface& clock) : clock_(clock) {}

  // Schedules `action` after `delay` for the request's pod unless the same pod already waits
  // for the same action. Returns false for such a duplicate.
  bool Add(const std::string& job_key, const Request& request, Action action,
           std::chrono::nanoseconds delay, std::string reason);
  // Cancellation by a new request about a pod: an event that says it left Pending (not
  // PodPending, not OutOfSync) cancels the pod's PodPending delays; PodRunning cancels its
  // PodFailed and PodEvicted delays.
  void OnRequest(const std::string& job_key, const Request& request);
  // After a user-facing action ran, delays of the same scope go: the whole job for job-wide
  // actions, the task for RestartTask, the pod for RestartPod, the partition for
  // RestartPartition.
  void OnActionExecuted(const std::string& job_key, Action action, const Request& request);
  // Removes and returns the due entries, earliest first.
  std::vector<Entry> TakeDue(const std::string& job_key);
  // Time until the job's earliest entry is due (0 if overdue), nullopt when none waits.
  std::optional<std::chrono::nanoseconds> NextDue(const std::string& job_key) const;
  size_t Size(const std::string& job_key) const;
  void Forget(const std::string& job_key);

 private:
  // Removes the job's entries matching `drop`.
  void EraseIf(const std::string& job_key, const std::function<bool(const Entry&)>& drop);

  base::ClockInterface& clock_;
  mutable sync::Mutex mu_;
  std::map<std::string, std::vector<Entry>> entries_ GUARDED_BY(mu_);
};

}  // namespace tephra::controllers::job
