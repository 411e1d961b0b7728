// A tephra-scheduler process per test on the shared real control plane.
//
// Tests run in parallel on one control plane, so each fixture starts its own scheduler with
// its own scheduler name, node pool (--node-selector), queues (--queue-label-selector) and
// default queue: no two tests ever compete for a pod, a node or a PodGroup's status.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tests/support/cluster.h"
#include "tests/support/process.h"

namespace tephra::testing {

class SchedulerFixture {
 public:
  SchedulerFixture();
  ~SchedulerFixture();

  const Kubectl& kubectl() const { return kubectl_; }
  const std::string& id() const { return id_; }
  // The scheduler name pods must use to be ours.
  const std::string& name() const { return name_; }
  // A cluster-scoped name unique to this test: queues, priority classes.
  std::string queue_name(const std::string& q) const { return q + "-" + id_; }

  // kwok nodes in this test's pool, Ready when this returns.
  void AddNodes(int count, const std::string& cpu, const std::string& memory,
                std::map<std::string, std::string> labels = {});
  // A queue labelled with the test's pool; `spec_extra` adds fields after the weight
  // (",\"reclaimable\":false").
  void AddQueue(const std::string& q, int weight, const std::string& spec_extra = "");
  // A PriorityClass named queue_name(name), deleted with the fixture.
  void AddPriorityClass(const std::string& name, int value);
  // A PodGroup and `pods` pods requesting `cpu` each, in namespace ns. `extra_spec` goes into
  // each pod's spec and must end with a comma; `pg_extra` into the PodGroup's spec.
  void AddGang(const std::string& ns, const std::string& group, const std::string& queue,
               int min_member, int pods, const std::string& cpu, const std::string& extra_spec = "",
               const std::string& pg_extra = "");

  // `extra_args` go to tephra-scheduler after the fixture's own flags.
  void Start(const std::string& conf = "", const std::vector<std::string>& extra_args = {});
  void Kill();
  std::string Log() const;
  const std::string& dir() const { return dir_; }  // scratch space, removed with the fixture

  // pod name -> node, for bound pods in ns that are not being deleted.
  std::map<std::string, std::string> Bindings(const std::string& ns) const;
  const std::vector<std::string>& nodes() const { return nodes_; }

 private:
  Kubectl kubectl_;
  std::string id_;
  std::string name_;
  std::string dir_;
  std::vector<std::string> nodes_;
  std::vector<std::string> queues_;
  std::vector<std::string> priority_classes_;
  std::unique_ptr<BackgroundProcess> process_;
};

// `kubectl get what -o jsonpath=path` in ns; empty when it fails.
std::string Jsonpath(const Kubectl& k, const std::string& ns, const std::string& what,
                     const std::string& path);

}  // namespace tephra::testing
