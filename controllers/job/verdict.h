// The job controller's own admission check (docs/controllers.md, "Jobs that bypassed
// admission"). A Job created while the webhook was not registered reaches the controller
// unchecked; when the controller takes it up it runs the webhook's validation
// (api/validation.h) on it and sorts the findings:
//   * rules of the Job itself (a dependsOn cycle, duplicate task names, minAvailable above the
//     replicas, a bad pod template, ...): the Job can never run as written, so it fails;
//   * its queue does not exist: the queue may yet be created, so the Job waits for it without
//     a PodGroup;
//   * its queue exists but admission would refuse it (Closed, root, not a leaf): the Job goes
//     on as in Volcano, and the scheduler applies its own queue rules (a closed queue admits
//     nothing, and `tephractl job explain` says so).
#pragma once

#include <string>

#include "api/batch.h"
#include "api/validation.h"

namespace tephra::controllers::job {

// Job status state.reason (and Event reason) of each verdict.
inline constexpr std::string_view kInvalidJobReason = "InvalidJob";
inline constexpr std::string_view kQueueNotFoundReason = "QueueNotFound";

struct JobVerdict {
  api::FieldErrors invalid;        // the Job's own rules: it fails
  api::FieldErrors missing_queue;  // spec.queue names no queue: it waits
  bool ok() const { return invalid.empty() && missing_queue.empty(); }
};

// Validates a (defaulted) Job as the webhook does on CREATE, against `queues`.
JobVerdict CheckJob(const api::Job& job, const api::QueueLookup& queues);

// "path: rule; path: rule" for a status message or an Event: the first few errors, then how
// many more there are, so a Job with thousands of bad tasks still gets a short message.
std::string DescribeErrors(const api::FieldErrors& errors);

}  // namespace tephra::controllers::job
