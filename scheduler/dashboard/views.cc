#include "scheduler/dashboard/views.h"

#include <algorithm>
#include <map>
#include <set>

#include "api/scheduling.h"

namespace tephra::scheduler {
namespace {

// Free text from users or other components, cut at a character boundary.
std::string_view Clip(std::string_view s) {
  if (s.size() <= kMaxTextBytes) return s;
  size_t end = kMaxTextBytes;
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;
  return s.substr(0, end);
}

void Text(json::Writer& w, std::string_view key, std::string_view value) {
  w.Key(key).String(Clip(value));
}

// Resources in natural units (cpu in cores, memory in bytes, extended resources in units), read
// from the quantities Resources itself writes, so each dimension's unit has one home; the
// pod-count dimension is left out.
void WriteResources(json::Writer& w, std::string_view key, const api::Resources& r) {
  w.Key(key).StartObject();
  for (const auto& [name, q] : DropPods(r).ToList())
    w.Key(name).Double(static_cast<double>(q.MilliValue()) / 1000.0);
  w.EndObject();
}

void WriteSession(json::Writer& w, const SessionSummary& last) {
  w.Key("session").StartObject();
  w.Field("id", last.id);
  w.Field("time", last.id.empty() ? std::string() : base::FormatTime(last.time));
  w.Field("sessions", static_cast<int64_t>(last.sessions));
  w.EndObject();
}

// Tasks placed and staying (IsAllocatedStatus).
int32_t Running(const JobInfo& job) {
  int32_t n = 0;
  for (size_t s = 0; s < kTaskStatusCount; ++s) {
    if (IsAllocatedStatus(static_cast<TaskStatus>(s))) n += job.counts[s];
  }
  return n;
}

double AgeSeconds(const JobInfo& job, base::Time now) {
  if (!job.creation) return 0;
  return std::chrono::duration<double>(now - *job.creation).count();
}

// What the jobs table shows of a job, and the job page's heading.
void WriteJobFields(json::Writer& w, const JobInfo& job, base::Time now) {
  w.Field("namespace", job.namespace_);
  w.Field("name", job.name);
  w.Field("job", OwningVolcanoJob(job));
  w.Field("queue", job.queue);
  w.Field("phase", ShownPhase(job));
  w.Field("priority", job.priority);
  w.Field("created", job.creation ? base::FormatTime(*job.creation) : std::string());
  w.Key("age_seconds").Double(AgeSeconds(job, now));
  w.Field("min_available", job.min_available);
  w.Field("tasks", static_cast<int64_t>(job.tasks.size()));
  w.Field("running", Running(job));
  w.Field("pending", job.Count(TaskStatus::kPending));
}

void WriteQueue(json::Writer& w, const QueueView& v) {
  w.StartObject();
  w.Field("name", v.name);
  w.Field("parent", v.parent);
  w.Field("state", v.state.empty() ? "Open" : v.state);
  w.Field("weight", v.weight);
  w.Field("priority", v.priority);
  w.Field("reclaimable", v.reclaimable);
  w.Field("jobs", v.jobs);
  w.Field("pending_jobs", v.pending_jobs);
  w.Field("share_plugin", v.share_plugin);
  w.Key("share").Double(v.share);
  WriteResources(w, "guarantee", v.guarantee);
  WriteResources(w, "deserved", v.deserved);
  WriteResources(w, "allocated", v.allocated);
  WriteResources(w, "capability", v.capability);
  WriteResources(w, "real_capability", v.real_capability);
  WriteResources(w, "inqueue", v.inqueue);
  WriteResources(w, "pending", v.pending);
  w.EndObject();
}

void WriteExplanation(json::Writer& w, const JobExplanation& e) {
  w.Key("explanation").StartObject();
  w.Field("considered", true);
  Text(w, "summary", Summarize(e));
  w.Field("scheduled", e.scheduled);
  w.Field("admitted", e.admitted);
  w.Field("session", e.session);
  w.Field("time", base::FormatTime(e.time));
  w.Key("gang").StartObject();
  w.Field("min_available", e.min_available);
  w.Field("tasks", e.tasks);
  w.Field("ready", e.ready);
  w.Field("fit", e.fit);
  w.Field("unplaced", e.unplaced);
  w.Field("not_tried", e.not_tried);
  if (e.min_resources) WriteResources(w, "min_resources", *e.min_resources);
  w.EndObject();
  w.Key("unplaced").StartArray();
  for (const auto& g : e.groups) {
    w.StartObject();
    w.Field("tasks", g.tasks);
    w.Field("role", g.role);
    Text(w, "request", DescribeRequest(DropPods(g.request)));
    w.Field("nodes_examined", g.nodes_examined);
    w.Key("reasons").StartArray();
    for (const auto& r : g.reasons) {
      w.StartObject();
      Text(w, "reason", ShortReason(r.reason));
      w.Field("nodes", r.nodes);
      w.EndObject();
    }
    w.EndArray();
    Text(w, "other", g.other);
    w.StringList("example_pods", g.example_pods);
    w.EndObject();
  }
  w.EndArray();
  w.Key("notes").StartArray();
  for (const auto& n : e.notes) w.String(Clip(n.plugin + ": " + n.message));
  w.EndArray();
  Text(w, "expected_start", ExpectedStart(e));
  w.Key("hints").StartArray();
  for (const auto& h : Hints(e)) w.String(Clip(h));
  w.EndArray();
  if (e.condition) {
    w.Key("condition").StartObject();
    w.Field("type", e.condition->type);
    w.Field("status", e.condition->status);
    w.Field("reason", e.condition->reason);
    Text(w, "message", e.condition->message);
    w.EndObject();
  }
  if (e.queue_view) {
    w.Key("queue_state");
    WriteQueue(w, *e.queue_view);
  }
  w.EndObject();
}

// The reasons the pending pods of `job` wait, by the last session's explanation. A job not
// admitted counts even without pods: a Volcano Job's controller creates them only once admitted.
void CountPendingReasons(const JobInfo& job, const JobExplanation* e,
                         std::map<std::string, std::pair<int64_t, std::set<JobId>>>* out) {
  int64_t pending = job.Count(TaskStatus::kPending);
  auto add = [&](const std::string& reason, int64_t pods, bool even_without_pods = false) {
    if (pods <= 0 && !even_without_pods) return;
    auto& [count, jobs] = (*out)[reason];
    count += pods;
    if (jobs.size() < 1000) jobs.insert(job.id);
    pending -= pods;
  };
  if (e == nullptr) {
    add("not considered by a session yet", pending, job.IsPending());
    return;
  }
  if (!e->admitted) {
    add("job not admitted (enqueue: its queue or the cluster lacks room for its minimum)", pending,
        true);
    return;
  }
  for (const auto& g : e->groups) {
    std::string reason = !g.reasons.empty() ? ShortReason(g.reasons.front().reason)
                         : !g.other.empty() ? g.other
                                            : std::string("no node examined");
    add(std::string(Clip(reason)), std::min<int64_t>(g.tasks, pending));
  }
  add("gang incomplete: not tried once the gang could not be complete",
      std::min<int64_t>(e->not_tried, pending));
  add("waiting for the next session", pending);
}

}  // namespace

std::string OverviewJson(const Snapshot& snapshot, const SessionSummary& last,
                         const std::vector<std::string>& scheduler_names,
                         const std::string& version, base::Time now) {
  int64_t pending = 0, running = 0, pending_jobs = 0;
  for (const auto& job : snapshot.jobs) {
    pending += job->Count(TaskStatus::kPending);
    running += Running(*job);
    if (job->IsPending()) ++pending_jobs;
  }
  json::Writer w;
  w.StartObject();
  w.Field("version", version);
  w.StringList("scheduler_names", scheduler_names);
  w.Field("now", base::FormatTime(now));
  WriteSession(w, last);
  w.StringList("actions", last.actions);
  w.StringList("tiers", last.tiers);
  w.Field("nodes", static_cast<int64_t>(snapshot.nodes.size()));
  w.Field("queues", static_cast<int64_t>(snapshot.queues.size()));
  w.Field("jobs", static_cast<int64_t>(snapshot.jobs.size()));
  w.Field("pending_jobs", pending_jobs);
  w.Field("pending_pods", pending);
  w.Field("running_pods", running);
  WriteResources(w, "cluster", snapshot.total);
  w.EndObject();
  return w.Take();
}

std::string QueuesJson(const Snapshot& snapshot, const SessionSummary& last) {
  std::map<std::string, QueueView> views = QueueViewsOf(snapshot);
  ApplyShares(last.shares, &views);
  json::Writer w;
  w.StartObject();
  WriteSession(w, last);
  WriteResources(w, "cluster", snapshot.total);
  w.Key("queues").StartArray();
  for (const auto& [name, view] : views) WriteQueue(w, view);
  w.EndArray();
  w.EndObject();
  return w.Take();
}

std::string JobsJson(const Snapshot& snapshot, const SessionRecorder& recorder,
                     const JobFilter& filter, base::Time now) {
  std::vector<const JobInfo*> selected;
  for (const auto& job : snapshot.jobs) {
    if (!filter.namespace_.empty() && job->namespace_ != filter.namespace_) continue;
    if (!filter.queue.empty() && job->queue != filter.queue) continue;
    if (!filter.phase.empty() && ShownPhase(*job) != filter.phase) continue;
    if (!filter.name.empty() && job->name.find(filter.name) == std::string::npos &&
        OwningVolcanoJob(*job).find(filter.name) == std::string::npos) {
      continue;
    }
    selected.push_back(job.get());
  }
  // Newest first; jobs without a creation time last, then by id, so pages are stable.
  std::sort(selected.begin(), selected.end(), [](const JobInfo* a, const JobInfo* b) {
    if (a->creation.has_value() != b->creation.has_value()) return a->creation.has_value();
    if (a->creation && *a->creation != *b->creation) return *a->creation > *b->creation;
    return a->id < b->id;
  });
  const size_t shown = std::min(selected.size(), filter.limit);
  json::Writer w;
  w.StartObject();
  w.Field("total", static_cast<int64_t>(selected.size()));
  w.Field("shown", static_cast<int64_t>(shown));
  w.Field("truncated", shown < selected.size());
  w.Key("jobs").StartArray();
  for (size_t i = 0; i < shown; ++i) {
    const JobInfo& job = *selected[i];
    w.StartObject();
    WriteJobFields(w, job, now);
    std::shared_ptr<const JobExplanation> e = recorder.Explanation(job.id);
    Text(w, "summary", e && job.Count(TaskStatus::kPending) > 0 ? Summarize(*e) : "");
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.Take();
}

std::string JobJson(const JobInfo& job, const JobExplanation* explanation, bool queue_exists,
                    const std::vector<EventRow>& events, base::Time now) {
  json::Writer w;
  w.StartObject();
  WriteJobFields(w, job, now);
  if (explanation != nullptr) {
    WriteExplanation(w, *explanation);
  } else {
    NotConsidered why = ExplainNotConsidered(job, queue_exists);
    w.Key("explanation").StartObject();
    w.Field("considered", false);
    Text(w, "summary", why.summary);
    w.Key("hints").StartArray();
    if (!why.hint.empty()) w.String(why.hint);
    w.EndArray();
    w.EndObject();
  }
  w.Key("conditions").StartArray();
  if (job.pod_group) {
    for (const auto& c : job.pod_group->status.conditions) {
      w.StartObject();
      w.Field("type", c.type);
      w.Field("status", c.status);
      w.Field("reason", c.reason);
      Text(w, "message", c.message);
      w.Field("last_transition",
              c.last_transition_time ? base::FormatTime(*c.last_transition_time) : "");
      w.EndObject();
    }
  }
  w.EndArray();
  // Pods by name, so the page is stable between refreshes.
  std::vector<const TaskInfo*> tasks;
  for (const auto& [uid, t] : job.tasks) tasks.push_back(&t);
  std::sort(tasks.begin(), tasks.end(),
            [](const TaskInfo* a, const TaskInfo* b) { return a->name() < b->name(); });
  std::set<std::string> nodes;
  w.Field("pods_total", static_cast<int64_t>(tasks.size()));
  w.Key("pods").StartArray();
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (!tasks[i]->node.empty()) nodes.insert(tasks[i]->node);
    if (i >= kMaxPodRows) continue;
    w.StartObject();
    w.Field("name", tasks[i]->name());
    w.Field("role", tasks[i]->pod->task_role);
    w.Field("status", TaskStatusName(tasks[i]->status));
    w.Field("node", tasks[i]->node);
    w.Field("priority", tasks[i]->priority);
    w.EndObject();
  }
  w.EndArray();
  w.Key("nodes").StartArray();
  for (const auto& n : nodes) w.String(n);
  w.EndArray();
  w.Key("events").StartArray();
  for (const auto& e : events) {
    w.StartObject();
    w.Field("type", e.type);
    Text(w, "reason", e.reason);
    Text(w, "message", e.message);
    Text(w, "object", e.object);
    w.Field("count", e.count);
    w.Field("last_seen", e.last_seen);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.Take();
}

std::string ClusterJson(const Snapshot& snapshot, const SessionRecorder& recorder,
                        size_t max_nodes) {
  json::Writer w;
  w.StartObject();
  w.Field("total_nodes", static_cast<int64_t>(snapshot.nodes.size()));
  const size_t shown = std::min(snapshot.nodes.size(), max_nodes);
  w.Field("shown_nodes", static_cast<int64_t>(shown));
  WriteResources(w, "cluster", snapshot.total);
  w.Key("nodes").StartArray();
  for (size_t i = 0; i < shown; ++i) {
    const NodeInfo& n = *snapshot.nodes[i];
    w.StartObject();
    w.Field("name", n.name);
    w.Field("ready", n.ready);
    w.Field("unschedulable", n.unschedulable);
    w.Field("pods", static_cast<int64_t>(n.tasks.size()));
    WriteResources(w, "allocatable", n.allocatable);
    WriteResources(w, "used", n.used);
    w.EndObject();
  }
  w.EndArray();
  std::map<std::string, std::pair<int64_t, std::set<JobId>>> reasons;
  for (const auto& job : snapshot.jobs) {
    if (job->Count(TaskStatus::kPending) == 0 && !job->IsPending()) continue;
    std::shared_ptr<const JobExplanation> e = recorder.Explanation(job->id);
    CountPendingReasons(*job, e.get(), &reasons);
  }
  std::vector<std::pair<std::string, std::pair<int64_t, std::set<JobId>>>> sorted(reasons.begin(),
                                                                                  reasons.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return a.second.first != b.second.first ? a.second.first > b.second.first : a.first < b.first;
  });
  w.Key("pending_by_reason").StartArray();
  for (const auto& [reason, counted] : sorted) {
    w.StartObject();
    Text(w, "reason", reason);
    w.Field("pods", counted.first);
    w.Field("jobs", static_cast<int64_t>(counted.second.size()));
    w.Key("example_jobs").StartArray();
    size_t listed = 0;
    for (const auto& id : counted.second) {
      if (listed++ == 3) break;
      w.String(id);
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.Take();
}

std::string HistoryJson(const std::vector<HistoryBucket>& buckets, std::chrono::seconds bucket) {
  const double seconds = static_cast<double>(bucket.count());
  json::Writer w;
  w.StartObject();
  w.Field("bucket_seconds", static_cast<int64_t>(bucket.count()));
  w.Key("dimensions").StartArray();
  for (const char* d : kHistoryDimNames) w.String(d);
  w.EndArray();
  w.Key("buckets").StartArray();
  for (const auto& b : buckets) {
    w.StartObject();
    w.Field("time", base::FormatTime(b.start));
    w.Field("sessions", b.sessions);
    w.Field("binds", b.binds);
    w.Key("bind_rate").Double(static_cast<double>(b.binds) / seconds);
    w.Field("evictions", b.evictions);
    w.Field("pending_pods", b.pending_pods);
    w.Key("session_ms_mean")
        .Double(b.sessions > 0 ? b.session_ms_sum / static_cast<double>(b.sessions) : 0);
    w.Key("session_ms_max").Double(b.session_ms_max);
    w.Key("queues").StartObject();
    for (const auto& [name, q] : b.queues) {
      w.Key(name).StartObject();
      w.Key("allocated").StartArray();
      for (double v : q.allocated) w.Double(v);
      w.EndArray();
      w.Key("deserved");
      if (q.has_deserved) {
        w.StartArray();
        for (double v : q.deserved) w.Double(v);
        w.EndArray();
      } else {
        w.Null();
      }
      w.EndObject();
    }
    w.EndObject();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.Take();
}

EventRow EventRowOf(const json::Value& event) {
  json::Errors errors;  // missing or odd fields read as empty: the list is only shown
  json::Reader r(&event, &errors);
  EventRow row;
  row.type = r["type"].String();
  row.reason = std::string(Clip(r["reason"].String()));
  row.message = std::string(Clip(r["message"].String()));
  row.object = r["involvedObject"]["kind"].String() + "/" + r["involvedObject"]["name"].String();
  row.count = std::max<int64_t>(1, r["count"].Int(1));
  row.last_seen = r["lastTimestamp"].String();
  if (row.last_seen.empty()) row.last_seen = r["eventTime"].String();
  if (row.last_seen.empty()) row.last_seen = r["metadata"]["creationTimestamp"].String();
  return row;
}

void KeepNewestEvents(std::vector<EventRow>* rows) {
  // RFC 3339 times in UTC sort as text; eventTime's microseconds sort after the plain form of
  // the same second, which is right.
  std::stable_sort(rows->begin(), rows->end(),
                   [](const EventRow& a, const EventRow& b) { return a.last_seen > b.last_seen; });
  if (rows->size() > kMaxEvents) rows->resize(kMaxEvents);
}

StatusOr<size_t> ParseLimit(const std::optional<std::string>& value, size_t fallback, size_t max) {
  if (!value) return fallback;
  size_t n = 0;
  bool digits = !value->empty() && value->size() <= 9;
  for (char c : *value) {
    if (c < '0' || c > '9') digits = false;
    if (digits) n = n * 10 + static_cast<size_t>(c - '0');
  }
  if (!digits || n < 1 || n > max) {
    return InvalidArgument("limit: must be a whole number from 1 to " + std::to_string(max) +
                           ", got \"" + std::string(Clip(*value).substr(0, 32)) + "\"");
  }
  return n;
}

}  // namespace tephra::scheduler
