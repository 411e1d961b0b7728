// tephra-scheduler's modes that need no API server: a new one goes here, and main runs it
// before the daemon's own checks. Each returns the process's exit code.
#pragma once

#include <string>

#include "base/flags.h"
#include "scheduler/options.h"

namespace tephra::scheduler {

// --check-conf: checks a configuration as the scheduler would load it (for CI and Helm
// pre-upgrade checks). 0: loads (warnings printed), 2: refused.
int CheckConf(const std::string& path);

// --replay: one session on a dumped snapshot; decisions on stdout. 0: the same decisions as
// recorded, 1: different (as diff(1)), 2: a file that cannot be read or loaded. The node-sampling
// flags given on the command line (`flags`) override the snapshot's ("what if").
int ReplaySnapshot(const SchedulerDaemonOptions& options, const base::FlagSet& flags);

}  // namespace tephra::scheduler
