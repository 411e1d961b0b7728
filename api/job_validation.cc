// Job admission rules (docs/compatibility.md §3.3).
#include <algorithm>
#include <map>
#include <set>

#include "api/labels.h"
#include "api/validation.h"
#include "api/validation_internal.h"
#include "base/strings.h"
#include "base/time.h"

namespace tephra::api {
namespace {

using validation::Field;
using validation::Index;

constexpr std::string_view kPolicyEvents[] = {job_event::kAny,        job_event::kPodFailed,
                                              job_event::kPodEvicted, job_event::kPodPending,
                                              job_event::kJobUnknown, job_event::kTaskCompleted,
                                              job_event::kTaskFailed, job_event::kJobUpdated};
constexpr std::string_view kPolicyActions[] = {
    job_action::kAbortJob,    job_action::kRestartJob,       job_action::kRestartTask,
    job_action::kRestartPod,  job_action::kRestartPartition, job_action::kTerminateJob,
    job_action::kCompleteJob, job_action::kResumeJob};
constexpr std::string_view kTopologyPolicies[] = {"none", "best-effort", "restricted",
                                                  "single-numa-node"};

template <size_t N>
bool OneOf(std::string_view value, const std::string_view (&set)[N]) {
  return std::find(std::begin(set), std::end(set), value) != std::end(set);
}

template <size_t N>
std::string ListOf(const std::string_view (&set)[N]) {
  std::vector<std::string> items(std::begin(set), std::end(set));
  return base::Join(items, ", ");
}

constexpr std::string_view kUpdatableFields =
    "job updates may only change minAvailable, priorityClassName, tasks[*].replicas and "
    "tasks[*].minAvailable";

// The mpi plugin's master task: its --master argument, "master" by default.
std::string MpiMasterTask(const std::vector<std::string>& args) {
  constexpr std::string_view kFlag = "--master=";
  for (const std::string& a : args) {
    if (a.rfind(kFlag, 0) == 0) return a.substr(kFlag.size());
  }
  return "master";
}

void ValidatePartition(const TaskSpec& task, const std::string& tpath, FieldErrors* errors) {
  if (!task.partition_policy) return;
  const PartitionPolicy& p = *task.partition_policy;
  std::string ppath = Field(tpath, "partitionPolicy");
  if (p.total_partitions <= 0) {
    errors->push_back({Field(ppath, "totalPartitions"), "must be greater than 0"});
  }
  if (p.partition_size <= 0) {
    errors->push_back({Field(ppath, "partitionSize"), "must be greater than 0"});
  }
  if (p.min_partitions < 0) {
    errors->push_back({Field(ppath, "minPartitions"), "must be greater than or equal to 0"});
  } else if (p.total_partitions > 0 && p.min_partitions > p.total_partitions) {
    errors->push_back(
        {Field(ppath, "minPartitions"), "must be less than or equal to totalPartitions (" +
                                            std::to_string(p.total_partitions) + ")"});
  }
  int64_t total = int64_t{p.total_partitions} * p.partition_size;
  if (p.total_partitions > 0 && p.partition_size > 0 && task.replicas != total) {
    errors->push_back({Field(tpath, "replicas"), "must equal totalPartitions × partitionSize (" +
                                                     std::to_string(total) +
                                                     ") when partitionPolicy is set"});
  }
  int64_t min = int64_t{p.min_partitions} * p.partition_size;
  if (p.min_partitions > 0 && task.min_available && *task.min_available != min) {
    errors->push_back({Field(tpath, "minAvailable"), "must equal minPartitions × partitionSize (" +
                                                         std::to_string(min) +
                                                         ") when minPartitions is set"});
  }
  validation::ValidateNetworkTopology(p.network_topology, Field(ppath, "networkTopology"), errors);
}

// Ranges every create and update must respect.
void ValidateTaskRanges(const TaskSpec& task, const std::string& tpath, FieldErrors* errors) {
  if (task.replicas < 0) {
    errors->push_back({Field(tpath, "replicas"), "must be greater than or equal to 0"});
  }
  if (task.min_available) {
    if (*task.min_available < 0) {
      errors->push_back({Field(tpath, "minAvailable"), "must be greater than or equal to 0"});
    } else if (task.replicas >= 0 && *task.min_available > task.replicas) {
      errors->push_back({Field(tpath, "minAvailable"), "must be less than or equal to replicas (" +
                                                           std::to_string(task.replicas) + ")"});
    }
  }
  ValidatePartition(task, tpath, errors);
}

// Σ replicas, and job minAvailable within [0, Σ replicas].
void ValidateJobMinAvailable(const Job& job, FieldErrors* errors) {
  int64_t total = 0;
  for (const TaskSpec& t : job.spec.tasks) total += std::max(t.replicas, 0);
  if (job.spec.min_available < 0) {
    errors->push_back({"spec.minAvailable", "must be greater than or equal to 0"});
  } else if (job.spec.min_available > total) {
    errors->push_back(
        {"spec.minAvailable", "must be less than or equal to the total replicas of all tasks (" +
                                  std::to_string(total) + ")"});
  }
}

void ValidateTopologyPolicy(const TaskSpec& task, const std::string& tpath, FieldErrors* errors) {
  const std::string& policy = task.topology_policy;
  if (policy.empty() || policy == "none") return;
  std::string path = Field(tpath, "topologyPolicy");
  if (!OneOf(policy, kTopologyPolicies)) {
    errors->push_back(
        {path, "must be one of " + ListOf(kTopologyPolicies) + ", not \"" + policy + "\""});
    return;
  }
  // NUMA alignment needs exclusive whole cpus: limits stand in for missing requests.
  for (const Container& c : task.template_.spec.containers) {
    const Quantity* cpu = c.resources.requests.Find(kResourceCpu);
    if (cpu == nullptr) cpu = c.resources.limits.Find(kResourceCpu);
    if (cpu == nullptr || cpu->MilliValue() % 1000 != 0 || cpu->Sign() <= 0) {
      errors->push_back({path, "topologyPolicy " + policy +
                                   " requires a whole number of cpus in every container; container "
                                   "\"" +
                                   c.name + "\" requests " +
                                   (cpu == nullptr ? std::string("none") : cpu->String())});
    }
  }
}

void ValidateTaskCreate(const Job& job, size_t i, std::set<std::string>* names,
                        FieldErrors* errors) {
  const TaskSpec& task = job.spec.tasks[i];
  std::string tpath = Index("spec.tasks", i);
  std::string name_path = Field(tpath, "name");
  if (task.name.empty()) {
    errors->push_back({name_path, "is required"});
  } else {
    validation::AddNameProblems(errors, name_path, "task name", task.name,
                                DnsLabelProblems(task.name));
    if (!names->insert(task.name).second) {
      errors->push_back({name_path, "duplicate task name \"" + task.name + "\""});
    }
    // Pods are named <job>-<task>-<index>; the longest index must still make a valid name.
    std::string pod_name =
        job.metadata.name + "-" + task.name + "-" + std::to_string(std::max(task.replicas - 1, 0));
    validation::AddNameProblems(errors, name_path, "generated pod name", pod_name,
                                QualifiedNameProblems(pod_name));
  }
  ValidateTaskRanges(task, tpath, errors);
  if (task.max_retry < 0) {
    errors->push_back({Field(tpath, "maxRetry"), "must be greater than or equal to 0"});
  }
  for (FieldError& e : ValidateLifecyclePolicies(task.policies, Field(tpath, "policies"))) {
    errors->push_back(std::move(e));
  }
  for (FieldError& e : ValidatePodTemplate(task.template_, Field(tpath, "template"))) {
    errors->push_back(std::move(e));
  }
  ValidateTopologyPolicy(task, tpath, errors);
}

void ValidateVolumes(const std::vector<VolumeSpec>& volumes, FieldErrors* errors) {
  std::set<std::string> mounts;
  for (size_t i = 0; i < volumes.size(); ++i) {
    const VolumeSpec& v = volumes[i];
    std::string vpath = Index("spec.volumes", i);
    if (v.mount_path.empty()) {
      errors->push_back({Field(vpath, "mountPath"), "is required"});
    } else if (v.mount_path.find(':') != std::string::npos) {
      errors->push_back({Field(vpath, "mountPath"), "must not contain ':'"});
    } else if (!mounts.insert(v.mount_path).second) {
      errors->push_back(
          {Field(vpath, "mountPath"), "duplicate mountPath \"" + v.mount_path + "\""});
    }
    bool has_claim = v.volume_claim_json.has_value();
    bool has_name = !v.volume_claim_name.empty();
    if (has_claim == has_name) {
      errors->push_back({vpath, "exactly one of volumeClaim and volumeClaimName must be set"});
    }
    if (has_name) {
      validation::AddNameProblems(errors, Field(vpath, "volumeClaimName"), "claim name",
                                  v.volume_claim_name, DnsSubdomainProblems(v.volume_claim_name));
    }
  }
}

void ValidatePlugins(const Job& job, FieldErrors* errors) {
  std::vector<std::string> known(std::begin(kJobPlugins), std::end(kJobPlugins));
  for (const auto& [name, args] : job.spec.plugins) {
    if (!OneOf(name, kJobPlugins)) {
      errors->push_back(
          {Field("spec.plugins", name),
           "unknown job plugin \"" + name + "\"; supported: " + base::Join(known, ", ")});
    }
  }
  auto mpi = job.spec.plugins.find("mpi");
  if (mpi != job.spec.plugins.end()) {
    std::string master = MpiMasterTask(mpi->second);
    if (job.Task(master) == nullptr) {
      errors->push_back({"spec.plugins.mpi", "the mpi plugin's master task \"" + master +
                                                 "\" is not a task of this job"});
    }
  }
}

void ValidateQueue(const Job& job, const QueueLookup& queues, FieldErrors* errors) {
  std::string name = job.spec.queue.empty() ? std::string(kDefaultQueue) : job.spec.queue;
  std::shared_ptr<const Queue> queue = queues.Get(name);
  if (queue == nullptr) {
    errors->push_back({"spec.queue", "queue \"" + name + "\" does not exist"});
    return;
  }
  if (name == kRootQueue) {
    errors->push_back({"spec.queue", "can not submit job to the root queue"});
    return;
  }
  if (queue->status.state != queue_state::kOpen) {
    errors->push_back({"spec.queue", "can only submit job to queue with state Open; queue \"" +
                                         name + "\" is \"" + queue->status.state + "\""});
  }
  if (!queues.Children(name).empty()) {
    errors->push_back({"spec.queue", "can only submit job to a leaf queue; queue \"" + name +
                                         "\" has child queues"});
  }
}

// The first cycle a depth-first search from task 0, 1, ... meets, as the tasks along it (the
// first task again at the end); empty when the graph is a DAG. Iterative with an explicit
// stack, so a chain of any length is fine, and linear in tasks plus edges.
std::vector<size_t> FindCycle(const std::vector<std::vector<size_t>>& edges) {
  enum Colour : uint8_t { kWhite, kGrey, kBlack };
  std::vector<Colour> colour(edges.size(), kWhite);
  struct Frame {
    size_t task;
    size_t next_edge;
  };
  std::vector<Frame> stack;
  for (size_t start = 0; start < edges.size(); ++start) {
    if (colour[start] != kWhite) continue;
    colour[start] = kGrey;
    stack.push_back({start, 0});
    while (!stack.empty()) {
      Frame& top = stack.back();
      if (top.next_edge == edges[top.task].size()) {
        colour[top.task] = kBlack;
        stack.pop_back();
        continue;
      }
      size_t w = edges[top.task][top.next_edge++];
      if (colour[w] == kGrey) {
        std::vector<size_t> cycle;
        auto from =
            std::find_if(stack.begin(), stack.end(), [&](const Frame& f) { return f.task == w; });
        for (auto it = from; it != stack.end(); ++it) cycle.push_back(it->task);
        cycle.push_back(w);
        return cycle;
      }
      if (colour[w] == kWhite) {
        colour[w] = kGrey;
        stack.push_back({w, 0});  // invalidates `top`
      }
    }
  }
  return {};
}

// "a -> b -> a"; a long cycle shows its first and last tasks and its length.
std::string DescribeCycle(const std::vector<TaskSpec>& tasks, const std::vector<size_t>& cycle) {
  constexpr size_t kShown = 8;
  std::string out;
  for (size_t i = 0; i < cycle.size(); ++i) {
    if (cycle.size() > kShown && i == kShown / 2) {
      out += "... -> ";
      i = cycle.size() - kShown / 2;
    }
    out += tasks[cycle[i]].name;
    if (i + 1 < cycle.size()) out += " -> ";
  }
  if (cycle.size() > kShown) out += " (" + std::to_string(cycle.size() - 1) + " tasks)";
  return out;
}

// dependsOn must name other tasks of the job and form a DAG.
void ValidateDependencies(const Job& job, FieldErrors* errors) {
  const std::vector<TaskSpec>& tasks = job.spec.tasks;
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < tasks.size(); ++i) index.emplace(tasks[i].name, i);
  std::vector<std::vector<size_t>> edges(tasks.size());
  bool any = false;
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (!tasks[i].depends_on) continue;
    any = true;
    const DependsOn& d = *tasks[i].depends_on;
    std::string dpath = Field(Index("spec.tasks", i), "dependsOn");
    for (size_t j = 0; j < d.names.size(); ++j) {
      std::string npath = Index(Field(dpath, "name"), j);
      auto it = index.find(d.names[j]);
      if (it == index.end()) {
        errors->push_back({npath, "unknown task \"" + d.names[j] + "\""});
      } else if (it->second == i) {
        errors->push_back({npath, "a task cannot depend on itself"});
      } else {
        edges[i].push_back(it->second);
      }
    }
  }
  if (!any) return;
  std::vector<size_t> cycle = FindCycle(edges);
  if (!cycle.empty()) {
    errors->push_back({"spec.tasks", "dependsOn forms a cycle: " + DescribeCycle(tasks, cycle)});
  }
}

}  // namespace

FieldErrors ValidateLifecyclePolicies(const std::vector<LifecyclePolicy>& policies,
                                      std::string_view path) {
  FieldErrors errors;
  std::map<std::string, std::string> event_owner;  // event -> path of the policy using it
  std::set<int32_t> exit_codes;
  bool wildcard = false;
  size_t event_count = 0;  // distinct events across the policies
  for (size_t j = 0; j < policies.size(); ++j) {
    const LifecyclePolicy& policy = policies[j];
    std::string ppath = Index(path, j);
    std::vector<std::pair<std::string, std::string>> events;  // (event, its path)
    if (!policy.event.empty()) events.emplace_back(policy.event, Field(ppath, "event"));
    for (size_t k = 0; k < policy.events.size(); ++k) {
      events.emplace_back(policy.events[k], Index(Field(ppath, "events"), k));
    }
    if (policy.exit_code && !events.empty()) {
      errors.push_back({ppath, "event(s) and exitCode are mutually exclusive"});
    } else if (!policy.exit_code && events.empty()) {
      errors.push_back({ppath, "one of event, events or exitCode is required"});
    }
    std::set<std::string> in_policy;  // a policy may name an event twice (Volcano: once)
    for (const auto& [event, epath] : events) {
      if (!in_policy.insert(event).second) continue;
      if (!OneOf(event, kPolicyEvents)) {
        errors.push_back(
            {epath, "invalid event \"" + event + "\"; valid events: " + ListOf(kPolicyEvents)});
        continue;
      }
      auto [owner, inserted] = event_owner.emplace(event, ppath);
      if (!inserted) {
        errors.push_back({epath, "event \"" + event + "\" is already handled by " + owner->second});
      }
      wildcard = wildcard || event == job_event::kAny;
      ++event_count;
    }
    if (policy.exit_code) {
      if (*policy.exit_code == 0) {
        errors.push_back({Field(ppath, "exitCode"), "must not be 0 (exit code 0 means success)"});
      } else if (!exit_codes.insert(*policy.exit_code).second) {
        errors.push_back(
            {Field(ppath, "exitCode"), "duplicate exitCode " + std::to_string(*policy.exit_code)});
      }
    }
    if (!OneOf(policy.action, kPolicyActions)) {
      errors.push_back(
          {Field(ppath, "action"),
           "invalid action \"" + policy.action + "\"; valid actions: " + ListOf(kPolicyActions)});
    }
  }
  if (wildcard && event_count > 1) {
    errors.push_back({std::string(path), "when event \"*\" is used it must be the only event"});
  }
  return errors;
}

FieldErrors ValidateJobCreate(const Job& job, const QueueLookup* queues) {
  FieldErrors errors;
  const JobSpec& spec = job.spec;
  validation::AddNameProblems(&errors, "metadata.name", "job name", job.metadata.name,
                              QualifiedNameProblems(job.metadata.name));
  if (spec.tasks.empty()) errors.push_back({"spec.tasks", "No task specified in job spec"});
  validation::ValidateNetworkTopology(spec.network_topology, "spec.networkTopology", &errors);
  std::set<std::string> names;
  for (size_t i = 0; i < spec.tasks.size(); ++i) ValidateTaskCreate(job, i, &names, &errors);
  ValidateJobMinAvailable(job, &errors);
  if (spec.max_retry < 0) errors.push_back({"spec.maxRetry", "must be greater than or equal to 0"});
  if (spec.ttl_seconds_after_finished && *spec.ttl_seconds_after_finished < 0) {
    errors.push_back({"spec.ttlSecondsAfterFinished", "must be greater than or equal to 0"});
  }
  if (spec.min_success && *spec.min_success < 1) {
    errors.push_back({"spec.minSuccess", "must be greater than or equal to 1"});
  }
  for (FieldError& e : ValidateLifecyclePolicies(spec.policies, "spec.policies")) {
    errors.push_back(std::move(e));
  }
  ValidatePlugins(job, &errors);
  ValidateVolumes(spec.volumes, &errors);
  if (queues != nullptr) ValidateQueue(job, *queues, &errors);
  ValidateDependencies(job, &errors);
  // Tephra's own annotations (docs/admission.md, Jobs).
  const auto& annotations = job.metadata.annotations;
  if (auto it = annotations.find(std::string(kDeadlineKey));
      it != annotations.end() && !base::ParseTime(it->second)) {
    errors.push_back({"metadata.annotations[" + std::string(kDeadlineKey) + "]",
                      "must be an RFC 3339 time such as 2026-12-31T18:00:00Z"});
  }
  for (std::string_view key :
       {kRestartBackoffKey, kRestartBackoffMaxKey, kScheduleTimeoutKey, kScheduleBackoffKey}) {
    auto it = annotations.find(std::string(key));
    if (it != annotations.end() && !base::ParsePositiveDuration(it->second)) {
      errors.push_back({"metadata.annotations[" + std::string(key) + "]",
                        "must be a positive duration such as 10s or 2m30s"});
    }
  }
  return errors;
}

namespace {

// A volume with a volumeClaim gets its generated claim name filled in by the controller; that
// is not a user change.
bool SameVolumes(const std::vector<VolumeSpec>& a, const std::vector<VolumeSpec>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].mount_path != b[i].mount_path) return false;
    if (a[i].volume_claim_json.has_value() != b[i].volume_claim_json.has_value()) return false;
    if (a[i].volume_claim_json &&
        !validation::JsonTextEqual(*a[i].volume_claim_json, *b[i].volume_claim_json)) {
      return false;
    }
    if (!a[i].volume_claim_json && a[i].volume_claim_name != b[i].volume_claim_name) return false;
  }
  return true;
}

void CompareTask(const TaskSpec& a, const TaskSpec& b, const std::string& tpath,
                 FieldErrors* errors) {
  auto changed = [&](std::string_view field) {
    errors->push_back(
        {Field(tpath, field), "may not be changed; " + std::string(kUpdatableFields)});
  };
  if (a.name != b.name) changed("name");
  if (!validation::JsonTextEqual(a.template_.json, b.template_.json)) changed("template");
  if (a.policies != b.policies) changed("policies");
  if (a.topology_policy != b.topology_policy) changed("topologyPolicy");
  if (a.max_retry != b.max_retry) changed("maxRetry");
  if (a.depends_on != b.depends_on) changed("dependsOn");
  if (a.partition_policy != b.partition_policy) changed("partitionPolicy");
}

}  // namespace

FieldErrors ValidateJobUpdate(const Job& old_job, const Job& new_job) {
  FieldErrors errors;
  const JobSpec& o = old_job.spec;
  const JobSpec& n = new_job.spec;
  for (size_t i = 0; i < n.tasks.size(); ++i) {
    ValidateTaskRanges(n.tasks[i], Index("spec.tasks", i), &errors);
  }
  ValidateJobMinAvailable(new_job, &errors);
  validation::ValidateNetworkTopology(n.network_topology, "spec.networkTopology", &errors);

  if (o.tasks.size() != n.tasks.size()) {
    errors.push_back({"spec.tasks", "the number of tasks may not change (was " +
                                        std::to_string(o.tasks.size()) + ", now " +
                                        std::to_string(n.tasks.size()) + ")"});
  } else {
    for (size_t i = 0; i < n.tasks.size(); ++i) {
      CompareTask(o.tasks[i], n.tasks[i], Index("spec.tasks", i), &errors);
    }
  }
  auto changed = [&](std::string_view field) {
    errors.push_back(
        {Field("spec", field), "may not be changed; " + std::string(kUpdatableFields)});
  };
  if (o.scheduler_name != n.scheduler_name) changed("schedulerName");
  if (!SameVolumes(o.volumes, n.volumes)) changed("volumes");
  if (o.policies != n.policies) changed("policies");
  if (o.plugins != n.plugins) changed("plugins");
  if (o.running_estimate != n.running_estimate) changed("runningEstimate");
  if (o.queue != n.queue) changed("queue");
  if (o.max_retry != n.max_retry) changed("maxRetry");
  if (o.ttl_seconds_after_finished != n.ttl_seconds_after_finished)
    changed("ttlSecondsAfterFinished");
  if (o.min_success != n.min_success) changed("minSuccess");
  if (o.network_topology != n.network_topology) changed("networkTopology");
  return errors;
}

}  // namespace tephra::api
