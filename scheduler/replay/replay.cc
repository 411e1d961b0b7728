#include "scheduler/replay/replay.h"

#include <algorithm>
#include <set>

#include "base/clock.h"

namespace tephra::scheduler {

ReplayResult Replay(const SnapshotDocument& doc, const SchedulerConf& conf,
                    const Registry& registry) {
  ReplayResult out;
  base::FakeClock clock(doc.time.value_or(base::Clock::now()));
  DecisionLog log(nullptr, nullptr);
  SessionOptions options;
  out.session = (doc.session.empty() ? std::string("snapshot") : doc.session) + "-replay";
  options.uid = out.session;
  options.binder = &log;
  options.evictor = &log;
  options.clock = &clock;
  options.sampling = doc.sampling;
  out.cycle = RunCycle(doc.snapshot, conf, registry, options, [&](const Session& ssn) {
    out.decisions = log.Take(ssn);
    std::map<std::string, QueueView> views = QueueViews(ssn);
    std::map<std::string, int64_t> free = LargestFree(ssn);
    for (size_t j = 0; j < ssn.job_count(); ++j) {
      const JobInfo& job = ssn.job(j);
      if (!job.IsPending() && job.Count(TaskStatus::kPending) <= job.pending_best_effort) continue;
      auto q = views.find(job.queue);
      out.waiting.push_back(
          ExplainSessionJob(ssn, j, q == views.end() ? nullptr : &q->second, &free, clock.Now()));
    }
  });
  out.decisions.Normalize();
  std::sort(out.waiting.begin(), out.waiting.end(),
            [](const JobExplanation& a, const JobExplanation& b) { return a.id < b.id; });
  return out;
}

bool SameAsRecorded(const ReplayResult& result, const SnapshotDocument& doc) {
  if (!doc.decisions) return true;
  Decisions recorded = *doc.decisions;
  recorded.Normalize();
  return recorded == result.decisions;
}

std::string FormatReplay(const ReplayResult& result, const SnapshotDocument& doc) {
  std::string out = "# replay of " +
                    (doc.session.empty() ? std::string("a snapshot") : "session " + doc.session) +
                    ": " + std::to_string(result.cycle.nodes) + " nodes, " +
                    std::to_string(result.cycle.jobs) + " jobs\n";
  out += result.decisions.ToText();
  for (const auto& e : result.waiting) out += "waiting " + e.id + ": " + Summarize(e) + "\n";
  if (!doc.decisions) {
    out += "# the snapshot records no decisions to compare with\n";
    return out;
  }
  Decisions recorded = *doc.decisions;
  recorded.Normalize();
  if (recorded == result.decisions) {
    out += "# same decisions as the recorded session (" + std::to_string(recorded.binds.size()) +
           " binds, " + std::to_string(recorded.evictions.size()) + " evictions, " +
           std::to_string(recorded.phases.size()) + " phase changes)\n";
    return out;
  }
  out += "# DIFFERENT from the recorded session:\n";
  auto lines = [](const Decisions& d) {
    std::set<std::string> s;
    std::string text = d.ToText();
    size_t start = 0;
    while (start < text.size()) {
      size_t end = text.find('\n', start);
      s.insert(text.substr(start, end - start));
      start = end + 1;
    }
    return s;
  };
  std::set<std::string> live = lines(recorded), replayed = lines(result.decisions);
  for (const auto& l : live) {
    if (replayed.count(l) == 0) out += "#   recorded only: " + l + "\n";
  }
  for (const auto& l : replayed) {
    if (live.count(l) == 0) out += "#   replay only:   " + l + "\n";
  }
  return out;
}

}  // namespace tephra::scheduler
