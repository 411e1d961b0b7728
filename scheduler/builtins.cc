#include "scheduler/builtins.h"

#include "scheduler/actions/actions.h"
#include "scheduler/plugins/plugins.h"

namespace tephra::scheduler {

Status RegisterBuiltins(Registry& r) {
  TEPHRA_RETURN_IF_ERROR(r.AddAction("enqueue", NewEnqueueAction));
  TEPHRA_RETURN_IF_ERROR(r.AddAction("allocate", NewAllocateAction));
  TEPHRA_RETURN_IF_ERROR(r.AddAction("backfill", NewBackfillAction));
  TEPHRA_RETURN_IF_ERROR(r.AddAction("preempt", NewPreemptAction));
  TEPHRA_RETURN_IF_ERROR(r.AddAction("reclaim", NewReclaimAction));
  TEPHRA_RETURN_IF_ERROR(r.AddPlugin("gang", NewGangPlugin));
  TEPHRA_RETURN_IF_ERROR(r.AddPlugin("priority", NewPriorityPlugin));
  TEPHRA_RETURN_IF_ERROR(r.AddPlugin("drf", NewDrfPlugin));
  TEPHRA_RETURN_IF_ERROR(r.AddPlugin("proportion", NewProportionPlugin));
  TEPHRA_RETURN_IF_ERROR(r.AddPlugin("predicates", NewPredicatesPlugin));
  TEPHRA_RETURN_IF_ERROR(r.AddPlugin("nodeorder", NewNodeOrderPlugin));
  TEPHRA_RETURN_IF_ERROR(r.AddPlugin("binpack", NewBinpackPlugin));
  TEPHRA_RETURN_IF_ERROR(r.AddPlugin("conformance", NewConformancePlugin));
  TEPHRA_RETURN_IF_ERROR(r.AddPlugin("overcommit", NewOvercommitPlugin));
  TEPHRA_RETURN_IF_ERROR(r.AddPlugin("capacity", NewCapacityPlugin));
  TEPHRA_RETURN_IF_ERROR(r.AddPlugin("pdb", NewPdbPlugin));
  return Status::Ok();
}

}  // namespace tephra::scheduler
