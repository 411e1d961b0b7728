// The admission endpoints tephra-admission serves (docs/compatibility.md §3.1-§3.6),
// and the handler behind each path.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "api/defaulting.h"
#include "api/validation.h"
#include "webhooks/admission/handler.h"
#include "webhooks/admission/resource_groups.h"

namespace tephra::webhooks {

inline constexpr std::string_view kJobsMutate = "/jobs/mutate";
inline constexpr std::string_view kJobsValidate = "/jobs/validate";
inline constexpr std::string_view kQueuesMutate = "/queues/mutate";
inline constexpr std::string_view kQueuesValidate = "/queues/validate";
inline constexpr std::string_view kPodGroupsMutate = "/podgroups/mutate";
inline constexpr std::string_view kPodGroupsValidate = "/podgroups/validate";
inline constexpr std::string_view kPodsMutate = "/pods/mutate";
inline constexpr std::string_view kPodsValidate = "/pods/validate";
inline constexpr std::string_view kHyperNodesValidate = "/hypernodes/validate";

inline constexpr std::string_view kAllPaths[] = {
    kJobsMutate,        kJobsValidate, kQueuesMutate, kQueuesValidate,    kPodGroupsMutate,
    kPodGroupsValidate, kPodsMutate,   kPodsValidate, kHyperNodesValidate};
// Volcano's Helm default minus the kinds Tephra does not serve. Pod hooks and /podgroups/mutate
// (queue from the namespace annotation) are opt-in, as in Volcano's chart.
inline constexpr std::string_view kDefaultEnabledPaths =
    "/jobs/mutate,/jobs/validate,/podgroups/validate,/queues/mutate,/queues/validate,"
    "/hypernodes/validate";

// What each path needs from the cluster, so only the informers in use are started.
struct PathNeeds {
  bool queues = false;
  bool namespaces = false;
};
// InvalidArgument for a path tephra-admission does not serve.
StatusOr<PathNeeds> NeedsOf(std::string_view path);

struct HandlerOptions {
  api::JobDefaultingOptions job_defaults;
  api::QueueValidationOptions queue_validation;
  // Pods scheduled by these schedulers are checked by /pods/validate (--scheduler-name).
  std::vector<std::string> scheduler_names = {"volcano"};
  // /pods/mutate's rules; null or empty: pods pass unchanged.
  std::shared_ptr<const ResourceGroupSource> resource_groups;
};

// The cluster state handlers read. Pointers may be null when no enabled path needs them.
struct ClusterView {
  const api::QueueLookup* queues = nullptr;
  const api::NamespaceLookup* namespaces = nullptr;
};

// The handler serving `path`. InvalidArgument for an unknown path, FailedPrecondition when the
// view lacks what the path needs.
StatusOr<std::shared_ptr<const AdmissionHandler>> NewHandler(std::string_view path,
                                                             const HandlerOptions& options,
                                                             const ClusterView& view);

// The individual handlers.
std::shared_ptr<const AdmissionHandler> NewJobMutator(api::JobDefaultingOptions options);
std::shared_ptr<const AdmissionHandler> NewJobValidator(const api::QueueLookup& queues);
std::shared_ptr<const AdmissionHandler> NewQueueMutator();
std::shared_ptr<const AdmissionHandler> NewQueueValidator(const api::QueueLookup& queues,
                                                          api::QueueValidationOptions options);
std::shared_ptr<const AdmissionHandler> NewPodGroupMutator(const api::NamespaceLookup& namespaces);
std::shared_ptr<const AdmissionHandler> NewPodGroupValidator(const api::QueueLookup& queues);
std::shared_ptr<const AdmissionHandler> NewPodMutator(
    std::shared_ptr<const ResourceGroupSource> groups);
std::shared_ptr<const AdmissionHandler> NewPodValidator(std::vector<std::string> scheduler_names);
std::shared_ptr<const AdmissionHandler> NewHyperNodeValidator();

}  // namespace tephra::webhooks
