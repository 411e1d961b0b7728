// REST resources of the Volcano API that the controllers read and write.
#pragma once

#include "kube/client.h"

namespace tephra::controllers {

inline const kube::Resource kJobs{"batch.volcano.sh", "v1alpha1", "jobs", true, "Job"};
inline const kube::Resource kCommands{"bus.volcano.sh", "v1alpha1", "commands", true, "Command"};
inline const kube::Resource kQueues{"scheduling.volcano.sh", "v1beta1", "queues", false, "Queue"};
inline const kube::Resource kPodGroups{"scheduling.volcano.sh", "v1beta1", "podgroups", true,
                                       "PodGroup"};

}  // namespace tephra::controllers
