// Defaults shared by the admission webhook and the controllers (docs/compatibility.md §3.2, §3.4,
// §3.5). Each Apply* function changes the typed object in memory (what a
// controller does when no webhook runs); each Default* function does the same and returns the
// equivalent RFC 6902 patch for a mutating webhook's answer. The patch is the difference
// between the request and the encoding after defaulting, so it always matches the in-memory
// change. Decode the request with DecodeOptions::keep_raw: the request text is then the base
// and the patch applies to it exactly; without raw the base is the object's own encoding.
#pragma once

#include <string>

#include "api/batch.h"
#include "api/json_patch.h"
#include "api/scheduling.h"
#include "api/validation.h"

namespace tephra::api {

struct JobDefaultingOptions {
  std::string scheduler_name = std::string(kDefaultSchedulerName);  // first --scheduler-name
  std::string default_queue = std::string(kDefaultQueue);
};

// Job CREATE, in Volcano's order: queue, schedulerName, maxRetry 0 -> 3; per task: name
// "default<i>", dnsPolicy ClusterFirstWithHostNet for hostNetwork pods, minAvailable
// (minPartitions × partitionSize, else replicas) when unset, maxRetry 0 -> 3; job
// minAvailable 0 -> Σ task minAvailable; svc for tensorflow/mpi/pytorch/ray, ssh for mpi.
//
// minAvailable: Volcano's API (int32 with omitempty) cannot tell an explicit `minAvailable: 0`
// from an absent one, so its webhook replaces both with the sum. Tephra does the same so that
// existing manifests behave identically: a job cannot ask for a gang of zero.
void ApplyJobDefaults(Job* job, const JobDefaultingOptions& options = {});
JsonPatch DefaultJob(Job* job, const JobDefaultingOptions& options = {});

// Queue CREATE: legacy hierarchy annotations not starting at root get "root/" and weight
// "1/" prefixed; reclaimable unset -> true; weight 0 -> 1.
void ApplyQueueDefaults(Queue* queue);
JsonPatch DefaultQueue(Queue* queue);

// PodGroup CREATE: a PodGroup in the default queue moves to its namespace's default queue
// (annotation scheduling.volcano.sh/queue-name) when there is one. `namespaces` may be null.
void ApplyPodGroupDefaults(PodGroup* pg, const NamespaceLookup* namespaces);
JsonPatch DefaultPodGroup(PodGroup* pg, const NamespaceLookup* namespaces);

}  // namespace tephra::api
