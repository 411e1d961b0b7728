#include "scheduler/plugins/support/deadlines.h"

namespace tephra::scheduler {

int CompareDeadlines(const JobDeadlines& deadlines, const JobInfo& l, const JobInfo& r) {
  if (deadlines.empty()) return 0;
  auto ld = deadlines.find(&l), rd = deadlines.find(&r);
  if (ld == deadlines.end() || rd == deadlines.end()) {
    return ld != deadlines.end() ? -1 : rd != deadlines.end() ? 1 : 0;
  }
  return ld->second < rd->second ? -1 : rd->second < ld->second ? 1 : 0;
}

}  // namespace tephra::scheduler
