// The REST resources of the API Tephra serves and reads.
#pragma once

#include "kube/meta/resource.h"

namespace tephra::api {

inline const kube::Resource kJobs{"batch.volcano.sh", "v1alpha1", "jobs", true, "Job"};
inline const kube::Resource kCommands{"bus.volcano.sh", "v1alpha1", "commands", true, "Command"};
inline const kube::Resource kQueues{"scheduling.volcano.sh", "v1beta1", "queues", false, "Queue"};
inline const kube::Resource kPodGroups{"scheduling.volcano.sh", "v1beta1", "podgroups", true,
                                       "PodGroup"};
inline const kube::Resource kHyperNodes{"topology.volcano.sh", "v1alpha1", "hypernodes", false,
                                        "HyperNode"};
// scheduler-plugins coscheduling (optional CRD).
inline const kube::Resource kSchedPluginsPodGroups{"scheduling.x-k8s.io", "v1alpha1", "podgroups",
                                                   true, "PodGroup"};

}  // namespace tephra::api
