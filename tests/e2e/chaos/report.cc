#include "tests/e2e/chaos/report.h"

#include <algorithm>
#include <sstream>

#include "tests/e2e/chaos/stats.h"

namespace tephra::chaos {

void FillRecovery(std::vector<double> binds, std::vector<FaultRecord>* faults) {
  std::sort(binds.begin(), binds.end());
  for (FaultRecord& f : *faults) {
    auto it = std::lower_bound(binds.begin(), binds.end(), f.end);
    if (it != binds.end()) f.recovery = *it - f.end;
  }
}

std::optional<double> MemorySlope(const std::vector<MemorySample>& samples, double warm_s,
                                  double min_life_s) {
  if (samples.empty() || samples.back().t - samples.front().t < min_life_s) return std::nullopt;
  std::vector<std::pair<double, double>> warm;  // (minutes, MiB)
  for (const MemorySample& m : samples) {
    if (m.t - samples.front().t >= warm_s)
      warm.push_back({m.t / 60.0, static_cast<double>(m.kib) / 1024.0});
  }
  return Slope(warm);
}

std::string RenderReport(const RunSummary& s, bool pass) {
  std::ostringstream r;
  r << "chaos report: seed " << s.seed << ", " << FormatFixed(s.seconds, 0) << "s, namespace "
    << s.namespace_ << "\n";
  std::map<std::string, int> by_kind;
  std::vector<double> recoveries;
  std::map<std::string, std::vector<double>> handovers;
  for (const FaultRecord& f : s.faults) {
    ++by_kind[f.kind];
    if (f.recovery) recoveries.push_back(*f.recovery);
    if (f.handover)
      handovers[f.kind.substr(std::string("kill-leader-").size())].push_back(*f.handover);
  }
  r << "faults injected: " << s.faults.size();
  for (const auto& [k, n] : by_kind) r << ", " << k << "=" << n;
  r << "\n";
  for (const FaultRecord& f : s.faults) {
    r << "  " << FormatFixed(f.at) << "s " << f.kind << " (" << FormatFixed(f.end - f.at) << "s"
      << (f.note.empty() ? "" : "; " + f.note) << ")"
      << (f.handover ? " hand-over " + FormatFixed(*f.handover, 2) + "s" : "") << " recovery "
      << (f.recovery ? FormatFixed(*f.recovery, 2) + "s" : "none") << "\n";
  }
  r << "daemon exits restarted by the supervisor:";
  for (const auto& [k, n] : s.daemon_exits) r << " " << k << "=" << n;
  r << "\n";
  r << "recovery to next bind (s): n=" << recoveries.size()
    << " p50=" << FormatFixed(Percentile(recoveries, 50), 2)
    << " p99=" << FormatFixed(Percentile(recoveries, 99), 2)
    << " max=" << FormatFixed(Percentile(recoveries, 100), 2) << "\n";
  for (const auto& [k, v] : handovers) {
    r << "leader hand-over " << k << " (s): n=" << v.size()
      << " p50=" << FormatFixed(Percentile(v, 50), 2)
      << " max=" << FormatFixed(Percentile(v, 100), 2) << "\n";
  }
  r << "jobs: planned " << s.jobs_planned << ", submitted " << s.jobs_submitted << " ("
    << s.create_retries << " retried creates), ended as expected " << s.jobs_as_expected;
  for (const auto& [p, n] : s.jobs_by_end) r << ", " << p << "=" << n;
  r << "\n";
  r << "samples: " << s.samples << " taken, " << s.unreadable_samples
    << " unreadable (API server down)\n";
  r << "invariant violations: " << s.violations.size() << "\n";
  for (const Violation& v : s.violations)
    r << "  " << v.rule << " " << v.object << ": " << v.detail << "\n";
  std::map<std::string, std::vector<MemorySample>> series;
  for (const MemorySample& m : s.memory) {
    series[m.daemon + "/" + std::to_string(m.replica) + "#" + std::to_string(m.incarnation)]
        .push_back(m);
  }
  r << "memory (MiB; slope after the first 60 s of each incarnation living >= 5 min):\n";
  for (const auto& [k, pts] : series) {
    std::optional<double> slope = MemorySlope(pts, 60, 300);
    r << "  " << k << ": " << FormatFixed(static_cast<double>(pts.front().kib) / 1024.0) << " -> "
      << FormatFixed(static_cast<double>(pts.back().kib) / 1024.0) << " over "
      << FormatFixed((pts.back().t - pts.front().t) / 60.0) << " min"
      << (slope ? ", slope " + FormatFixed(*slope, 3) + " MiB/min" : "") << "\n";
  }
  for (const std::string& p : s.problems) r << "PROBLEM " << p << "\n";
  r << (pass ? "PASS" : "FAIL (replay with --seed=" + std::to_string(s.seed) + ")") << "\n";
  return r.str();
}

std::string MemoryCsv(const std::vector<MemorySample>& samples) {
  std::ostringstream csv;
  csv << "seconds,daemon,replica,incarnation,rss_kib\n";
  for (const MemorySample& m : samples) {
    csv << FormatFixed(m.t) << "," << m.daemon << "," << m.replica << "," << m.incarnation << ","
        << m.kib << "\n";
  }
  return csv.str();
}

}  // namespace tephra::chaos
