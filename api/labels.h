// Well-known label, annotation and scheduling-gate keys that Volcano and its integrations put on
// pods, PodGroups, Jobs, queues and namespaces (docs/compatibility.md §1.6).
#pragma once

#include <string_view>

namespace tephra::api {

// Pod annotation naming the PodGroup; the scheduler's job id is "<namespace>/<value>".
inline constexpr std::string_view kGroupNameAnnotation = "scheduling.k8s.io/group-name";
// Pod label of scheduler-plugins coscheduling naming a scheduling.x-k8s.io PodGroup.
inline constexpr std::string_view kSchedPluginsPodGroupLabel = "scheduling.x-k8s.io/pod-group";

// Set by the job controller on the pods of a Job.
inline constexpr std::string_view kJobNameKey = "volcano.sh/job-name";  // label + annotation
inline constexpr std::string_view kJobNamespaceKey = "volcano.sh/job-namespace";  // label
inline constexpr std::string_view kTaskSpecKey = "volcano.sh/task-spec";    // label + annotation
inline constexpr std::string_view kTaskIndexKey = "volcano.sh/task-index";  // label + annotation
inline constexpr std::string_view kQueueNameKey = "volcano.sh/queue-name";  // label + annotation
inline constexpr std::string_view kJobVersionAnnotation = "volcano.sh/job-version";
inline constexpr std::string_view kJobRetryCountAnnotation = "volcano.sh/job-retry-count";
inline constexpr std::string_view kTemplateUidAnnotation = "volcano.sh/template-uid";
inline constexpr std::string_view kPartitionIdLabel = "volcano.sh/partition-id";
// The controller is deleting this pod; its events must be ignored.
inline constexpr std::string_view kControllerOutOfSyncAnnotation =
    "volcano.sh/controller-out-of-sync";
inline constexpr std::string_view kNumaTopologyPolicyAnnotation = "volcano.sh/numa-topology-policy";

// Set by users on jobs, PodGroups or pods.
// Task default true, PodGroup/job default false.
inline constexpr std::string_view kPreemptableKey = "volcano.sh/preemptable";
inline constexpr std::string_view kCooldownTimeKey = "volcano.sh/cooldown-time";
inline constexpr std::string_view kRevocableZoneKey = "volcano.sh/revocable-zone";
inline constexpr std::string_view kJdbMinAvailableKey = "volcano.sh/jdb-min-available";
inline constexpr std::string_view kJdbMaxUnavailableKey = "volcano.sh/jdb-max-unavailable";
// Overrides pod priority for ordering tasks within a job.
inline constexpr std::string_view kTaskPriorityAnnotation = "volcano.sh/task-priority";
// How long a job may wait (a Go duration), for the sla plugin: a Job's or PodGroup's
// annotation under either name.
inline constexpr std::string_view kSlaWaitingTimeKey = "volcano.sh/sla-waiting-time";
inline constexpr std::string_view kSlaWaitingTimeShortKey = "sla-waiting-time";
// When a job should be done by (RFC 3339), on a Job or PodGroup: within equal priority, jobs
// with a deadline are ordered first, the earliest first (Tephra's own; docs/scheduler.md).
inline constexpr std::string_view kDeadlineKey = "tephra.dev/deadline";
// Retry back-off of a Job's restarting policies (Go durations; Tephra's own,
// docs/compatibility.md §2.1): the first wait, doubled per restart up to the cap (default 5m).
inline constexpr std::string_view kRestartBackoffKey = "tephra.dev/restart-backoff";
inline constexpr std::string_view kRestartBackoffMaxKey = "tephra.dev/restart-backoff-max";
// Gang schedule timeout on a Job or PodGroup (Go durations; Tephra's own, docs/scheduler.md):
// an admitted gang not placed within the timeout gives its admission back and waits out the
// back-off (default: the timeout) before it is admitted again.
inline constexpr std::string_view kScheduleTimeoutKey = "tephra.dev/schedule-timeout";
inline constexpr std::string_view kScheduleBackoffKey = "tephra.dev/schedule-backoff";
// Job label naming the kind of job; vcctl's job list shows it ("Batch" when absent).
inline constexpr std::string_view kJobTypeKey = "volcano.sh/job-type";

// Queue of plain pods' PodGroups, or a namespace's default queue.
inline constexpr std::string_view kSchedulingQueueNameAnnotation =
    "scheduling.volcano.sh/queue-name";
// minMember for PodGroups created for a workload owner (ReplicaSet, StatefulSet, ...).
inline constexpr std::string_view kGroupMinMemberAnnotation =
    "scheduling.volcano.sh/group-min-member";
// Pod scheduling gate used by opt-in queue admission.
inline constexpr std::string_view kQueueAllocationGate =
    "scheduling.volcano.sh/queue-allocation-gate";

// Multi-cluster forwarding.
inline constexpr std::string_view kJobForwardingKey = "volcano.sh/job-forwarding";
inline constexpr std::string_view kForwardClusterKey = "volcano.sh/forward-cluster";

// Network-topology placement for plain-pod PodGroups, and the scheduler's record of it.
inline constexpr std::string_view kNetworkTopologyModeAnnotation =
    "volcano.sh/network-topology-mode";
inline constexpr std::string_view kNetworkTopologyHighestTierAnnotation =
    "volcano.sh/network-topology-highest-tier";
inline constexpr std::string_view kJobAllocatedHyperNodeAnnotation =
    "volcano.sh/job-allocated-hypernode";

// Legacy queue hierarchy: "root/a/b" with weights "1/2/3".
inline constexpr std::string_view kQueueHierarchyAnnotation = "volcano.sh/hierarchy";
inline constexpr std::string_view kQueueHierarchyWeightsAnnotation = "volcano.sh/hierarchy-weights";

// Node label read by the nodegroup plugin for queue node-group affinity.
inline constexpr std::string_view kNodeGroupNameLabel = "volcano.sh/nodegroup-name";
// Queue annotation capping what the queue may hold per node group: {"group": {"cpu": "8"}}.
inline constexpr std::string_view kNodeGroupResourceLimitsAnnotation =
    "volcano.sh/nodegroup-resource-limits";
// Pod annotation selecting a resource group of the pod mutating webhook.
inline constexpr std::string_view kResourceGroupAnnotation = "volcano.sh/resource-group";

}  // namespace tephra::api
