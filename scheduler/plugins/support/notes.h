// Notes share plugins leave on jobs they do not admit, for explanations (scheduler/explain
// shows them): proportion, capacity, overcommit and resourcequota word them alike.
#pragma once

#include <string>
#include <string_view>

#include "api/resources.h"
#include "scheduler/framework/session.h"

namespace tephra::scheduler {

// The note a share plugin leaves on a job it did not admit: which resources of min + allocated
// + admitted exceed `limit`, and whether the queue's capability or the cluster (what other
// queues' guarantees leave) is what limits them.
JobNote AdmissionShortfallNote(std::string_view plugin, const std::string& queue,
                               const api::Resources& min, const api::Resources& allocated,
                               const api::Resources& admitted, const api::Resources& limit,
                               const api::Resources& capability);
// The note for a job whose queue is missing or not Open.
JobNote QueueNotOpenNote(std::string_view plugin, const std::string& queue, const QueueInfo* info);

// Adds `note` to `job` in `ssn` (for vote callbacks, which see the job but not its index).
void NoteJob(Session& ssn, const JobInfo& job, JobNote note);

}  // namespace tephra::scheduler
