// tephractl job list|get|run|suspend|resume|delete and pod list.
#include <algorithm>
#include <fstream>
#include <iostream>
#include <sstream>

#include "api/batch.h"
#include "api/defaulting.h"
#include "api/kinds.h"
#include "api/labels.h"
#include "api/scheduling.h"
#include "api/validation.h"
#include "cli/cli.h"
#include "cli/common.h"
#include "cli/job_spec.h"
#include "json/json.h"

namespace tephra::cli {
namespace {

std::string Count(int32_t n) {
  return std::to_string(n);
}

std::vector<std::string> JobRow(const api::Job& job, bool with_namespace, base::Time now) {
  std::vector<std::string> row;
  if (with_namespace) row.push_back(job.metadata.namespace_);
  std::string phase = job.status.state.phase.empty() ? "Pending" : job.status.state.phase;
  row.push_back(job.metadata.name);
  row.push_back(job.spec.queue.empty() ? "default" : job.spec.queue);
  row.push_back(phase);
  row.push_back(Count(job.spec.min_available));
  row.push_back(Count(job.TotalReplicas()));
  row.push_back(Count(job.status.pending));
  row.push_back(Count(job.status.running));
  row.push_back(Count(job.status.succeeded));
  row.push_back(Count(job.status.failed));
  row.push_back(Count(job.status.retry_count));
  row.push_back(job.metadata.creation_timestamp ? Age(*job.metadata.creation_timestamp, now)
                                                : "<unknown>");
  return row;
}

Table JobTable(bool with_namespace) {
  std::vector<std::string> h{"NAME",    "QUEUE",     "PHASE",  "MIN",     "REPLICAS", "PENDING",
                             "RUNNING", "SUCCEEDED", "FAILED", "RETRIES", "AGE"};
  if (with_namespace) h.insert(h.begin(), "NAMESPACE");
  return Table(h);
}

struct ListFlags {
  std::string queue;
  std::string scheduler;
  std::string selector;
};

int JobList(Context& ctx, const std::vector<std::string>& args, const ListFlags& f) {
  if (int rc = ExpectArgs(ctx, "job list", args, {}); rc != kExitOk) return rc;
  TEPHRA_CLI_ASSIGN(auto client, ctx.Client());
  OutputFormat format = *ctx.Output();
  kube::ListOptions lo;
  lo.label_selector = f.selector;
  std::vector<std::string> raw;
  Table table = JobTable(ctx.options().all_namespaces);
  const base::Time now = base::Clock::now();
  std::vector<std::shared_ptr<api::Job>> jobs;
  StatusOr<std::string> listed =
      client->ListAll(api::kJobs, ctx.ListNamespace(), lo, [&](const json::Value& v) {
        StatusOr<std::shared_ptr<api::Job>> job = api::DecodeJob(v);
        if (!job.ok()) return job.status();
        std::string queue = (*job)->spec.queue.empty() ? "default" : (*job)->spec.queue;
        if (!f.queue.empty() && queue != f.queue) return Status::Ok();
        if (!f.scheduler.empty() && (*job)->spec.scheduler_name != f.scheduler) return Status::Ok();
        jobs.push_back(*job);
        raw.push_back(json::Write(v));
        return Status::Ok();
      });
  if (!listed.ok()) return Fail(ctx, Describe(listed.status(), "listing jobs"));
  if (format != OutputFormat::kTable) return PrintList(ctx, format, raw);
  for (const auto& job : jobs) table.Add(JobRow(*job, ctx.options().all_namespaces, now));
  return PrintTable(ctx, table,
                    "No jobs found" +
                        (ctx.options().all_namespaces ? "" : " in namespace " + ctx.Namespace()) +
                        ".");
}

int JobGet(Context& ctx, const std::vector<std::string>& args) {
  if (int rc = ExpectArgs(ctx, "job get", args, {"NAME (the job to show)"}); rc != kExitOk)
    return rc;
  TEPHRA_CLI_ASSIGN(auto client, ctx.Client());
  const std::string ns = ctx.Namespace();
  StatusOr<std::string> text = client->Get(api::kJobs, ns, args[0]);
  if (!text.ok()) return Fail(ctx, Describe(text.status(), "job " + ns + "/" + args[0]));
  OutputFormat format = *ctx.Output();
  if (format != OutputFormat::kTable) return PrintObject(ctx, format, *text);
  StatusOr<std::shared_ptr<api::Job>> job = api::DecodeJob(*text);
  if (!job.ok()) return Fail(ctx, job.status());
  Table table = JobTable(false);
  table.Add(JobRow(**job, false, base::Clock::now()));
  ctx.out() << table.Render();
  const api::JobState& st = (*job)->status.state;
  if (!st.reason.empty() || !st.message.empty()) {
    ctx.out() << "\nReason: " << st.reason << (st.message.empty() ? "" : ": " + st.message) << "\n";
  }
  return kExitOk;
}

int JobRun(Context& ctx, const std::vector<std::string>& args, JobRunOptions f,
           bool name_flag_set) {
  if (int rc = ExpectArgs(ctx, "job run", args, {"NAME (the job to create)"}, 1); rc != kExitOk)
    return rc;
  if (!args.empty()) {
    if (name_flag_set && f.name != args[0]) {
      return UsageError(ctx,
                        "job run: NAME \"" + args[0] + "\" and --name \"" + f.name + "\" disagree");
    }
    f.name = args[0];
  }
  if (f.name.empty() && f.file.empty())
    return UsageError(ctx, "job run: missing NAME (or --name, or --filename)");
  const std::string ns = ctx.Namespace();
  StatusOr<std::shared_ptr<api::Job>> built =
      f.file.empty() ? JobFromFlags(f, ns) : JobFromFile(f, ns);
  if (!built.ok()) return Fail(ctx, built.status());
  TEPHRA_CLI_ASSIGN(auto client, ctx.Client());
  Status created = CreateJob(*client, **built, f.scheduler);
  if (!created.ok()) return Fail(ctx, created);
  ctx.out() << "job.batch.volcano.sh/" << (*built)->metadata.name << " created\n";
  return kExitOk;
}

// NAME, or the job named by --name/-N (vcctl's way): the positional arguments with the flag's
// name in front, or a usage error when both are given and differ.
struct NameFlag {
  std::string name;
};

void AddNameFlag(base::FlagSet& f, NameFlag* n) {
  f.AddString("name", &n->name, "The job (instead of NAME, as vcctl's --name).");
  f.AddShorthand("N", "name");
}

int WithNameFlag(Context& ctx, const std::string& command, const NameFlag& n,
                 std::vector<std::string>* args) {
  if (n.name.empty()) return kExitOk;
  if (args->empty()) {
    args->push_back(n.name);
  } else if ((*args)[0] != n.name) {
    return UsageError(
        ctx, command + ": NAME \"" + (*args)[0] + "\" and --name \"" + n.name + "\" disagree");
  }
  return kExitOk;
}

// Registers the --name flag of a one-job command and runs `run` with the job's name in front.
Command NamedJobCommand(std::string verb, std::string summary,
                        std::function<int(Context&, const std::vector<std::string>&)> run) {
  auto name = std::make_shared<NameFlag>();
  const std::string command = "job " + verb;
  return {"job",
          std::move(verb),
          "NAME",
          std::move(summary),
          "",
          [name](base::FlagSet& f) { AddNameFlag(f, name.get()); },
          [name, command, run](Context& ctx, const std::vector<std::string>& a) {
            std::vector<std::string> args = a;
            if (int rc = WithNameFlag(ctx, command, *name, &args); rc != kExitOk) return rc;
            return run(ctx, args);
          }};
}

// vcctl job suspend/resume: a Command the job controller consumes (docs/compatibility.md §1.4).
int JobCommand(Context& ctx, const std::vector<std::string>& args, const std::string& verb,
               std::string_view action) {
  if (int rc = ExpectArgs(ctx, "job " + verb, args, {"NAME (the job to " + verb + ")"});
      rc != kExitOk)
    return rc;
  TEPHRA_CLI_ASSIGN(auto client, ctx.Client());
  const std::string ns = ctx.Namespace();
  StatusOr<std::string> name = IssueJobCommand(*client, ns, args[0], action);
  if (!name.ok()) return Fail(ctx, Describe(name.status(), "job " + ns + "/" + args[0]));
  ctx.out() << "job.batch.volcano.sh/" << args[0] << ": " << action << " requested (command "
            << *name << ")\n";
  return kExitOk;
}

int JobDelete(Context& ctx, const std::vector<std::string>& args) {
  if (int rc = ExpectArgs(ctx, "job delete", args, {"NAME (the job to delete)"}); rc != kExitOk)
    return rc;
  TEPHRA_CLI_ASSIGN(auto client, ctx.Client());
  const std::string ns = ctx.Namespace();
  Status s = DeleteJob(*client, ns, args[0]);
  if (!s.ok()) return Fail(ctx, Describe(s, "job " + ns + "/" + args[0]));
  ctx.out() << "job.batch.volcano.sh/" << args[0] << " deleted\n";
  return kExitOk;
}

struct PodFlags {
  std::string job;
  std::string queue;
};

int PodList(Context& ctx, const std::vector<std::string>& args, const PodFlags& f) {
  if (int rc = ExpectArgs(ctx, "pod list", args, {}); rc != kExitOk) return rc;
  TEPHRA_CLI_ASSIGN(auto client, ctx.Client());
  OutputFormat format = *ctx.Output();
  kube::ListOptions lo;
  lo.label_selector =
      f.job.empty() ? std::string(api::kJobNameKey) : std::string(api::kJobNameKey) + "=" + f.job;
  if (!f.queue.empty()) lo.label_selector += "," + std::string(api::kQueueNameKey) + "=" + f.queue;
  const bool all = ctx.options().all_namespaces;
  std::vector<std::string> h{"NAME", "READY", "STATUS", "RESTARTS", "NODE", "AGE"};
  if (all) h.insert(h.begin(), "NAMESPACE");
  Table table(h);
  std::vector<std::string> raw;
  const base::Time now = base::Clock::now();
  StatusOr<std::string> listed =
      client->ListAll(kube::resources::kPods, ctx.ListNamespace(), lo, [&](const json::Value& v) {
        raw.push_back(json::Write(v));
        StatusOr<std::shared_ptr<api::Pod>> pod = api::DecodePod(v);
        if (!pod.ok()) return pod.status();
        const api::Pod& p = **pod;
        int ready = 0;
        int restarts = 0;
        for (const auto& cs : p.status.container_statuses) {
          ready += cs.ready ? 1 : 0;
          restarts += cs.restart_count;
        }
        std::string status = p.status.phase.empty() ? "Pending" : p.status.phase;
        if (p.metadata.deletion_timestamp) status = "Terminating";
        std::vector<std::string> row;
        if (all) row.push_back(p.metadata.namespace_);
        row.push_back(p.metadata.name);
        row.push_back(std::to_string(ready) + "/" + std::to_string(p.spec.containers.size()));
        row.push_back(status);
        row.push_back(std::to_string(restarts));
        row.push_back(p.spec.node_name.empty() ? "<none>" : p.spec.node_name);
        row.push_back(p.metadata.creation_timestamp ? Age(*p.metadata.creation_timestamp, now)
                                                    : "<unknown>");
        table.Add(std::move(row));
        return Status::Ok();
      });
  if (!listed.ok()) return Fail(ctx, Describe(listed.status(), "listing pods"));
  if (format != OutputFormat::kTable) return PrintList(ctx, format, raw);
  return PrintTable(ctx, table, "No pods found" + (f.job.empty() ? "" : " for job " + f.job) + ".");
}

}  // namespace

std::vector<Command> JobCommands() {
  std::vector<Command> out;
  auto list = std::make_shared<ListFlags>();
  out.push_back(
      {"job", "list", "", "List Volcano jobs (-A for every namespace).", "",
       [list](base::FlagSet& f) {
         f.AddString("queue", &list->queue, "Only jobs in this queue.");
         f.AddShorthand("q", "queue");
         f.AddString("scheduler", &list->scheduler, "Only jobs with this schedulerName.");
         f.AddShorthand("S", "scheduler");
         f.AddString("selector", &list->selector, "Label selector, as kubectl's.");
         f.AddShorthand("l", "selector");
       },
       [list](Context& ctx, const std::vector<std::string>& a) { return JobList(ctx, a, *list); }});
  out.push_back(
      NamedJobCommand("get", "Show one job (-o yaml|json for the whole object).", JobGet));
  auto run = std::make_shared<JobRunOptions>();
  out.push_back(
      {"job", "run", "[NAME]", "Create a one-task job, or a job from a manifest (-f).",
       "Like vcctl job run: NAME (or --name) replicas of --image requesting --requests. The job "
       "is\n"
       "defaulted and validated with the admission webhook's rules before it is created.",
       [run](base::FlagSet& f) {
         f.AddString("name", &run->name, "Job name (or give NAME).");
         f.AddShorthand("N", "name");
         f.AddString("image", &run->image, "Container image.");
         f.AddShorthand("i", "image");
         f.AddInt("min", &run->min, "minAvailable: pods that must run together (gang size).");
         f.AddShorthand("m", "min");
         f.AddInt("replicas", &run->replicas, "Number of pods.");
         f.AddShorthand("r", "replicas");
         f.AddString("requests", &run->requests, "Requests per pod, NAME=QUANTITY,...");
         f.AddShorthand("R", "requests");
         f.AddString("limits", &run->limits, "Limits per pod, NAME=QUANTITY,...");
         f.AddShorthand("L", "limits");
         f.AddString("scheduler", &run->scheduler, "schedulerName of the job.");
         f.AddShorthand("S", "scheduler");
         f.AddString("queue", &run->queue, "Queue (default: the default queue).");
         f.AddShorthand("q", "queue");
         f.AddString("filename", &run->file, "A Job manifest (YAML or JSON; - for stdin).");
         f.AddShorthand("f", "filename");
         f.AddStringList("command", &run->command,
                         "Container command (repeatable: one argument each).");
       },
       [run](Context& ctx, const std::vector<std::string>& a) {
         return JobRun(ctx, a, *run, ctx.IsSet({"name", "N"}));
       }});
  out.push_back(NamedJobCommand(
      "suspend", "Abort a job: its pods are deleted, it can be resumed (Command AbortJob).",
      [](Context& ctx, const std::vector<std::string>& a) {
        return JobCommand(ctx, a, "suspend", api::job_action::kAbortJob);
      }));
  out.push_back(NamedJobCommand("resume", "Resume an aborted job (Command ResumeJob).",
                                [](Context& ctx, const std::vector<std::string>& a) {
                                  return JobCommand(ctx, a, "resume", api::job_action::kResumeJob);
                                }));
  out.push_back(NamedJobCommand("delete", "Delete a job and its pods.", JobDelete));
  auto pods = std::make_shared<PodFlags>();
  out.push_back(
      {"pod", "list", "", "List pods created by Volcano jobs.", "",
       [pods](base::FlagSet& f) {
         f.AddString("job", &pods->job, "Only pods of this job.");
         f.AddShorthand("j", "job");
         f.AddString("queue", &pods->queue, "Only pods of jobs in this queue.");
         f.AddShorthand("q", "queue");
       },
       [pods](Context& ctx, const std::vector<std::string>& a) { return PodList(ctx, a, *pods); }});
  return out;
}

}  // namespace tephra::cli
