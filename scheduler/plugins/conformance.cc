// conformance: never evict what keeps the cluster running — pods of priority classes
// system-cluster-critical and system-node-critical, and anything in kube-system.
#include "scheduler/framework/session.h"
#include "scheduler/plugins/plugins.h"

namespace tephra::scheduler {
namespace {

bool Critical(const TaskInfo& t) {
  const std::string& pc = t.pod->spec->priority_class_name;
  return pc == "system-cluster-critical" || pc == "system-node-critical" ||
         t.namespace_() == "kube-system";
}

class ConformancePlugin : public Plugin {
 public:
  std::string_view name() const override { return "conformance"; }

  void OnSessionOpen(Session& ssn) override {
    VictimsFn keep_critical = [](const TaskInfo&, const std::vector<const TaskInfo*>& candidates)
        -> std::optional<std::vector<const TaskInfo*>> {
      std::vector<const TaskInfo*> victims;
      for (const TaskInfo* c : candidates) {
        if (!Critical(*c)) victims.push_back(c);
      }
      return victims;
    };
    ssn.AddPreemptableVetoFn(name(), keep_critical);
    ssn.AddReclaimableVetoFn(name(), keep_critical);
  }
};

}  // namespace

std::unique_ptr<Plugin> NewConformancePlugin(const PluginOption&) {
  return std::make_unique<ConformancePlugin>();
}

}  // namespace tephra::scheduler
