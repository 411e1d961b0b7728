// What happened to each job since a worker last looked at it: pod events and Commands,
// recorded by the informer handlers and drained by JobController::Sync (job_controller.h).
#pragma once

#include <chrono>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>

#include "controllers/framework/commands.h"
#include "controllers/job/policy.h"
#include "sync/mutex.h"

namespace tephra::controllers::job {

struct InboxItem {
  Request request;
  std::string command_name;  // set for Commands: deleted before the action runs
  std::string command_uid;
  std::chrono::steady_clock::time_point command_seen;  // monotonic
  bool command_consumed = false;

  static InboxItem For(Request request);
  // Carries no Command, action or event a policy reacts to: it asks only for a sync (it may
  // name a pod the cache has now seen).
  bool OnlySync() const;
  // The Command this item carries, while it is not consumed; `ns` is the job's namespace.
  std::optional<PendingCommand> Command(const std::string& ns) const;
};

// Items per job key, oldest first. Safe to use from any thread.
class JobInbox {
 public:
  static constexpr size_t kDefaultLimit = 1024;
  explicit JobInbox(size_t limit = kDefaultLimit) : limit_(limit) {}
  JobInbox(const JobInbox&) = delete;
  JobInbox& operator=(const JobInbox&) = delete;

  // Appends `item` to the inbox of `key`. A bare sync (OnlySync, naming no pod) right after
  // an OnlySync item adds nothing: the pass that item asks for is the one asked for again. A
  // full inbox (`limit` items) takes only Commands, which are never dropped.
  void Add(const std::string& key, InboxItem item);
  // Takes every item of `key`, oldest first, leaving its inbox empty.
  std::deque<InboxItem> Take(const std::string& key);
  // Puts `items` back in front of whatever arrived for `key` since they were taken.
  void PutBack(const std::string& key, std::deque<InboxItem> items);
  size_t Size(const std::string& key) const;

 private:
  const size_t limit_;
  mutable sync::Mutex mu_;
  std::unordered_map<std::string, std::deque<InboxItem>> boxes_ GUARDED_BY(mu_);
};

}  // namespace tephra::controllers::job
