// Garbage collection of finished Jobs (docs/compatibility.md §2.9): a Job with
// ttlSecondsAfterFinished that is Completed, Failed, Terminated — or Aborted, which Volcano
// forgets (its issue #4736) — is deleted that long after its last transition, with Foreground
// propagation and a UID precondition so a recreated Job of the same name is never hit.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "api/batch.h"
#include "base/workqueue.h"
#include "controllers/framework/controller.h"

namespace tephra::controllers::gc {

// How long until the job may be deleted: nullopt when it never expires (no TTL, not finished,
// no transition time); zero or negative when it is due.
std::optional<std::chrono::nanoseconds> TimeUntilExpiry(const api::Job& job, base::Time now);

class GarbageCollector : public Controller {
 public:
  GarbageCollector();
  ~GarbageCollector() override;

  std::string_view Name() const override { return "gc-controller"; }
  Status Initialize(ControllerContext& context) override;
  void Start() override;
  void Stop() override;

  Status Sync(const std::string& key);

 private:
  ControllerContext ctx_;
  std::shared_ptr<kube::Informer> jobs_;
  std::unique_ptr<base::WorkQueue> queue_;
  base::QueueWorkers workers_;
};

}  // namespace tephra::controllers::gc
