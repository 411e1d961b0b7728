#include "tests/unit/scheduler/harness.h"

#include <stdexcept>

#include "api/topology.h"

namespace tephra::scheduler::testing {

namespace {

api::Resources MustResources(const std::string& text) {
  if (text.empty()) return {};
  auto r = api::Resources::FromString(text);
  if (!r.ok()) throw std::runtime_error("bad resources " + text + ": " + r.status().message());
  return *r;
}

api::ResourceList List(const std::string& text) {
  return MustResources(text).ToList();
}

std::pair<std::string, std::string> Split(const std::string& key) {
  auto slash = key.find('/');
  return {key.substr(0, slash), key.substr(slash + 1)};
}

api::LabelSelector Selector(const std::map<std::string, std::string>& match) {
  api::LabelSelector s;
  s.match_labels = match;
  return s;
}

}  // namespace

void RecordingBinder::Bind(const BindUnit& unit) {
  for (const BindRequest& b : unit.binds) {
    const TaskInfo& task = *b.task;
    if (!cache_.AssumeBinding(task.job(), task.uid(), b.node).ok()) continue;
    cache_.AssumeVolumeSteps(b.steps);
    binds[task.name()] = b.node;
    bind_order.push_back(task.name());
    if (!b.steps.empty()) steps[task.name()] = b.steps;
  }
}

void RecordingBinder::Evict(const TaskInfo& task, const std::string&) {
  (void)cache_.MarkReleasing(task.job(), task.uid());
  evictions.push_back(task.name());
}

Harness::Harness(base::ClockInterface& clock)
    : clock_(clock),
      cache_(CacheOptions{}, clock),
      interner_(std::make_shared<SpecInterner>()),
      binder_(cache_) {
  if (!RegisterBuiltins(registry_).ok()) throw std::runtime_error("builtins");
}

Harness& Harness::Node(const std::string& name, const std::string& resources,
                       std::map<std::string, std::string> labels, std::vector<api::Taint> taints,
                       bool unschedulable) {
  auto node = std::make_shared<api::Node>();
  node->metadata.name = name;
  node->metadata.labels = std::move(labels);
  node->metadata.labels.emplace("kubernetes.io/hostname", name);
  api::Resources r = MustResources(resources);
  if (r.pods() == 0) r.SetPods(110);
  node->status.allocatable = r.ToList();
  node->status.capacity = node->status.allocatable;
  node->status.conditions.push_back({"Ready", "True", "", ""});
  node->spec.taints = std::move(taints);
  node->spec.unschedulable = unschedulable;
  cache_.UpsertNode(node);
  return *this;
}

Harness& Harness::Queue(const std::string& name, int weight, const std::string& capability,
                        const std::string& guarantee, const std::string& deserved,
                        const std::string& parent, const std::string& state) {
  auto q = std::make_shared<api::Queue>();
  q->metadata.name = name;
  q->spec.weight = weight;
  q->spec.capability = List(capability);
  if (!guarantee.empty()) q->spec.guarantee = List(guarantee);
  q->spec.deserved = List(deserved);
  q->spec.parent = parent;
  q->status.state = state;
  cache_.UpsertQueue(q);
  return *this;
}

Harness& Harness::Group(const std::string& key, const std::string& queue, int min_member,
                        const std::string& phase, const std::string& min_resources,
                        const std::string& priority_class,
                        std::map<std::string, int32_t> min_task_member) {
  auto pg = std::make_shared<api::PodGroup>();
  auto [ns, name] = Split(key);
  pg->metadata.namespace_ = ns;
  pg->metadata.name = name;
  pg->metadata.uid = "pg-" + key;
  pg->metadata.creation_timestamp =
      base::Time(std::chrono::seconds(1'700'000'000 + groups_.size()));
  pg->spec.queue = queue;
  pg->spec.min_member = min_member;
  pg->spec.min_task_member = std::move(min_task_member);
  if (!min_resources.empty()) pg->spec.min_resources = List(min_resources);
  pg->spec.priority_class_name = priority_class;
  pg->status.phase = phase;
  groups_[key] = pg;
  cache_.UpsertPodGroup(pg);
  return *this;
}

Harness& Harness::AnnotateGroup(const std::string& key, const std::string& annotation,
                                const std::string& value) {
  auto pg = std::make_shared<api::PodGroup>(*groups_.at(key));
  pg->metadata.annotations[annotation] = value;
  groups_[key] = pg;
  cache_.UpsertPodGroup(pg);
  return *this;
}

Harness& Harness::ChangeGroup(const std::string& key,
                              const std::function<void(api::PodGroup&)>& change) {
  auto pg = std::make_shared<api::PodGroup>(*groups_.at(key));
  change(*pg);
  groups_[key] = pg;
  cache_.UpsertPodGroup(pg);
  return *this;
}

Harness& Harness::StorageClass(const std::string& name, bool wait_for_first_consumer,
                               const std::string& provisioner,
                               std::vector<api::TopologySelectorTerm> allowed_topologies) {
  auto klass = std::make_shared<api::StorageClass>();
  klass->metadata.name = name;
  klass->provisioner = provisioner;
  klass->volume_binding_mode =
      std::string(wait_for_first_consumer ? "WaitForFirstConsumer" : "Immediate");
  klass->allowed_topologies = std::move(allowed_topologies);
  cache_.UpsertStorageClass(klass);
  return *this;
}

Harness& Harness::Volume(const std::string& name, const std::string& klass, const std::string& size,
                         const std::string& node, std::vector<std::string> access_modes) {
  auto pv = std::make_shared<api::PersistentVolume>();
  pv->metadata.name = name;
  pv->metadata.uid = "uid-pv-" + name;
  pv->metadata.resource_version = "1";
  pv->spec.capacity = *api::Quantity::Parse(size);
  pv->spec.access_modes = std::move(access_modes);
  pv->spec.storage_class_name = klass;
  if (!node.empty()) {
    api::NodeSelectorTerm term;
    term.match_expressions.push_back({"kubernetes.io/hostname", "In", {node}});
    pv->spec.node_affinity = std::vector<api::NodeSelectorTerm>{term};
  }
  pv->phase = "Available";
  volumes_[name] = pv;
  cache_.UpsertVolume(pv);
  return *this;
}

Harness& Harness::ChangeVolume(const std::string& name,
                               const std::function<void(api::PersistentVolume&)>& change) {
  auto pv = std::make_shared<api::PersistentVolume>(*volumes_.at(name));
  change(*pv);
  volumes_[name] = pv;
  cache_.UpsertVolume(pv);
  return *this;
}

Harness& Harness::Claim(const std::string& key, const std::string& klass, const std::string& size,
                        const std::string& bound_to, std::vector<std::string> access_modes) {
  auto claim = std::make_shared<api::PersistentVolumeClaim>();
  auto [ns, name] = Split(key);
  claim->metadata.namespace_ = ns;
  claim->metadata.name = name;
  claim->metadata.uid = "uid-pvc-" + key;
  claim->metadata.resource_version = "1";
  claim->spec.access_modes = std::move(access_modes);
  claim->spec.storage_request = *api::Quantity::Parse(size);
  claim->spec.storage_class_name = klass;
  claim->phase = "Pending";
  if (!bound_to.empty()) {
    claim->spec.volume_name = bound_to;
    claim->bind_completed = true;
    claim->phase = "Bound";
  }
  claims_[key] = claim;
  cache_.UpsertClaim(claim);
  return *this;
}

Harness& Harness::ChangeClaim(const std::string& key,
                              const std::function<void(api::PersistentVolumeClaim&)>& change) {
  auto claim = std::make_shared<api::PersistentVolumeClaim>(*claims_.at(key));
  change(*claim);
  claims_[key] = claim;
  cache_.UpsertClaim(claim);
  return *this;
}

Harness& Harness::CsiNode(const std::string& node, const std::string& driver, int32_t count) {
  auto csi = std::make_shared<api::CSINode>();
  csi->metadata.name = node;
  csi->drivers.push_back({driver, node, count});
  cache_.UpsertCSINode(csi);
  return *this;
}

Harness& Harness::GroupTopology(const std::string& key, const std::string& mode, int tier) {
  return ChangeGroup(key, [&](api::PodGroup& pg) {
    api::NetworkTopologySpec nt;
    nt.mode = mode;
    if (tier >= 0) nt.highest_tier_allowed = tier;
    pg.spec.network_topology = nt;
  });
}

Harness& Harness::HyperNode(const std::string& name, int tier,
                            const std::vector<std::string>& members) {
  auto hn = std::make_shared<api::HyperNode>();
  hn->metadata.name = name;
  hn->spec.tier = tier;
  for (const std::string& m : members) {
    api::HyperNodeMember member;
    member.type = tier == 1 ? api::kHyperNodeMemberNode : api::kHyperNodeMemberHyperNode;
    member.selector.exact_name = m;
    hn->spec.members.push_back(member);
  }
  cache_.UpsertHyperNode(hn);
  return *this;
}

Harness& Harness::PriorityClass(const std::string& name, int32_t value) {
  auto pc = std::make_shared<api::PriorityClass>();
  pc->metadata.name = name;
  pc->value = value;
  cache_.UpsertPriorityClass(pc);
  return *this;
}

PodBuilder Harness::Pod(const std::string& key, const std::string& group) {
  return PodBuilder(*this, key, group);
}

void Harness::ApplyOutcome(const SessionOutcome& outcome) {
  for (const auto& u : outcome.pod_groups) {
    auto it = groups_.find(u.job);
    if (it == groups_.end()) continue;
    auto pg = std::make_shared<api::PodGroup>(WrittenPodGroup(*it->second, u));
    it->second = pg;
    cache_.UpsertPodGroup(pg);
  }
}

Harness::Result Harness::Run(const std::string& conf_yaml) {
  auto conf = ParseSchedulerConf(conf_yaml, registry_.Names());
  if (!conf.ok()) throw std::runtime_error(conf.status().ToString());
  size_t before = binder_.bind_order.size();
  size_t evictions_before = binder_.evictions.size();
  SessionOptions options;
  options.uid = "session-" + std::to_string(++session_);
  options.binder = &binder_;
  options.evictor = &binder_;
  options.clock = &clock_;
  if (decisions != nullptr) {
    options.binder = decisions;
    options.evictor = decisions;
  }
  CycleResult cycle = RunCycle(cache_.TakeSnapshot(), *conf, registry_, options, inspect);
  Result r;
  for (size_t i = before; i < binder_.bind_order.size(); ++i) {
    r.binds[binder_.bind_order[i]] = binder_.binds[binder_.bind_order[i]];
  }
  r.evictions.assign(binder_.evictions.begin() + static_cast<std::ptrdiff_t>(evictions_before),
                     binder_.evictions.end());
  for (const auto& u : cycle.outcome.pod_groups) {
    r.phases[u.job] = u.status.phase;
    r.statuses[u.job] = u.status;
  }
  r.outcome = std::move(cycle.outcome);
  return r;
}

PodBuilder::PodBuilder(Harness& h, const std::string& key, const std::string& group)
    : h_(h), pod_(std::make_shared<PodInfo>()) {
  auto [ns, name] = Split(key);
  pod_->api_version = "v1";
  pod_->kind = "Pod";
  pod_->metadata.namespace_ = ns;
  pod_->metadata.name = name;
  pod_->metadata.uid = "uid-" + key;
  pod_->metadata.resource_version = "1";
  pod_->metadata.creation_timestamp = base::Time(std::chrono::seconds(1'700'000'000));
  pod_->group_name = group;
  if (!group.empty()) pod_->metadata.annotations["scheduling.k8s.io/group-name"] = group;
  pod_->phase = "Pending";
  spec_.scheduler_name = "volcano";
  spec_.containers.push_back(api::Container{});
  spec_.containers[0].name = "main";
}

PodBuilder& PodBuilder::Request(const std::string& resources) {
  spec_.containers[0].resources.requests = List(resources);
  return *this;
}

PodBuilder& PodBuilder::Priority(int32_t p) {
  spec_.priority = p;
  return *this;
}

PodBuilder& PodBuilder::Role(const std::string& task_role) {
  pod_->task_role = task_role;
  return *this;
}

PodBuilder& PodBuilder::Labels(std::map<std::string, std::string> labels) {
  pod_->metadata.labels = std::move(labels);
  return *this;
}

PodBuilder& PodBuilder::NodeSelector(std::map<std::string, std::string> selector) {
  spec_.node_selector = std::move(selector);
  return *this;
}

PodBuilder& PodBuilder::Tolerate(const std::string& key, const std::string& effect) {
  api::Toleration t;
  t.key = key;
  t.op = "Exists";
  t.effect = effect;
  spec_.tolerations.push_back(t);
  return *this;
}

PodBuilder& PodBuilder::HostPort(int32_t port) {
  api::ContainerPort p;
  p.container_port = port;
  p.host_port = port;
  spec_.containers[0].ports.push_back(p);
  return *this;
}

PodBuilder& PodBuilder::AntiAffinity(const std::string& topology_key,
                                     std::map<std::string, std::string> match) {
  if (!spec_.affinity) spec_.affinity.emplace();
  if (!spec_.affinity->pod_anti_affinity) spec_.affinity->pod_anti_affinity.emplace();
  api::PodAffinityTerm term;
  term.topology_key = topology_key;
  term.label_selector = Selector(match);
  spec_.affinity->pod_anti_affinity->required.push_back(term);
  return *this;
}

PodBuilder& PodBuilder::Affinity(const std::string& topology_key,
                                 std::map<std::string, std::string> match) {
  if (!spec_.affinity) spec_.affinity.emplace();
  if (!spec_.affinity->pod_affinity) spec_.affinity->pod_affinity.emplace();
  api::PodAffinityTerm term;
  term.topology_key = topology_key;
  term.label_selector = Selector(match);
  spec_.affinity->pod_affinity->required.push_back(term);
  return *this;
}

PodBuilder& PodBuilder::Spread(const std::string& topology_key, int max_skew,
                               std::map<std::string, std::string> match, bool hard) {
  api::TopologySpreadConstraint c;
  c.topology_key = topology_key;
  c.max_skew = max_skew;
  c.when_unsatisfiable = hard ? "DoNotSchedule" : "ScheduleAnyway";
  c.label_selector = Selector(match);
  spec_.topology_spread_constraints.push_back(c);
  return *this;
}

PodBuilder& PodBuilder::PreferNode(const std::string& key, const std::string& value, int weight) {
  if (!spec_.affinity) spec_.affinity.emplace();
  if (!spec_.affinity->node_affinity) spec_.affinity->node_affinity.emplace();
  api::PreferredSchedulingTerm p;
  p.weight = weight;
  p.preference.match_expressions.push_back({key, "In", {value}});
  spec_.affinity->node_affinity->preferred.push_back(p);
  return *this;
}

PodBuilder& PodBuilder::On(const std::string& node, const std::string& phase) {
  spec_.node_name = node;
  pod_->phase = phase;
  return *this;
}

PodBuilder& PodBuilder::Terminating() {
  pod_->metadata.deletion_timestamp = base::Time(std::chrono::seconds(1'700'000'100));
  return *this;
}

PodBuilder& PodBuilder::SchedulerName(const std::string& name) {
  spec_.scheduler_name = name;
  return *this;
}

PodBuilder& PodBuilder::Preemptable(bool preemptable) {
  pod_->preemptable = preemptable;
  return *this;
}

PodBuilder& PodBuilder::PreemptionNever() {
  spec_.preemption_policy = "Never";
  return *this;
}

PodBuilder& PodBuilder::Gated(const std::string& gate) {
  spec_.scheduling_gates.push_back(gate);
  return *this;
}

PodBuilder& PodBuilder::Created(base::Time when) {
  pod_->metadata.creation_timestamp = when;
  return *this;
}

PodBuilder& PodBuilder::Namespace(const std::string& ns) {
  pod_->metadata.namespace_ = ns;
  return *this;
}

PodBuilder& PodBuilder::PriorityClassName(const std::string& name) {
  spec_.priority_class_name = name;
  return *this;
}

PodBuilder& PodBuilder::Uid(const std::string& uid) {
  pod_->metadata.uid = uid;
  return *this;
}

PodBuilder& PodBuilder::ImplicitGroup() {
  pod_->implicit_group = true;
  return *this;
}

PodBuilder& PodBuilder::Claim(const std::string& name) {
  api::Volume v;
  v.name = "v" + std::to_string(spec_.volumes.size());
  v.pvc_claim_name = name;
  spec_.volumes.push_back(std::move(v));
  return *this;
}

PodBuilder& PodBuilder::Ephemeral(const std::string& volume) {
  api::Volume v;
  v.name = volume;
  v.ephemeral = true;
  spec_.volumes.push_back(std::move(v));
  return *this;
}

PodInfoPtr PodBuilder::Add() {
  pod_->node_name = spec_.node_name;
  pod_->terminating = pod_->metadata.deletion_timestamp.has_value();
  pod_->spec = h_.interner_->Intern(
      MakeSchedulingSpec(spec_, pod_->metadata.name, pod_->metadata.namespace_));
  h_.cache_.UpsertPod(pod_);
  return pod_;
}

const api::PodGroupCondition* WrittenCondition(const Harness::Result& r, const JobId& job,
                                               const std::string& type) {
  auto it = r.statuses.find(job);
  if (it == r.statuses.end()) return nullptr;
  for (const auto& c : it->second.conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

}  // namespace tephra::scheduler::testing
