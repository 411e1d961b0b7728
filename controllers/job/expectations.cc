#include "controllers/job/expectations.h"

namespace tephra::controllers::job {

void Expectations::CatchUp(const std::vector<std::shared_ptr<const api::Pod>>& pods,
                           base::Time now) {
  std::set<std::string> live_uids;
  for (const auto& p : pods) {
    live_uids.insert(p->metadata.uid);
    created.erase(p->metadata.name);
  }
  for (auto it = deleted_pod_uids.begin(); it != deleted_pod_uids.end();) {
    it = live_uids.count(*it) ? std::next(it) : deleted_pod_uids.erase(it);
  }
  for (auto it = created.begin(); it != created.end();) {
    it = now - it->second > kCreationExpectationTtl ? created.erase(it) : std::next(it);
  }
}

void Expectations::AddUnseen(const api::Job& job,
                             const std::vector<std::shared_ptr<const api::Pod>>& pods,
                             PodWrites* writes) const {
  std::set<std::string> listed;
  for (const auto& c : writes->created) listed.insert(c.first);
  for (const auto& [name, when] : created) {
    (void)when;
    if (!listed.count(name)) {
      for (const auto& t : job.spec.tasks) {
        if (name.rfind(job.metadata.name + "-" + t.name + "-", 0) == 0) {
          writes->created.emplace_back(name, t.name);
          break;
        }
      }
    }
  }
  for (const auto& p : pods) {
    if (deleted_pod_uids.count(p->metadata.uid)) writes->deleted.insert(p->metadata.name);
  }
}

}  // namespace tephra::controllers::job
