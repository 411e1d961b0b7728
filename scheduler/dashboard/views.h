// The dashboard's JSON documents (docs/dashboard.md lists every field), built from what the
// scheduler already keeps: the cache's snapshot, the recorder's explanations and queue shares,
// and the history ring. Pure functions, no I/O, so they are tested without a server.
//
// Every document is bounded: lists carry at most their limit (and say how many there were),
// and free text (event messages, reasons) is clipped to kMaxTextBytes.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/time.h"
#include "json/json.h"
#include "scheduler/explain/explain.h"
#include "scheduler/explain/history.h"
#include "scheduler/explain/recorder.h"
#include "scheduler/model/model.h"

namespace tephra::scheduler {

inline constexpr size_t kMaxTextBytes = 2048;
inline constexpr size_t kDefaultJobRows = 500;
inline constexpr size_t kMaxJobRows = 5000;
inline constexpr size_t kDefaultNodeCells = 5000;
inline constexpr size_t kMaxNodeCells = 20000;
inline constexpr size_t kMaxEvents = 20;
inline constexpr size_t kMaxPodRows = 500;

// What the jobs table shows; empty fields match everything.
struct JobFilter {
  std::string namespace_;
  std::string queue;
  std::string phase;  // Pending, Inqueue, Running, ...
  std::string name;   // a substring of the PodGroup's or its Volcano Job's name
  size_t limit = kDefaultJobRows;
};

// One Event about a job (its PodGroup or its Volcano Job), as the API server lists it.
struct EventRow {
  std::string type;  // Normal, Warning
  std::string reason;
  std::string message;
  std::string object;  // "PodGroup/name"
  int64_t count = 1;
  std::string last_seen;  // RFC 3339, as the API server wrote it
};

// The scheduler as a whole: version, names, the last session, object counts.
std::string OverviewJson(const Snapshot& snapshot, const SessionSummary& last,
                         const std::vector<std::string>& scheduler_names,
                         const std::string& version, base::Time now);
// Every queue with its spec, state, jobs and shares (the last session's, over the cache now).
std::string QueuesJson(const Snapshot& snapshot, const SessionSummary& last);
// The jobs `filter` selects, newest first.
std::string JobsJson(const Snapshot& snapshot, const SessionRecorder& recorder,
                     const JobFilter& filter, base::Time now);
// One job: its explanation (or why no session considered it), PodGroup conditions, pods and
// nodes, and `events`.
std::string JobJson(const JobInfo& job, const JobExplanation* explanation, bool queue_exists,
                    const std::vector<EventRow>& events, base::Time now);
// Nodes with their use per cpu, memory and GPU (at most `max_nodes`), and pending pods by the
// reason their last session gave.
std::string ClusterJson(const Snapshot& snapshot, const SessionRecorder& recorder,
                        size_t max_nodes);
// The history buckets, oldest first.
std::string HistoryJson(const std::vector<HistoryBucket>& buckets, std::chrono::seconds bucket);

// One Event object as the API server serves it (missing fields read as empty).
EventRow EventRowOf(const json::Value& event);
// Newest first, at most kMaxEvents.
void KeepNewestEvents(std::vector<EventRow>* rows);

// A query parameter bounded to [1, max] ("limit"), with `fallback` when absent; the error names
// the parameter and the rule.
StatusOr<size_t> ParseLimit(const std::optional<std::string>& value, size_t fallback, size_t max);

}  // namespace tephra::scheduler
