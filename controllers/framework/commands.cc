#include "controllers/framework/commands.h"

#include <glog/logging.h>

#include "api/kinds.h"

namespace tephra::controllers {
namespace {

// The API server has the target but the cache does not yet: look again after this.
constexpr std::chrono::milliseconds kCacheLagRetry{1000};

}  // namespace

StatusOr<std::optional<std::chrono::milliseconds>> SettleOrphanCommand(
    const ControllerContext& ctx, const PendingCommand& command, const kube::Resource& resource,
    const std::string& target_namespace, const std::string& target_name) {
  const auto waited = ctx.clock->Monotonic() - command.seen;
  if (waited < kCommandTargetGrace) {
    return std::optional(
        std::chrono::ceil<std::chrono::milliseconds>(kCommandTargetGrace - waited));
  }
  StatusOr<std::string> target = ctx.client->Get(resource, target_namespace, target_name);
  if (target.ok()) return std::optional(kCacheLagRetry);
  if (target.status().code() != StatusCode::kNotFound) {
    return target.status().WithContext("looking up the target of command " + command.name);
  }
  kube::DeleteOptions once;
  once.precondition_uid = command.uid;
  Status deleted = ctx.client->Delete(api::kCommands, command.namespace_, command.name, once);
  if (deleted.code() == StatusCode::kNotFound || deleted.code() == StatusCode::kConflict) {
    return std::optional<std::chrono::milliseconds>();  // consumed or replaced meanwhile
  }
  if (!deleted.ok()) return deleted.WithContext("deleting command " + command.name);
  const std::string target_text =
      resource.kind + " " + (target_namespace.empty() ? "" : target_namespace + "/") + target_name;
  const std::string message = "target " + target_text + " does not exist; command " +
                              command.action + " deleted without effect";
  LOG(WARNING) << "command " << command.namespace_ << "/" << command.name << ": " << message;
  if (ctx.recorder != nullptr) {
    kube::ObjectReference ref;
    ref.api_version = api::kCommands.GroupVersion();
    ref.kind = api::kCommands.kind;
    ref.namespace_ = command.namespace_;
    ref.name = command.name;
    ref.uid = command.uid;
    ctx.recorder->Record(ref, kube::EventType::kWarning, "TargetNotFound", message);
  }
  return std::optional<std::chrono::milliseconds>();
}

}  // namespace tephra::controllers
