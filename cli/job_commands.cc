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

struct RunFlags {
  std::string name;
  std::string image = "busybox";
  int min = 1;
  int replicas = 1;
  std::string requests = "cpu=1000m,memory=100Mi";
  std::string limits;
  std::string scheduler = std::string(api::kDefaultSchedulerName);
  std::string queue;
  std::string file;
  std::vector<std::string> command;
};

void WriteQuantities(json::Writer& w, std::string_view key, const api::ResourceList& list) {
  if (list.empty()) return;
  w.Key(key).StartObject();
  for (const auto& [name, q] : list) w.Field(name, q.String());
  w.EndObject();
}

// A one-task Job as vcctl's `job run` builds it.
StatusOr<std::shared_ptr<api::Job>> JobFromFlags(const RunFlags& f, const std::string& ns) {
  if (f.replicas < 1) return InvalidArgument("--replicas: must be at least 1");
  if (f.min < 1 || f.min > f.replicas) {
    return InvalidArgument("--min: must be between 1 and --replicas (" +
                           std::to_string(f.replicas) + ")");
  }
  if (f.image.empty()) return InvalidArgument("--image: must not be empty");
  TEPHRA_ASSIGN_OR_RETURN(api::ResourceList requests, ParseResourceList("requests", f.requests));
  TEPHRA_ASSIGN_OR_RETURN(api::ResourceList limits, ParseResourceList("limits", f.limits));
  json::Writer t;
  t.StartObject().Key("metadata").StartObject().Field("name", f.name).EndObject();
  t.Key("spec").StartObject().Key("containers").StartArray().StartObject();
  t.Field("name", f.name).Field("image", f.image).Field("imagePullPolicy", "IfNotPresent");
  if (!f.command.empty()) t.StringList("command", f.command);
  t.Key("resources").StartObject();
  WriteQuantities(t, "requests", requests);
  WriteQuantities(t, "limits", limits);
  t.EndObject().EndObject().EndArray().Field("restartPolicy", "Never").EndObject().EndObject();
  TEPHRA_ASSIGN_OR_RETURN(api::PodTemplate tmpl, api::ParsePodTemplate(t.str()));
  auto job = std::make_shared<api::Job>();
  job->api_version = std::string(api::kBatchApiVersion);
  job->kind = std::string(api::kJobKind);
  job->metadata.name = f.name;
  job->metadata.namespace_ = ns;
  job->spec.min_available = f.min;
  job->spec.scheduler_name = f.scheduler;
  job->spec.queue = f.queue;
  api::TaskSpec task;
  task.replicas = f.replicas;
  task.template_ = std::move(tmpl);
  job->spec.tasks.push_back(std::move(task));
  return job;
}

StatusOr<std::shared_ptr<api::Job>> JobFromFile(const RunFlags& f, const std::string& ns) {
  std::string text;
  if (f.file == "-") {
    std::stringstream ss;
    ss << std::cin.rdbuf();
    text = ss.str();
  } else {
    std::ifstream in(f.file);
    if (!in) return InvalidArgument("--filename: cannot read " + f.file);
    std::stringstream ss;
    ss << in.rdbuf();
    text = ss.str();
  }
  StatusOr<std::string> json = YamlToJson(text);
  if (!json.ok()) return InvalidArgument("--filename " + f.file + ": " + json.status().message());
  StatusOr<std::shared_ptr<api::Job>> job = api::DecodeJob(*json, api::DecodeOptions{true});
  if (!job.ok()) return InvalidArgument("--filename " + f.file + ": " + job.status().message());
  if ((*job)->kind != api::kJobKind || (*job)->api_version != api::kBatchApiVersion) {
    return InvalidArgument("--filename " + f.file + ": expected apiVersion " +
                           std::string(api::kBatchApiVersion) + " kind Job, got " +
                           (*job)->api_version + " " + (*job)->kind);
  }
  if (!f.name.empty()) (*job)->metadata.name = f.name;
  if (!f.queue.empty()) (*job)->spec.queue = f.queue;
  if ((*job)->metadata.name.empty())
    return InvalidArgument("--filename " + f.file + ": metadata.name: required");
  if (!(*job)->metadata.namespace_.empty() && (*job)->metadata.namespace_ != ns) {
    return InvalidArgument("--filename " + f.file + ": metadata.namespace " +
                           (*job)->metadata.namespace_ + " does not match the namespace " + ns +
                           " (from -n or the context)");
  }
  (*job)->metadata.namespace_ = ns;
  return job;
}

int JobRun(Context& ctx, const std::vector<std::string>& args, RunFlags f, bool name_flag_set) {
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
  api::Job& job = **built;
  api::JobDefaultingOptions defaults;
  defaults.scheduler_name = f.scheduler;
  api::ApplyJobDefaults(&job, defaults);
  // The same rules the admission webhook applies, so a bad job is refused here with the same
  // words even when no webhook runs.
  StatusOr<api::StaticQueueLookup> queues = ListQueues(*client);
  api::FieldErrors errors = api::ValidateJobCreate(job, queues.ok() ? &*queues : nullptr);
  if (!errors.empty()) {
    return Fail(ctx, Status(StatusCode::kFailedPrecondition,
                            "job " + ns + "/" + job.metadata.name +
                                " refused: " + api::FormatFieldErrors(errors)));
  }
  StatusOr<std::string> created = client->Create(api::kJobs, ns, api::EncodeJob(job));
  if (!created.ok())
    return Fail(ctx, Describe(created.status(), "creating job " + ns + "/" + job.metadata.name));
  ctx.out() << "job.batch.volcano.sh/" << job.metadata.name << " created\n";
  return kExitOk;
}

// vcctl job suspend/resume: a Command the job controller consumes (docs/compatibility.md §1.4).
int JobCommand(Context& ctx, const std::vector<std::string>& args, const std::string& verb,
               std::string_view action) {
  if (int rc = ExpectArgs(ctx, "job " + verb, args, {"NAME (the job to " + verb + ")"});
      rc != kExitOk)
    return rc;
  TEPHRA_CLI_ASSIGN(auto client, ctx.Client());
  const std::string ns = ctx.Namespace();
  StatusOr<std::string> text = client->Get(api::kJobs, ns, args[0]);
  if (!text.ok()) return Fail(ctx, Describe(text.status(), "job " + ns + "/" + args[0]));
  StatusOr<std::shared_ptr<api::Job>> job = api::DecodeJob(*text);
  if (!job.ok()) return Fail(ctx, job.status());
  StatusOr<std::string> name = IssueCommand(*client, ns, ObjectRef(**job), action);
  if (!name.ok())
    return Fail(ctx, Describe(name.status(), "creating the " + std::string(action) + " command"));
  ctx.out() << "job.batch.volcano.sh/" << args[0] << ": " << action << " requested (command "
            << *name << ")\n";
  return kExitOk;
}

int JobDelete(Context& ctx, const std::vector<std::string>& args) {
  if (int rc = ExpectArgs(ctx, "job delete", args, {"NAME (the job to delete)"}); rc != kExitOk)
    return rc;
  TEPHRA_CLI_ASSIGN(auto client, ctx.Client());
  const std::string ns = ctx.Namespace();
  kube::DeleteOptions d;
  d.propagation_policy = "Background";
  Status s = client->Delete(api::kJobs, ns, args[0], d);
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
         f.AddString("q", &list->queue, "Short for --queue.");
         f.AddString("scheduler", &list->scheduler, "Only jobs with this schedulerName.");
         f.AddString("S", &list->scheduler, "Short for --scheduler.");
         f.AddString("selector", &list->selector, "Label selector, as kubectl's.");
         f.AddString("l", &list->selector, "Short for --selector.");
       },
       [list](Context& ctx, const std::vector<std::string>& a) { return JobList(ctx, a, *list); }});
  out.push_back({"job", "get", "NAME", "Show one job (-o yaml|json for the whole object).", "",
                 nullptr, JobGet});
  auto run = std::make_shared<RunFlags>();
  out.push_back(
      {"job", "run", "[NAME]", "Create a one-task job, or a job from a manifest (-f).",
       "Like vcctl job run: NAME (or --name) replicas of --image requesting --requests. The job "
       "is\n"
       "defaulted and validated with the admission webhook's rules before it is created.",
       [run](base::FlagSet& f) {
         f.AddString("name", &run->name, "Job name (or give NAME).");
         f.AddString("N", &run->name, "Short for --name.");
         f.AddString("image", &run->image, "Container image.");
         f.AddString("i", &run->image, "Short for --image.");
         f.AddInt("min", &run->min, "minAvailable: pods that must run together (gang size).");
         f.AddInt("m", &run->min, "Short for --min.");
         f.AddInt("replicas", &run->replicas, "Number of pods.");
         f.AddInt("r", &run->replicas, "Short for --replicas.");
         f.AddString("requests", &run->requests, "Requests per pod, NAME=QUANTITY,...");
         f.AddString("R", &run->requests, "Short for --requests.");
         f.AddString("limits", &run->limits, "Limits per pod, NAME=QUANTITY,...");
         f.AddString("L", &run->limits, "Short for --limits.");
         f.AddString("scheduler", &run->scheduler, "schedulerName of the job.");
         f.AddString("S", &run->scheduler, "Short for --scheduler.");
         f.AddString("queue", &run->queue, "Queue (default: the default queue).");
         f.AddString("q", &run->queue, "Short for --queue.");
         f.AddString("filename", &run->file, "A Job manifest (YAML or JSON; - for stdin).");
         f.AddString("f", &run->file, "Short for --filename.");
         f.AddStringList("command", &run->command,
                         "Container command (repeatable: one argument each).");
       },
       [run](Context& ctx, const std::vector<std::string>& a) {
         return JobRun(ctx, a, *run, ctx.IsSet({"name", "N"}));
       }});
  out.push_back({"job", "suspend", "NAME",
                 "Abort a job: its pods are deleted, it can be resumed (Command AbortJob).", "",
                 nullptr, [](Context& ctx, const std::vector<std::string>& a) {
                   return JobCommand(ctx, a, "suspend", api::job_action::kAbortJob);
                 }});
  out.push_back({"job", "resume", "NAME", "Resume an aborted job (Command ResumeJob).", "", nullptr,
                 [](Context& ctx, const std::vector<std::string>& a) {
                   return JobCommand(ctx, a, "resume", api::job_action::kResumeJob);
                 }});
  out.push_back({"job", "delete", "NAME", "Delete a job and its pods.", "", nullptr, JobDelete});
  auto pods = std::make_shared<PodFlags>();
  out.push_back(
      {"pod", "list", "", "List pods created by Volcano jobs.", "",
       [pods](base::FlagSet& f) {
         f.AddString("job", &pods->job, "Only pods of this job.");
         f.AddString("j", &pods->job, "Short for --job.");
         f.AddString("queue", &pods->queue, "Only pods of jobs in this queue.");
         f.AddString("q", &pods->queue, "Short for --queue.");
       },
       [pods](Context& ctx, const std::vector<std::string>& a) { return PodList(ctx, a, *pods); }});
  return out;
}

}  // namespace tephra::cli
