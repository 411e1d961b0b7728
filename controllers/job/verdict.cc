#include "controllers/job/verdict.h"

#include <algorithm>

namespace tephra::controllers::job {
namespace {

constexpr size_t kListedErrors = 5;
// One error can be long too (a cycle through thousands of tasks); the status and the Event
// keep this much of the text.
constexpr size_t kMaxDescriptionBytes = 1024;

// Cuts `text` to at most `limit` bytes without splitting a UTF-8 sequence.
std::string Truncated(std::string text, size_t limit) {
  if (text.size() <= limit) return text;
  size_t cut = limit;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  text.resize(cut);
  return text + "...";
}

}  // namespace

JobVerdict CheckJob(const api::Job& job, const api::QueueLookup& queues) {
  JobVerdict verdict;
  const bool queue_exists =
      queues.Get(job.spec.queue.empty() ? api::kDefaultQueue : std::string_view(job.spec.queue)) !=
      nullptr;
  for (api::FieldError& e : api::ValidateJobCreate(job, &queues)) {
    if (e.path != "spec.queue") {
      verdict.invalid.push_back(std::move(e));
    } else if (!queue_exists) {
      verdict.missing_queue.push_back(std::move(e));
    }
  }
  return verdict;
}

std::string DescribeErrors(const api::FieldErrors& errors) {
  const size_t listed = std::min(errors.size(), kListedErrors);
  api::FieldErrors first(errors.begin(), errors.begin() + static_cast<std::ptrdiff_t>(listed));
  return Truncated(api::FormatFieldErrors(first), kMaxDescriptionBytes) +
         api::MoreErrorsNote(errors.size(), listed);
}

}  // namespace tephra::controllers::job
