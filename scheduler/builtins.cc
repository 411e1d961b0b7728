#include "scheduler/builtins.h"

#include <initializer_list>
#include <utility>

#include "scheduler/actions/actions.h"
#include "scheduler/plugins/plugins.h"

namespace tephra::scheduler {

Status RegisterBuiltins(Registry& r) {
  for (ActionFactory& action : BuiltinActionFactories()) {
    TEPHRA_RETURN_IF_ERROR(r.AddAction(std::move(action)));
  }
  for (PluginFactory& plugin : BuiltinPluginFactories()) {
    TEPHRA_RETURN_IF_ERROR(r.AddPlugin(std::move(plugin)));
  }

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
