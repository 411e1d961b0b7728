// The PodGroup controller for plain pods (docs/compatibility.md §2.8): a pod created
// for one of our schedulers without a scheduling.k8s.io/group-name annotation (a Deployment's,
// a StatefulSet's, a bare pod) gets a PodGroup "podgroup-<controller owner UID or pod UID>"
// and the annotation naming it, so the gang scheduler sees every pod as a member of a group.
// Pods labelled scheduling.x-k8s.io/pod-group belong to that scheduler-plugins PodGroup and are
// left alone.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "api/core.h"
#include "api/scheduling.h"
#include "base/workqueue.h"
#include "controllers/framework/controller.h"

namespace tephra::controllers::podgroup {

class PodGroupController : public Controller {
 public:
  PodGroupController();
  ~PodGroupController() override;

  std::string_view Name() const override { return "pg-controller"; }
  Status Initialize(ControllerContext& context) override;
  void Start() override;
  void Stop() override;

  // `key`: a pod's key (its PodGroup and annotation), or kDrainedPrefix and a ReplicaSet's
  // key (the PodGroup of a ReplicaSet scaled to zero is deleted).
  Status Sync(const std::string& key);

  static constexpr std::string_view kDrainedPrefix = "drained-replicaset:";
  // How long after its creation an unbound pod waits for the group annotation: tephra-scheduler
  // writes it in the binding, so a pod bound by then costs no write of its own.
  static constexpr std::chrono::seconds kAnnotationGrace{5};

 private:
  bool Ours(const api::Pod& pod) const;
  Status DeleteDrainedGroup(const std::string& rs_key);
  std::map<std::string, std::string> OwnerAnnotations(const api::Pod& pod) const;
  // How much longer `pod` may wait for its scheduler to annotate it (zero: annotate now).
  std::chrono::nanoseconds AnnotationWait(const api::Pod& pod) const;

  ControllerContext ctx_;
  std::shared_ptr<kube::Informer> pods_, podgroups_, replica_sets_;
  std::unique_ptr<base::WorkQueue> queue_;
  base::QueueWorkers workers_;
};

}  // namespace tephra::controllers::podgroup
