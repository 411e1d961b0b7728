// batch.volcano.sh/v1alpha1 Job and bus.volcano.sh/v1alpha1 Command
// (docs/compatibility.md §1.1, §1.4).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/codec.h"
#include "api/core.h"
#include "api/duration.h"
#include "base/status.h"
#include "base/time.h"
#include "json/json.h"
#include "kube/meta/object.h"

namespace tephra::api {

inline constexpr std::string_view kBatchApiVersion = "batch.volcano.sh/v1alpha1";
inline constexpr std::string_view kJobKind = "Job";
inline constexpr std::string_view kBusApiVersion = "bus.volcano.sh/v1alpha1";
inline constexpr std::string_view kCommandKind = "Command";

namespace job_phase {
inline constexpr std::string_view kPending = "Pending";
inline constexpr std::string_view kAborting = "Aborting";
inline constexpr std::string_view kAborted = "Aborted";
inline constexpr std::string_view kRunning = "Running";
inline constexpr std::string_view kRestarting = "Restarting";
inline constexpr std::string_view kCompleting = "Completing";
inline constexpr std::string_view kCompleted = "Completed";
inline constexpr std::string_view kTerminating = "Terminating";
inline constexpr std::string_view kTerminated = "Terminated";
inline constexpr std::string_view kFailed = "Failed";
}  // namespace job_phase

// Lifecycle-policy events. The first group is what users may write in policies.
namespace job_event {
inline constexpr std::string_view kAny = "*";
inline constexpr std::string_view kPodFailed = "PodFailed";
inline constexpr std::string_view kPodEvicted = "PodEvicted";
inline constexpr std::string_view kPodPending = "PodPending";
inline constexpr std::string_view kJobUnknown = "Unknown";
inline constexpr std::string_view kTaskCompleted = "TaskCompleted";
inline constexpr std::string_view kTaskFailed = "TaskFailed";
inline constexpr std::string_view kJobUpdated = "JobUpdated";
// Internal to the controller.
inline constexpr std::string_view kOutOfSync = "OutOfSync";
inline constexpr std::string_view kCommandIssued = "CommandIssued";
inline constexpr std::string_view kPodRunning = "PodRunning";
}  // namespace job_event

namespace job_action {
inline constexpr std::string_view kAbortJob = "AbortJob";
inline constexpr std::string_view kRestartJob = "RestartJob";
inline constexpr std::string_view kRestartTask = "RestartTask";
inline constexpr std::string_view kRestartPod = "RestartPod";
inline constexpr std::string_view kRestartPartition = "RestartPartition";
inline constexpr std::string_view kTerminateJob = "TerminateJob";
inline constexpr std::string_view kCompleteJob = "CompleteJob";
inline constexpr std::string_view kResumeJob = "ResumeJob";
// Internal.
inline constexpr std::string_view kSyncJob = "SyncJob";
inline constexpr std::string_view kEnqueueJob = "EnqueueJob";
inline constexpr std::string_view kSyncQueue = "SyncQueue";
inline constexpr std::string_view kOpenQueue = "OpenQueue";
inline constexpr std::string_view kCloseQueue = "CloseQueue";
}  // namespace job_action

struct LifecyclePolicy {
  std::string action;
  std::string event;  // single event (legacy form)
  std::vector<std::string> events;
  std::optional<int32_t> exit_code;
  std::optional<Duration> timeout;
  bool operator==(const LifecyclePolicy&) const = default;
};

// Job, task partition, PodGroup and sub-group network-topology constraint.
struct NetworkTopologySpec {
  std::string mode;  // hard (default) or soft
  std::optional<int32_t> highest_tier_allowed;
  std::string highest_tier_name;
  bool operator==(const NetworkTopologySpec&) const = default;
};

struct VolumeSpec {
  std::string mount_path;
  std::string volume_claim_name;  // an existing PVC
  // A PersistentVolumeClaimSpec to create, kept as JSON text so every field reaches the PVC.
  std::optional<std::string> volume_claim_json;
  bool operator==(const VolumeSpec&) const = default;
};

struct DependsOn {
  std::vector<std::string> names;
  std::string iteration;  // "any"; anything else means all, as in Volcano
  bool operator==(const DependsOn&) const = default;
};

struct PartitionPolicy {
  int32_t total_partitions = 0;
  int32_t partition_size = 0;
  int32_t min_partitions = 0;
  std::optional<NetworkTopologySpec> network_topology;
  bool operator==(const PartitionPolicy&) const = default;
};

// What a Job's or task's maxRetry of 0 (unset) means: admission defaults it to this, and the
// job controller reads a task's 0 as this when no webhook ran (docs/compatibility.md §3.2).
inline constexpr int32_t kDefaultMaxRetry = 3;

struct TaskSpec {
  std::string name;
  int32_t replicas = 0;
  std::optional<int32_t> min_available;
  PodTemplate template_;
  std::vector<LifecyclePolicy> policies;
  std::string topology_policy;  // none, best-effort, restricted, single-numa-node
  int32_t max_retry = 0;
  std::optional<DependsOn> depends_on;
  std::optional<PartitionPolicy> partition_policy;
};

struct JobSpec {
  std::string scheduler_name;
  // Gang size. As in Volcano, 0 means "not set": defaulting replaces it by the sum of the
  // tasks' minAvailable, so an explicit 0 behaves exactly like an absent field.
  int32_t min_available = 0;
  std::vector<VolumeSpec> volumes;
  std::vector<TaskSpec> tasks;
  std::vector<LifecyclePolicy> policies;
  // Job plugin name -> arguments; a present key with no arguments still enables the plugin.
  std::map<std::string, std::vector<std::string>> plugins;
  std::optional<Duration> running_estimate;
  std::string queue;
  int32_t max_retry = 0;
  std::optional<int32_t> ttl_seconds_after_finished;
  std::string priority_class_name;
  std::optional<int32_t> min_success;
  std::optional<NetworkTopologySpec> network_topology;
};

struct JobState {
  std::string phase;
  std::string reason;
  std::string message;
  std::optional<base::Time> last_transition_time;
  bool operator==(const JobState&) const = default;
};

struct JobCondition {
  std::string status;  // a job phase
  std::optional<base::Time> last_transition_time;
  bool operator==(const JobCondition&) const = default;
};

struct JobStatus {
  JobState state;
  int32_t min_available = 0;
  // task name -> pod phase -> count
  std::map<std::string, std::map<std::string, int32_t>> task_status_count;
  int32_t pending = 0;
  int32_t running = 0;
  int32_t succeeded = 0;
  int32_t failed = 0;
  int32_t terminating = 0;
  int32_t unknown = 0;
  int32_t version = 0;
  int32_t retry_count = 0;
  std::optional<Duration> running_duration;
  std::map<std::string, std::string> controlled_resources;
  std::vector<JobCondition> conditions;
  bool operator==(const JobStatus&) const = default;
};

class Job : public kube::Object {
 public:
  JobSpec spec;
  JobStatus status;

  const TaskSpec* Task(std::string_view name) const;
  // Σ tasks' replicas.
  int32_t TotalReplicas() const;
};

// A one-shot request to a job or queue controller; fields are at the top level.
class Command : public kube::Object {
 public:
  std::string action;
  std::optional<kube::OwnerReference> target;
  std::string reason;
  std::string message;
};

StatusOr<std::shared_ptr<Job>> DecodeJob(const json::Value& value,
                                         const DecodeOptions& options = {});
StatusOr<std::shared_ptr<Job>> DecodeJob(std::string_view text, const DecodeOptions& options = {});
StatusOr<std::shared_ptr<Command>> DecodeCommand(const json::Value& value,
                                                 const DecodeOptions& options = {});
StatusOr<std::shared_ptr<Command>> DecodeCommand(std::string_view text,
                                                 const DecodeOptions& options = {});

// The whole Job: body of a create, an update, or an update of the status subresource (the API
// server takes only the status from it there).
std::string EncodeJob(const Job& job);
std::string EncodeCommand(const Command& command);

// Shared with PodGroup.
void DecodeNetworkTopology(const json::Reader& r, std::optional<NetworkTopologySpec>* out);
void EncodeNetworkTopologyInto(JsonObject& o, std::string_view key,
                               const std::optional<NetworkTopologySpec>& nt);

}  // namespace tephra::api
