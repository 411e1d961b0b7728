// One scheduling session on a dumped snapshot, without an API server: what `tephra-scheduler
// --replay SNAPSHOT [--scheduler-conf FILE]` runs. The session is the live one — same actions,
// plugins and node sampling — with binds and evictions recorded instead of sent, so its
// decisions can be compared with the ones recorded in the snapshot.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "scheduler/explain/explain.h"
#include "scheduler/framework/conf.h"
#include "scheduler/framework/cycle.h"
#include "scheduler/framework/decisions.h"
#include "scheduler/framework/registry.h"
#include "scheduler/replay/snapshot_io.h"

namespace tephra::scheduler {

struct ReplayResult {
  std::string session;
  Decisions decisions;                  // normalised
  std::vector<JobExplanation> waiting;  // jobs left with pending work, by id
  CycleResult cycle;
};

ReplayResult Replay(const SnapshotDocument& doc, const SchedulerConf& conf,
                    const Registry& registry);

// The replay as text: the decisions, one line each, then "waiting ns/pg: <summary>" lines, then
// how they compare with the decisions recorded in the snapshot (if any).
std::string FormatReplay(const ReplayResult& result, const SnapshotDocument& doc);
// Whether the replay made the decisions the snapshot recorded (true when it recorded none).
bool SameAsRecorded(const ReplayResult& result, const SnapshotDocument& doc);

}  // namespace tephra::scheduler
