// The Kubernetes REST client: every verb on any resource (core, apps, coordination, events,
// CRDs), namespaced or cluster-scoped, with client-side throttling, retries that honour
// Retry-After, and API `Status` bodies turned into typed errors. Objects travel as JSON text
// (single objects) or parsed documents (LIST pages, WATCH events); typed decoding is the
// caller's (api/), so this library stays independent of the object model.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "base/token_bucket.h"
#include "json/json.h"
#include "kube/config.h"
#include "kube/meta/resource.h"
#include "kube/transport.h"

namespace tephra::kube {

struct ListOptions {
  std::string label_selector;
  std::string field_selector;
  int64_t limit = 0;  // page size; 0 = no paging
  std::string continue_token;
  std::string resource_version;        // "" = most recent (quorum read), "0" = any (cache)
  std::string resource_version_match;  // "NotOlderThan" / "Exact"
  // Ask for protobuf, which the API server encodes faster than JSON. Only built-in types have
  // it; for others the server answers JSON, and the page says which it got.
  bool accept_protobuf = false;
};

struct WatchOptions {
  std::string resource_version;
  std::string label_selector;
  std::string field_selector;
  bool allow_bookmarks = true;
  int timeout_seconds = 0;  // server-side watch duration; 0 = server default
};

struct WriteOptions {
  std::string field_manager;
  bool dry_run = false;
};

enum class PatchType { kMerge, kStrategicMerge, kJsonPatch, kApply };

struct PatchOptions {
  std::string field_manager;  // required for kApply
  bool force = false;         // server-side apply: take ownership of conflicting fields
  bool dry_run = false;
};

struct DeleteOptions {
  std::string precondition_uid;
  std::string precondition_resource_version;
  std::string propagation_policy;  // "Foreground", "Background", "Orphan" or ""
  std::optional<int64_t> grace_period_seconds;
  bool dry_run = false;
};

// One item of a LIST: parsed JSON, or the item's protobuf bytes when the page came as protobuf.
struct ListItem {
  const json::Value* json = nullptr;
  std::string_view protobuf;
};

// One page of a LIST: the response, its items and continuation.
class ListPage {
 public:
  ListPage();
  ~ListPage();
  ListPage(ListPage&&) noexcept;
  ListPage& operator=(ListPage&&) noexcept;

  const std::string& resource_version() const { return resource_version_; }
  const std::string& continue_token() const { return continue_token_; }
  size_t size() const;
  bool is_protobuf() const { return protobuf_body_ != nullptr; }
  // Item i of a JSON page.
  const json::Value& item(size_t i) const;
  // Item i of either kind of page.
  ListItem entry(size_t i) const;

 private:
  friend class Client;
  std::unique_ptr<json::Document> doc_;
  // For a protobuf page: the body, and views of each item into it.
  std::unique_ptr<std::string> protobuf_body_;
  std::vector<std::string_view> protobuf_items_;
  std::string resource_version_;
  std::string continue_token_;
};

enum class WatchEventType { kAdded, kModified, kDeleted, kBookmark };
std::string_view WatchEventTypeName(WatchEventType type);

// One decoded watch event; owns the parsed line.
class WatchEvent {
 public:
  WatchEvent();
  ~WatchEvent();
  WatchEvent(WatchEvent&&) noexcept;
  WatchEvent& operator=(WatchEvent&&) noexcept;

  WatchEventType type = WatchEventType::kAdded;
  const json::Value& object() const;
  // metadata.resourceVersion of the object (bookmarks carry only this).
  std::string resource_version() const;

 private:
  friend StatusOr<WatchEvent> DecodeWatchEvent(std::string_view line);
  std::unique_ptr<json::Document> doc_;
};

// Decodes one line of a watch stream. An ERROR event becomes its Status (410 → kGone).
StatusOr<WatchEvent> DecodeWatchEvent(std::string_view line);

// An open watch. Next() blocks for the next event; nullopt when the server ended the watch
// normally (timeoutSeconds elapsed). Stop() is thread-safe and unblocks Next().
class Watch {
 public:
  explicit Watch(std::unique_ptr<ResponseStream> stream);
  StatusOr<std::optional<WatchEvent>> Next();
  void Stop();

 private:
  std::unique_ptr<ResponseStream> stream_;
  std::string buffer_;
  size_t start_ = 0;    // first byte of buffer_ not yet returned as an event
  size_t scanned_ = 0;  // bytes of buffer_ already searched for a newline
};

// Turns a non-2xx response into a Status, using the API `Status` body's reason and message.
Status StatusFromResponse(const ApiResponse& response);

struct ClientOptions {
  double qps = 50;
  int burst = 100;
  int max_retries = 5;  // for throttled (429/503 + Retry-After) and failed idempotent requests
  std::chrono::milliseconds retry_base_delay{200};
  std::chrono::milliseconds retry_max_delay{10000};
  // Per-request timeout for requests that set none (0 = the transport's default).
  std::chrono::milliseconds request_timeout{0};
  base::ClockInterface* clock = nullptr;  // nullptr = base::RealClock()
};

class Client {
 public:
  Client(std::shared_ptr<Transport> transport, ClientOptions options);
  // A client for `config` over the Beast transport, throttled at config.qps / config.burst.
  static StatusOr<std::shared_ptr<Client>> FromConfig(const RestConfig& config);

  StatusOr<std::string> Get(const Resource& r, std::string_view ns, std::string_view name,
                            std::string_view subresource = "");
  StatusOr<ListPage> List(const Resource& r, std::string_view ns, const ListOptions& options = {});
  // Every page of a LIST (page size options.limit, default 500); calls `each` per item and
  // returns the list's resourceVersion.
  StatusOr<std::string> ListAllItems(const Resource& r, std::string_view ns, ListOptions options,
                                     const std::function<Status(const ListItem&)>& each);
  // The same, always in JSON.
  StatusOr<std::string> ListAll(const Resource& r, std::string_view ns, ListOptions options,
                                const std::function<Status(const json::Value&)>& each);
  StatusOr<std::unique_ptr<Watch>> StartWatch(const Resource& r, std::string_view ns,
                                              const WatchOptions& options);
  StatusOr<std::string> Create(const Resource& r, std::string_view ns, std::string_view body,
                               const WriteOptions& options = {});
  // POST to a subresource of an existing object: pods/binding, pods/eviction.
  StatusOr<std::string> CreateSubresource(const Resource& r, std::string_view ns,
                                          std::string_view name, std::string_view subresource,
                                          std::string_view body, const WriteOptions& options = {});
  // PUT; the body's metadata.resourceVersion makes it conditional (409 Conflict if stale).
  StatusOr<std::string> Update(const Resource& r, std::string_view ns, std::string_view name,
                               std::string_view body, const WriteOptions& options = {},
                               std::string_view subresource = "");
  StatusOr<std::string> Patch(const Resource& r, std::string_view ns, std::string_view name,
                              PatchType type, std::string_view body,
                              const PatchOptions& options = {}, std::string_view subresource = "");
  Status Delete(const Resource& r, std::string_view ns, std::string_view name,
                const DeleteOptions& options = {});

  // Any request, with throttling, retries and error mapping.
  StatusOr<ApiResponse> Do(ApiRequest request, bool idempotent);

  const std::shared_ptr<Transport>& transport() const { return transport_; }
  const ClientOptions& options() const { return options_; }

 private:
  std::shared_ptr<Transport> transport_;
  ClientOptions options_;
  base::ClockInterface& clock_;
  base::TokenBucket throttle_;
};

// Percent-encodes a query parameter value.
std::string QueryEscape(std::string_view value);

}  // namespace tephra::kube
