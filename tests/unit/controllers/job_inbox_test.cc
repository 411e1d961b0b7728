// The job controller's inbox: which events it keeps, in what order, and what a worker puts
// back.
#include "controllers/job/job_inbox.h"

#include <catch2/catch.hpp>

#include "api/batch.h"

namespace tephra::controllers::job {
namespace {

namespace ev = api::job_event;

InboxItem Sync() {
  return InboxItem::For(Request{});
}

InboxItem PodEvent(std::string_view event, const std::string& pod) {
  Request r;
  r.event = std::string(event);
  r.pod_name = pod;
  return InboxItem::For(r);
}

InboxItem CommandItem(const std::string& name, const std::string& action) {
  InboxItem item;
  item.request.action = action;
  item.command_name = name;
  item.command_uid = "uid-" + name;
  return item;
}

std::vector<std::string> Pods(const std::deque<InboxItem>& items) {
  std::vector<std::string> out;
  for (const auto& item : items) {
    out.push_back(item.command_name.empty() ? item.request.pod_name : item.command_name);
  }
  return out;
}

TEST_CASE("a bare sync after a sync-only item adds nothing") {
  JobInbox inbox;
  inbox.Add("ns/j", Sync());
  inbox.Add("ns/j", Sync());
  inbox.Add("ns/j", PodEvent(ev::kOutOfSync, ""));
  CHECK(inbox.Size("ns/j") == 1);
  // An out-of-sync pod is news (the cache has seen the pod); a bare sync after it is not.
  inbox.Add("ns/j", PodEvent(ev::kOutOfSync, "p0"));
  inbox.Add("ns/j", Sync());
  CHECK(inbox.Size("ns/j") == 2);
  // After an event a policy reacts to, a sync is kept.
  inbox.Add("ns/j", PodEvent(ev::kPodFailed, "p1"));
  inbox.Add("ns/j", Sync());
  CHECK(inbox.Size("ns/j") == 4);
  CHECK(inbox.Size("ns/other") == 0);
}

TEST_CASE("a full inbox keeps taking Commands only") {
  JobInbox inbox(3);
  for (int i = 0; i < 5; ++i) inbox.Add("ns/j", PodEvent(ev::kPodFailed, "p" + std::to_string(i)));
  CHECK(inbox.Size("ns/j") == 3);
  inbox.Add("ns/j", CommandItem("restart", "RestartJob"));
  CHECK(Pods(inbox.Take("ns/j")) == std::vector<std::string>{"p0", "p1", "p2", "restart"});
  CHECK(inbox.Size("ns/j") == 0);
  CHECK(inbox.Take("ns/j").empty());
}

TEST_CASE("items put back go before what arrived since they were taken") {
  JobInbox inbox;
  inbox.Add("ns/j", PodEvent(ev::kPodFailed, "a"));
  inbox.Add("ns/j", PodEvent(ev::kPodFailed, "b"));
  std::deque<InboxItem> taken = inbox.Take("ns/j");
  inbox.Add("ns/j", PodEvent(ev::kPodFailed, "c"));
  inbox.PutBack("ns/j", std::move(taken));
  inbox.PutBack("ns/j", {});
  CHECK(Pods(inbox.Take("ns/j")) == std::vector<std::string>{"a", "b", "c"});
}

TEST_CASE("an item carries its Command until the Command is consumed") {
  CHECK_FALSE(PodEvent(ev::kPodFailed, "p").Command("ns").has_value());
  InboxItem item = CommandItem("abort", "AbortJob");
  std::optional<PendingCommand> command = item.Command("ns");
  REQUIRE(command.has_value());
  CHECK(command->namespace_ == "ns");
  CHECK(command->name == "abort");
  CHECK(command->uid == "uid-abort");
  CHECK(command->action == "AbortJob");
  item.command_consumed = true;
  CHECK_FALSE(item.Command("ns").has_value());
  CHECK_FALSE(item.OnlySync());
}

}  // namespace
}  // namespace tephra::controllers::job
