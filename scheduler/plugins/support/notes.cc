#include "scheduler/plugins/support/notes.h"

#include <vector>

namespace tephra::scheduler {
namespace {

// `r` restricted to `dims`, as "cpu 2, memory 4Gi".
std::string Dims(const api::Resources& r, const std::vector<std::string>& dims) {
  api::Resources out;
  for (const auto& d : dims) out.Set(d, r.Get(d));
  return out.ToString();
}

}  // namespace

JobNote AdmissionShortfallNote(std::string_view plugin, const std::string& queue,
                               const api::Resources& min, const api::Resources& allocated,
                               const api::Resources& admitted, const api::Resources& limit,
                               const api::Resources& capability) {
  api::Resources want = min;
  want.Add(allocated);
  want.Add(admitted);
  std::vector<std::string> over;
  bool by_capability = true;
  for (const auto& d : min.Names()) {
    if (d == api::kResourcePods || min.Get(d) <= 0 || want.Get(d) <= limit.Get(d)) continue;
    over.push_back(d);
    by_capability = by_capability && capability.Has(d) && capability.Get(d) <= limit.Get(d);
  }
  if (over.empty()) {  // rounding or a dimension the limit lacks: say what was compared
    over = min.Names();
    by_capability = false;
  }
  JobNote note;
  note.plugin = std::string(plugin);
  std::string limit_name = by_capability ? "capability" : "share of the cluster";
  note.message = "queue " + queue + " " + limit_name + " " + Dims(limit, over) + " < " +
                 Dims(want, over) + " needed (minResources " + Dims(min, over) + " + allocated " +
                 Dims(allocated, over) + " + admitted, not started " + Dims(admitted, over) + ")";
  if (by_capability) {
    note.hint = "raise queue " + queue + "'s capability to at least " + Dims(want, over) +
                ", or wait for its running jobs to finish";
  } else {
    note.hint =
        "the cluster cannot hold the job beside other queues' guarantees and admitted jobs: add "
        "nodes, "
        "lower the job's minAvailable or requests, or wait for jobs to finish";
  }
  return note;
}

JobNote QueueNotOpenNote(std::string_view plugin, const std::string& queue, const QueueInfo* info) {
  if (info == nullptr)
    return {std::string(plugin), "queue " + queue + " does not exist", "create queue " + queue};
  return {std::string(plugin), "queue " + queue + " is " + info->state + ": it admits no new jobs",
          ""};
}

void NoteJob(Session& ssn, const JobInfo& job, JobNote note) {
  if (auto j = ssn.JobIndex(job.id)) ssn.AddJobNote(*j, std::move(note));
}

}  // namespace tephra::scheduler
