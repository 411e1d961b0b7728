// A table-driven scheduler test harness in the spirit of Volcano's uthelper: describe nodes,
// queues, pod groups and pods; run one or more cycles with a configuration; look at what was
// bound, evicted and written back. No API server, no threads.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "api/core.h"
#include "api/storage.h"
#include "scheduler/builtins.h"
#include "scheduler/cache/cache.h"
#include "scheduler/framework/cycle.h"
#include "scheduler/framework/decisions.h"

namespace tephra::scheduler::testing {

// Binds by assuming in the cache, as the real binder does first.
class RecordingBinder : public Binder, public Evictor {
 public:
  explicit RecordingBinder(SchedulerCache& cache) : cache_(cache) {}
  // Assumes each bind and its volume steps in the cache, as the real binder does first.
  void Bind(const BindUnit& unit) override;
  void Evict(const TaskInfo& task, const std::string& reason) override;

  std::map<std::string, std::string> binds;               // pod name -> node
  std::vector<std::string> evictions;                     // pod names
  std::vector<std::string> bind_order;                    // pod names in bind order
  std::map<std::string, std::vector<PreBindStep>> steps;  // pod name -> its pre-bind steps

 private:
  SchedulerCache& cache_;
};

class PodBuilder;

class Harness {
 public:
  // Cache and sessions read `clock` (a FakeClock for tests of time), else the real clock.
  explicit Harness(base::ClockInterface& clock = base::RealClock());

  Harness& Node(const std::string& name, const std::string& resources,
                std::map<std::string, std::string> labels = {}, std::vector<api::Taint> taints = {},
                bool unschedulable = false);
  Harness& Queue(const std::string& name, int weight = 1, const std::string& capability = "",
                 const std::string& guarantee = "", const std::string& deserved = "",
                 const std::string& parent = "", const std::string& state = "Open");
  // "ns/name" PodGroup in `queue` needing `min_member` pods.
  Harness& Group(const std::string& key, const std::string& queue, int min_member,
                 const std::string& phase = "Inqueue", const std::string& min_resources = "",
                 const std::string& priority_class = "",
                 std::map<std::string, int32_t> min_task_member = {});
  // Sets an annotation on PodGroup "ns/name" (added with Group before).
  Harness& AnnotateGroup(const std::string& key, const std::string& annotation,
                         const std::string& value);
  // Changes PodGroup "ns/name" (added with Group before) as `change` says.
  Harness& ChangeGroup(const std::string& key, const std::function<void(api::PodGroup&)>& change);
  // Sets PodGroup "ns/name"'s spec.networkTopology (mode hard or soft; tier < 0: no limit).
  Harness& GroupTopology(const std::string& key, const std::string& mode, int tier);
  // A HyperNode of `tier` whose members are the nodes (tier 1) or HyperNodes named.
  Harness& HyperNode(const std::string& name, int tier, const std::vector<std::string>& members);
  Harness& PriorityClass(const std::string& name, int32_t value);
  // Storage (docs/scheduler.md, "Storage"). A StorageClass, WaitForFirstConsumer unless not
  // `wait_for_first_consumer`; it provisions when `provisioner` is not kube's no-provisioner.
  Harness& StorageClass(const std::string& name, bool wait_for_first_consumer = true,
                        const std::string& provisioner = "kubernetes.io/no-provisioner",
                        std::vector<api::TopologySelectorTerm> allowed_topologies = {});
  // An Available PV of `klass` holding `size` ("10Gi"), only on `node` (a local PV: required
  // kubernetes.io/hostname affinity), or anywhere when `node` is "".
  Harness& Volume(const std::string& name, const std::string& klass, const std::string& size,
                  const std::string& node = "",
                  std::vector<std::string> access_modes = {"ReadWriteOnce"});
  Harness& ChangeVolume(const std::string& name,
                        const std::function<void(api::PersistentVolume&)>& change);
  // A claim "ns/name" of `klass` asking for `size`: unbound, or fully bound to PV `bound_to`.
  Harness& Claim(const std::string& key, const std::string& klass, const std::string& size,
                 const std::string& bound_to = "",
                 std::vector<std::string> access_modes = {"ReadWriteOnce"});
  Harness& ChangeClaim(const std::string& key,
                       const std::function<void(api::PersistentVolumeClaim&)>& change);
  // A CSINode for `node` whose `driver` may attach `count` volumes there.
  Harness& CsiNode(const std::string& node, const std::string& driver, int32_t count);
  // A pod "ns/name" of PodGroup `group`; finish with Add().
  PodBuilder Pod(const std::string& key, const std::string& group);

  struct Result {
    std::map<std::string, std::string> binds;  // pods bound in this run
    std::vector<std::string> evictions;
    SessionOutcome outcome;
    std::map<JobId, std::string> phases;            // PodGroup phase written (if any)
    std::map<JobId, api::PodGroupStatus> statuses;  // PodGroup status written (if any)
  };
  // Runs one cycle; binds are assumed in the cache so a later Run sees them.
  Result Run(const std::string& conf_yaml = DefaultSchedulerConfYaml());
  // When set, sees each closed session before it is destroyed (explanations, decisions).
  std::function<void(const Session&)> inspect;
  // When set, every session's binds and evictions pass through it first.
  DecisionLog* decisions = nullptr;

  SchedulerCache& cache() { return cache_; }
  SpecInterner& interner() { return *interner_; }
  RecordingBinder& binder() { return binder_; }
  // Applies written PodGroup statuses to the cache, as the informer would.
  void ApplyOutcome(const SessionOutcome& outcome);

 private:
  friend class PodBuilder;
  base::ClockInterface& clock_;
  SchedulerCache cache_;
  std::shared_ptr<SpecInterner> interner_;
  Registry registry_;
  RecordingBinder binder_;
  std::map<std::string, std::shared_ptr<const api::PodGroup>> groups_;
  std::map<std::string, std::shared_ptr<const api::PersistentVolume>> volumes_;
  std::map<std::string, std::shared_ptr<const api::PersistentVolumeClaim>> claims_;
  int session_ = 0;
};

class PodBuilder {
 public:
  PodBuilder(Harness& h, const std::string& key, const std::string& group);
  PodBuilder& Request(const std::string& resources);  // "cpu=1,memory=1Gi"
  PodBuilder& Priority(int32_t p);
  PodBuilder& Role(const std::string& task_role);
  PodBuilder& Labels(std::map<std::string, std::string> labels);
  PodBuilder& NodeSelector(std::map<std::string, std::string> selector);
  PodBuilder& Tolerate(const std::string& key, const std::string& effect = "");
  PodBuilder& HostPort(int32_t port);
  PodBuilder& AntiAffinity(const std::string& topology_key,
                           std::map<std::string, std::string> match);
  PodBuilder& Affinity(const std::string& topology_key, std::map<std::string, std::string> match);
  PodBuilder& Spread(const std::string& topology_key, int max_skew,
                     std::map<std::string, std::string> match, bool hard = true);
  PodBuilder& PreferNode(const std::string& key, const std::string& value, int weight);
  // Already placed: bound to `node` in `phase` (Running by default).
  PodBuilder& On(const std::string& node, const std::string& phase = "Running");
  PodBuilder& Terminating();
  PodBuilder& SchedulerName(const std::string& name);
  PodBuilder& Preemptable(bool preemptable);
  PodBuilder& PreemptionNever();
  PodBuilder& Gated(const std::string& gate);  // spec.schedulingGates
  PodBuilder& Created(base::Time when);
  PodBuilder& Namespace(const std::string& ns);  // namespace used by PriorityClass lookups
  PodBuilder& PriorityClassName(const std::string& name);
  PodBuilder& Uid(const std::string& uid);  // as an API server assigned it (default "uid-<key>")
  // The pod names no group: its group is the one the PodGroup controller makes for it.
  PodBuilder& ImplicitGroup();
  // Mounts claim `name` (spec.volumes[].persistentVolumeClaim).
  PodBuilder& Claim(const std::string& name);
  // A generic ephemeral volume `volume`: its claim is "<pod>-<volume>".
  PodBuilder& Ephemeral(const std::string& volume);
  PodInfoPtr Add();

 private:
  Harness& h_;
  std::shared_ptr<PodInfo> pod_;
  api::PodSpec spec_;
};

// A condition of the PodGroup status written for `job`, or nullptr.
const api::PodGroupCondition* WrittenCondition(const Harness::Result& r, const JobId& job,
                                               const std::string& type);

}  // namespace tephra::scheduler::testing
