#include "scheduler/builtins.h"

#include <initializer_list>
#include <utility>

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
  TEPHRA_RETURN_IF_ERROR(r.AddPlugin("sla", NewSlaPlugin));
  TEPHRA_RETURN_IF_ERROR(r.AddPlugin("nodegroup", NewNodeGroupPlugin));
  TEPHRA_RETURN_IF_ERROR(r.AddPlugin("resourcequota", NewResourceQuotaPlugin));
  TEPHRA_RETURN_IF_ERROR(r.AddPlugin("network-topology-aware", NewNetworkTopologyPlugin));

  // Volcano's other names (docs/scheduler.md, "Recognised, not implemented"): a configuration
  // written for Volcano loads with a warning for each, rather than being refused as a whole.
  for (const auto& [name, what] : std::initializer_list<std::pair<const char*, const char*>>{
           {"tdm", "time-division sharing of revocable-zone nodes"},
           {"numa-aware", "NUMA-aligned placement from Numatopology objects"},
           {"deviceshare", "GPU and NPU sharing"},
           {"extender", "HTTP callouts to a scheduler extender"},
           {"task-topology", "a job's tasks placed together or apart by annotation"},
           {"rescheduling", "periodic eviction from busy nodes"},
           {"usage", "placement by measured node load"},
           {"cdp", "no eviction within a pod's cooldown time"},
           {"capacity-card", "queue capacity per accelerator card type"},
           {"resource-strategy-fit", "per-resource least or most allocated scoring"},
           {"reservation", "nodes reserved for a target job"}}) {
    TEPHRA_RETURN_IF_ERROR(r.AddRecognisedPlugin(name, what));
  }
  for (const auto& [name, what] : std::initializer_list<std::pair<const char*, const char*>>{
           {"shuffle", "evicts the victims rescheduling plugins choose"},
           {"gangpreempt", "preemption of whole gangs by topology domain"},
           {"gangreclaim", "reclaim of whole gangs by topology domain"},
           {"elect", "picks the job nodes are reserved for"},
           {"reserve", "reserves nodes for the elected job"}}) {
    TEPHRA_RETURN_IF_ERROR(r.AddRecognisedAction(name, what));
  }
  return Status::Ok();
}

}  // namespace tephra::scheduler
