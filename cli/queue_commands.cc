// tephractl queue list|get|create|open|close|delete.
#include <chrono>
#include <map>
#include <thread>

#include "api/defaulting.h"
#include "api/kinds.h"
#include "api/scheduling.h"
#include "api/validation.h"
#include "cli/cli.h"
#include "cli/common.h"
#include "json/json.h"

namespace tephra::cli {
namespace {

std::string ListText(const api::ResourceList& list, const std::string& empty) {
  std::string out;
  for (const auto& [name, q] : list) {
    if (name == api::kResourcePods) continue;
    out += (out.empty() ? "" : ",") + name + "=" + q.String();
  }
  return out.empty() ? empty : out;
}

Table QueueTable() {
  return Table({"NAME", "STATE", "WEIGHT", "PARENT", "CAPABILITY", "ALLOCATED", "PENDING",
                "INQUEUE", "RUNNING", "UNKNOWN", "COMPLETED"});
}

void AddQueueRow(Table& t, const api::Queue& q, const PhaseCounts* counts) {
  auto n = [&](const char* phase) -> std::string {
    if (counts == nullptr) return "-";
    auto it = counts->find(q.metadata.name);
    if (it == counts->end()) return "0";
    auto p = it->second.find(phase);
    return p == it->second.end() ? "0" : std::to_string(p->second);
  };
  t.Add({q.metadata.name, q.status.state.empty() ? "Unknown" : q.status.state,
         std::to_string(q.spec.weight), q.metadata.name == api::kRootQueue ? "" : q.ParentName(),
         ListText(q.spec.capability, "unlimited"), ListText(q.status.allocated, "none"),
         n("Pending"), n("Inqueue"), n("Running"), n("Unknown"), n("Completed")});
}

int QueueList(Context& ctx, const std::vector<std::string>& args) {
  if (int rc = ExpectArgs(ctx, "queue list", args, {}); rc != kExitOk) return rc;
  TEPHRA_CLI_ASSIGN(auto client, ctx.Client());
  OutputFormat format = *ctx.Output();
  std::vector<std::string> raw;
  std::vector<std::shared_ptr<api::Queue>> queues;
  StatusOr<std::string> listed = client->ListAll(api::kQueues, "", {}, [&](const json::Value& v) {
    raw.push_back(json::Write(v));
    StatusOr<std::shared_ptr<api::Queue>> q = api::DecodeQueue(v);
    if (!q.ok()) return q.status();
    queues.push_back(*q);
    return Status::Ok();
  });
  if (!listed.ok()) return Fail(ctx, Describe(listed.status(), "listing queues"));
  if (format != OutputFormat::kTable) return PrintList(ctx, format, raw);
  StatusOr<PhaseCounts> counts = CountPodGroups(*client);
  Table t = QueueTable();
  for (const auto& q : queues) AddQueueRow(t, *q, counts.ok() ? &*counts : nullptr);
  return PrintTable(ctx, t, "No queues found.");
}

int QueueGet(Context& ctx, const std::vector<std::string>& args) {
  if (int rc = ExpectArgs(ctx, "queue get", args, {"NAME (the queue to show)"}); rc != kExitOk)
    return rc;
  TEPHRA_CLI_ASSIGN(auto client, ctx.Client());
  StatusOr<std::string> text = client->Get(api::kQueues, "", args[0]);
  if (!text.ok()) return Fail(ctx, Describe(text.status(), "queue " + args[0]));
  OutputFormat format = *ctx.Output();
  if (format != OutputFormat::kTable) return PrintObject(ctx, format, *text);
  StatusOr<std::shared_ptr<api::Queue>> q = api::DecodeQueue(*text);
  if (!q.ok()) return Fail(ctx, q.status());
  StatusOr<PhaseCounts> counts = CountPodGroups(*client);
  Table t = QueueTable();
  AddQueueRow(t, **q, counts.ok() ? &*counts : nullptr);
  ctx.out() << t.Render();
  return kExitOk;
}

struct CreateFlags {
  int weight = 1;
  std::string capability;
  std::string deserved;
  std::string guarantee;
  std::string parent;
  int priority = 0;
  bool reclaimable = true;
  std::string state = "Open";
  std::vector<std::string> labels;
};

// Polls the queue until status.state is `want` or `timeout` passes.
Status WaitForState(kube::Client& client, const std::string& name, const std::string& want,
                    std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string last;
  while (true) {
    StatusOr<std::string> text = client.Get(api::kQueues, "", name);
    if (text.ok()) {
      StatusOr<std::shared_ptr<api::Queue>> q = api::DecodeQueue(*text);
      if (q.ok()) last = (*q)->status.state;
      if (last == want) return Status::Ok();
      // Closing a queue that still has PodGroups stops at Closing until they are gone.
      if (want == "Closed" && last == "Closing") return Status::Ok();
    }
    if (std::chrono::steady_clock::now() > deadline) {
      return DeadlineExceeded("queue " + name + " is still " +
                              (last.empty() ? "without a state" : last) + " after " +
                              std::to_string(timeout.count() / 1000) +
                              "s: is tephra-controller-manager (queue-controller) running?");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
}

struct OperateFlags {
  std::string command_namespace = "default";
  bool wait = false;
  std::chrono::milliseconds timeout{30000};
};

void AddOperateFlags(base::FlagSet& f, OperateFlags* o) {
  f.AddString("command-namespace", &o->command_namespace,
              "Namespace of the Command object (queues are cluster-scoped; vcctl uses default).");
  f.AddBool("wait", &o->wait, "Wait until the queue controller has changed the queue's state.");
  f.AddDuration("timeout", &o->timeout, "How long --wait waits.");
}

int QueueOperate(Context& ctx, const std::vector<std::string>& args, const OperateFlags& o,
                 const std::string& verb, std::string_view action, const std::string& want) {
  if (int rc = ExpectArgs(ctx, "queue " + verb, args, {"NAME (the queue to " + verb + ")"});
      rc != kExitOk)
    return rc;
  TEPHRA_CLI_ASSIGN(auto client, ctx.Client());
  StatusOr<std::string> name = IssueQueueCommand(*client, o.command_namespace, args[0], action);
  if (!name.ok()) return Fail(ctx, name.status());
  ctx.out() << "queue.scheduling.volcano.sh/" << args[0] << ": " << action << " requested (command "
            << o.command_namespace << "/" << *name << ")\n";
  if (o.wait) {
    Status s = WaitForState(*client, args[0], want, o.timeout);
    if (!s.ok()) return Fail(ctx, s);
    ctx.out() << "queue.scheduling.volcano.sh/" << args[0] << " is " << want << "\n";
  }
  return kExitOk;
}

int QueueCreate(Context& ctx, const std::vector<std::string>& args, const CreateFlags& f,
                const OperateFlags& o) {
  if (int rc = ExpectArgs(ctx, "queue create", args, {"NAME (the queue to create)"}); rc != kExitOk)
    return rc;
  if (f.state != "Open" && f.state != "Closed") {
    return UsageError(ctx, "--state: must be Open or Closed; got \"" + f.state + "\"");
  }
  if (f.weight < 1 || f.weight > 65535)
    return UsageError(ctx, "--weight: must be between 1 and 65535");
  if (f.priority < 0) return UsageError(ctx, "--priority: must not be negative");
  TEPHRA_CLI_ASSIGN(api::ResourceList capability, ParseResourceList("capability", f.capability));
  TEPHRA_CLI_ASSIGN(api::ResourceList deserved, ParseResourceList("deserved", f.deserved));
  TEPHRA_CLI_ASSIGN(api::ResourceList guarantee, ParseResourceList("guarantee", f.guarantee));
  api::Queue q;
  q.api_version = std::string(api::kSchedulingApiVersion);
  q.kind = std::string(api::kQueueKind);
  q.metadata.name = args[0];
  for (const auto& l : f.labels) {
    size_t eq = l.find('=');
    if (eq == std::string::npos || eq == 0)
      return UsageError(ctx, "--label: \"" + l + "\" is not KEY=VALUE");
    q.metadata.labels[l.substr(0, eq)] = l.substr(eq + 1);
  }
  TEPHRA_CLI_ASSIGN(auto client, ctx.Client());
  q.spec.weight = f.weight;
  q.spec.capability = capability;
  q.spec.deserved = deserved;
  if (!guarantee.empty()) q.spec.guarantee = guarantee;
  q.spec.parent = f.parent;
  q.spec.priority = f.priority;
  if (ctx.IsSet({"reclaimable"})) q.spec.reclaimable = f.reclaimable;
  if (Status s = CreateQueue(*client, q); !s.ok()) return Fail(ctx, s);
  ctx.out() << "queue.scheduling.volcano.sh/" << q.metadata.name << " created\n";
  if (f.state == "Closed") {
    return QueueOperate(ctx, args, o, "close", api::job_action::kCloseQueue, "Closed");
  }
  return kExitOk;
}

int QueueDelete(Context& ctx, const std::vector<std::string>& args) {
  if (int rc = ExpectArgs(ctx, "queue delete", args, {"NAME (the queue to delete)"}); rc != kExitOk)
    return rc;
  TEPHRA_CLI_ASSIGN(auto client, ctx.Client());
  Status s = DeleteQueue(*client, args[0]);
  if (!s.ok())
    return Fail(ctx,
                s.code() == StatusCode::kFailedPrecondition ? s : Describe(s, "queue " + args[0]));
  ctx.out() << "queue.scheduling.volcano.sh/" << args[0] << " deleted\n";
  return kExitOk;
}

}  // namespace

std::vector<Command> QueueCommands() {
  std::vector<Command> out;
  out.push_back(
      {"queue", "list", "", "List queues with their PodGroups by phase.", "", nullptr, QueueList});
  out.push_back({"queue", "get", "NAME", "Show one queue (-o yaml|json for the whole object).", "",
                 nullptr, QueueGet});
  auto create = std::make_shared<CreateFlags>();
  auto create_op = std::make_shared<OperateFlags>();
  out.push_back(
      {"queue", "create", "NAME", "Create a queue.",
       "The queue is defaulted and validated with the admission webhook's rules first.",
       [create, create_op](base::FlagSet& f) {
         f.AddInt("weight", &create->weight, "Share of the cluster relative to other queues.");
         f.AddShorthand("w", "weight");
         f.AddString("capability", &create->capability,
                     "Hard limit, NAME=QUANTITY,... (e.g. cpu=64).");
         f.AddString("deserved", &create->deserved,
                     "Entitlement for the capacity plugin, NAME=QUANTITY,...");
         f.AddString("guarantee", &create->guarantee, "Reserved resources, NAME=QUANTITY,...");
         f.AddString("parent", &create->parent, "Parent queue (hierarchical queues).");
         f.AddInt("priority", &create->priority, "Queue priority (higher first).");
         f.AddBool("reclaimable", &create->reclaimable,
                   "Whether other queues may reclaim from it.");
         f.AddString("state", &create->state, "Open or Closed.");
         f.AddShorthand("S", "state");
         f.AddStringList("label", &create->labels, "A label KEY=VALUE for the queue (repeatable).");
         f.AddStringList("l", &create->labels, "Short for --label.");
         AddOperateFlags(f, create_op.get());
       },
       [create, create_op](Context& ctx, const std::vector<std::string>& a) {
         return QueueCreate(ctx, a, *create, *create_op);
       }});
  auto open = std::make_shared<OperateFlags>();
  out.push_back({"queue", "open", "NAME", "Open a queue (Command OpenQueue).", "",
                 [open](base::FlagSet& f) { AddOperateFlags(f, open.get()); },
                 [open](Context& ctx, const std::vector<std::string>& a) {
                   return QueueOperate(ctx, a, *open, "open", api::job_action::kOpenQueue, "Open");
                 }});
  auto close = std::make_shared<OperateFlags>();
  out.push_back(
      {"queue", "close", "NAME", "Close a queue: it admits no new jobs (Command CloseQueue).",
       "Running jobs keep running; the queue is Closing until its last PodGroup is gone.",
       [close](base::FlagSet& f) { AddOperateFlags(f, close.get()); },
       [close](Context& ctx, const std::vector<std::string>& a) {
         return QueueOperate(ctx, a, *close, "close", api::job_action::kCloseQueue, "Closed");
       }});
  out.push_back({"queue", "delete", "NAME",
                 "Delete a queue (not root, default or a queue with children).", "", nullptr,
                 QueueDelete});
  return out;
}

}  // namespace tephra::cli
