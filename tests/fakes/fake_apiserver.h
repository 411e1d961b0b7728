// An in-memory stand-in for the API server behind kube::Transport, for unit tests that need
// exact control over failures (never for integration tests, which use the real one).
//
// Semantics kept: resourceVersions from one counter, optimistic concurrency on PUT, merge
// patches, LIST with label selectors and limit/continue paging, WATCH from a resourceVersion
// (history replay, bookmarks on request, 410 after Compact()), pods/binding, uid/creation
// metadata. Simplified: strategic-merge and apply patches act as merge patches; no
// validation, no status subresource split except that writes to /status touch only .status.
#pragma once

#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "kube/transport.h"

namespace tephra::testing {

class FakeApiServer : public kube::Transport {
 public:
  FakeApiServer();
  ~FakeApiServer() override;

  StatusOr<kube::ApiResponse> RoundTrip(const kube::ApiRequest& request) override;
  StatusOr<std::unique_ptr<kube::ResponseStream>> Stream(const kube::ApiRequest& request) override;

  // ---- fault injection ----
  // The next `count` requests (matching `method`, or any when empty) get HTTP `status`.
  void FailNext(int count, int status, std::string method = "",
                std::optional<int> retry_after_seconds = std::nullopt);
  // The next `count` requests fail in the transport (as if the connection broke).
  void BreakNext(int count, Status error = Unavailable("connection reset by peer"));
  // Forgets history: watches from older resourceVersions get 410 Gone.
  void Compact();
  // Ends every open watch with a transport error (the apiserver went away).
  void DropWatches();
  // Ends every open watch cleanly (as when timeoutSeconds elapses).
  void EndWatches();

  // ---- direct access ----
  // Stores an object (JSON) under its collection path, e.g. "/api/v1/namespaces/a/configmaps";
  // fills metadata (uid, resourceVersion, creationTimestamp) and notifies watches.
  std::string Put(const std::string& collection, const std::string& json);
  bool Remove(const std::string& collection, const std::string& name_or_key);
  std::optional<std::string> Object(const std::string& collection, const std::string& key);
  size_t Count(const std::string& collection);
  int64_t resource_version();
  // Requests seen, as "METHOD target".
  std::vector<std::string> requests();
  int open_watches();

 private:
  class FakeStream;
  struct Event {
    int64_t rv;
    std::string collection;  // e.g. "/api/v1/configmaps" (namespace-free)
    std::string ns;
    std::string type;
    std::string json;
  };
  struct Fault {
    int count;
    int status;
    std::string method;
    std::optional<int> retry_after;
  };

  StatusOr<kube::ApiResponse> Handle(const kube::ApiRequest& request);
  std::string Store(const std::string& collection, const std::string& ns, const std::string& json,
                    const std::string& type);  // requires mu_
  void Notify(const Event& e);                 // requires mu_

  std::mutex mu_;
  int64_t rv_ = 100;
  int64_t compacted_rv_ = 0;
  int64_t uid_ = 0;
  // collection (namespace-free) → "ns/name" → object JSON
  std::map<std::string, std::map<std::string, std::string>> objects_;
  std::deque<Event> history_;
  std::vector<Fault> faults_;
  std::vector<Status> breaks_;
  std::vector<std::shared_ptr<FakeStream>> watches_;
  std::vector<std::string> requests_;
};

}  // namespace tephra::testing
