// Commands (bus.volcano.sh/v1alpha1) whose target does not exist, shared by the job and queue
// controllers (docs/controllers.md, "Commands"). Volcano deletes such a Command at once and
// says nothing; Tephra gives the target a short grace period (it may be being created in the
// same breath, e.g. both in one `kubectl apply -f dir/`), then asks the API server and, if the
// target is really missing, deletes the Command with a Warning event on it naming the target.
#pragma once

#include <algorithm>
#include <chrono>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>

#include "controllers/framework/controller.h"
#include "kube/meta/resource.h"
#include "sync/mutex.h"

namespace tephra::controllers {

// How long a Command may wait for its target to appear, from when the controller first saw it.
inline constexpr std::chrono::seconds kCommandTargetGrace{5};

// A Command as the controllers keep it while its target is looked for.
struct PendingCommand {
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string action;
  std::chrono::steady_clock::time_point seen;  // monotonic, when the controller first saw it
};

// Settles a Command whose target (`resource`, `target_namespace`/`target_name`) the caller's
// cache does not show. Returns how long to wait before calling again (inside the grace period,
// or the API server has the target and the cache lags), or nullopt once the Command is dealt
// with: deleted with a "TargetNotFound" Warning event, or gone already.
StatusOr<std::optional<std::chrono::milliseconds>> SettleOrphanCommand(
    const ControllerContext& ctx, const PendingCommand& command, const kube::Resource& resource,
    const std::string& target_namespace, const std::string& target_name);

// SettleOrphanCommand over `items` taken from a controller's inbox for one missing target:
// items that are not live Commands (to_command gives nullopt) and Commands dealt with leave
// `items`, those still waiting stay, and `again` says when to look next. The first error is
// returned; its item stays.
template <typename Item, typename ToCommand>
Status SettleOrphanCommandItems(const ControllerContext& ctx, std::deque<Item>& items,
                                ToCommand to_command, const kube::Resource& resource,
                                const std::string& target_namespace, const std::string& target_name,
                                std::optional<std::chrono::milliseconds>* again) {
  std::deque<Item> waiting;
  Status result;
  for (Item& item : items) {
    std::optional<PendingCommand> command = to_command(item);
    if (!command) continue;
    auto settled = SettleOrphanCommand(ctx, *command, resource, target_namespace, target_name);
    if (!settled.ok() && result.ok()) result = settled.status();
    if (settled.ok() && !settled->has_value()) continue;
    if (settled.ok()) *again = std::min(again->value_or(**settled), **settled);
    waiting.push_back(std::move(item));
  }
  items.swap(waiting);
  return result;
}

// SettleOrphanCommandItems over a controller's inbox for one missing target `key`: the items
// still waiting go back to the inbox's front, and schedule(delay) asks for the next look.
// `*inbox` is guarded by `mu`, which this takes (a pointer: the analysis cannot express that a
// parameter is guarded, and flags a guarded reference).
template <typename Item, typename ToCommand, typename Schedule>
Status SettleOrphanCommands(const ControllerContext& ctx, sync::Mutex& mu,
                            std::unordered_map<std::string, std::deque<Item>>* inbox,
                            const std::string& key, ToCommand to_command,
                            const kube::Resource& resource, const std::string& target_namespace,
                            const std::string& target_name, Schedule schedule) {
  std::deque<Item> items;
  {
    sync::MutexLock l(mu);
    auto it = inbox->find(key);
    if (it == inbox->end()) return Status::Ok();
    items.swap(it->second);
    inbox->erase(it);
  }
  std::optional<std::chrono::milliseconds> again;
  Status result = SettleOrphanCommandItems(ctx, items, to_command, resource, target_namespace,
                                           target_name, &again);
  if (!items.empty()) {
    sync::MutexLock l(mu);
    auto& box = (*inbox)[key];
    box.insert(box.begin(), std::make_move_iterator(items.begin()),
               std::make_move_iterator(items.end()));
  }
  if (again) schedule(*again);
  return result;
}

}  // namespace tephra::controllers
