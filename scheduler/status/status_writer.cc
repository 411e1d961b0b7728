#include "scheduler/status/status_writer.h"

#include <glog/logging.h>
#include <rapidjson/document.h>

#include "api/kinds.h"
#include "api/labels.h"
#include "api/scheduling.h"

namespace tephra::scheduler {

StatusWriter::StatusWriter(std::shared_ptr<kube::Client> client, SchedulerCache* cache,
                           kube::EventRecorder* events, metrics::Registry* registry, int workers,
                           std::chrono::milliseconds settle)
    : client_(std::move(client)), cache_(cache), events_(events), settle_(settle) {
  if (registry != nullptr) {
    writes_ = &registry->AddCounter("tephra_status_writes_total",
                                    "PodGroup, Queue and pod status writes.");
    write_errors_ =
        &registry->AddCounter("tephra_status_write_errors_total", "Status writes that failed.");
  }
  workers_.Start(&queue_, workers, "status writer",
                 [this](const std::string& key) { return Process(key); });
  if (cache_ != nullptr) {
    cache_->SetGroupArrivalListener([this](const JobId& job) { GroupArrived(job); });
  }
}

StatusWriter::~StatusWriter() {
  Stop();
}

namespace {

void WriteConditions(json::Writer& w, const std::vector<api::PodGroupCondition>& conditions) {
  w.Key("conditions").StartArray();
  for (const auto& c : conditions) {
    w.StartObject().Field("type", c.type).Field("status", c.status);
    if (!c.transition_id.empty()) w.Field("transitionID", c.transition_id);
    if (c.last_transition_time)
      w.Field("lastTransitionTime", base::FormatTime(*c.last_transition_time));
    if (!c.reason.empty()) w.Field("reason", c.reason);
    if (!c.message.empty()) w.Field("message", c.message);
    w.EndObject();
  }
  w.EndArray();
}

}  // namespace

void StatusWriter::Apply(const SessionOutcome& outcome) {
  for (const auto& u : outcome.pod_groups) {
    Item item;
    item.kind = Item::Kind::kPodGroup;
    item.key = "pg/" + u.namespace_ + "/" + u.name;
    item.job = u.job;
    item.namespace_ = u.namespace_;
    item.name = u.name;
    item.sched_plugins = u.sched_plugins;
    json::Writer w;
    w.StartObject();
    if (!u.allocated_hypernode.empty() && !u.sched_plugins) {
      w.Key("metadata").StartObject().Key("annotations").StartObject();
      w.Field(api::kJobAllocatedHyperNodeAnnotation, u.allocated_hypernode);
      w.EndObject().EndObject();
    }
    w.Key("status").StartObject();
    if (u.sched_plugins) {
      w.Field("phase", api::SchedPluginsPhaseFor(u.status.phase));
      w.Field("running", int64_t{u.status.running});
      w.Field("succeeded", int64_t{u.status.succeeded});
      w.Field("failed", int64_t{u.status.failed});
    } else {
      w.Field("phase", u.status.phase);
      w.Field("running", int64_t{u.status.running});
      w.Field("succeeded", int64_t{u.status.succeeded});
      w.Field("failed", int64_t{u.status.failed});
      WriteConditions(w, u.status.conditions);
    }
    w.EndObject().EndObject();
    item.body = w.Take();
    if (!u.event_reason.empty()) {
      item.event_object.api_version =
          u.sched_plugins ? "scheduling.x-k8s.io/v1alpha1" : "scheduling.volcano.sh/v1beta1";
      item.event_object.kind = "PodGroup";
      item.event_object.namespace_ = u.namespace_;
      item.event_object.name = u.name;
      item.event_type = u.event_type;
      item.event_reason = u.event_reason;
      item.event_message = u.event_message;
    }
    // A scheduling.x-k8s.io group comes back in its own shape, never equal to this status.
    if (cache_ != nullptr && !u.sched_plugins) cache_->AssumePodGroupStatus(u.job, u.status);
    item.awaiting_object = u.awaiting_object;
    Enqueue(std::move(item), u.urgent, u.pods_starting ? kStartingHold : 1);
  }
  for (const auto& q : outcome.queues) {
    Item item;
    item.kind = Item::Kind::kQueue;
    item.key = "queue/" + q.name;
    item.name = q.name;
    json::Writer w;
    w.StartObject().Key("status").StartObject().Key("allocated").StartObject();
    for (const auto& [name, quantity] : q.allocated) w.Field(name, quantity.String());
    w.EndObject().EndObject().EndObject();
    item.body = w.Take();
    Enqueue(std::move(item), false);
  }
  for (const auto& p : outcome.pods) {
    Item item;
    item.kind = Item::Kind::kPod;
    item.key = "pod/" + p.namespace_ + "/" + p.name;
    item.namespace_ = p.namespace_;
    item.name = p.name;
    json::Writer w;
    w.StartObject().Key("status").StartObject();
    if (!p.nominated_node.empty()) w.Field("nominatedNodeName", p.nominated_node);
    w.Key("conditions").StartArray().StartObject();
    w.Field("type", "PodScheduled")
        .Field("status", p.condition.status)
        .Field("reason", p.condition.reason)
        .Field("message", p.condition.message)
        .Field("lastTransitionTime", base::FormatTime(base::Clock::now()));
    w.EndObject().EndArray().EndObject().EndObject();
    item.body = w.Take();
    item.event_object.api_version = "v1";
    item.event_object.kind = "Pod";
    item.event_object.namespace_ = p.namespace_;
    item.event_object.name = p.name;
    item.event_object.uid = p.uid;
    item.event_type = "Warning";
    item.event_reason = "FailedScheduling";
    item.event_message = p.condition.message;
    Enqueue(std::move(item), true);
  }
}

void StatusWriter::Enqueue(Item item, bool urgent, int hold_periods) {
  auto now = std::chrono::steady_clock::now();
  item.not_before = urgent ? now : now + settle_ * hold_periods;
  sync::MutexLock l(mu_);
  // Checked under mu_, which GroupArrived also takes after the cache has the object: an
  // arrival is either seen here or releases the parked update.
  if (item.awaiting_object && cache_ != nullptr && cache_->HasPodGroupObject(item.job)) {
    item.awaiting_object = false;
  }
  auto parked = parked_.find(item.key);
  if (item.awaiting_object) {
    item.parked_until = now + kParkLimit;
    if (parked != parked_.end()) {
      KeepEvent(parked->second, item);
      parked->second = std::move(item);
      return;
    }
    parked_.emplace(item.key, std::move(item));
    if (++parks_since_prune_ >= 1024) PruneParkedLocked();
    return;
  }
  // A parked earlier update of the same object is older than this one.
  if (parked != parked_.end()) {
    KeepEvent(parked->second, item);
    parked_.erase(parked);
  }
  QueueLocked(std::move(item));
}

void StatusWriter::QueueLocked(Item item) {
  const std::string key = item.key;
  const auto not_before = item.not_before;
  auto it = pending_.find(key);
  if (it == pending_.end()) {
    pending_.emplace(key, std::move(item));
  } else {
    // Newer content; the wait never grows, and an urgent update cuts it short.
    item.not_before = std::min(item.not_before, it->second.not_before);
    KeepEvent(it->second, item);
    it->second = std::move(item);
  }
  auto now = std::chrono::steady_clock::now();
  if (not_before <= now) {
    queue_.Add(key);
  } else {
    queue_.AddAfter(key, not_before - now);
  }
}

void StatusWriter::KeepEvent(const Item& older, Item& newer) {
  if (!newer.event_reason.empty() || older.event_reason.empty()) return;
  newer.event_object = older.event_object;
  newer.event_type = older.event_type;
  newer.event_reason = older.event_reason;
  newer.event_message = older.event_message;
}

void StatusWriter::PruneParkedLocked() {
  parks_since_prune_ = 0;
  auto now = std::chrono::steady_clock::now();
  for (auto it = parked_.begin(); it != parked_.end();) {
    it = it->second.parked_until <= now ? parked_.erase(it) : std::next(it);
  }
}

void StatusWriter::GroupArrived(const JobId& job) {
  sync::MutexLock l(mu_);
  auto it = parked_.find("pg/" + job);
  if (it == parked_.end()) return;
  Item item = std::move(it->second);
  parked_.erase(it);
  item.awaiting_object = false;
  QueueLocked(std::move(item));
}

bool StatusWriter::Drain(std::chrono::milliseconds timeout) {
  sync::MutexLock lock(mu_);
  return idle_cv_.WaitFor(mu_, timeout,
                          [this]() REQUIRES(mu_) { return pending_.empty() && in_flight_ == 0; });
}

void StatusWriter::Stop() {
  if (cache_ != nullptr) cache_->SetGroupArrivalListener(nullptr);
  {
    // Held updates are written now rather than dropped: queue every pending key at once.
    sync::MutexLock l(mu_);
    stopped_ = true;
    for (const auto& [key, item] : pending_) queue_.Add(key);
  }
  workers_.Stop();
}

Status StatusWriter::Process(const std::string& key) {
  Item item;
  {
    sync::MutexLock l(mu_);
    auto it = pending_.find(key);
    if (it == pending_.end()) return Status::Ok();  // written through an earlier entry
    auto now = std::chrono::steady_clock::now();
    if (!stopped_ && it->second.not_before > now) {
      // Held anew after this entry was queued: wait for its own time.
      queue_.AddAfter(key, it->second.not_before - now);
      return Status::Ok();
    }
    item = std::move(it->second);
    pending_.erase(it);
    ++in_flight_;
  }
  Write(item);
  {
    sync::MutexLock l(mu_);
    --in_flight_;
  }
  idle_cv_.NotifyAll();
  return Status::Ok();
}

namespace {

void FillIdentity(const std::string& written, kube::ObjectReference* object) {
  json::Document doc;
  if (!json::Parse(written, &doc).ok()) return;
  json::Errors errors;
  kube::RawObject header;
  kube::DecodeObjectHeader(json::Reader(&doc, &errors), &header);
  object->uid = header.metadata.uid;
  object->resource_version = header.metadata.resource_version;
}

}  // namespace

void StatusWriter::Write(const Item& item) {
  StatusOr<std::string> r = InvalidArgument("unknown item");
  switch (item.kind) {
    case Item::Kind::kPodGroup:
      if (item.sched_plugins) {
        r = client_->Patch(api::kSchedPluginsPodGroups, item.namespace_, item.name,
                           kube::PatchType::kMerge, item.body, {}, "status");
      } else {
        r = client_->Patch(api::kPodGroups, item.namespace_, item.name, kube::PatchType::kMerge,
                           item.body);
      }
      break;
    case Item::Kind::kQueue:
      r = client_->Patch(api::kQueues, "", item.name, kube::PatchType::kMerge, item.body, {},
                         "status");
      break;
    case Item::Kind::kPod:
      // Bound since the session that found no place for it (a pipelined pod's resources came
      // free): its condition is out of date, and the API server refuses a nominated node on
      // a bound pod.
      if (cache_ != nullptr && cache_->PodPlaced(item.event_object.uid)) return;
      r = client_->Patch(kube::resources::kPods, item.namespace_, item.name,
                         kube::PatchType::kStrategicMerge, item.body, {}, "status");
      break;
  }
  if (writes_ != nullptr) writes_->Inc();
  if (!r.ok()) {
    if (write_errors_ != nullptr) write_errors_->Inc();
    if (cache_ != nullptr && item.kind == Item::Kind::kPodGroup)
      cache_->ForgetPodGroupStatus(item.job);
    if (r.status().code() != StatusCode::kNotFound) {
      LOG(WARNING) << "status writer: " << item.key << ": " << r.status().ToString();
    }
    return;
  }
  if (events_ != nullptr && !item.event_reason.empty()) {
    kube::ObjectReference object = item.event_object;
    // kubectl describe lists only events whose involvedObject.uid matches: take the uid (and
    // the version the event speaks of) from the object the write returned.
    if (object.uid.empty()) FillIdentity(*r, &object);
    events_->Record(
        object, item.event_type == "Warning" ? kube::EventType::kWarning : kube::EventType::kNormal,
        item.event_reason, item.event_message);
  }
}

}  // namespace tephra::scheduler
