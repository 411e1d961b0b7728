#include "controllers/job/job_inbox.h"

#include <iterator>

#include "api/batch.h"

namespace tephra::controllers::job {

InboxItem InboxItem::For(Request request) {
  InboxItem item;
  item.request = std::move(request);
  return item;
}

bool InboxItem::OnlySync() const {
  return command_name.empty() && request.action.empty() &&
         (request.event.empty() || request.event == api::job_event::kOutOfSync);
}

std::optional<PendingCommand> InboxItem::Command(const std::string& ns) const {
  if (command_name.empty() || command_consumed) return std::nullopt;
  return PendingCommand{ns, command_name, command_uid, request.action, command_seen};
}

void JobInbox::Add(const std::string& key, InboxItem item) {
  sync::MutexLock l(mu_);
  std::deque<InboxItem>& box = boxes_[key];
  const bool redundant =
      item.OnlySync() && item.request.pod_name.empty() && !box.empty() && box.back().OnlySync();
  if (!redundant && (box.size() < limit_ || !item.command_name.empty())) {
    box.push_back(std::move(item));
  }
}

std::deque<InboxItem> JobInbox::Take(const std::string& key) {
  std::deque<InboxItem> items;
  sync::MutexLock l(mu_);
  auto it = boxes_.find(key);
  if (it != boxes_.end()) {
    items.swap(it->second);
    boxes_.erase(it);
  }
  return items;
}

void JobInbox::PutBack(const std::string& key, std::deque<InboxItem> items) {
  if (items.empty()) return;
  sync::MutexLock l(mu_);
  std::deque<InboxItem>& box = boxes_[key];
  box.insert(box.begin(), std::make_move_iterator(items.begin()),
             std::make_move_iterator(items.end()));
}

size_t JobInbox::Size(const std::string& key) const {
  sync::MutexLock l(mu_);
  auto it = boxes_.find(key);
  return it == boxes_.end() ? 0 : it->second.size();
}

}  // namespace tephra::controllers::job
