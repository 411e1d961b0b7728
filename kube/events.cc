#include "kube/events.h"

#include <algorithm>
#include <cstdio>
#include <functional>

#include <glog/logging.h>

namespace tephra::kube {

EventRecorder::EventRecorder(std::shared_ptr<Client> client, EventRecorderOptions options,
                             base::ClockInterface& clock)
    : client_(std::move(client)), options_(std::move(options)), clock_(clock) {
  if (options_.registry != nullptr) {
    written_metric_ = &options_.registry->AddCounter("tephra_events_written_total",
                                                     "Kubernetes Events created or updated.");
    dropped_metric_ = &options_.registry->AddCounter(
        "tephra_events_dropped_total",
        "Events not written: queue full, over an object's rate budget, or failed after retries.");
  }
  const size_t writers = static_cast<size_t>(std::max(1, options_.writers));
  {
    sync::MutexLock l(mu_);
    queues_.resize(writers);
  }
  writers_ = std::vector<WriterState>(writers);
  for (size_t i = 0; i < writers; ++i) threads_.emplace_back([this, i] { Loop(i); });
}

std::string EventRecorder::ObjectKey(const ObjectReference& object) {
  return object.uid.empty() ? object.kind + "/" + object.namespace_ + "/" + object.name
                            : object.uid;
}

EventRecorder::~EventRecorder() {
  Stop();
}

void EventRecorder::Record(const ObjectReference& object, EventType type, const std::string& reason,
                           const std::string& message) {
  sync::MutexLock l(mu_);
  if (stopped_) return;
  if (queued_ >= options_.queue_size) {
    CountDroppedLocked();
    if (dropped_ % 1000 == 1) {
      LOG(WARNING) << "event recorder: queue full, dropping events (" << dropped_ << " so far)";
    }
    return;
  }
  std::string key = ObjectKey(object);
  const size_t shard = std::hash<std::string>{}(key) % queues_.size();
  queues_[shard].push_back({object, std::move(key), type, reason, message, clock_.Now()});
  ++queued_;
  cv_.NotifyAll();
}

bool EventRecorder::Flush(std::chrono::milliseconds timeout) {
  sync::MutexLock lock(mu_);
  return clock_.WaitUntil(mu_, cv_, clock_.Monotonic() + timeout,
                          [this]() REQUIRES(mu_) { return queued_ == 0 && in_flight_ == 0; });
}

void EventRecorder::Stop() {
  {
    sync::MutexLock l(mu_);
    if (stopped_ && threads_.empty()) return;
    stopped_ = true;
  }
  cv_.NotifyAll();
  for (auto& t : threads_) t.join();
  threads_.clear();
}

int64_t EventRecorder::written() const {
  sync::MutexLock l(mu_);
  return written_;
}

int64_t EventRecorder::dropped() const {
  sync::MutexLock l(mu_);
  return dropped_;
}

void EventRecorder::Loop(size_t shard) {
  while (true) {
    Pending p;
    {
      sync::MutexLock lock(mu_);
      std::deque<Pending>& queue = queues_[shard];
      cv_.Wait(mu_, [&]() REQUIRES(mu_) { return stopped_ || !queue.empty(); });
      // On stop, what is queued is still written: shutdown events matter most.
      if (queue.empty()) return;
      p = std::move(queue.front());
      queue.pop_front();
      --queued_;
      ++in_flight_;
    }
    Write(p, writers_[shard]);
    {
      sync::MutexLock l(mu_);
      --in_flight_;
    }
    cv_.NotifyAll();
  }
}

namespace {

// The request may or may not have reached the server: worth sending again.
bool Transient(const Status& s) {
  return s.code() == StatusCode::kUnavailable || s.code() == StatusCode::kDeadlineExceeded ||
         s.code() == StatusCode::kTooManyRequests;
}

}  // namespace

Status EventRecorder::CreateWithRetries(const std::string& ns, const std::string& body) {
  std::chrono::milliseconds delay = options_.retry_base_delay;
  for (int attempt = 0;; ++attempt) {
    StatusOr<std::string> created = client_->Create(resources::kEvents, ns, body);
    // The name is unique to this event, so "already exists" means an earlier attempt landed
    // although its answer was lost.
    if (created.ok() || created.status().code() == StatusCode::kAlreadyExists) return Status::Ok();
    if (!Transient(created.status()) || attempt >= options_.max_retries) return created.status();
    VLOG(1) << "event recorder: " << created.status().ToString() << " (retrying in "
            << delay.count() << " ms)";
    sync::MutexLock lock(mu_);
    // Shutdown cuts the back-off short: what is queued still gets one more try each.
    clock_.WaitUntil(mu_, cv_, clock_.Monotonic() + delay,
                     [this]() REQUIRES(mu_) { return stopped_; });
    delay *= 4;
  }
}

void EventRecorder::Write(const Pending& p, WriterState& writer) {
  const std::string& object_key = p.object_key;
  // Bounded memory: forgetting all budgets at once only lets a burst through again.
  if (writer.limits.size() > 4 * options_.dedup_cache_size) writer.limits.clear();
  auto& limit = writer.limits[object_key];
  if (!limit) {
    double qps =
        1.0 / static_cast<double>(std::max<int64_t>(1, options_.per_object_refill.count()));
    limit = std::make_unique<base::TokenBucket>(qps, options_.per_object_burst, clock_);
  }
  if (!limit->TryAccept()) {
    sync::MutexLock l(mu_);
    CountDroppedLocked();
    return;
  }
  const char* type = EventTypeName(p.type);
  // Cluster-scoped objects (nodes, queues) get their events in "default", like kubectl.
  const std::string ns = p.object.namespace_.empty() ? "default" : p.object.namespace_;
  const std::string dedup_key = object_key + "\x1f" + type + "\x1f" + p.reason + "\x1f" + p.message;
  auto it = writer.seen.find(dedup_key);
  if (it != writer.seen.end() && p.when - it->second.last < options_.dedup_window) {
    Seen& s = it->second;
    json::Writer patch;
    patch.StartObject()
        .Field("count", s.count + 1)
        .Field("lastTimestamp", base::FormatTime(p.when))
        .EndObject();
    StatusOr<std::string> r = client_->Patch(resources::kEvents, s.event_namespace, s.event_name,
                                             PatchType::kMerge, patch.str());
    if (r.ok()) {
      ++s.count;
      s.last = p.when;
      sync::MutexLock l(mu_);
      CountWrittenLocked();
      return;
    }
    if (r.status().code() != StatusCode::kNotFound) {
      VLOG(1) << "event recorder: updating event " << s.event_name << ": " << r.status().ToString();
      return;
    }
    // The Event expired (events have a TTL); write a new one below.
  }

  char suffix[32];
  auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(p.when.time_since_epoch());
  std::snprintf(suffix, sizeof suffix, ".%llx", static_cast<unsigned long long>(nanos.count()));
  std::string name = p.object.name + suffix;
  EventBody event;
  event.object = p.object;
  event.name = name;
  event.namespace_ = ns;
  event.type = p.type;
  event.reason = p.reason;
  event.message = p.message;
  event.source = options_.source.empty() ? options_.component : options_.source;
  event.component = options_.component;
  event.instance = options_.instance;
  event.when = p.when;
  Status created = CreateWithRetries(ns, EncodeEvent(event));
  if (!created.ok()) {
    LOG(WARNING) << "event recorder: dropped " << p.reason << " event for " << p.object.kind << " "
                 << p.object.namespace_ << "/" << p.object.name << ": " << created.ToString();
    sync::MutexLock l(mu_);
    CountDroppedLocked();
    return;
  }
  if (it == writer.seen.end()) {
    if (writer.seen_order.size() >= options_.dedup_cache_size) {
      writer.seen.erase(writer.seen_order.front());
      writer.seen_order.pop_front();
    }
    writer.seen_order.push_back(dedup_key);
    it = writer.seen.emplace(dedup_key, Seen{}).first;
  }
  it->second = Seen{name, ns, 1, p.when, p.when};
  sync::MutexLock l(mu_);
  CountWrittenLocked();
}

std::string EncodeEvent(const EventBody& e) {
  json::Writer w;
  w.StartObject().Field("apiVersion", "v1").Field("kind", "Event");
  w.Key("metadata")
      .StartObject()
      .Field("name", e.name)
      .Field("namespace", e.namespace_)
      .EndObject();
  w.Key("involvedObject").StartObject();
  if (!e.object.api_version.empty()) w.Field("apiVersion", e.object.api_version);
  w.Field("kind", e.object.kind).Field("name", e.object.name);
  if (!e.object.namespace_.empty()) w.Field("namespace", e.object.namespace_);
  if (!e.object.uid.empty()) w.Field("uid", e.object.uid);
  if (!e.object.resource_version.empty()) w.Field("resourceVersion", e.object.resource_version);
  w.EndObject();
  w.Field("reason", e.reason).Field("message", e.message);
  w.Field("type", EventTypeName(e.type));
  w.Key("source").StartObject().Field("component", e.source).EndObject();
  w.Field("reportingComponent", e.component).Field("reportingInstance", e.instance);
  w.Field("firstTimestamp", base::FormatTime(e.when))
      .Field("lastTimestamp", base::FormatTime(e.when));
  w.Field("count", int64_t{1});
  w.EndObject();
  return w.Take();
}

void EventRecorder::CountWrittenLocked() {
  ++written_;
  if (written_metric_ != nullptr) written_metric_->Inc();
}

void EventRecorder::CountDroppedLocked() {
  ++dropped_;
  if (dropped_metric_ != nullptr) dropped_metric_->Inc();
}

}  // namespace tephra::kube
