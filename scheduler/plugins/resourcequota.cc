// resourcequota: a job is admitted only while its namespace's ResourceQuotas hold it (Volcano's
// resourcequota plugin).
//   JobEnqueueable  for each ResourceQuota of the job's namespace, for each resource the quota
//                   limits (status.hard) and the PodGroup's minResources names (so quota-style
//                   names such as requests.cpu and count/pods count): status.used + what jobs
//                   admitted earlier in this session asked for + minResources <= hard, else
//                   Reject with a note naming the quota. A PodGroup without minResources is
//                   admitted. Quota scopes are not applied.
//   JobEnqueued     the job's minResources count against its namespace for the rest of the
//                   session (the quota controller counts its pods once they exist).
// (docs/scheduler.md, Plugins: resourcequota)
#include <unordered_map>

#include "scheduler/framework/session.h"
#include "scheduler/plugins/plugins.h"
#include "scheduler/plugins/support/notes.h"

namespace tephra::scheduler {
namespace {

int64_t Milli(const api::ResourceList& list, const std::string& name) {
  const api::Quantity* q = list.Find(name);
  return q != nullptr ? q->MilliValue() : 0;
}

std::string Amount(int64_t milli) {
  return api::Quantity::FromMilli(milli).String();
}

class ResourceQuotaPlugin : public Plugin {
 public:
  std::string_view name() const override { return "resourcequota"; }

  void OnSessionOpen(Session& ssn) override {
    quotas_.clear();
    admitted_.clear();
    for (const auto& quota : ssn.snapshot().quotas)
      quotas_[quota->metadata.namespace_].push_back(quota.get());
    Session* s = &ssn;
    ssn.AddJobEnqueueableFn(name(), [this, s](const JobInfo& job, const api::Resources&) {
      const api::ResourceList* min = MinResources(job);
      auto quotas = quotas_.find(job.namespace_);
      if (min == nullptr || quotas == quotas_.end()) return Vote::kPermit;
      for (const QuotaInfo* quota : quotas->second) {
        std::string over = Exceeded(*quota, *min, admitted_[job.namespace_]);
        if (over.empty()) continue;
        NoteJob(
            *s, job,
            {std::string(name()),
             "namespace " + job.namespace_ + " ResourceQuota " + quota->metadata.name + ": " + over,
             "raise ResourceQuota " + quota->metadata.name + ", or wait for jobs in namespace " +
                 job.namespace_ + " to finish"});
        return Vote::kReject;
      }
      return Vote::kPermit;
    });
    ssn.AddJobEnqueuedFn(name(), [this](const JobInfo& job) {
      const api::ResourceList* min = MinResources(job);
      if (min == nullptr) return;
      std::unordered_map<std::string, int64_t>& admitted = admitted_[job.namespace_];
      for (const auto& [resource, quantity] : *min)
        admitted[resource] = api::SaturatingAdd(admitted[resource], quantity.MilliValue());
    });
  }

 private:
  static const api::ResourceList* MinResources(const JobInfo& job) {
    if (job.pod_group == nullptr || !job.pod_group->spec.min_resources) return nullptr;
    return &*job.pod_group->spec.min_resources;
  }

  // "requests.cpu: used 3 + admitted 0 + minResources 2 > hard 4; ..." or "" when it fits.
  static std::string Exceeded(const QuotaInfo& quota, const api::ResourceList& min,
                              std::unordered_map<std::string, int64_t>& admitted) {
    std::string out;
    for (const auto& [resource, hard] : quota.hard) {
      const api::Quantity* want = min.Find(resource);
      if (want == nullptr) continue;
      int64_t used = Milli(quota.used, resource);
      int64_t before = admitted[resource];
      int64_t after = api::SaturatingAdd(api::SaturatingAdd(used, before), want->MilliValue());
      if (after <= hard.MilliValue()) continue;
      if (!out.empty()) out += "; ";
      out += resource + ": used " + Amount(used) + " + admitted " + Amount(before) +
             " + minResources " + want->String() + " > hard " + hard.String();
    }
    return out;
  }

  std::unordered_map<std::string, std::vector<const QuotaInfo*>> quotas_;  // by namespace
  // minResources of jobs admitted this session, by namespace and resource, in milli-units.
  std::unordered_map<std::string, std::unordered_map<std::string, int64_t>> admitted_;
};

}  // namespace

std::unique_ptr<Plugin> NewResourceQuotaPlugin(const PluginOption&) {
  return std::make_unique<ResourceQuotaPlugin>();
}

}  // namespace tephra::scheduler
