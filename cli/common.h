// Helpers the command files share: client calls with printed errors, queue lookups for
// validation, and Commands (the bus.volcano.sh objects vcctl uses to suspend, resume, open and
// close).
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "api/validation.h"
#include "kube/client.h"
#include "kube/meta/object.h"

// In a command function with a Context `ctx`: declares lhs from a StatusOr, or prints the error
// and returns its exit code.
#define TEPHRA_CLI_ASSIGN(lhs, expr) \
  TEPHRA_CLI_ASSIGN_IMPL(TEPHRA_STATUS_CONCAT(tephra_cli_, __LINE__), lhs, expr)
#define TEPHRA_CLI_ASSIGN_IMPL(tmp, lhs, expr)                  \
  auto tmp = (expr);                                            \
  if (!tmp.ok()) return ::tephra::cli::Fail(ctx, tmp.status()); \
  lhs = std::move(tmp).value()

namespace tephra::cli {

// "cpu=500m,memory=1Gi" as a ResourceList (api::ParseResourceList); errors name --flag and the
// bad item, and a negative quantity is refused.
StatusOr<api::ResourceList> ParseResourceList(const std::string& flag, const std::string& text);

// Every queue, for the webhook's validation rules.
StatusOr<api::StaticQueueLookup> ListQueues(kube::Client& client);

// The controller reference vcctl puts on a Command for `object` (a Job or a Queue).
kube::OwnerReference ObjectRef(const kube::Object& object);

// Creates Command `action` for `target` in namespace `ns`, named "<target>-<action lowercased>-"
// plus a suffix as vcctl names them, owned by the target so it goes away with it. Returns the
// command's name.
StatusOr<std::string> IssueCommand(kube::Client& client, const std::string& ns,
                                   const kube::OwnerReference& target, std::string_view action);

// Issues Command `action` for job ns/name. A failed read of the job is the API server's status
// (NotFound when there is no such job). Returns the command's name.
StatusOr<std::string> IssueJobCommand(kube::Client& client, const std::string& ns,
                                      const std::string& name, std::string_view action);

// Deletes job ns/name; its pods go with it (background propagation).
Status DeleteJob(kube::Client& client, const std::string& ns, const std::string& name);

// Issues Command `action` for queue `name`, in namespace `command_ns` (queues are
// cluster-scoped; vcctl puts their Commands in default). Returns the command's name.
StatusOr<std::string> IssueQueueCommand(kube::Client& client, const std::string& command_ns,
                                        const std::string& name, std::string_view action);

// Defaults `queue` and validates it with the webhook's rules against the cluster's queues, then
// creates it. A refusal is FailedPrecondition naming the field.
Status CreateQueue(kube::Client& client, api::Queue& queue);

// Deletes queue `name` unless the webhook's rules forbid it (root, default, a queue with
// children): FailedPrecondition then. A failed read of the queue is the API server's status.
Status DeleteQueue(kube::Client& client, const std::string& name);

// PodGroups per queue and phase (Volcano no longer persists these counts; vcctl counts too). A
// PodGroup without spec.queue counts for the default queue.
using PhaseCounts = std::map<std::string, std::map<std::string, int>>;
StatusOr<PhaseCounts> CountPodGroups(kube::Client& client);

}  // namespace tephra::cli
