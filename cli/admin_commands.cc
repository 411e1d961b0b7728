// tephractl job explain, queue usage, snapshot dump and version: the commands that talk to the
// scheduler's admin API.
#include <algorithm>
#include <fstream>
#include <map>

#include <google/protobuf/util/json_util.h>
#include <rapidjson/document.h>

#include "api/batch.h"
#include "api/kinds.h"
#include "api/scheduling.h"
#include "cli/cli.h"
#include "cli/common.h"
#include "json/json.h"

namespace tephra::cli {
namespace {

namespace pb = tephra::admin::v1;

// "cpu 8, memory 16Gi, nvidia.com/gpu 1": cpu and memory first, then by name.
std::string Quantities(const pb::Resources& r, const std::string& empty) {
  std::vector<std::pair<std::string, std::string>> items(r.quantities().begin(),
                                                         r.quantities().end());
  auto rank = [](const std::string& n) { return n == "cpu" ? 0 : n == "memory" ? 1 : 2; };
  std::sort(items.begin(), items.end(), [&](const auto& a, const auto& b) {
    return rank(a.first) != rank(b.first) ? rank(a.first) < rank(b.first) : a.first < b.first;
  });
  std::string out;
  for (const auto& [name, q] : items) out += (out.empty() ? "" : ", ") + name + " " + q;
  return out.empty() ? empty : out;
}

StatusOr<std::string> ToJson(const google::protobuf::Message& m) {
  std::string out;
  google::protobuf::util::JsonPrintOptions o;
  o.always_print_primitive_fields = true;
  auto s = google::protobuf::util::MessageToJsonString(m, &out, o);
  if (!s.ok()) return Internal("encoding the answer as JSON: " + std::string(s.message()));
  return out;
}

int PrintMessage(Context& ctx, OutputFormat format, const google::protobuf::Message& m) {
  StatusOr<std::string> json = ToJson(m);
  if (!json.ok()) return Fail(ctx, json.status());
  return PrintObject(ctx, format, *json);
}

void PrintQueue(std::ostream& out, const pb::QueueState& q) {
  out << "Queue:        " << q.name() << ": " << q.state() << ", weight " << q.weight();
  if (!q.share_plugin().empty()) {
    char share[32];
    std::snprintf(share, sizeof(share), "%.2f", q.share());
    out << ", share " << share << " (" << q.share_plugin() << ")";
  }
  out << "\n";
  out << "  allocated   " << Quantities(q.allocated(), "none") << "\n";
  if (!q.share_plugin().empty())
    out << "  deserved    " << Quantities(q.deserved(), "none") << "\n";
  out << "  capability  " << Quantities(q.capability(), "unlimited") << "\n";
  if (!q.guarantee().quantities().empty())
    out << "  guarantee   " << Quantities(q.guarantee(), "none") << "\n";
  if (!q.inqueue().quantities().empty())
    out << "  admitted    " << Quantities(q.inqueue(), "none") << " (not started yet)\n";
  out << "  pending     " << Quantities(q.pending(), "none") << " (" << q.pending_jobs() << " of "
      << q.jobs() << " jobs not admitted)\n";
}

void PrintExplanation(std::ostream& out, const pb::JobExplanation& e) {
  out << "Job:          " << e.namespace_() << "/" << (e.job().empty() ? e.pod_group() : e.job());
  out << "  (PodGroup " << e.pod_group() << ", queue " << e.queue() << ")\n";
  out << "Phase:        " << e.phase();
  if (!e.session().id().empty())
    out << ", decided by session " << e.session().id() << " at " << e.session().time();
  if (!e.current_phase().empty() && e.current_phase() != e.phase())
    out << "; now " << e.current_phase();
  out << "\n";
  out << "Summary:      " << e.summary() << "\n";
  const pb::Gang& g = e.gang();
  if (g.tasks() > 0 || g.min_available() > 0) {
    out << "Gang:         minAvailable " << g.min_available();
    for (const auto& [role, n] : g.min_task_member()) out << ", " << role << " >= " << n;
    out << "; " << g.tasks() << " tasks: " << g.ready() << " ready, " << g.fit() << " fit, "
        << g.unplaced() << " unplaced";
    if (g.not_tried() > 0) out << ", " << g.not_tried() << " not tried";
    out << "\n";
  }
  if (!g.min_resources().quantities().empty())
    out << "  minResources " << Quantities(g.min_resources(), "none") << "\n";
  if (e.unplaced_size() > 0) out << "Unplaced:\n";
  for (const auto& group : e.unplaced()) {
    out << "  " << group.tasks() << " x " << (group.role().empty() ? "task" : group.role())
        << " requesting " << Quantities(group.request(), "nothing");
    if (!group.example_pods().empty()) {
      out << " (e.g. ";
      for (int i = 0; i < group.example_pods_size(); ++i)
        out << (i ? ", " : "") << group.example_pods(i);
      out << ")";
    }
    out << "\n";
    size_t width = 0;
    std::vector<std::string> counts;
    for (const auto& r : group.reasons()) {
      counts.push_back(std::to_string(r.nodes()) + (r.nodes() == 1 ? " node" : " nodes"));
      width = std::max(width, counts.back().size());
    }
    for (int i = 0; i < group.reasons_size(); ++i) {
      out << "    " << counts[static_cast<size_t>(i)]
          << std::string(width - counts[static_cast<size_t>(i)].size() + 2, ' ')
          << group.reasons(i).reason() << "\n";
    }
    if (!group.other().empty()) out << "    " << group.other() << "\n";
    if (group.nodes_examined() > 0)
      out << "    (" << group.nodes_examined() << " nodes examined)\n";
  }
  if (e.has_queue_state()) PrintQueue(out, e.queue_state());
  if (e.notes_size() > 0) {
    out << "Notes:\n";
    for (const auto& n : e.notes()) out << "  - " << n << "\n";
  }
  if (e.has_condition() && !e.condition().type().empty()) {
    const pb::Condition& c = e.condition();
    out << "Condition:    " << c.type() << "=" << c.status();
    if (!c.reason().empty()) out << " (" << c.reason() << ")";
    if (!c.message().empty()) out << ": " << c.message();
    out << "\n";
  }
  if (e.hints_size() > 0) {
    out << "What would have to change:\n";
    for (const auto& h : e.hints()) out << "  - " << h << "\n";
  }
}

// ---- fallback: what the API server knows ----

struct EventLine {
  std::string time;
  base::Time sort_key;
  std::string text;
};

// Events about this very object: matching the uid (as kubectl describe does) leaves out those of
// an earlier object of the same name, which operators that re-create jobs leave behind.
std::vector<EventLine> EventsFor(kube::Client& client, const std::string& ns,
                                 const std::string& kind, const kube::ObjectMeta& object,
                                 base::Time now) {
  std::vector<EventLine> out;
  const std::string& name = object.name;
  kube::ListOptions lo;
  lo.field_selector = "involvedObject.kind=" + kind + ",involvedObject.name=" + name;
  if (!object.uid.empty()) lo.field_selector += ",involvedObject.uid=" + object.uid;
  (void)client.ListAll(kube::resources::kEvents, ns, lo, [&](const json::Value& v) {
    json::Errors errors;
    json::Reader r(&v, &errors);
    std::optional<base::Time> t = kube::DecodeTime(r["lastTimestamp"]);
    if (!t) t = kube::DecodeTime(r["eventTime"]);
    if (!t) t = kube::DecodeTime(r["metadata"]["creationTimestamp"]);
    int64_t count = r["count"].Int(1);
    EventLine e;
    e.sort_key = t.value_or(now);
    e.time = t ? Age(*t, now) : "?";
    e.text = r["type"].String() + "  " + r["reason"].String() + "  " + kind + "/" + name + "  " +
             r["message"].String() + (count > 1 ? " (x" + std::to_string(count) + ")" : "");
    out.push_back(std::move(e));
    return Status::Ok();
  });
  return out;
}

int ExplainFromApiServer(Context& ctx, OutputFormat format, const std::string& name, bool pod_group,
                         const Status& why) {
  ctx.err() << "note: " << why.message()
            << "; showing what the API server knows (PodGroup conditions and events)\n";
  TEPHRA_CLI_ASSIGN(auto client, ctx.Client());
  const std::string ns = ctx.Namespace();
  const base::Time now = base::Clock::now();
  std::shared_ptr<api::Job> job;
  std::string job_text;
  std::string pg_name = pod_group ? name : "";
  if (!pod_group) {
    StatusOr<std::string> text = client->Get(api::kJobs, ns, name);
    if (!text.ok()) return Fail(ctx, Describe(text.status(), "job " + ns + "/" + name));
    job_text = *text;
    StatusOr<std::shared_ptr<api::Job>> decoded = api::DecodeJob(*text);
    if (!decoded.ok()) return Fail(ctx, decoded.status());
    job = *decoded;
  }
  std::shared_ptr<api::PodGroup> pg;
  std::string pg_text;
  StatusOr<std::string> listed =
      client->ListAll(api::kPodGroups, ns, {}, [&](const json::Value& v) {
        StatusOr<std::shared_ptr<api::PodGroup>> p = api::DecodePodGroup(v);
        if (!p.ok()) return Status::Ok();
        const kube::OwnerReference* owner = (*p)->metadata.ControllerRef();
        bool match = pod_group ? (*p)->metadata.name == name
                               : owner != nullptr && owner->kind == api::kJobKind &&
                                     owner->uid == job->metadata.uid;
        if (match) {
          pg = *p;
          pg_text = json::Write(v);
        }
        return Status::Ok();
      });
  if (!listed.ok()) return Fail(ctx, Describe(listed.status(), "listing PodGroups in " + ns));
  if (pod_group && !pg) return Fail(ctx, NotFound("PodGroup " + ns + "/" + name + " not found"));
  if (pg) pg_name = pg->metadata.name;
  std::vector<EventLine> events;
  if (pg) events = EventsFor(*client, ns, "PodGroup", pg->metadata, now);
  if (job) {
    std::vector<EventLine> more = EventsFor(*client, ns, "Job", job->metadata, now);
    events.insert(events.end(), more.begin(), more.end());
  }
  std::sort(events.begin(), events.end(),
            [](const EventLine& a, const EventLine& b) { return a.sort_key < b.sort_key; });
  if (format != OutputFormat::kTable) {
    json::Writer w;
    w.StartObject().Field("source", "api-server").Field("reason", why.message());
    if (!job_text.empty()) w.Key("job").Raw(job_text);
    if (!pg_text.empty()) w.Key("podGroup").Raw(pg_text);
    w.Key("events").StartArray();
    for (const auto& e : events) w.String(e.text);
    w.EndArray().EndObject();
    return PrintObject(ctx, format, w.str());
  }
  std::ostream& out = ctx.out();
  out << "Job:          " << ns << "/" << name;
  if (pg)
    out << "  (PodGroup " << pg_name << ", queue "
        << (pg->spec.queue.empty() ? "default" : pg->spec.queue) << ")";
  out << "\n";
  if (job)
    out << "Job phase:    "
        << (job->status.state.phase.empty() ? "Pending" : job->status.state.phase) << "\n";
  if (!pg) {
    out << "PodGroup:     none yet: tephra-controller-manager creates it (is it running?)\n";
  } else {
    out << "PodGroup:     " << (pg->status.phase.empty() ? "Pending" : pg->status.phase)
        << ", minMember " << pg->spec.min_member << ", running " << pg->status.running << "\n";
    if (!pg->status.conditions.empty()) out << "Conditions:\n";
    for (const auto& c : pg->status.conditions) {
      out << "  " << c.type << "=" << c.status;
      if (!c.reason.empty()) out << " (" << c.reason << ")";
      if (c.last_transition_time) out << " " << Age(*c.last_transition_time, now) << " ago";
      if (!c.message.empty()) out << ": " << c.message;
      out << "\n";
    }
  }
  if (!events.empty()) out << "Events:\n";
  for (const auto& e : events) out << "  " << e.time << "  " << e.text << "\n";
  return kExitOk;
}

struct ExplainFlags {
  bool pod_group = false;
};

int JobExplain(Context& ctx, const std::vector<std::string>& args, const ExplainFlags& f) {
  if (int rc = ExpectArgs(ctx, "job explain", args, {"NAME (the job to explain)"}); rc != kExitOk)
    return rc;
  OutputFormat format = *ctx.Output();
  TEPHRA_CLI_ASSIGN(auto admin, ctx.Admin());
  const std::string ns = ctx.Namespace();
  StatusOr<pb::JobExplanation> e =
      f.pod_group ? admin->ExplainJob(ns, "", args[0]) : admin->ExplainJob(ns, args[0], "");
  if (!e.ok()) {
    if (e.status().code() == StatusCode::kUnavailable)
      return ExplainFromApiServer(ctx, format, args[0], f.pod_group, e.status());
    return Fail(ctx, e.status());
  }
  if (format != OutputFormat::kTable) return PrintMessage(ctx, format, *e);
  PrintExplanation(ctx.out(), *e);
  return kExitOk;
}

int QueueUsage(Context& ctx, const std::vector<std::string>& args) {
  if (int rc = ExpectArgs(ctx, "queue usage", args, {"NAME"}, 1); rc != kExitOk) return rc;
  OutputFormat format = *ctx.Output();
  TEPHRA_CLI_ASSIGN(auto admin, ctx.Admin());
  TEPHRA_CLI_ASSIGN(pb::QueueUsageResponse usage, admin->QueueUsage(args.empty() ? "" : args[0]));
  if (format != OutputFormat::kTable) return PrintMessage(ctx, format, usage);
  Table t({"NAME", "STATE", "WEIGHT", "ALLOCATED", "DESERVED", "CAPABILITY", "GUARANTEE", "PENDING",
           "SHARE"});
  for (const auto& q : usage.queues()) {
    char share[32];
    std::snprintf(share, sizeof(share), "%.2f", q.share());
    t.Add({q.name(), q.state(), std::to_string(q.weight()), Quantities(q.allocated(), "none"),
           q.share_plugin().empty() ? "-" : Quantities(q.deserved(), "none"),
           Quantities(q.capability(), "unlimited"), Quantities(q.guarantee(), "none"),
           Quantities(q.pending(), "none"), q.share_plugin().empty() ? "-" : std::string(share)});
  }
  ctx.out() << t.Render();
  if (usage.has_session()) {
    ctx.out() << "(deserved shares from session " << usage.session().id() << " at "
              << usage.session().time() << ")\n";
  }
  return kExitOk;
}

struct DumpFlags {
  bool current = false;
  std::string file;
};

int SnapshotDump(Context& ctx, const std::vector<std::string>& args, const DumpFlags& f) {
  if (int rc = ExpectArgs(ctx, "snapshot dump", args, {}); rc != kExitOk) return rc;
  TEPHRA_CLI_ASSIGN(auto admin, ctx.Admin());
  std::ofstream file;
  std::ostream* out = &ctx.out();
  if (!f.file.empty() && f.file != "-") {
    file.open(f.file, std::ios::binary | std::ios::trunc);
    if (!file) return Fail(ctx, InvalidArgument("--file: cannot write " + f.file));
    out = &file;
  }
  size_t bytes = 0;
  Status s = admin->DumpSnapshot(f.current, [&](std::string_view chunk) {
    out->write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    bytes += chunk.size();
  });
  if (!s.ok()) return Fail(ctx, s);
  if (file.is_open()) {
    file.close();
    if (!file) return Fail(ctx, Internal("writing " + f.file + " failed"));
    ctx.err() << "wrote " << bytes << " bytes to " << f.file
              << "; replay with: tephra-scheduler --replay " << f.file
              << " [--scheduler-conf FILE]\n";
  }
  return kExitOk;
}

struct VersionFlags {
  bool client_only = false;
};

int Version(Context& ctx, const std::vector<std::string>& args, const VersionFlags& f) {
  if (int rc = ExpectArgs(ctx, "version", args, {}); rc != kExitOk) return rc;
  ctx.out() << "tephractl: " << TEPHRA_VERSION << "\n";
  if (f.client_only) return kExitOk;
  StatusOr<std::shared_ptr<kube::Client>> client = ctx.Client();
  if (client.ok()) {
    kube::ApiRequest req;
    req.target = "/version";
    StatusOr<kube::ApiResponse> r = (*client)->Do(req, true);
    std::string version = "unreachable";
    if (r.ok() && r->status == 200) {
      json::Document doc;
      if (json::Parse(r->body, &doc).ok()) {
        json::Errors errors;
        version = json::Reader(&doc, &errors)["gitVersion"].String("unknown");
      }
    } else if (!r.ok()) {
      version = "unreachable (" + r.status().message() + ")";
    }
    ctx.out() << "Kubernetes API server: " << version << "\n";
  } else {
    ctx.out() << "Kubernetes API server: " << client.status().message() << "\n";
  }
  TEPHRA_CLI_ASSIGN(auto admin, ctx.Admin());
  StatusOr<pb::SchedulerInfo> info = admin->GetInfo();
  if (!info.ok()) {
    ctx.out() << "tephra-scheduler: " << info.status().message() << "\n";
    return kExitOk;
  }
  std::string names;
  for (const auto& n : info->scheduler_names()) names += (names.empty() ? "" : ", ") + n;
  ctx.out() << "tephra-scheduler: " << info->version() << " at " << admin->connection().address
            << (info->tls() ? " (TLS)" : "") << "; scheduler names " << names << "; "
            << info->sessions() << " sessions";
  if (info->has_last_session()) ctx.out() << ", last " << info->last_session().id();
  ctx.out() << "; " << info->explanations() << "/" << info->explanation_capacity()
            << " jobs explained\n";
  return kExitOk;
}

}  // namespace

std::vector<Command> AdminCommands() {
  std::vector<Command> out;
  auto explain = std::make_shared<ExplainFlags>();
  out.push_back(
      {"job", "explain", "NAME",
       "Why a job is pending, from the scheduler's last decision about it.",
       "Asks tephra-scheduler's admin API (--admin-address). When it cannot be reached, shows the\n"
       "PodGroup's conditions and events from the API server instead.",
       [explain](base::FlagSet& f) {
         f.AddBool("pod-group", &explain->pod_group,
                   "NAME is a PodGroup (plain pods, Spark, Kubeflow ...), not a Volcano Job.");
       },
       [explain](Context& ctx, const std::vector<std::string>& a) {
         return JobExplain(ctx, a, *explain);
       }});
  out.push_back(
      {"queue", "usage", "[NAME]",
       "Allocated, deserved, capability, guarantee and pending demand per queue (admin API).", "",
       nullptr, QueueUsage});
  auto dump = std::make_shared<DumpFlags>();
  out.push_back({"snapshot", "dump", "",
                 "Write the scheduler's view of the cluster, for --replay and bug reports.",
                 "By default the input of the last session that bound, evicted or admitted "
                 "something, with its\n"
                 "decisions; --current dumps the scheduler's cache as it is now.",
                 [dump](base::FlagSet& f) {
                   f.AddBool("current", &dump->current,
                             "Dump the cache now instead of the last deciding session.");
                   f.AddString("file", &dump->file, "Write to this file (default stdout).");
                   f.AddShorthand("f", "file");
                 },
                 [dump](Context& ctx, const std::vector<std::string>& a) {
                   return SnapshotDump(ctx, a, *dump);
                 }});
  auto version = std::make_shared<VersionFlags>();
  out.push_back({"", "version", "", "Versions of tephractl, the API server and the scheduler.", "",
                 [version](base::FlagSet& f) {
                   f.AddBool("client", &version->client_only, "Only tephractl's version.");
                 },
                 [version](Context& ctx, const std::vector<std::string>& a) {
                   return Version(ctx, a, *version);
                 }});
  return out;
}

}  // namespace tephra::cli
