#include "kube/informer.h"

#include <algorithm>
#include <chrono>
#include <random>

#include <glog/logging.h>
#include <rapidjson/document.h>

namespace tephra::kube {

ObjectDecoder RawObjectDecoder() {
  return [](const json::Value& v) -> StatusOr<ObjectPtr> {
    TEPHRA_ASSIGN_OR_RETURN(std::shared_ptr<RawObject> obj, DecodeRawObject(v));
    return ObjectPtr(std::move(obj));
  };
}

// ---- Store ----

Store::Store() {
  index_funcs_["namespace"] = [](const Object& o) {
    return std::vector<std::string>{o.metadata.namespace_};
  };
}

void Store::AddIndex(const std::string& name, IndexFunc fn) {
  sync::WriterMutexLock l(mu_);
  index_funcs_[name] = std::move(fn);
}

void Store::IndexLocked(const std::string& key, const Object& object, bool add) {
  for (const auto& [name, fn] : index_funcs_) {
    auto& index = indexes_[name];
    for (const auto& value : fn(object)) {
      if (add) {
        index[value].insert(key);
      } else {
        auto it = index.find(value);
        if (it == index.end()) continue;
        it->second.erase(key);
        if (it->second.empty()) index.erase(it);
      }
    }
  }
}

ObjectPtr Store::Get(const std::string& key) const {
  sync::ReaderMutexLock l(mu_);
  auto it = items_.find(key);
  return it == items_.end() ? nullptr : it->second;
}

std::vector<ObjectPtr> Store::List() const {
  sync::ReaderMutexLock l(mu_);
  std::vector<ObjectPtr> out;
  out.reserve(items_.size());
  for (const auto& [key, obj] : items_) out.push_back(obj);
  return out;
}

std::vector<std::string> Store::Keys() const {
  sync::ReaderMutexLock l(mu_);
  std::vector<std::string> out;
  out.reserve(items_.size());
  for (const auto& [key, obj] : items_) out.push_back(key);
  return out;
}

std::vector<ObjectPtr> Store::ByIndex(const std::string& name, const std::string& value) const {
  sync::ReaderMutexLock l(mu_);
  std::vector<ObjectPtr> out;
  auto index = indexes_.find(name);
  if (index == indexes_.end()) return out;
  auto keys = index->second.find(value);
  if (keys == index->second.end()) return out;
  out.reserve(keys->second.size());
  for (const auto& key : keys->second) {
    auto it = items_.find(key);
    if (it != items_.end()) out.push_back(it->second);
  }
  return out;
}

size_t Store::size() const {
  sync::ReaderMutexLock l(mu_);
  return items_.size();
}

ObjectPtr Store::Upsert(const ObjectPtr& object) {
  std::string key = object->metadata.Key();
  sync::WriterMutexLock l(mu_);
  ObjectPtr old;
  auto it = items_.find(key);
  if (it != items_.end()) {
    old = it->second;
    IndexLocked(key, *old, false);
    it->second = object;
  } else {
    items_.emplace(key, object);
  }
  IndexLocked(key, *object, true);
  return old;
}

ObjectPtr Store::Remove(const std::string& key) {
  sync::WriterMutexLock l(mu_);
  auto it = items_.find(key);
  if (it == items_.end()) return nullptr;
  ObjectPtr old = it->second;
  IndexLocked(key, *old, false);
  items_.erase(it);
  return old;
}

// ---- Informer ----

Informer::Informer(std::shared_ptr<Client> client, InformerOptions options,
                   base::ClockInterface& clock)
    : client_(std::move(client)), options_(std::move(options)), clock_(clock) {
  if (!options_.decoder) options_.decoder = RawObjectDecoder();
  backoff_ = options_.backoff_initial;
}

Informer::~Informer() {
  Stop();
}

void Informer::AddEventHandler(EventHandlers handlers) {
  sync::MutexLock d(dispatch_mu_);
  if (handlers.on_add) {
    for (const auto& obj : store_.List()) handlers.on_add(obj);
  }
  handlers_.push_back(std::move(handlers));
}

void Informer::Dispatch(const std::function<void(const EventHandlers&)>& fn) {
  for (const auto& h : handlers_) fn(h);
}

void Informer::Start() {
  sync::MutexLock l(mu_);
  if (started_ || stopped_) return;
  started_ = true;
  thread_ = std::thread([this] { Run(); });
  if (options_.resync_period.count() > 0) resync_thread_ = std::thread([this] { ResyncLoop(); });
}

void Informer::Stop() {
  std::shared_ptr<kube::Watch> watch;
  {
    sync::MutexLock l(mu_);
    stopped_ = true;
    watch = watch_;
  }
  cv_.NotifyAll();
  if (watch) watch->Stop();
  if (thread_.joinable()) thread_.join();
  if (resync_thread_.joinable()) resync_thread_.join();
}

bool Informer::WaitForSync(std::chrono::milliseconds timeout) {
  sync::MutexLock lock(mu_);
  return clock_.WaitUntil(mu_, cv_, clock_.Monotonic() + timeout, [this]() REQUIRES(mu_) {
    return synced_.load() || stopped_;
  }) && synced_.load();
}

std::string Informer::LastResourceVersion() const {
  sync::MutexLock l(mu_);
  return resource_version_;
}

bool Informer::Sleep(std::chrono::steady_clock::duration d) {
  sync::MutexLock lock(mu_);
  clock_.WaitUntil(mu_, cv_, clock_.Monotonic() + d, [this]() REQUIRES(mu_) { return stopped_; });
  return !stopped_;
}

bool Informer::Backoff() {
  static thread_local std::mt19937 rng{std::random_device{}()};
  std::uniform_real_distribution<double> jitter(1.0, 1.5);
  auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(backoff_ * jitter(rng));
  backoff_ = std::min(backoff_ * 2, options_.backoff_max);
  return Sleep(wait);
}

void Informer::Run() {
  const std::string what = options_.resource.ToString();
  while (true) {
    {
      sync::MutexLock l(mu_);
      if (stopped_) return;
    }
    Status listed = ListAndReplace();
    if (!listed.ok()) {
      if (listed.code() == StatusCode::kCancelled) return;
      LOG(WARNING) << "informer " << what << ": list failed: " << listed.ToString();
      if (!Backoff()) return;
      continue;
    }
    backoff_ = options_.backoff_initial;
    // Watch until the server says our resourceVersion is too old; other failures only
    // restart the watch (after a backoff), keeping the cache.
    while (true) {
      Status watched = WatchOnce();
      {
        sync::MutexLock l(mu_);
        if (stopped_) return;
      }
      if (watched.ok()) {
        backoff_ = options_.backoff_initial;
        continue;
      }
      if (watched.code() == StatusCode::kGone) {
        VLOG(1) << "informer " << what << ": " << watched.message() << "; relisting";
        break;
      }
      LOG(WARNING) << "informer " << what << ": watch failed: " << watched.ToString();
      if (!Backoff()) return;
      // "Too large resource version" (after an etcd restore) also needs a relist.
      if (watched.code() == StatusCode::kDeadlineExceeded &&
          watched.message().find("Too large resource version") != std::string::npos) {
        break;
      }
    }
  }
}

Status Informer::ListAndReplace() {
  ++relists_;
  ListOptions lo;
  lo.label_selector = options_.label_selector;
  lo.field_selector = options_.field_selector;
  lo.limit = options_.page_size;
  lo.accept_protobuf = options_.protobuf_decoder != nullptr;
  // Decode everything first: the store changes only once the whole list has arrived.
  const auto started = std::chrono::steady_clock::now();
  std::vector<ObjectPtr> fresh;
  bool as_protobuf = false;
  StatusOr<std::string> rv =
      client_->ListAllItems(options_.resource, options_.namespace_, lo, [&](const ListItem& item) {
        {
          sync::MutexLock l(mu_);
          if (stopped_) return Cancelled("informer stopped");
        }
        as_protobuf = item.json == nullptr;
        StatusOr<ObjectPtr> obj = item.json != nullptr ? options_.decoder(*item.json)
                                                       : options_.protobuf_decoder(item.protobuf);
        if (!obj.ok()) {
          ++decode_errors_;
          LOG(ERROR) << "informer " << options_.resource.ToString()
                     << ": skipping undecodable object: " << obj.status().ToString();
          return Status::Ok();
        }
        fresh.push_back(std::move(*obj));
        return Status::Ok();
      });
  if (!rv.ok()) return rv.status();
  const auto listed = std::chrono::steady_clock::now();
  {
    sync::MutexLock d(dispatch_mu_);
    std::unordered_set<std::string> present;
    present.reserve(fresh.size());
    for (const auto& obj : fresh) {
      present.insert(obj->metadata.Key());
      ObjectPtr old = store_.Upsert(obj);
      if (old && old->metadata.uid != obj->metadata.uid) {
        // Deleted and created again under the same name while no watch was open (a restarted
        // Volcano job's pods and PodGroup): a different object, not a newer version of the
        // one handlers know. Caches keyed by uid would otherwise keep the old one forever.
        Dispatch([&](const EventHandlers& h) {
          if (h.on_delete) h.on_delete(old, true);
        });
        old.reset();
      }
      if (!old) {
        Dispatch([&](const EventHandlers& h) {
          if (h.on_add) h.on_add(obj);
        });
      } else if (old->metadata.resource_version != obj->metadata.resource_version) {
        Dispatch([&](const EventHandlers& h) {
          if (h.on_update) h.on_update(old, obj);
        });
      }
    }
    // Whatever the cache holds but the list lacks was deleted while we were not watching.
    for (const auto& key : store_.Keys()) {
      if (present.count(key) != 0) continue;
      ObjectPtr gone = store_.Remove(key);
      if (!gone) continue;
      Dispatch([&](const EventHandlers& h) {
        if (h.on_delete) h.on_delete(gone, true);
      });
    }
  }
  {
    sync::MutexLock l(mu_);
    resource_version_ = *rv;
  }
  // A big cluster's start-up time is mostly these lists: say what each cost.
  using Seconds = std::chrono::duration<double>;
  const Seconds took = std::chrono::steady_clock::now() - started;
  if (!synced_ || took > std::chrono::seconds(1)) {
    LOG(INFO) << "informer " << options_.resource.ToString() << ": listed " << fresh.size()
              << (as_protobuf ? " objects (protobuf) in " : " objects in ")
              << Seconds(listed - started).count() << " s, handled in "
              << Seconds(std::chrono::steady_clock::now() - listed).count() << " s";
  }
  synced_ = true;
  cv_.NotifyAll();
  return Status::Ok();
}

Status Informer::WatchOnce() {
  static thread_local std::mt19937 rng{std::random_device{}()};
  auto min = options_.min_watch_timeout.count();
  std::uniform_int_distribution<int64_t> pick(min, 2 * min);
  WatchOptions wo;
  wo.label_selector = options_.label_selector;
  wo.field_selector = options_.field_selector;
  wo.allow_bookmarks = true;
  wo.timeout_seconds = static_cast<int>(pick(rng));
  {
    sync::MutexLock l(mu_);
    wo.resource_version = resource_version_;
  }
  StatusOr<std::unique_ptr<kube::Watch>> started =
      client_->StartWatch(options_.resource, options_.namespace_, wo);
  if (!started.ok()) return started.status();
  ++watches_;
  std::shared_ptr<kube::Watch> watch(std::move(*started));
  {
    sync::MutexLock l(mu_);
    if (stopped_) return Cancelled("informer stopped");
    watch_ = watch;
  }
  Status result;
  while (true) {
    StatusOr<std::optional<WatchEvent>> ev = watch->Next();
    if (!ev.ok()) {
      result = ev.status();
      break;
    }
    if (!ev->has_value()) break;  // the server ended the watch (timeoutSeconds)
    const WatchEvent& event = **ev;
    std::string rv = event.resource_version();
    if (event.type != WatchEventType::kBookmark) Apply(event.type, event.object());
    if (!rv.empty()) {
      sync::MutexLock l(mu_);
      resource_version_ = rv;
    }
    backoff_ = options_.backoff_initial;
  }
  sync::MutexLock l(mu_);
  watch_.reset();
  return result;
}

void Informer::Apply(WatchEventType type, const json::Value& object) {
  StatusOr<ObjectPtr> decoded = options_.decoder(object);
  if (!decoded.ok()) {
    ++decode_errors_;
    LOG(ERROR) << "informer " << options_.resource.ToString()
               << ": skipping undecodable watch event: " << decoded.status().ToString();
    return;
  }
  ObjectPtr obj = std::move(*decoded);
  sync::MutexLock d(dispatch_mu_);
  if (type == WatchEventType::kDeleted) {
    ObjectPtr old = store_.Remove(obj->metadata.Key());
    Dispatch([&](const EventHandlers& h) {
      if (h.on_delete) h.on_delete(obj, false);
    });
    (void)old;
    return;
  }
  ObjectPtr old = store_.Upsert(obj);
  if (!old) {
    Dispatch([&](const EventHandlers& h) {
      if (h.on_add) h.on_add(obj);
    });
  } else if (old->metadata.resource_version != obj->metadata.resource_version) {
    Dispatch([&](const EventHandlers& h) {
      if (h.on_update) h.on_update(old, obj);
    });
  }
}

void Informer::ResyncLoop() {
  while (Sleep(options_.resync_period)) {
    if (!synced_) continue;
    sync::MutexLock d(dispatch_mu_);
    for (const auto& obj : store_.List()) {
      Dispatch([&](const EventHandlers& h) {
        if (h.on_update) h.on_update(obj, obj);
      });
    }
  }
}

// ---- InformerFactory ----

InformerFactory::InformerFactory(std::shared_ptr<Client> client, base::ClockInterface& clock)
    : client_(std::move(client)), clock_(clock) {}

InformerFactory::~InformerFactory() {
  Stop();
}

std::shared_ptr<Informer> InformerFactory::For(const Resource& resource,
                                               const ObjectDecoder& decoder,
                                               const InformerScope& scope,
                                               std::chrono::milliseconds resync,
                                               const ProtobufDecoder& protobuf_decoder) {
  std::string key = resource.ToString() + "|" + scope.namespace_ + "|" + scope.label_selector +
                    "|" + scope.field_selector;
  sync::MutexLock l(mu_);
  auto it = informers_.find(key);
  if (it != informers_.end()) return it->second;
  InformerOptions options;
  options.resource = resource;
  options.namespace_ = scope.namespace_;
  options.label_selector = scope.label_selector;
  options.field_selector = scope.field_selector;
  options.decoder = decoder;
  options.protobuf_decoder = protobuf_decoder;
  options.resync_period = resync;
  auto informer = std::make_shared<Informer>(client_, std::move(options), clock_);
  informers_.emplace(key, informer);
  return informer;
}

void InformerFactory::Start() {
  sync::MutexLock l(mu_);
  for (auto& [key, informer] : informers_) informer->Start();
}

bool InformerFactory::WaitForCacheSync(std::chrono::milliseconds timeout) {
  std::vector<std::shared_ptr<Informer>> all;
  {
    sync::MutexLock l(mu_);
    for (auto& [key, informer] : informers_) all.push_back(informer);
  }
  auto deadline = clock_.Monotonic() + timeout;
  for (auto& informer : all) {
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_.Monotonic());
    if (left.count() < 0 || !informer->WaitForSync(left)) return false;
  }
  return true;
}

void InformerFactory::Stop() {
  std::vector<std::shared_ptr<Informer>> all;
  {
    sync::MutexLock l(mu_);
    for (auto& [key, informer] : informers_) all.push_back(informer);
  }
  for (auto& informer : all) informer->Stop();
}

}  // namespace tephra::kube
