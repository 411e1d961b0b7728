// The scheduler's view of the cluster as a JSON document, for bug reports and "what if I change
// the configuration" questions: `tephractl snapshot dump` writes one (through the admin API's
// DumpSnapshot), `tephra-scheduler --replay FILE` runs a session on it without an API server.
//
//   {"apiVersion": "tephra.dev/v1alpha1", "kind": "SchedulerSnapshot",
//    "session": "tephra-42", "time": "...", "generation": 1234,
//    "pods":   [<Pod>...],            every pod a node or job below refers to, by metadata.uid
//    "nodes":  [{"node": <Node>, "allocatable": {...}, "ready": true, "unschedulable": false,
//                "tasks": [{"uid": "...", "status": "Running"}]}],
//    "queues": [{"queue": <Queue>, "weight": 1, "capability": {...}, ...}],
//    "jobs":   [{"podGroup": <PodGroup>, "queue": "q", "phase": "Inqueue", "minAvailable": 4,
//                "priority": 0, ..., "tasks": [{"uid": "...", "status": "Pending", "node": "",
//                "priority": 0}]}],
//    "namespaces": {"ns": {labels}}, "pdbs": [...],
//    "decisions": {"binds": [...], "evictions": [...], "phases": [...]}}   (optional)
//
// Pods are written as Kubernetes Pod objects carrying only what the scheduler keeps of them
// (its request folded into one container), so they read back through the scheduler's own pod
// decoder. Statuses, nodes and the scheduler's assumptions (pods it is binding or evicting) are
// written as the scheduler holds them, so a replay starts from exactly the same state.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "base/time.h"
#include "scheduler/framework/decisions.h"
#include "scheduler/framework/session.h"
#include "scheduler/model/model.h"
#include "scheduler/model/pod_info.h"

namespace tephra::scheduler {

inline constexpr std::string_view kSnapshotApiVersion = "tephra.dev/v1alpha1";
inline constexpr std::string_view kSnapshotKind = "SchedulerSnapshot";

struct SnapshotDocument {
  std::shared_ptr<const Snapshot> snapshot;
  NodeSampling sampling;  // the live scheduler's, so that a replay samples nodes as it did
  std::string session;    // the session that ran on it, if any
  std::optional<base::Time> time;
  std::optional<Decisions> decisions;  // what that session decided
};

std::string EncodeSnapshot(const SnapshotDocument& doc);
// Errors name the JSON path ("jobs[3].tasks[0].uid: pod not in pods").
StatusOr<SnapshotDocument> DecodeSnapshot(std::string_view text, SpecInterner& interner);

}  // namespace tephra::scheduler
