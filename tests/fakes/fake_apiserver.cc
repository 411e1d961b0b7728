#include "tests/fakes/fake_apiserver.h"

#include <algorithm>
#include <sstream>

#include <rapidjson/document.h>

#include "base/time.h"
#include "json/json.h"

namespace tephra::testing {
namespace {

struct Target {
  std::string collection;  // namespace-free: "/api/v1/configmaps"
  std::string ns;
  std::string name;
  std::string sub;
  std::map<std::string, std::string> query;
};

std::string Unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

Target Parse(const std::string& target) {
  Target t;
  std::string path = target;
  size_t q = target.find('?');
  if (q != std::string::npos) {
    path = target.substr(0, q);
    std::stringstream ss(target.substr(q + 1));
    for (std::string kv; std::getline(ss, kv, '&');) {
      size_t eq = kv.find('=');
      if (eq == std::string::npos) continue;
      t.query[kv.substr(0, eq)] = Unescape(kv.substr(eq + 1));
    }
  }
  std::vector<std::string> seg;
  std::stringstream ps(path);
  for (std::string s; std::getline(ps, s, '/');) {
    if (!s.empty()) seg.push_back(s);
  }
  size_t i = 0;
  std::string prefix;
  if (!seg.empty() && seg[0] == "api" && seg.size() >= 2) {
    prefix = "/api/" + seg[1];
    i = 2;
  } else if (!seg.empty() && seg[0] == "apis" && seg.size() >= 3) {
    prefix = "/apis/" + seg[1] + "/" + seg[2];
    i = 3;
  }
  if (i < seg.size() && seg[i] == "namespaces" && seg.size() - i >= 3) {
    t.ns = seg[i + 1];
    i += 2;
  }
  if (i < seg.size()) t.collection = prefix + "/" + seg[i];
  if (i + 1 < seg.size()) t.name = seg[i + 1];
  if (i + 2 < seg.size()) t.sub = seg[i + 2];
  return t;
}

std::string Key(const std::string& ns, const std::string& name) {
  return ns.empty() ? name : ns + "/" + name;
}

kube::ApiResponse ErrorResponse(int code, const std::string& reason, const std::string& msg) {
  json::Writer w;
  w.StartObject()
      .Field("kind", "Status")
      .Field("apiVersion", "v1")
      .Field("status", "Failure")
      .Field("message", msg)
      .Field("reason", reason)
      .Field("code", int64_t{code})
      .EndObject();
  kube::ApiResponse r;
  r.status = code;
  r.body = w.Take();
  r.content_type = "application/json";
  return r;
}

kube::ApiResponse Ok(int code, std::string body) {
  kube::ApiResponse r;
  r.status = code;
  r.body = std::move(body);
  r.content_type = "application/json";
  return r;
}

std::string Field(const std::string& json, const char* a, const char* b) {
  json::Document doc;
  if (!json::Parse(json, &doc).ok()) return "";
  json::Errors e;
  return json::Reader(&doc, &e)[a][b].String();
}

// Equality-only label selectors: "a=b,c=d".
bool Matches(const std::string& json, const std::string& selector) {
  if (selector.empty()) return true;
  json::Document doc;
  if (!json::Parse(json, &doc).ok()) return false;
  json::Errors e;
  auto labels = json::Reader(&doc, &e)["metadata"]["labels"].StringMap();
  std::stringstream ss(selector);
  for (std::string term; std::getline(ss, term, ',');) {
    size_t eq = term.find('=');
    if (eq == std::string::npos) {
      if (labels.count(term) == 0) return false;
      continue;
    }
    auto it = labels.find(term.substr(0, eq));
    if (it == labels.end() || it->second != term.substr(eq + 1)) return false;
  }
  return true;
}

// Sets metadata fields on an object and returns the new JSON.
std::string WithMeta(const std::string& json, const std::map<std::string, std::string>& meta) {
  json::Writer w;
  w.StartObject().Key("metadata").StartObject();
  for (const auto& [k, v] : meta) w.Field(k, v);
  w.EndObject().EndObject();
  std::string out;
  if (!json::ApplyMergePatch(json, w.str(), &out).ok()) return json;
  return out;
}

}  // namespace

// A watch response body fed by the fake server.
class FakeApiServer::FakeStream : public kube::ResponseStream {
 public:
  FakeStream(int status, std::string collection_path, std::string namespace_,
             std::string label_selector)
      : status_(status),
        collection(std::move(collection_path)),
        ns(std::move(namespace_)),
        selector(std::move(label_selector)) {}

  int status() const override { return status_; }

  StatusOr<bool> Read(std::string* out) override {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return !chunks_.empty() || closed_ || ended_ || broken_; });
    if (!chunks_.empty()) {
      *out += chunks_.front();
      chunks_.pop_front();
      return true;
    }
    if (closed_) return Cancelled("stream closed");
    if (broken_) return Unavailable("watch connection lost");
    return false;
  }

  void Close() override {
    std::lock_guard<std::mutex> l(mu_);
    closed_ = true;
    cv_.notify_all();
  }

  void Push(std::string chunk) {
    std::lock_guard<std::mutex> l(mu_);
    chunks_.push_back(std::move(chunk));
    cv_.notify_all();
  }
  void End(bool broken) {
    std::lock_guard<std::mutex> l(mu_);
    (broken ? broken_ : ended_) = true;
    cv_.notify_all();
  }
  bool done() {
    std::lock_guard<std::mutex> l(mu_);
    return closed_ || ended_ || broken_;
  }

  const int status_;
  const std::string collection;
  const std::string ns;
  const std::string selector;

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> chunks_;
  bool closed_ = false;
  bool ended_ = false;
  bool broken_ = false;
};

FakeApiServer::FakeApiServer() = default;

FakeApiServer::~FakeApiServer() {
  DropWatches();
}

void FakeApiServer::FailNext(int count, int status, std::string method,
                             std::optional<int> retry_after_seconds) {
  std::lock_guard<std::mutex> l(mu_);
  faults_.push_back({count, status, std::move(method), retry_after_seconds});
}

void FakeApiServer::BreakNext(int count, Status error) {
  std::lock_guard<std::mutex> l(mu_);
  for (int i = 0; i < count; ++i) breaks_.push_back(error);
}

void FakeApiServer::Compact() {
  std::lock_guard<std::mutex> l(mu_);
  compacted_rv_ = rv_;
  history_.clear();
}

void FakeApiServer::DropWatches() {
  std::lock_guard<std::mutex> l(mu_);
  for (auto& w : watches_) w->End(true);
  watches_.clear();
}

void FakeApiServer::EndWatches() {
  std::lock_guard<std::mutex> l(mu_);
  for (auto& w : watches_) w->End(false);
  watches_.clear();
}

int64_t FakeApiServer::resource_version() {
  std::lock_guard<std::mutex> l(mu_);
  return rv_;
}

std::vector<std::string> FakeApiServer::requests() {
  std::lock_guard<std::mutex> l(mu_);
  return requests_;
}

int FakeApiServer::open_watches() {
  std::lock_guard<std::mutex> l(mu_);
  int n = 0;
  for (auto& w : watches_) n += w->done() ? 0 : 1;
  return n;
}

std::string FakeApiServer::Store(const std::string& collection, const std::string& ns,
                                 const std::string& json, const std::string& type) {
  ++rv_;
  std::string stored = WithMeta(json, {{"resourceVersion", std::to_string(rv_)}});
  std::string name = Field(stored, "metadata", "name");
  objects_[collection][Key(ns, name)] = stored;
  Notify({rv_, collection, ns, type, stored});
  return stored;
}

void FakeApiServer::Notify(const Event& e) {
  history_.push_back(e);
  std::string line = R"({"type":")" + e.type + R"(","object":)" + e.json + "}\n";
  for (auto& w : watches_) {
    if (w->collection != e.collection) continue;
    if (!w->ns.empty() && w->ns != e.ns) continue;
    if (!Matches(e.json, w->selector)) continue;
    w->Push(line);
  }
}

std::string FakeApiServer::Put(const std::string& collection, const std::string& json) {
  Target t = Parse(collection);
  std::lock_guard<std::mutex> l(mu_);
  std::string name = Field(json, "metadata", "name");
  bool exists = objects_[t.collection].count(Key(t.ns, name)) != 0;
  std::map<std::string, std::string> meta{{"name", name}};
  if (!t.ns.empty()) meta["namespace"] = t.ns;
  std::string with = json;
  if (!exists) {
    meta["uid"] = "uid-" + std::to_string(++uid_);
    meta["creationTimestamp"] = base::FormatTime(base::Clock::now());
  } else {
    std::string old = objects_[t.collection][Key(t.ns, name)];
    meta["uid"] = Field(old, "metadata", "uid");
    meta["creationTimestamp"] = Field(old, "metadata", "creationTimestamp");
  }
  return Store(t.collection, t.ns, WithMeta(with, meta), exists ? "MODIFIED" : "ADDED");
}

bool FakeApiServer::Remove(const std::string& collection, const std::string& name_or_key) {
  Target t = Parse(collection);
  std::lock_guard<std::mutex> l(mu_);
  auto& objs = objects_[t.collection];
  std::string key =
      name_or_key.find('/') == std::string::npos ? Key(t.ns, name_or_key) : name_or_key;
  auto it = objs.find(key);
  if (it == objs.end()) return false;
  ++rv_;
  std::string last = WithMeta(it->second, {{"resourceVersion", std::to_string(rv_)}});
  std::string ns = Field(last, "metadata", "namespace");
  objs.erase(it);
  Notify({rv_, t.collection, ns, "DELETED", last});
  return true;
}

std::optional<std::string> FakeApiServer::Object(const std::string& collection,
                                                 const std::string& key) {
  Target t = Parse(collection);
  std::lock_guard<std::mutex> l(mu_);
  auto& objs = objects_[t.collection];
  auto it = objs.find(key.find('/') == std::string::npos ? Key(t.ns, key) : key);
  if (it == objs.end()) return std::nullopt;
  return it->second;
}

size_t FakeApiServer::Count(const std::string& collection) {
  Target t = Parse(collection);
  std::lock_guard<std::mutex> l(mu_);
  return objects_[t.collection].size();
}

StatusOr<kube::ApiResponse> FakeApiServer::RoundTrip(const kube::ApiRequest& request) {
  {
    std::lock_guard<std::mutex> l(mu_);
    requests_.push_back(request.method + " " + request.target);
    if (!breaks_.empty()) {
      Status s = breaks_.front();
      breaks_.erase(breaks_.begin());
      return s;
    }
    for (auto it = faults_.begin(); it != faults_.end(); ++it) {
      if (!it->method.empty() && it->method != request.method) continue;
      kube::ApiResponse r =
          ErrorResponse(it->status, it->status == 429 ? "TooManyRequests" : "", "injected failure");
      if (it->retry_after) r.retry_after = std::chrono::seconds(*it->retry_after);
      if (--it->count <= 0) faults_.erase(it);
      return r;
    }
  }
  return Handle(request);
}

StatusOr<kube::ApiResponse> FakeApiServer::Handle(const kube::ApiRequest& request) {
  Target t = Parse(request.target);
  std::lock_guard<std::mutex> l(mu_);
  auto& objs = objects_[t.collection];
  const std::string key = Key(t.ns, t.name);

  if (request.method == "GET" && !t.name.empty()) {
    auto it = objs.find(key);
    if (it == objs.end()) return ErrorResponse(404, "NotFound", t.name + " not found");
    return Ok(200, it->second);
  }
  if (request.method == "GET") {
    int64_t limit = t.query.count("limit") ? std::stoll(t.query["limit"]) : 0;
    std::string after;
    std::string list_rv = std::to_string(rv_);
    if (t.query.count("continue")) {
      const std::string& c = t.query["continue"];
      size_t bar = c.find('|');
      list_rv = c.substr(0, bar);
      after = c.substr(bar + 1);
    }
    json::Writer w;
    w.StartObject().Field("kind", "List").Field("apiVersion", "v1");
    std::vector<const std::string*> items;
    std::string last_key;
    bool more = false;
    for (auto it = after.empty() ? objs.begin() : objs.upper_bound(after); it != objs.end(); ++it) {
      if (!t.ns.empty() && Field(it->second, "metadata", "namespace") != t.ns) continue;
      if (!Matches(it->second, t.query["labelSelector"])) continue;
      if (limit > 0 && static_cast<int64_t>(items.size()) == limit) {
        more = true;
        break;
      }
      items.push_back(&it->second);
      last_key = it->first;
    }
    w.Key("metadata").StartObject().Field("resourceVersion", list_rv);
    if (more) w.Field("continue", list_rv + "|" + last_key);
    w.EndObject().Key("items").StartArray();
    for (const auto* item : items) w.Raw(*item);
    w.EndArray().EndObject();
    return Ok(200, w.Take());
  }
  if (request.method == "POST") {
    if (t.sub == "binding") {
      auto it = objs.find(key);
      if (it == objs.end()) return ErrorResponse(404, "NotFound", t.name + " not found");
      if (!Field(it->second, "spec", "nodeName").empty()) {
        return ErrorResponse(409, "Conflict", "pod " + t.name + " is already assigned");
      }
      std::string node = Field(request.body, "target", "name");
      // The binding's annotations go onto the pod, as the real API server does.
      std::string annotations;
      json::Document binding;
      if (json::Parse(request.body, &binding).ok()) {
        json::Errors errors;
        json::Reader a = json::Reader(&binding, &errors)["metadata"]["annotations"];
        if (a.is_object())
          annotations = R"("metadata":{"annotations":)" + json::Write(*a.value()) + "},";
      }
      std::string out;
      (void)json::ApplyMergePatch(
          it->second, "{" + annotations + R"("spec":{"nodeName":")" + node + R"("}})", &out);
      Store(t.collection, t.ns, out, "MODIFIED");
      return Ok(201, R"({"kind":"Status","status":"Success"})");
    }
    std::string name = Field(request.body, "metadata", "name");
    if (objs.count(Key(t.ns, name)) != 0) {
      return ErrorResponse(409, "AlreadyExists", name + " already exists");
    }
    std::map<std::string, std::string> meta{
        {"uid", "uid-" + std::to_string(++uid_)},
        {"creationTimestamp", base::FormatTime(base::Clock::now())}};
    if (!t.ns.empty()) meta["namespace"] = t.ns;
    return Ok(201, Store(t.collection, t.ns, WithMeta(request.body, meta), "ADDED"));
  }
  if (request.method == "PUT" || request.method == "PATCH") {
    auto it = objs.find(key);
    if (it == objs.end()) return ErrorResponse(404, "NotFound", t.name + " not found");
    std::string updated;
    if (request.method == "PUT") {
      std::string want = Field(request.body, "metadata", "resourceVersion");
      if (!want.empty() && want != Field(it->second, "metadata", "resourceVersion")) {
        return ErrorResponse(409, "Conflict",
                             "Operation cannot be fulfilled: the object has been modified");
      }
      updated = request.body;
    } else {
      if (request.content_type == "application/json-patch+json") {
        return ErrorResponse(415, "UnsupportedMediaType", "the fake supports merge patches only");
      }
      if (!json::ApplyMergePatch(it->second, request.body, &updated).ok()) {
        return ErrorResponse(400, "BadRequest", "malformed patch");
      }
    }
    if (t.sub == "status") {
      json::Document doc;
      (void)json::Parse(updated, &doc);
      std::string status =
          doc.IsObject() && doc.HasMember("status") ? json::Write(doc["status"]) : "{}";
      (void)json::ApplyMergePatch(it->second, R"({"status":null})", &updated);
      (void)json::ApplyMergePatch(updated, R"({"status":)" + status + "}", &updated);
    }
    updated = WithMeta(updated,
                       {{"uid", Field(it->second, "metadata", "uid")},
                        {"creationTimestamp", Field(it->second, "metadata", "creationTimestamp")},
                        {"name", t.name}});
    if (!t.ns.empty()) updated = WithMeta(updated, {{"namespace", t.ns}});
    return Ok(200, Store(t.collection, t.ns, updated, "MODIFIED"));
  }
  if (request.method == "DELETE") {
    auto it = objs.find(key);
    if (it == objs.end()) return ErrorResponse(404, "NotFound", t.name + " not found");
    json::Document opts;
    if (!request.body.empty() && json::Parse(request.body, &opts).ok()) {
      json::Errors e;
      std::string uid = json::Reader(&opts, &e)["preconditions"]["uid"].String();
      if (!uid.empty() && uid != Field(it->second, "metadata", "uid")) {
        return ErrorResponse(409, "Conflict", "Precondition failed: UID in precondition");
      }
    }
    ++rv_;
    std::string last = WithMeta(it->second, {{"resourceVersion", std::to_string(rv_)}});
    objs.erase(it);
    Notify({rv_, t.collection, t.ns, "DELETED", last});
    return Ok(200, last);
  }
  return ErrorResponse(405, "MethodNotAllowed", request.method + " not supported");
}

StatusOr<std::unique_ptr<kube::ResponseStream>> FakeApiServer::Stream(
    const kube::ApiRequest& request) {
  Target t = Parse(request.target);
  std::lock_guard<std::mutex> l(mu_);
  requests_.push_back(request.method + " " + request.target);
  if (!breaks_.empty()) {
    Status s = breaks_.front();
    breaks_.erase(breaks_.begin());
    return s;
  }
  auto stream = std::make_shared<FakeStream>(200, t.collection, t.ns, t.query["labelSelector"]);
  const std::string& rv_text = t.query["resourceVersion"];
  int64_t from = rv_text.empty() ? rv_ : std::stoll(rv_text);
  if (from < compacted_rv_) {
    stream->Push(
        R"({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure",)"
        R"("message":"too old resource version","reason":"Expired","code":410}})"
        "\n");
    stream->End(false);
  } else {
    for (const auto& e : history_) {
      if (e.rv <= from || e.collection != t.collection) continue;
      if (!t.ns.empty() && e.ns != t.ns) continue;
      if (!Matches(e.json, t.query["labelSelector"])) continue;
      stream->Push(R"({"type":")" + e.type + R"(","object":)" + e.json + "}\n");
    }
    watches_.push_back(stream);
  }
  // The caller owns a handle that forwards to the shared stream the server keeps feeding.
  struct Handle : kube::ResponseStream {
    std::shared_ptr<FakeStream> s;
    int status() const override { return s->status(); }
    StatusOr<bool> Read(std::string* out) override { return s->Read(out); }
    void Close() override { s->Close(); }
  };
  auto handle = std::make_unique<Handle>();
  handle->s = stream;
  return std::unique_ptr<kube::ResponseStream>(std::move(handle));
}

}  // namespace tephra::testing
