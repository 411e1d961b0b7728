#include "controllers/queue/queue_controller.h"

#include <glog/logging.h>

#include "api/informers/informers.h"
#include "api/kinds.h"
#include "controllers/framework/commands.h"
#include "json/json.h"
#include "metrics/metrics.h"

namespace tephra::controllers::queue {
namespace {

namespace qs = api::queue_state;

constexpr std::string_view kPhases[] = {
    api::podgroup_phase::kPending, api::podgroup_phase::kInqueue, api::podgroup_phase::kRunning,
    api::podgroup_phase::kUnknown, api::podgroup_phase::kCompleted};

std::optional<QueueAction> ParseQueueAction(std::string_view action) {
  if (action == api::job_action::kOpenQueue) return QueueAction::kOpen;
  if (action == api::job_action::kCloseQueue) return QueueAction::kClose;
  if (action == api::job_action::kSyncQueue || action.empty()) return QueueAction::kSync;
  return std::nullopt;
}

std::string_view QueueActionName(QueueAction action) {
  switch (action) {
    case QueueAction::kOpen:
      return api::job_action::kOpenQueue;
    case QueueAction::kClose:
      return api::job_action::kCloseQueue;
    case QueueAction::kSync:
      break;
  }
  return api::job_action::kSyncQueue;
}

std::string QueueOfPodGroup(const kube::Object& o) {
  const auto& pg = static_cast<const api::PodGroup&>(o);
  return pg.spec.queue.empty() ? std::string(api::kDefaultQueue) : pg.spec.queue;
}

}  // namespace

void PodGroupTally::Count(const api::PodGroup& pg, int delta) {
  const std::string queue = QueueOfPodGroup(pg);
  const std::string phase =
      pg.status.phase.empty() ? std::string(api::podgroup_phase::kPending) : pg.status.phase;
  sync::MutexLock l(mu_);
  std::map<std::string, size_t>& phases = counts_[queue];
  if (delta > 0) {
    ++phases[phase];
  } else if (auto it = phases.find(phase); it != phases.end() && --it->second == 0) {
    phases.erase(it);
  }
  if (phases.empty()) counts_.erase(queue);
}

std::map<std::string, size_t> PodGroupTally::ByPhase(const std::string& queue) const {
  sync::MutexLock l(mu_);
  auto it = counts_.find(queue);
  return it == counts_.end() ? std::map<std::string, size_t>{} : it->second;
}

std::string NextQueueState(std::string_view state, QueueAction action, size_t podgroups) {
  const std::string closing_or_closed(podgroups == 0 ? qs::kClosed : qs::kClosing);
  if (action == QueueAction::kOpen) return std::string(qs::kOpen);
  if (state.empty() || state == qs::kOpen) {
    return action == QueueAction::kClose ? closing_or_closed : std::string(qs::kOpen);
  }
  if (state == qs::kClosed) return std::string(qs::kClosed);
  if (state == qs::kClosing) return closing_or_closed;
  // Unknown (or a state newer than Tephra): only an explicit command decides.
  return action == QueueAction::kClose ? closing_or_closed : std::string(state);
}

QueueController::QueueController() = default;
QueueController::~QueueController() {
  Stop();
}

Status QueueController::Initialize(ControllerContext& context) {
  ctx_ = context;
  // Closing a queue depends on every PodGroup in it; one namespace's view would close queues
  // that other namespaces still use.
  if (!ctx_.options.namespace_.empty() && ctx_.options.queue_label_selector.empty()) {
    return InvalidArgument(
        "queue-controller with --namespace needs --queue-label-selector naming the queues only "
        "that namespace uses (or disable it: --controllers=*,-queue-controller)");
  }
  queues_ = ctx_.informers->For(api::kQueues, api::QueueDecoder(), QueueScope(ctx_.options),
                                ctx_.options.resync_period);
  all_queues_ = ctx_.informers->For(api::kQueues, api::QueueDecoder());
  podgroups_ =
      ctx_.informers->For(api::kPodGroups, api::PodGroupDecoder(), NamespacedScope(ctx_.options));
  commands_ =
      ctx_.informers->For(api::kCommands, api::CommandDecoder(), NamespacedScope(ctx_.options));

  base::WorkQueueOptions qo = QueueOptions(ctx_, "queue-controller");
  queue_ = std::make_unique<base::WorkQueue>(qo);
  metrics::FamilyOptions bounded;
  bounded.max_label_sets = 5000;
  podgroups_gauge_ = &ctx_.metrics->AddGaugeVec(
      "tephra_queue_podgroup_count", "PodGroups per queue and phase.", {"queue", "phase"}, bounded);

  kube::EventHandlers qh;
  qh.on_add = [this](const kube::ObjectPtr& o) { Enqueue(o->metadata.name, {}); };
  qh.on_update = [this](const kube::ObjectPtr& old, const kube::ObjectPtr& o) {
    const auto& a = static_cast<const api::Queue&>(*old);
    const auto& b = static_cast<const api::Queue&>(*o);
    if (old == o || a.spec.parent != b.spec.parent || a.status.state != b.status.state) {
      Enqueue(o->metadata.name, {});
    }
  };
  qh.on_delete = [this](const kube::ObjectPtr& o, bool) {
    UpdateMetrics(o->metadata.name, {});
    // Children of a deleted parent may need their state re-derived.
    queue_->Add(o->metadata.name);
  };
  queues_->AddEventHandler(qh);

  kube::EventHandlers ph;
  ph.on_add = [this](const kube::ObjectPtr& o) {
    tally_.Add(static_cast<const api::PodGroup&>(*o));
    queue_->Add(QueueOfPodGroup(*o));
  };
  ph.on_update = [this](const kube::ObjectPtr& old, const kube::ObjectPtr& o) {
    const auto& a = static_cast<const api::PodGroup&>(*old);
    const auto& b = static_cast<const api::PodGroup&>(*o);
    if (a.status.phase != b.status.phase || a.spec.queue != b.spec.queue) {
      tally_.Remove(a);
      tally_.Add(b);
      queue_->Add(QueueOfPodGroup(*old));
      queue_->Add(QueueOfPodGroup(*o));
    }
  };
  ph.on_delete = [this](const kube::ObjectPtr& o, bool) {
    tally_.Remove(static_cast<const api::PodGroup&>(*o));
    queue_->Add(QueueOfPodGroup(*o));
  };
  podgroups_->AddEventHandler(ph);

  kube::EventHandlers ch;
  ch.on_add = [this](const kube::ObjectPtr& o) {
    const auto& cmd = static_cast<const api::Command&>(*o);
    if (!cmd.target || cmd.target->api_version != api::kSchedulingApiVersion ||
        cmd.target->kind != api::kQueueKind) {
      return;
    }
    auto action = ParseQueueAction(cmd.action);
    if (!action) {
      LOG(WARNING) << "command " << cmd.metadata.Key() << ": unknown queue action " << cmd.action;
      return;
    }
    Pending p;
    p.action = *action;
    p.command_namespace = cmd.metadata.namespace_;
    p.command_name = cmd.metadata.name;
    p.command_uid = cmd.metadata.uid;
    p.seen = ctx_.clock->Monotonic();
    Enqueue(cmd.target->name, std::move(p));
  };
  commands_->AddEventHandler(ch);
  return Status::Ok();
}

void QueueController::Enqueue(const std::string& queue, Pending item) {
  if (item.action != QueueAction::kSync) {
    sync::MutexLock l(mu_);
    inbox_[queue].push_back(std::move(item));
  }
  queue_->Add(queue);
}

void QueueController::Start() {
  workers_.Start(queue_.get(), ctx_.options.worker_threads_for_queue, "queue",
                 [this](const std::string& key) { return Sync(key); });
}

void QueueController::Stop() {
  workers_.Stop();
}

void QueueController::UpdateMetrics(const std::string& queue,
                                    const std::map<std::string, size_t>& by_phase) {
  for (std::string_view phase : kPhases) {
    auto it = by_phase.find(std::string(phase));
    podgroups_gauge_->WithLabels({queue, std::string(phase)})
        .Set(static_cast<double>(it == by_phase.end() ? 0 : it->second));
  }
}

Status QueueController::ApplyState(const std::string& name, const std::string& state) {
  json::Writer w;
  w.StartObject().Field("apiVersion", api::kSchedulingApiVersion).Field("kind", api::kQueueKind);
  w.Key("metadata").StartObject().Field("name", name).EndObject();
  w.Key("status").StartObject().Field("state", state).EndObject();
  w.EndObject();
  kube::PatchOptions options;
  options.field_manager = std::string(kFieldManager);
  options.force = true;
  auto r = ctx_.client->Patch(api::kQueues, "", name, kube::PatchType::kApply, w.str(), options,
                              "status");
  if (!r.ok()) return r.status().WithContext("applying state of queue " + name);
  return Status::Ok();
}

Status QueueController::SetClosedByParent(const api::Queue& child, bool closed) {
  std::string patch = R"({"metadata":{"annotations":{")" + std::string(kClosedByParentAnnotation) +
                      "\":" + (closed ? std::string("\"true\"") : std::string("null")) + "}}}";
  auto r =
      ctx_.client->Patch(api::kQueues, "", child.metadata.name, kube::PatchType::kMerge, patch);
  if (!r.ok() && r.status().code() != StatusCode::kNotFound) return r.status();
  return Status::Ok();
}

Status QueueController::SettleCommandsWithoutQueue(const std::string& name) {
  // A queue outside this manager's slice (--queue-label-selector) is another manager's: its
  // Commands are left to that manager once this one's view has had time to catch up.
  const bool elsewhere = all_queues_->store().Get(name) != nullptr;
  const auto now = ctx_.clock->Monotonic();
  auto command_of = [&](const Pending& item) -> std::optional<PendingCommand> {
    if (item.command_name.empty() || item.consumed) return std::nullopt;
    if (elsewhere && now - item.seen >= kCommandTargetGrace) return std::nullopt;
    return PendingCommand{item.command_namespace, item.command_name, item.command_uid,
                          std::string(QueueActionName(item.action)), item.seen};
  };
  return SettleOrphanCommands(
      ctx_, mu_, &inbox_, name, command_of, api::kQueues, "", name,
      [&](std::chrono::milliseconds delay) { queue_->AddAfter(name, delay); });
}

Status QueueController::Sync(const std::string& name) {
  kube::ObjectPtr obj = queues_->store().Get(name);
  if (!obj) return SettleCommandsWithoutQueue(name);
  const auto& queue = static_cast<const api::Queue&>(*obj);

  if (queue.spec.parent.empty() && name != api::kRootQueue) {
    auto r = ctx_.client->Patch(api::kQueues, "", name, kube::PatchType::kMerge,
                                R"({"spec":{"parent":"root"}})");
    if (!r.ok() && r.status().code() != StatusCode::kNotFound) {
      return r.status().WithContext("defaulting spec.parent of queue " + name);
    }
  }

  const std::map<std::string, size_t> by_phase = tally_.ByPhase(name);
  size_t podgroups = 0;
  for (const auto& [phase, n] : by_phase) podgroups += n;
  UpdateMetrics(name, by_phase);

  Pending item;
  {
    sync::MutexLock l(mu_);
    auto it = inbox_.find(name);
    if (it != inbox_.end() && !it->second.empty()) {
      item = std::move(it->second.front());
      it->second.pop_front();
      if (it->second.empty())
        inbox_.erase(it);
      else
        queue_->Add(name);  // more commands wait: another pass
    }
  }
  auto requeue_item = [&] {
    sync::MutexLock l(mu_);
    inbox_[name].push_front(item);
  };
  if (!item.command_name.empty() && !item.consumed) {
    kube::DeleteOptions once;
    once.precondition_uid = item.command_uid;
    Status s = ctx_.client->Delete(api::kCommands, item.command_namespace, item.command_name, once);
    if (s.code() == StatusCode::kNotFound || s.code() == StatusCode::kConflict) {
      item.action = QueueAction::kSync;  // consumed by someone else
    } else if (!s.ok()) {
      requeue_item();
      return s.WithContext("deleting command " + item.command_name);
    }
    item.consumed = true;
  }

  // A child cannot open while its parent is not open.
  if (item.action == QueueAction::kOpen && name != api::kRootQueue) {
    kube::ObjectPtr parent = queues_->store().Get(queue.ParentName());
    if (parent) {
      const std::string& ps = static_cast<const api::Queue&>(*parent).status.state;
      if (ps == qs::kClosed || ps == qs::kClosing) {
        LOG(WARNING) << "queue " << name << " stays closed: its parent " << queue.ParentName()
                     << " is " << ps;
        item.action = QueueAction::kSync;
      }
    }
  }

  const std::string next = NextQueueState(queue.status.state, item.action, podgroups);
  if (next != queue.status.state) {
    Status s = ApplyState(name, next);
    if (!s.ok()) {
      requeue_item();
      return s;
    }
    VLOG(1) << "queue " << name << ": "
            << (queue.status.state.empty() ? "(new)" : queue.status.state) << " -> " << next;
  }

  // Hierarchy: closing closes open children (remembering why), opening reopens those.
  std::vector<kube::ObjectPtr> children;
  for (const auto& o : queues_->store().List()) {
    const auto& q = static_cast<const api::Queue&>(*o);
    if (q.metadata.name != name && q.ParentName() == name) children.push_back(o);
  }
  const bool closed = next == qs::kClosed || next == qs::kClosing;
  for (const auto& o : children) {
    const auto& child = static_cast<const api::Queue&>(*o);
    const bool child_open = child.status.state.empty() || child.status.state == qs::kOpen;
    const bool marked = child.metadata.Annotation(kClosedByParentAnnotation) == "true";
    if (closed && child_open && item.action == QueueAction::kClose) {
      TEPHRA_RETURN_IF_ERROR(SetClosedByParent(child, true));
      Enqueue(child.metadata.name, Pending{QueueAction::kClose, "", "", "", true, {}});
    } else if (next == qs::kOpen && item.action == QueueAction::kOpen && marked) {
      TEPHRA_RETURN_IF_ERROR(SetClosedByParent(child, false));
      Enqueue(child.metadata.name, Pending{QueueAction::kOpen, "", "", "", true, {}});
    }
  }
  return Status::Ok();
}

}  // namespace tephra::controllers::queue
