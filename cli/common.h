// Helpers the command files share: client calls with printed errors, queue lookups for
// validation, and Commands (the bus.volcano.sh objects vcctl uses to suspend, resume, open and
// close).
#pragma once

#include <string>
#include <string_view>

#include "api/validation.h"
#include "kube/client.h"
#include "kube/object.h"

// In a command function with a Context `ctx`: declares lhs from a StatusOr, or prints the error
// and returns its exit code.
#define TEPHRA_CLI_ASSIGN(lhs, expr) \
  TEPHRA_CLI_ASSIGN_IMPL(TEPHRA_STATUS_CONCAT(tephra_cli_, __LINE__), lhs, expr)
#define TEPHRA_CLI_ASSIGN_IMPL(tmp, lhs, expr)                  \
  auto tmp = (expr);                                            \
  if (!tmp.ok()) return ::tephra::cli::Fail(ctx, tmp.status()); \
  lhs = std::move(tmp).value()

namespace tephra::cli {

// "cpu=500m,memory=1Gi" as a ResourceList; errors name --flag and the bad item.
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

}  // namespace tephra::cli
