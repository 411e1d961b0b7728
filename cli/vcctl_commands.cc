// vcctl mode: Volcano vcctl's commands, flags, messages and exit codes (docs/compatibility.md §6).
// The work itself (building and validating jobs and queues, Commands) is tephractl's own.
#include <algorithm>
#include <cctype>
#include <iostream>

#include "api/kinds.h"
#include "api/labels.h"
#include "cli/cli.h"
#include "cli/common.h"
#include "cli/job_spec.h"
#include "cli/vcctl.h"
#include "json/json.h"

namespace tephra::cli {
namespace {

// vcctl exits with -1 (255) when an operation fails, 2 when cobra refuses the command line.
constexpr int kVcctlFailed = 255;
constexpr int kVcctlUsage = 2;

// vcctl's only flag without a value (besides --help).
bool VcctlTakesNoValue(const std::string& arg) {
  return arg == "--all-namespaces" || arg == "-h" || arg == "--help";
}

// What every vcctl command takes: where the cluster is.
struct Connection {
  std::string master;
  std::string scheduler;  // vcctl's common --scheduler: accepted, unused outside run and list
};

void AddConnectionFlags(base::FlagSet& f, Context& ctx, Connection* c, bool queue) {
  f.AddString("kubeconfig", &ctx.options().kubeconfig,
              "Path to the kubeconfig file (default $KUBECONFIG or ~/.kube/config).");
  if (queue) f.AddShorthand("k", "kubeconfig");
  f.AddString("master", &c->master, "The API server address (only through --kubeconfig here).");
  f.AddShorthand("s", "master");
}

// vcctl reports a failed operation on stdout as "Failed to <group> <verb>: <error>".
int Failed(Context& ctx, const std::string& command, const Status& s) {
  ctx.out() << "Failed to " << command << ": " << s.message() << "\n";
  return kVcctlFailed;
}

// The API server's refusal in client-go's words: `jobs.batch.volcano.sh "x" not found`.
Status ApiWords(const Status& s, const kube::Resource& r, const std::string& name) {
  const std::string object =
      r.plural + (r.group.empty() ? "" : "." + r.group) + " \"" + name + "\"";
  if (s.code() == StatusCode::kNotFound) return Status(s.code(), object + " not found");
  if (s.code() == StatusCode::kAlreadyExists) return Status(s.code(), object + " already exists");
  return s;
}

// The arguments of one vcctl command, registered on its FlagSet.
struct VcctlArgs {
  Connection connection;
  std::string name;
  std::string queue;
  std::string scheduler;
  std::string selector;
  std::string job;
  bool all_namespaces = false;
  JobRunOptions run;
  int weight = 0;
  std::string state = "Open";
  std::string action;
  std::string capability;
};

void AddNamespaceFlag(base::FlagSet& f, Context& ctx) {
  ctx.options().namespace_ = "default";  // vcctl's default, whatever the kubeconfig says
  f.AddString("namespace", &ctx.options().namespace_, "The namespace (default default).");
  f.AddShorthand("n", "namespace");
}

void AddJobNameFlag(base::FlagSet& f, VcctlArgs* a) {
  f.AddString("name", &a->name, "The name of the job.");
  f.AddShorthand("N", "name");
}

void AddQueueNameFlag(base::FlagSet& f, VcctlArgs* a) {
  f.AddString("name", &a->name, "The name of the queue.");
  f.AddShorthand("n", "name");
}

// The name from -N/-n, or (a Tephra convenience vcctl lacks) the first argument.
std::string NameOf(const VcctlArgs& a, const std::vector<std::string>& positional) {
  if (!a.name.empty() || positional.empty()) return a.name;
  return positional[0];
}

// In a vcctl command function with Context `ctx` and command words `cmd`: declares lhs from a
// StatusOr, or reports the error as vcctl does and returns.
#define VCCTL_ASSIGN(lhs, expr) VCCTL_ASSIGN_IMPL(TEPHRA_STATUS_CONCAT(vcctl_, __LINE__), lhs, expr)
#define VCCTL_ASSIGN_IMPL(tmp, lhs, expr)               \
  auto tmp = (expr);                                    \
  if (!tmp.ok()) return Failed(ctx, cmd, tmp.status()); \
  lhs = std::move(tmp).value()

// ---- job ----

int JobRun(Context& ctx, VcctlArgs& a) {
  const std::string cmd = "job run";
  JobRunOptions& f = a.run;
  if (f.name.empty() && f.file.empty())
    return Failed(ctx, cmd, InvalidArgument("job name cannot be left blank"));
  if (!f.file.empty() && f.file.find(".yaml") == std::string::npos &&
      f.file.find(".yml") == std::string::npos)
    return Failed(ctx, cmd, InvalidArgument("only support yaml file"));
  const std::string ns = ctx.Namespace();
  if (!f.file.empty()) {
    f.name.clear();  // vcctl takes the manifest as it is
  } else {
    f.template_labels["job.volcano.sh"] = f.name;
  }
  VCCTL_ASSIGN(std::shared_ptr<api::Job> job,
               f.file.empty() ? JobFromFlags(f, ns) : JobFromFile(f, ns));
  VCCTL_ASSIGN(auto client, ctx.Client());
  Status created = CreateJob(*client, *job, f.scheduler);
  if (!created.ok()) return Failed(ctx, cmd, ApiWords(created, api::kJobs, job->metadata.name));
  ctx.out() << "run job " << job->metadata.name << " successfully\n";
  return kExitOk;
}

int JobList(Context& ctx, const VcctlArgs& a) {
  const std::string cmd = "job list";
  VCCTL_ASSIGN(auto client, ctx.Client());
  std::vector<std::shared_ptr<api::Job>> jobs;
  StatusOr<std::string> listed = client->ListAll(
      api::kJobs, a.all_namespaces ? "" : ctx.Namespace(), {}, [&](const json::Value& v) {
        StatusOr<std::shared_ptr<api::Job>> job = api::DecodeJob(v);
        if (!job.ok()) return job.status();
        const api::Job& j = **job;
        // vcctl's filters: exact queue and scheduler, --selector a substring of the name.
        if (!a.queue.empty() && j.spec.queue != a.queue) return Status::Ok();
        if (!a.scheduler.empty() && j.spec.scheduler_name != a.scheduler) return Status::Ok();
        if (j.metadata.name.find(a.selector) == std::string::npos) return Status::Ok();
        jobs.push_back(*job);
        return Status::Ok();
      });
  if (!listed.ok()) return Failed(ctx, cmd, listed.status());
  if (jobs.empty()) {
    ctx.out() << "No resources found\n";
    return kExitOk;
  }
  ctx.out() << VcctlJobList(jobs, a.all_namespaces);
  return kExitOk;
}

// The events of a job, as vcctl's view shows them.
std::vector<VcctlEvent> JobEvents(kube::Client& client, const api::Job& job, base::Time now) {
  std::vector<VcctlEvent> events;
  kube::ListOptions lo;
  lo.field_selector = "involvedObject.kind=Job,involvedObject.name=" + job.metadata.name;
  (void)client.ListAll(
      kube::resources::kEvents, job.metadata.namespace_, lo, [&](const json::Value& v) {
        json::Errors errors;
        json::Reader r(&v, &errors);
        std::optional<base::Time> first = kube::DecodeTime(r["firstTimestamp"]);
        std::optional<base::Time> last = kube::DecodeTime(r["lastTimestamp"]);
        auto since = [&](const std::optional<base::Time>& t) {
          return t ? VcctlDuration(*t, now) : std::string("<unknown>");
        };
        int64_t count = r["count"].Int(1);
        VcctlEvent e;
        e.type = r["type"].String();
        e.reason = r["reason"].String();
        e.age = count > 1
                    ? since(last) + " (x" + std::to_string(count) + " over " + since(first) + ")"
                    : since(first);
        e.source = r["source"]["component"].String();
        if (!r["source"]["host"].String().empty()) e.source += ", " + r["source"]["host"].String();
        e.message = r["message"].String();
        while (!e.message.empty() && std::isspace(static_cast<unsigned char>(e.message.back())))
          e.message.pop_back();
        events.push_back(std::move(e));
        return Status::Ok();
      });
  return events;
}

int JobView(Context& ctx, const VcctlArgs& a, const std::vector<std::string>& positional) {
  const std::string cmd = "job view";
  const std::string name = NameOf(a, positional);
  if (name.empty()) {
    return Failed(ctx, cmd,
                  InvalidArgument("job name (specified by --name or -N) is mandatory to view a "
                                  "particular job"));
  }
  VCCTL_ASSIGN(auto client, ctx.Client());
  StatusOr<std::string> text = client->Get(api::kJobs, ctx.Namespace(), name);
  if (!text.ok()) return Failed(ctx, cmd, ApiWords(text.status(), api::kJobs, name));
  VCCTL_ASSIGN(std::shared_ptr<api::Job> job, api::DecodeJob(*text));
  ctx.out() << VcctlJobView(*job, JobEvents(*client, *job, base::Clock::now()));
  return kExitOk;
}

int JobAct(Context& ctx, const VcctlArgs& a, const std::vector<std::string>& positional,
           const std::string& verb, std::string_view action) {
  const std::string cmd = "job " + verb;
  const std::string name = NameOf(a, positional);
  if (name.empty()) {
    return Failed(ctx, cmd,
                  InvalidArgument("job name is mandatory to " + verb + " a particular job"));
  }
  VCCTL_ASSIGN(auto client, ctx.Client());
  if (action.empty()) {
    Status s = DeleteJob(*client, ctx.Namespace(), name);
    if (!s.ok()) return Failed(ctx, cmd, ApiWords(s, api::kJobs, name));
    ctx.out() << "delete job " << name << " successfully\n";
    return kExitOk;
  }
  StatusOr<std::string> issued = IssueJobCommand(*client, ctx.Namespace(), name, action);
  if (!issued.ok()) return Failed(ctx, cmd, ApiWords(issued.status(), api::kJobs, name));
  return kExitOk;  // vcctl says nothing when the Command is created
}

// ---- queue ----

int QueueCreate(Context& ctx, const VcctlArgs& a) {
  const std::string cmd = "queue create";
  if (a.state != "Open" && a.state != "Closed")
    return Failed(ctx, cmd,
                  InvalidArgument("--state: must be Open or Closed; got \"" + a.state + "\""));
  VCCTL_ASSIGN(api::ResourceList capability, ParseResourceList("capability", a.capability));
  api::Queue q;
  q.api_version = std::string(api::kSchedulingApiVersion);
  q.kind = std::string(api::kQueueKind);
  q.metadata.name = a.name;
  q.spec.weight = a.weight;
  q.spec.capability = capability;
  VCCTL_ASSIGN(auto client, ctx.Client());
  Status s = CreateQueue(*client, q);
  if (!s.ok()) return Failed(ctx, cmd, ApiWords(s, api::kQueues, a.name));
  // vcctl sends the state in the object, which the API server drops (status is a subresource);
  // Tephra closes the queue the way `queue operate -a close` does.
  if (a.state == "Closed") {
    StatusOr<std::string> closed =
        IssueQueueCommand(*client, "default", a.name, api::job_action::kCloseQueue);
    if (!closed.ok()) return Failed(ctx, cmd, closed.status());
  }
  return kExitOk;
}

int QueueDelete(Context& ctx, const VcctlArgs& a, const std::vector<std::string>& positional) {
  const std::string cmd = "queue delete";
  const std::string name = NameOf(a, positional);
  if (name.empty()) return Failed(ctx, cmd, InvalidArgument("queue name must be specified"));
  VCCTL_ASSIGN(auto client, ctx.Client());
  Status s = DeleteQueue(*client, name);
  if (!s.ok()) return Failed(ctx, cmd, ApiWords(s, api::kQueues, name));
  return kExitOk;
}

int QueueOperate(Context& ctx, const VcctlArgs& a, const std::vector<std::string>& positional) {
  const std::string cmd = "queue operate";
  const std::string name = NameOf(a, positional);
  if (name.empty()) return Failed(ctx, cmd, InvalidArgument("queue name must be specified"));
  std::string_view action;
  if (a.action == "open") {
    action = api::job_action::kOpenQueue;
  } else if (a.action == "close") {
    action = api::job_action::kCloseQueue;
  } else if (a.action == "update") {
    if (a.weight <= 0) {
      return Failed(
          ctx, cmd,
          InvalidArgument("when update queue " + name +
                          ", weight must be specified, the value must be greater than 0"));
    }
  } else if (a.action.empty()) {
    return Failed(ctx, cmd, InvalidArgument("action can not be null"));
  } else {
    return Failed(ctx, cmd,
                  InvalidArgument("action " + a.action +
                                  " invalid, valid actions are open, close and update"));
  }
  VCCTL_ASSIGN(auto client, ctx.Client());
  if (action.empty()) {
    StatusOr<std::string> patched =
        client->Patch(api::kQueues, "", name, kube::PatchType::kMerge,
                      "{\"spec\":{\"weight\":" + std::to_string(a.weight) + "}}");
    if (!patched.ok()) return Failed(ctx, cmd, ApiWords(patched.status(), api::kQueues, name));
    return kExitOk;
  }
  // vcctl puts queue Commands in the default namespace.
  StatusOr<std::string> issued = IssueQueueCommand(*client, "default", name, action);
  if (!issued.ok()) return Failed(ctx, cmd, issued.status());
  return kExitOk;
}

int QueueList(Context& ctx, const VcctlArgs& a, const std::vector<std::string>& positional,
              bool one) {
  const std::string cmd = one ? "queue get" : "queue list";
  const std::string name = NameOf(a, positional);
  if (one && name.empty()) {
    return Failed(ctx, cmd,
                  InvalidArgument("name is mandatory to get the particular queue details"));
  }
  VCCTL_ASSIGN(auto client, ctx.Client());
  std::vector<std::shared_ptr<api::Queue>> queues;
  if (one) {
    StatusOr<std::string> text = client->Get(api::kQueues, "", name);
    if (!text.ok()) return Failed(ctx, cmd, ApiWords(text.status(), api::kQueues, name));
    VCCTL_ASSIGN(std::shared_ptr<api::Queue> q, api::DecodeQueue(*text));
    queues.push_back(std::move(q));
  } else {
    StatusOr<std::string> listed = client->ListAll(api::kQueues, "", {}, [&](const json::Value& v) {
      StatusOr<std::shared_ptr<api::Queue>> q = api::DecodeQueue(v);
      if (!q.ok()) return q.status();
      queues.push_back(*q);
      return Status::Ok();
    });
    if (!listed.ok()) return Failed(ctx, cmd, listed.status());
    if (queues.empty()) {
      ctx.out() << "No resources found\n";
      return kExitOk;
    }
  }
  StatusOr<PhaseCounts> counts = CountPodGroups(*client);
  if (!counts.ok())
    return Failed(ctx, cmd, counts.status().WithContext("failed to list podgroups with err"));
  ctx.out() << VcctlQueueList(queues, *counts);
  return kExitOk;
}

// ---- pod ----

int PodList(Context& ctx, const VcctlArgs& a) {
  const std::string cmd = "pod list";
  VCCTL_ASSIGN(auto client, ctx.Client());
  // Pods of Volcano jobs (of one job with --job); with --queue alone, also other pods whose
  // PodGroup annotation names the queue.
  kube::ListOptions lo;
  const bool by_queue_only = a.job.empty() && !a.queue.empty();
  if (!a.job.empty()) {
    lo.label_selector = std::string(api::kJobNameKey) + "=" + a.job;
  } else if (!by_queue_only) {
    lo.label_selector = std::string(api::kJobNameKey);
  }
  std::vector<std::shared_ptr<api::Pod>> pods;
  bool other_queue = false;
  StatusOr<std::string> listed = client->ListAll(
      kube::resources::kPods, a.all_namespaces ? "" : ctx.Namespace(), lo,
      [&](const json::Value& v) {
        StatusOr<std::shared_ptr<api::Pod>> pod = api::DecodePod(v);
        if (!pod.ok()) return pod.status();
        const kube::ObjectMeta& m = (*pod)->metadata;
        std::string label_queue = m.Label(api::kQueueNameKey);
        if (!a.job.empty() && !a.queue.empty() && !label_queue.empty() && label_queue != a.queue)
          other_queue = true;
        if (by_queue_only && label_queue != a.queue &&
            m.Annotation(api::kSchedulingQueueNameAnnotation) != a.queue)
          return Status::Ok();
        pods.push_back(*pod);
        return Status::Ok();
      });
  if (!listed.ok()) return Failed(ctx, cmd, listed.status());
  if (other_queue) {
    return Failed(
        ctx, cmd,
        InvalidArgument("the input vcjob " + a.job + " does not match the queue " + a.queue));
  }
  if (pods.empty()) {
    ctx.out() << "No resources found\n";
    return kExitOk;
  }
  ctx.out() << VcctlPodList(pods, base::Clock::now());
  return kExitOk;
}

int Version(Context& ctx) {
  ctx.out() << "API Version: " << api::kBatchApiVersion.substr(api::kBatchApiVersion.find('/') + 1)
            << "\nVersion: " << TEPHRA_VERSION << " (tephra)\n";
  return kExitOk;
}

// Every vcctl command, with its flags bound to `a` and the context's options.
std::vector<Command> VcctlCommands(Context& ctx, VcctlArgs& a) {
  using Args = const std::vector<std::string>&;
  // A command of `group` with the flags every vcctl command of the group takes: queue commands
  // have no namespace (their -n is the queue's name) and also take -k for --kubeconfig.
  auto in_group = [&](const std::string& group) {
    return [&ctx, &a, group](const char* verb, const char* summary,
                             std::function<void(base::FlagSet&)> flags,
                             std::function<int(Context&, Args)> run) {
      const bool queue = group == "queue";
      return Command{group,
                     verb,
                     "",
                     summary,
                     "",
                     [&ctx, &a, flags, queue](base::FlagSet& f) {
                       AddConnectionFlags(f, ctx, &a.connection, queue);
                       if (!queue) AddNamespaceFlag(f, ctx);
                       if (flags) flags(f);
                     },
                     std::move(run)};
    };
  };
  auto job = in_group("job");
  auto queue = in_group("queue");
  auto named_job = [&](base::FlagSet& f) { AddJobNameFlag(f, &a); };
  auto named_queue = [&](base::FlagSet& f) { AddQueueNameFlag(f, &a); };
  std::vector<Command> out;
  out.push_back(job(
      "run", "run job by parameters from the command line",
      [&a](base::FlagSet& f) {
        JobRunOptions& r = a.run;
        r.scheduler = "volcano";
        r.limits = "cpu=1000m,memory=100Mi";
        f.AddString("name", &r.name, "The name of the job.");
        f.AddShorthand("N", "name");
        f.AddString("image", &r.image, "The container image of the job.");
        f.AddShorthand("i", "image");
        f.AddInt("min", &r.min, "The minimal available tasks of the job.");
        f.AddShorthand("m", "min");
        f.AddInt("replicas", &r.replicas, "The total tasks of the job.");
        f.AddShorthand("r", "replicas");
        f.AddString("requests", &r.requests, "The resource request of the task.");
        f.AddShorthand("R", "requests");
        f.AddString("limits", &r.limits, "The resource limit of the task.");
        f.AddShorthand("L", "limits");
        f.AddString("scheduler", &r.scheduler, "The scheduler for this job.");
        f.AddShorthand("S", "scheduler");
        f.AddString("filename", &r.file, "The yaml file of the job.");
        f.AddShorthand("f", "filename");
      },
      [&a](Context& c, Args) { return JobRun(c, a); }));
  out.push_back(job(
      "list", "list job information",
      [&a](base::FlagSet& f) {
        f.AddString("queue", &a.queue, "List jobs in this queue.");
        f.AddShorthand("q", "queue");
        f.AddString("scheduler", &a.scheduler, "List jobs with this scheduler name.");
        f.AddShorthand("S", "scheduler");
        f.AddBool("all-namespaces", &a.all_namespaces, "List jobs in all namespaces.");
        f.AddString("selector", &a.selector, "Only jobs whose name contains this.");
      },
      [&a](Context& c, Args) { return JobList(c, a); }));
  out.push_back(job("view", "show job information", named_job,
                    [&a](Context& c, Args p) { return JobView(c, a, p); }));
  out.push_back(job("suspend", "abort a job", named_job, [&a](Context& c, Args p) {
    return JobAct(c, a, p, "suspend", api::job_action::kAbortJob);
  }));
  out.push_back(job("resume", "resume a job", named_job, [&a](Context& c, Args p) {
    return JobAct(c, a, p, "resume", api::job_action::kResumeJob);
  }));
  out.push_back(job("delete", "delete a job", named_job,
                    [&a](Context& c, Args p) { return JobAct(c, a, p, "delete", ""); }));
  out.push_back(queue(
      "create", "creates queue",
      [&a](base::FlagSet& f) {
        a.name = "test";  // vcctl's default queue name
        a.weight = 1;
        AddQueueNameFlag(f, &a);
        f.AddInt("weight", &a.weight, "The weight of the queue.");
        f.AddShorthand("w", "weight");
        f.AddString("state", &a.state, "The state of the queue: Open or Closed.");
        f.AddShorthand("S", "state");
        f.AddString("capability", &a.capability,
                    "Hard limit, NAME=QUANTITY,... (a Tephra addition).");
      },
      [&a](Context& c, Args) { return QueueCreate(c, a); }));
  out.push_back(queue("delete", "delete queue", named_queue,
                      [&a](Context& c, Args p) { return QueueDelete(c, a, p); }));
  out.push_back(queue(
      "operate", "operate queue",
      [&a](base::FlagSet& f) {
        AddQueueNameFlag(f, &a);
        f.AddInt("weight", &a.weight, "The weight of the queue (action update).");
        f.AddShorthand("w", "weight");
        f.AddString("action", &a.action, "open, close or update.");
        f.AddShorthand("a", "action");
      },
      [&a](Context& c, Args p) { return QueueOperate(c, a, p); }));
  out.push_back(queue("list", "lists all the queue", nullptr,
                      [&a](Context& c, Args p) { return QueueList(c, a, p, false); }));
  out.push_back(queue("get", "get a queue", named_queue,
                      [&a](Context& c, Args p) { return QueueList(c, a, p, true); }));
  out.push_back(in_group("pod")(
      "list", "list pod information created by vcjob",
      [&a](base::FlagSet& f) {
        f.AddString("queue", &a.queue, "List pods of this queue.");
        f.AddShorthand("q", "queue");
        f.AddString("job", &a.job, "List pods of this job.");
        f.AddShorthand("j", "job");
        f.AddBool("all-namespaces", &a.all_namespaces, "List pods in all namespaces.");
      },
      [&a](Context& c, Args) { return PodList(c, a); }));
  out.push_back(Command{"", "version", "", "Print the version information", "", nullptr,
                        [](Context& c, Args) { return Version(c); }});
  return out;
}

// cobra's refusal of a command line: on stderr, and vcctl's own line on stdout; exit 2.
int Refuse(std::ostream& out, std::ostream& err, const std::string& message) {
  err << "Error: " << message << "\n";
  out << "Failed to execute command: " << message << "\n";
  return kVcctlUsage;
}

std::string Help(const std::vector<Command>& commands, const std::string& group) {
  std::string text = group.empty()
                         ? "Usage:\n  vcctl [command]\n\nAvailable Commands:\n"
                         : "Usage:\n  vcctl " + group + " [command]\n\nAvailable Commands:\n";
  for (const auto& c : commands) {
    if (!group.empty() && c.group != group) continue;
    std::string word = group.empty() ? (c.group.empty() ? c.verb : c.group) : c.verb;
    if (text.find("\n  " + word + " ") != std::string::npos) continue;
    std::string summary = group.empty() && !c.group.empty() ? c.group + " operations" : c.summary;
    text +=
        "  " + word + std::string(word.size() < 12 ? 12 - word.size() : 1, ' ') + summary + "\n";
  }
  return text;
}

}  // namespace

bool IsVcctlInvocation(const std::string& program, std::vector<std::string>* args) {
  if (!args->empty() && (*args)[0] == "--vcctl") {
    args->erase(args->begin());
    return true;
  }
  return program == "vcctl";
}

int RunVcctl(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  Context ctx("vcctl", out, err);
  VcctlArgs a;
  std::vector<Command> commands = VcctlCommands(ctx, a);
  std::vector<size_t> words = CommandWords(args, VcctlTakesNoValue);
  size_t consumed = 0;
  const Command* command = FindCommand(commands, args, words, &consumed);
  const bool help = std::find(args.begin(), args.end(), "--help") != args.end() ||
                    std::find(args.begin(), args.end(), "-h") != args.end();
  if (command == nullptr) {
    const std::string group = words.empty() ? "" : args[words[0]];
    const bool known_group = std::any_of(commands.begin(), commands.end(),
                                         [&](const Command& c) { return c.group == group; });
    if (words.size() > 1 && known_group)
      return Refuse(out, err,
                    "unknown command \"" + args[words[1]] + "\" for \"vcctl " + group + "\"");
    if (!group.empty() && !known_group)
      return Refuse(out, err, "unknown command \"" + group + "\" for \"vcctl\"");
    // `vcctl` or `vcctl job` alone prints the help, as cobra does.
    out << Help(commands, group);
    return kExitOk;
  }
  const std::string words_text =
      command->group.empty() ? command->verb : command->group + " " + command->verb;
  base::FlagSet flags("vcctl " + words_text, command->summary);
  if (command->flags) command->flags(flags);
  Status parsed = flags.Parse(WithoutWords(args, words, consumed));
  if (!parsed.ok()) return Refuse(out, err, parsed.message());
  if (help || flags.HelpRequested()) {
    out << flags.Usage();
    return kExitOk;
  }
  if (!a.connection.master.empty()) {
    return Refuse(out, err, "--master: not supported; give the API server through --kubeconfig");
  }
  ctx.set_flags(&flags);
  return command->run(ctx, flags.positional());
}

}  // namespace tephra::cli
