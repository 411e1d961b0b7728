#include "scheduler/plugins/plugins.h"

namespace tephra::scheduler {

std::vector<PluginFactory> BuiltinPluginFactories() {
  return {NewGangPlugin,       NewPriorityPlugin,      NewDrfPlugin,
          NewProportionPlugin, NewPredicatesPlugin,    NewNodeOrderPlugin,
          NewBinpackPlugin,    NewConformancePlugin,   NewOvercommitPlugin,
          NewCapacityPlugin,   NewPdbPlugin,           NewSlaPlugin,
          NewNodeGroupPlugin,  NewResourceQuotaPlugin, NewNetworkTopologyPlugin};
}

}  // namespace tephra::scheduler
