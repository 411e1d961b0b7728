#include "kube/client.h"

#include <algorithm>
#include <future>
#include <random>
#include <thread>

#include <glog/logging.h>
#include <rapidjson/document.h>

#include "kube/meta/protobuf_list.h"
#include "sync/mutex.h"

namespace tephra::kube {

std::string QueryEscape(std::string_view value) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (char ch : value) {
    auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += ch;
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

namespace {

// Appends "k=v" to a query string under construction.
void AddQuery(std::string* target, std::string_view key, std::string_view value) {
  if (value.empty()) return;
  *target += target->find('?') == std::string::npos ? '?' : '&';
  *target += key;
  *target += '=';
  *target += QueryEscape(value);
}

StatusCode CodeForReason(std::string_view reason, int http) {
  if (reason == "NotFound") return StatusCode::kNotFound;
  if (reason == "AlreadyExists") return StatusCode::kAlreadyExists;
  if (reason == "Conflict") return StatusCode::kConflict;
  if (reason == "Invalid") return StatusCode::kInvalid;
  if (reason == "Forbidden") return StatusCode::kForbidden;
  if (reason == "Unauthorized") return StatusCode::kUnauthorized;
  if (reason == "TooManyRequests") return StatusCode::kTooManyRequests;
  if (reason == "Gone" || reason == "Expired") return StatusCode::kGone;
  if (reason == "Timeout" || reason == "ServerTimeout") return StatusCode::kDeadlineExceeded;
  if (reason == "BadRequest") return StatusCode::kInvalidArgument;
  if (reason == "ServiceUnavailable") return StatusCode::kUnavailable;
  if (reason == "InternalError") return StatusCode::kInternal;
  switch (http) {
    case 400:
      return StatusCode::kInvalidArgument;
    case 401:
      return StatusCode::kUnauthorized;
    case 403:
      return StatusCode::kForbidden;
    case 404:
      return StatusCode::kNotFound;
    case 408:
      return StatusCode::kDeadlineExceeded;
    case 409:
      return StatusCode::kConflict;
    case 410:
      return StatusCode::kGone;
    case 422:
      return StatusCode::kInvalid;
    case 429:
      return StatusCode::kTooManyRequests;
    case 504:
      return StatusCode::kDeadlineExceeded;
    default:
      break;
  }
  if (http >= 500) return http == 500 ? StatusCode::kInternal : StatusCode::kUnavailable;
  return StatusCode::kInternal;
}

// Decodes a metav1.Status document (the body of errors and of watch ERROR events).
Status StatusFromApiStatus(const json::Value& v, int http_fallback) {
  json::Errors ignored;
  json::Reader r(&v, &ignored);
  int code = static_cast<int>(r["code"].Int(http_fallback));
  std::string reason = r["reason"].String();
  std::string message = r["message"].String();
  if (message.empty())
    message = "HTTP " + std::to_string(code) + (reason.empty() ? "" : " " + reason);
  return {CodeForReason(reason, code), std::move(message)};
}

bool IsSuccess(int status) {
  return status >= 200 && status < 300;
}

std::string ContentType(PatchType t) {
  switch (t) {
    case PatchType::kMerge:
      return "application/merge-patch+json";
    case PatchType::kStrategicMerge:
      return "application/strategic-merge-patch+json";
    case PatchType::kJsonPatch:
      return "application/json-patch+json";
    case PatchType::kApply:
      return "application/apply-patch+yaml";
  }
  return "application/json";
}

}  // namespace

Status StatusFromResponse(const ApiResponse& response) {
  if (IsSuccess(response.status)) return Status::Ok();
  json::Document doc;
  if (!response.body.empty() && json::Parse(response.body, &doc).ok() && doc.IsObject() &&
      doc.HasMember("kind")) {
    return StatusFromApiStatus(doc, response.status);
  }
  std::string body = response.body.substr(0, 512);
  return {CodeForReason("", response.status),
          "HTTP " + std::to_string(response.status) + (body.empty() ? "" : ": " + body)};
}

// ---- ListPage / WatchEvent ----

ListPage::ListPage() = default;
ListPage::~ListPage() = default;
ListPage::ListPage(ListPage&&) noexcept = default;
ListPage& ListPage::operator=(ListPage&&) noexcept = default;

size_t ListPage::size() const {
  if (is_protobuf()) return protobuf_items_.size();
  if (!doc_ || !doc_->IsObject()) return 0;
  auto it = doc_->FindMember("items");
  return it != doc_->MemberEnd() && it->value.IsArray() ? it->value.Size() : 0;
}

const json::Value& ListPage::item(size_t i) const {
  return (*doc_)["items"][static_cast<rapidjson::SizeType>(i)];
}

ListItem ListPage::entry(size_t i) const {
  ListItem out;
  if (is_protobuf()) {
    out.protobuf = protobuf_items_[i];
  } else {
    out.json = &item(i);
  }
  return out;
}

WatchEvent::WatchEvent() = default;
WatchEvent::~WatchEvent() = default;
WatchEvent::WatchEvent(WatchEvent&&) noexcept = default;
WatchEvent& WatchEvent::operator=(WatchEvent&&) noexcept = default;

const json::Value& WatchEvent::object() const {
  return (*doc_)["object"];
}

std::string WatchEvent::resource_version() const {
  json::Errors ignored;
  return json::Reader(&object(), &ignored)["metadata"]["resourceVersion"].String();
}

std::string_view WatchEventTypeName(WatchEventType type) {
  switch (type) {
    case WatchEventType::kAdded:
      return "ADDED";
    case WatchEventType::kModified:
      return "MODIFIED";
    case WatchEventType::kDeleted:
      return "DELETED";
    case WatchEventType::kBookmark:
      return "BOOKMARK";
  }
  return "?";
}

StatusOr<WatchEvent> DecodeWatchEvent(std::string_view line) {
  WatchEvent ev;
  ev.doc_ = std::make_unique<json::Document>();
  TEPHRA_RETURN_IF_ERROR(json::Parse(line, ev.doc_.get()).WithContext("watch event"));
  json::Errors errors;
  json::Reader r(ev.doc_.get(), &errors);
  if (!r.is_object()) return InvalidArgument("watch event: expected a JSON object");
  std::string type = r["type"].String();
  json::Reader object = r["object"];
  if (!object.is_object()) return InvalidArgument("watch event: \"object\" must be an object");
  TEPHRA_RETURN_IF_ERROR(errors.ToStatus("watch event"));
  if (type == "ADDED") {
    ev.type = WatchEventType::kAdded;
  } else if (type == "MODIFIED") {
    ev.type = WatchEventType::kModified;
  } else if (type == "DELETED") {
    ev.type = WatchEventType::kDeleted;
  } else if (type == "BOOKMARK") {
    ev.type = WatchEventType::kBookmark;
  } else if (type == "ERROR") {
    Status st = StatusFromApiStatus(*object.value(), 500);
    return st.ok() ? Internal("watch ERROR event without a failure status") : st;
  } else {
    return InvalidArgument("watch event: unknown type \"" + type + "\"");
  }
  return ev;
}

// ---- Watch ----

Watch::Watch(std::unique_ptr<ResponseStream> stream) : stream_(std::move(stream)) {}

StatusOr<std::optional<WatchEvent>> Watch::Next() {
  auto blank = [](std::string_view v) { return v.find_first_not_of(" \r\t\n") == v.npos; };
  while (true) {
    size_t nl = buffer_.find('\n', scanned_);
    if (nl != std::string::npos) {
      std::string_view line(buffer_.data() + start_, nl - start_);
      start_ = scanned_ = nl + 1;
      if (blank(line)) continue;
      TEPHRA_ASSIGN_OR_RETURN(WatchEvent ev, DecodeWatchEvent(line));
      return std::optional<WatchEvent>(std::move(ev));
    }
    // Drop consumed lines before reading more, so the buffer holds at most one partial line
    // plus one read's worth of bytes.
    buffer_.erase(0, start_);
    start_ = 0;
    scanned_ = buffer_.size();
    StatusOr<bool> more = stream_->Read(&buffer_);
    if (!more.ok()) return more.status();
    if (!*more) {
      if (blank(buffer_)) return std::optional<WatchEvent>();
      buffer_ += '\n';  // a last event without a trailing newline
    }
  }
}

void Watch::Stop() {
  stream_->Close();
}

// ---- Client ----

Client::Client(std::shared_ptr<Transport> transport, ClientOptions options)
    : transport_(std::move(transport)),
      options_(options),
      clock_(options.clock != nullptr ? *options.clock : base::RealClock()),
      throttle_(options.qps, options.burst, clock_) {}

StatusOr<std::shared_ptr<Client>> Client::FromConfig(const RestConfig& config) {
  TEPHRA_ASSIGN_OR_RETURN(std::shared_ptr<Transport> transport, NewHttpTransport(config));
  ClientOptions options;
  options.qps = config.qps;
  options.burst = config.burst;
  return std::make_shared<Client>(std::move(transport), options);
}

StatusOr<ApiResponse> Client::Do(ApiRequest request, bool idempotent) {
  static thread_local std::mt19937 rng{std::random_device{}()};
  if (request.timeout.count() == 0) request.timeout = options_.request_timeout;
  Status last;
  for (int attempt = 0; attempt <= options_.max_retries; ++attempt) {
    if (attempt > 0) {
      // Exponential backoff with jitter, or the server's Retry-After when it gave one.
      auto base = options_.retry_base_delay * (1 << std::min(attempt - 1, 10));
      auto capped = std::min<std::chrono::milliseconds>(base, options_.retry_max_delay);
      std::uniform_int_distribution<int64_t> jitter(0, capped.count() / 2);
      auto delay = capped + std::chrono::milliseconds(jitter(rng));
      sync::Mutex mu;
      sync::CondVar cv;
      sync::MutexLock lock(mu);
      clock_.WaitUntil(mu, cv, clock_.Monotonic() + delay, [] { return false; });
    }
    throttle_.Wait();
    StatusOr<ApiResponse> response = transport_->RoundTrip(request);
    if (!response.ok()) {
      last = response.status();
      // Connection failures: the request may have been processed, so only idempotent ones
      // are retried (the transport already retried requests that never left).
      if (idempotent && (last.code() == StatusCode::kUnavailable ||
                         last.code() == StatusCode::kDeadlineExceeded)) {
        VLOG(2) << request.method << " " << request.target << ": " << last.ToString()
                << " (retrying)";
        continue;
      }
      return last;
    }
    int code = response->status;
    bool throttled = code == 429 || (code == 503 && response->retry_after.has_value());
    bool server_error = code == 500 || code == 502 || code == 503 || code == 504;
    if (throttled || (idempotent && server_error)) {
      last = StatusFromResponse(*response);
      if (attempt < options_.max_retries && response->retry_after) {
        auto wait =
            std::min<std::chrono::milliseconds>(*response->retry_after, options_.retry_max_delay);
        sync::Mutex mu;
        sync::CondVar cv;
        sync::MutexLock lock(mu);
        clock_.WaitUntil(mu, cv, clock_.Monotonic() + wait, [] { return false; });
      }
      VLOG(2) << request.method << " " << request.target << ": HTTP " << code << " (retrying)";
      continue;
    }
    return response;
  }
  return last.WithContext("after " + std::to_string(options_.max_retries) + " retries");
}

namespace {

StatusOr<std::string> BodyOrError(StatusOr<ApiResponse> response) {
  if (!response.ok()) return response.status();
  if (!IsSuccess(response->status)) return StatusFromResponse(*response);
  return std::move(response->body);
}

void AddWriteQuery(std::string* target, const WriteOptions& o) {
  AddQuery(target, "fieldManager", o.field_manager);
  if (o.dry_run) AddQuery(target, "dryRun", "All");
}

}  // namespace

StatusOr<std::string> Client::Get(const Resource& r, std::string_view ns, std::string_view name,
                                  std::string_view subresource) {
  ApiRequest req;
  req.target = r.Path(ns, name, subresource);
  return BodyOrError(Do(std::move(req), true));
}

StatusOr<ListPage> Client::List(const Resource& r, std::string_view ns,
                                const ListOptions& options) {
  ApiRequest req;
  req.target = r.Path(ns);
  AddQuery(&req.target, "labelSelector", options.label_selector);
  AddQuery(&req.target, "fieldSelector", options.field_selector);
  if (options.limit > 0) AddQuery(&req.target, "limit", std::to_string(options.limit));
  AddQuery(&req.target, "continue", options.continue_token);
  AddQuery(&req.target, "resourceVersion", options.resource_version);
  AddQuery(&req.target, "resourceVersionMatch", options.resource_version_match);
  if (options.accept_protobuf) {
    req.headers.emplace_back("Accept", std::string(kProtobufContentType) + ", application/json");
  }
  TEPHRA_ASSIGN_OR_RETURN(ApiResponse response, Do(std::move(req), true));
  if (!IsSuccess(response.status)) return StatusFromResponse(response);
  ListPage page;
  if (options.accept_protobuf && response.content_type.rfind(kProtobufContentType, 0) == 0) {
    page.protobuf_body_ = std::make_unique<std::string>(std::move(response.body));
    StatusOr<ProtobufList> list = SplitProtobufList(*page.protobuf_body_);
    if (!list.ok()) return list.status().WithContext("LIST " + r.ToString());
    page.protobuf_items_ = std::move(list->items);
    page.resource_version_ = std::move(list->resource_version);
    page.continue_token_ = std::move(list->continue_token);
    return page;
  }
  const std::string& body = response.body;
  page.doc_ = std::make_unique<json::Document>();
  TEPHRA_RETURN_IF_ERROR(json::Parse(body, page.doc_.get()).WithContext("LIST " + r.ToString()));
  json::Errors errors;
  json::Reader root(page.doc_.get(), &errors);
  page.resource_version_ = root["metadata"]["resourceVersion"].String();
  page.continue_token_ = root["metadata"]["continue"].String();
  if (root["items"].present() && !root["items"].is_array()) {
    root["items"].Fail("expected array");
  }
  TEPHRA_RETURN_IF_ERROR(errors.ToStatus("LIST " + r.ToString()));
  return page;
}

StatusOr<std::string> Client::ListAll(const Resource& r, std::string_view ns, ListOptions options,
                                      const std::function<Status(const json::Value&)>& each) {
  options.accept_protobuf = false;
  return ListAllItems(r, ns, std::move(options),
                      [&](const ListItem& item) { return each(*item.json); });
}

StatusOr<std::string> Client::ListAllItems(const Resource& r, std::string_view ns,
                                           ListOptions options,
                                           const std::function<Status(const ListItem&)>& each) {
  if (options.limit <= 0) options.limit = 500;
  const std::string ns_copy(ns);
  StatusOr<ListPage> page = List(r, ns_copy, options);
  while (true) {
    if (!page.ok()) return page.status();
    // The next page is fetched while this one's items are handled: on a big list the API
    // server's encoding and our decoding then overlap instead of taking turns.
    std::future<StatusOr<ListPage>> next;
    if (!page->continue_token().empty()) {
      options.continue_token = page->continue_token();
      // Continuation pages are served from the snapshot the token names.
      options.resource_version.clear();
      options.resource_version_match.clear();
      next = std::async(std::launch::async,
                        [this, &r, &ns_copy, options] { return List(r, ns_copy, options); });
    }
    for (size_t i = 0; i < page->size(); ++i) {
      TEPHRA_RETURN_IF_ERROR(each(page->entry(i)));  // `next`'s destructor waits for the fetch
    }
    if (!next.valid()) return page->resource_version();
    page = next.get();
  }
}

StatusOr<std::unique_ptr<Watch>> Client::StartWatch(const Resource& r, std::string_view ns,
                                                    const WatchOptions& options) {
  ApiRequest req;
  req.target = r.Path(ns);
  AddQuery(&req.target, "watch", "1");
  AddQuery(&req.target, "resourceVersion", options.resource_version);
  AddQuery(&req.target, "labelSelector", options.label_selector);
  AddQuery(&req.target, "fieldSelector", options.field_selector);
  if (options.allow_bookmarks) AddQuery(&req.target, "allowWatchBookmarks", "true");
  if (options.timeout_seconds > 0) {
    AddQuery(&req.target, "timeoutSeconds", std::to_string(options.timeout_seconds));
  }
  // The server ends the watch after timeoutSeconds; allow some silence beyond that.
  int idle = options.timeout_seconds > 0 ? options.timeout_seconds + 60 : 15 * 60;
  req.timeout = std::chrono::seconds(idle);
  throttle_.Wait();
  TEPHRA_ASSIGN_OR_RETURN(std::unique_ptr<ResponseStream> stream, transport_->Stream(req));
  if (!IsSuccess(stream->status())) {
    ApiResponse response;
    response.status = stream->status();
    while (true) {
      StatusOr<bool> more = stream->Read(&response.body);
      if (!more.ok() || !*more || response.body.size() > 65536) break;
    }
    return StatusFromResponse(response);
  }
  return std::make_unique<Watch>(std::move(stream));
}

StatusOr<std::string> Client::Create(const Resource& r, std::string_view ns, std::string_view body,
                                     const WriteOptions& options) {
  ApiRequest req;
  req.method = "POST";
  req.target = r.Path(ns);
  AddWriteQuery(&req.target, options);
  req.body = std::string(body);
  req.content_type = "application/json";
  return BodyOrError(Do(std::move(req), false));
}

StatusOr<std::string> Client::CreateSubresource(const Resource& r, std::string_view ns,
                                                std::string_view name, std::string_view subresource,
                                                std::string_view body,
                                                const WriteOptions& options) {
  ApiRequest req;
  req.method = "POST";
  req.target = r.Path(ns, name, subresource);
  AddWriteQuery(&req.target, options);
  req.body = std::string(body);
  req.content_type = "application/json";
  return BodyOrError(Do(std::move(req), false));
}

StatusOr<std::string> Client::Update(const Resource& r, std::string_view ns, std::string_view name,
                                     std::string_view body, const WriteOptions& options,
                                     std::string_view subresource) {
  ApiRequest req;
  req.method = "PUT";
  req.target = r.Path(ns, name, subresource);
  AddWriteQuery(&req.target, options);
  req.body = std::string(body);
  req.content_type = "application/json";
  // A PUT carrying a resourceVersion cannot apply twice: a repeat gets 409 Conflict.
  return BodyOrError(Do(std::move(req), true));
}

StatusOr<std::string> Client::Patch(const Resource& r, std::string_view ns, std::string_view name,
                                    PatchType type, std::string_view body,
                                    const PatchOptions& options, std::string_view subresource) {
  if (type == PatchType::kApply && options.field_manager.empty()) {
    return InvalidArgument("server-side apply needs a field manager");
  }
  ApiRequest req;
  req.method = "PATCH";
  req.target = r.Path(ns, name, subresource);
  AddQuery(&req.target, "fieldManager", options.field_manager);
  if (options.force) AddQuery(&req.target, "force", "true");
  if (options.dry_run) AddQuery(&req.target, "dryRun", "All");
  req.body = std::string(body);
  req.content_type = ContentType(type);
  return BodyOrError(Do(std::move(req), false));
}

Status Client::Delete(const Resource& r, std::string_view ns, std::string_view name,
                      const DeleteOptions& options) {
  ApiRequest req;
  req.method = "DELETE";
  req.target = r.Path(ns, name);
  json::Writer w;
  w.StartObject().Field("apiVersion", "v1").Field("kind", "DeleteOptions");
  if (!options.precondition_uid.empty() || !options.precondition_resource_version.empty()) {
    w.Key("preconditions").StartObject();
    if (!options.precondition_uid.empty()) w.Field("uid", options.precondition_uid);
    if (!options.precondition_resource_version.empty()) {
      w.Field("resourceVersion", options.precondition_resource_version);
    }
    w.EndObject();
  }
  if (!options.propagation_policy.empty()) {
    w.Field("propagationPolicy", options.propagation_policy);
  }
  if (options.grace_period_seconds) w.Field("gracePeriodSeconds", *options.grace_period_seconds);
  if (options.dry_run) w.Key("dryRun").StartArray().String("All").EndArray();
  w.EndObject();
  req.body = w.Take();
  req.content_type = "application/json";
  // Deleting twice is harmless: the repeat answers NotFound.
  StatusOr<ApiResponse> response = Do(std::move(req), true);
  if (!response.ok()) return response.status();
  return StatusFromResponse(*response);
}

}  // namespace tephra::kube
