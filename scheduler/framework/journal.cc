#include "scheduler/framework/journal.h"

#include <algorithm>
#include <cstring>

namespace tephra::scheduler {

// ---- FitErrors ----

void FitErrors::Add(const char* reason) {
  ++nodes;
  for (auto& [r, n] : by_reason) {
    if (r == reason || std::strcmp(r, reason) == 0) {
      ++n;
      return;
    }
  }
  by_reason.emplace_back(reason, 1);
}

std::string FitErrors::ToString() const {
  std::vector<std::pair<const char*, int>> sorted = by_reason;
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : std::string_view(a.first) < b.first;
  });
  std::string out;
  if (!sorted.empty()) out = "0/" + std::to_string(nodes) + " nodes are available: ";
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(sorted[i].second) + " " + sorted[i].first;
  }
  if (!other.empty()) out += (out.empty() ? "" : "; ") + other;
  return out;
}

// ---- Journal ----

Journal::Journal(size_t jobs) : touched_(jobs, false), fit_errors_(jobs), conditions_(jobs) {}

void Journal::RecordFitErrors(size_t job, const std::string& uid, FitErrors errors) {
  touched_[job] = true;
  fit_errors_[job][uid] = std::move(errors);
}

const std::unordered_map<std::string, FitErrors>* Journal::JobFitErrors(size_t job) const {
  return fit_errors_[job].empty() ? nullptr : &fit_errors_[job];
}

void Journal::SetJobCondition(size_t job, JobConditionOut condition) {
  touched_[job] = true;
  conditions_[job] = std::move(condition);
}

void Journal::AddJobNote(size_t job, JobNote note) {
  std::vector<JobNote>& notes = notes_[job];
  if (notes.size() < kMaxJobNotes) notes.push_back(std::move(note));
}

const std::vector<JobNote>* Journal::JobNotes(size_t job) const {
  auto it = notes_.find(job);
  return it == notes_.end() ? nullptr : &it->second;
}

void Journal::TruncateJobNotes(size_t job, size_t count) {
  auto it = notes_.find(job);
  if (it == notes_.end()) return;
  if (count == 0) {
    notes_.erase(it);
  } else if (it->second.size() > count) {
    it->second.resize(count);
  }
}

void Journal::NoteWithdrawn(size_t job, std::vector<std::string> uids) {
  std::vector<std::string>& kept = withdrawn_[job];
  if (uids.size() > kept.size()) kept = std::move(uids);
}

const std::vector<std::string>* Journal::JobWithdrawn(size_t job) const {
  auto it = withdrawn_.find(job);
  return it == withdrawn_.end() ? nullptr : &it->second;
}

void Journal::ReportQueueShare(const std::string& queue, QueueShareReport report) {
  queue_shares_[queue] = std::move(report);
}

}  // namespace tephra::scheduler
