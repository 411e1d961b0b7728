#include "controllers/job/policy.h"

#include <algorithm>
#include <charconv>

#include "api/labels.h"
#include "base/time.h"

namespace tephra::controllers::job {
namespace {

namespace ev = api::job_event;

bool OutOfSync(const api::Pod& pod) {
  return pod.metadata.annotations.count(std::string(api::kControllerOutOfSyncAnnotation)) != 0;
}

std::optional<int32_t> ParseInt32(const std::string& text) {
  int32_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

int64_t RestartCount(const api::Pod& pod) {
  int64_t n = 0;
  for (const auto& c : pod.status.container_statuses) n += c.restart_count;
  for (const auto& c : pod.status.init_container_statuses) n += c.restart_count;
  return n;
}

std::optional<int32_t> FirstContainerExitCode(const api::Pod& pod) {
  if (pod.status.container_statuses.empty()) return std::nullopt;
  const api::ContainerStatus& c = pod.status.container_statuses.front();
  if (c.state.kind == api::ContainerState::Kind::kTerminated) return c.state.exit_code;
  if (c.last_state.kind == api::ContainerState::Kind::kTerminated) return c.last_state.exit_code;
  return std::nullopt;
}

bool IsInternalEvent(std::string_view event) {
  return event == ev::kOutOfSync || event == ev::kCommandIssued || event == ev::kPodRunning;
}

std::vector<std::string> PolicyEvents(const api::LifecyclePolicy& p) {
  std::vector<std::string> events = p.events;
  if (!p.event.empty()) events.push_back(p.event);
  return events;
}

// The first matching policy of `policies`, if any.
std::optional<Resolution> Match(const std::vector<api::LifecyclePolicy>& policies,
                                const Request& request, std::string_view scope) {
  for (const auto& p : policies) {
    auto action = ParseAction(p.action);
    if (!action) continue;
    bool matched = false;
    std::string why;
    if (!request.event.empty()) {
      for (const std::string& e : PolicyEvents(p)) {
        if (e != request.event && e != ev::kAny) continue;
        // A pod is pending for a while in every normal start: only a timeout makes it news.
        if (request.event == ev::kPodPending && !p.timeout) continue;
        matched = true;
        why = request.event;
        break;
      }
    }
    if (!matched && p.exit_code && request.exit_code && *p.exit_code == *request.exit_code) {
      matched = true;
      why = "exit code " + std::to_string(*request.exit_code);
    }
    if (!matched) continue;
    Resolution r;
    r.action = *action;
    if (p.timeout) r.delay = *p.timeout;
    r.reason = why + " -> " + p.action + " (" + std::string(scope) + " policy)";
    return r;
  }
  return std::nullopt;
}

}  // namespace

Request RequestForPod(const api::Pod& pod, std::string_view event) {
  Request r;
  r.event = std::string(event);
  r.task = pod.metadata.Label(api::kTaskSpecKey);
  if (r.task.empty()) r.task = pod.metadata.Annotation(api::kTaskSpecKey);
  r.pod_name = pod.metadata.name;
  r.pod_uid = pod.metadata.uid;
  r.partition = pod.metadata.Label(api::kPartitionIdLabel);
  if (const kube::OwnerReference* owner = pod.metadata.ControllerRef()) r.job_uid = owner->uid;
  r.job_version = ParseInt32(pod.metadata.Annotation(api::kJobVersionAnnotation));
  return r;
}

Request RequestForPodAdd(const api::Pod& pod) {
  if (OutOfSync(pod)) return RequestForPod(pod, ev::kOutOfSync);
  // A pod first seen Failed failed while no controller was watching (a restart, a new leader,
  // a relist after an outage): its PodFailed policy is still owed. Were it dropped, an
  // AbortJob gang would keep its dead member and never fit again.
  if (pod.status.phase == api::pod_phase::kFailed) {
    Request r = RequestForPod(pod, ev::kPodFailed);
    r.exit_code = FirstContainerExitCode(pod);
    return r;
  }
  return RequestForPod(pod, ev::kPodPending);
}

Request RequestForPodDelete(const api::Pod& pod) {
  return RequestForPod(pod, OutOfSync(pod) ? ev::kOutOfSync : ev::kPodEvicted);
}

Request RequestForPodUpdate(const api::Pod& old_pod, const api::Pod& pod) {
  if (OutOfSync(pod)) return RequestForPod(pod, ev::kOutOfSync);
  const std::string& before = old_pod.status.phase;
  const std::string& now = pod.status.phase;
  if (now != before && now == api::pod_phase::kFailed) {
    Request r = RequestForPod(pod, ev::kPodFailed);
    r.exit_code = FirstContainerExitCode(pod);
    return r;
  }
  if (now != before && now == api::pod_phase::kSucceeded) {
    return RequestForPod(pod, ev::kTaskCompleted);
  }
  if ((now == api::pod_phase::kRunning || now == api::pod_phase::kPending) &&
      RestartCount(pod) > RestartCount(old_pod)) {
    return RequestForPod(pod, ev::kTaskFailed);
  }
  if (now != before && now == api::pod_phase::kRunning) return RequestForPod(pod, ev::kPodRunning);
  if (now != before && now == api::pod_phase::kPending) return RequestForPod(pod, ev::kPodPending);
  return RequestForPod(pod, ev::kOutOfSync);
}

Request ConfirmTaskEvent(const api::Job& job,
                         const std::vector<std::shared_ptr<const api::Pod>>& pods,
                         Request request) {
  const bool completed = request.event == ev::kTaskCompleted;
  const bool failed = request.event == ev::kTaskFailed;
  if (!completed && !failed) return request;
  const api::TaskSpec* task = job.Task(request.task);
  bool confirmed = false;
  if (task != nullptr && completed) {
    int32_t succeeded = 0;
    for (const auto& pod : pods) {
      if (pod->metadata.Label(api::kTaskSpecKey) == task->name &&
          pod->status.phase == api::pod_phase::kSucceeded) {
        ++succeeded;
      }
    }
    confirmed = succeeded >= task->replicas && task->replicas > 0;
  } else if (task != nullptr && failed) {
    int64_t budget = task->max_retry == 0 ? api::kDefaultMaxRetry : task->max_retry;
    if (budget >= 0) {
      int64_t restarts = 0;
      for (const auto& pod : pods) {
        const std::string& phase = pod->status.phase;
        if (pod->metadata.Label(api::kTaskSpecKey) != task->name) continue;
        if (pod->metadata.deletion_timestamp) continue;
        if (phase == api::pod_phase::kRunning || phase == api::pod_phase::kPending ||
            phase.empty()) {
          restarts += RestartCount(*pod);
        }
      }
      confirmed = restarts >= budget;
    }
  }
  if (!confirmed) request.event = std::string(ev::kOutOfSync);
  return request;
}

Resolution ResolveAction(const api::Job& job, const Request& request) {
  Resolution r;
  if (!request.action.empty()) {
    r.action = ParseAction(request.action).value_or(Action::kSyncJob);
    r.reason = "command " + request.action;
    return r;
  }
  if (IsInternalEvent(request.event)) return r;
  if ((!request.job_uid.empty() && request.job_uid != job.metadata.uid) ||
      (request.job_version && *request.job_version < job.status.version)) {
    r.stale = true;
    return r;
  }
  if (!request.task.empty()) {
    if (const api::TaskSpec* task = job.Task(request.task)) {
      if (auto m = Match(task->policies, request, "task " + task->name)) return *m;
    }
  }
  if (auto m = Match(job.spec.policies, request, "job")) return *m;
  return r;
}

std::optional<std::chrono::nanoseconds> RestartBackoff(const api::Job& job, Action action) {
  const bool restarts = action == Action::kRestartJob || action == Action::kRestartTask ||
                        action == Action::kRestartPod || action == Action::kRestartPartition;
  if (!restarts || job.status.retry_count >= job.spec.max_retry) return std::nullopt;
  const auto& a = job.metadata.annotations;
  // Malformed values are refused by admission; one that got in anyway means no back-off.
  auto read = [&a](std::string_view key) -> std::optional<std::chrono::nanoseconds> {
    auto it = a.find(std::string(key));
    return it == a.end() ? std::nullopt : base::ParsePositiveDuration(it->second);
  };
  std::optional<std::chrono::nanoseconds> first = read(api::kRestartBackoffKey);
  if (!first) return std::nullopt;
  const std::chrono::nanoseconds cap =
      read(api::kRestartBackoffMaxKey).value_or(std::chrono::minutes(5));
  std::chrono::nanoseconds delay = *first;
  for (int32_t i = 0; i < job.status.retry_count && delay < cap; ++i) delay *= 2;
  return std::min(delay, cap);
}

bool DelayedActions::Add(const std::string& job_key, const Request& request, Action action,
                         std::chrono::nanoseconds delay, std::string reason) {
  sync::MutexLock l(mu_);
  auto& list = entries_[job_key];
  for (const Entry& e : list) {
    if (e.request.pod_uid == request.pod_uid && e.action == action) return false;
  }
  auto due =
      clock_.Monotonic() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(delay);
  list.push_back(Entry{request, action, due, std::move(reason)});
  return true;
}

void DelayedActions::EraseIf(const std::string& job_key,
                             const std::function<bool(const Entry&)>& drop) {
  sync::MutexLock l(mu_);
  auto it = entries_.find(job_key);
  if (it == entries_.end()) return;
  auto& list = it->second;
  list.erase(std::remove_if(list.begin(), list.end(), drop), list.end());
  if (list.empty()) entries_.erase(it);
}

void DelayedActions::OnRequest(const std::string& job_key, const Request& request) {
  if (request.pod_uid.empty()) return;
  EraseIf(job_key, [&](const Entry& e) {
    if (e.request.pod_uid != request.pod_uid) return false;
    const std::string& waiting = e.request.event;
    // Only leaving Pending cancels: an update that leaves the pod pending (a scheduler's
    // PodScheduled condition, OutOfSync) does not (docs/compatibility.md, Delayed actions).
    if (waiting == ev::kPodPending)
      return request.event != ev::kPodPending && request.event != ev::kOutOfSync;
    if (waiting == ev::kPodFailed || waiting == ev::kPodEvicted) {
      return request.event == ev::kPodRunning;
    }
    return false;
  });
}

void DelayedActions::OnActionExecuted(const std::string& job_key, Action action,
                                      const Request& request) {
  if (action == Action::kSyncJob) return;
  EraseIf(job_key, [&](const Entry& e) {
    switch (action) {
      case Action::kRestartTask:
        return e.request.task == request.task;
      case Action::kRestartPod:
        return e.request.pod_uid == request.pod_uid;
      case Action::kRestartPartition:
        return e.request.task == request.task && e.request.partition == request.partition;
      default:
        return true;
    }
  });
}

std::vector<DelayedActions::Entry> DelayedActions::TakeDue(const std::string& job_key) {
  sync::MutexLock l(mu_);
  std::vector<Entry> due;
  auto it = entries_.find(job_key);
  if (it == entries_.end()) return due;
  const auto now = clock_.Monotonic();
  auto& list = it->second;
  auto split =
      std::stable_partition(list.begin(), list.end(), [&](const Entry& e) { return e.due > now; });
  due.assign(std::make_move_iterator(split), std::make_move_iterator(list.end()));
  list.erase(split, list.end());
  if (list.empty()) entries_.erase(it);
  std::stable_sort(due.begin(), due.end(),
                   [](const Entry& a, const Entry& b) { return a.due < b.due; });
  return due;
}

std::optional<std::chrono::nanoseconds> DelayedActions::NextDue(const std::string& job_key) const {
  sync::MutexLock l(mu_);
  auto it = entries_.find(job_key);
  if (it == entries_.end() || it->second.empty()) return std::nullopt;
  auto earliest = it->second.front().due;
  for (const Entry& e : it->second) earliest = std::min(earliest, e.due);
  auto left = earliest - clock_.Monotonic();
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::max(left, std::chrono::steady_clock::duration::zero()));
}

size_t DelayedActions::Size(const std::string& job_key) const {
  sync::MutexLock l(mu_);
  auto it = entries_.find(job_key);
  return it == entries_.end() ? 0 : it->second.size();
}

void DelayedActions::Forget(const std::string& job_key) {
  sync::MutexLock l(mu_);
  entries_.erase(job_key);
}

}  // namespace tephra::controllers::job
