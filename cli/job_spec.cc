// The Job `job run` creates: docs/compatibility.md §6, cli/README.md.
#include "cli/job_spec.h"

#include <fstream>
#include <iostream>
#include <sstream>

#include "api/defaulting.h"
#include "api/validation.h"
#include "cli/cli.h"
#include "cli/common.h"
#include "cli/output.h"
#include "json/json.h"

namespace tephra::cli {

namespace {

void WriteQuantities(json::Writer& w, std::string_view key, const api::ResourceList& list) {
  if (list.empty()) return;
  w.Key(key).StartObject();
  for (const auto& [name, q] : list) w.Field(name, q.String());
  w.EndObject();
}

}  // namespace

StatusOr<std::shared_ptr<api::Job>> JobFromFlags(const JobRunOptions& f, const std::string& ns) {
  if (f.replicas < 1) return InvalidArgument("--replicas: must be at least 1");
  if (f.min < 1 || f.min > f.replicas) {
    return InvalidArgument("--min: must be between 1 and --replicas (" +
                           std::to_string(f.replicas) + ")");
  }
  if (f.image.empty()) return InvalidArgument("--image: must not be empty");
  TEPHRA_ASSIGN_OR_RETURN(api::ResourceList requests, ParseResourceList("requests", f.requests));
  TEPHRA_ASSIGN_OR_RETURN(api::ResourceList limits, ParseResourceList("limits", f.limits));
  json::Writer t;
  t.StartObject().Key("metadata").StartObject().Field("name", f.name);
  if (!f.template_labels.empty()) {
    t.Key("labels").StartObject();
    for (const auto& [k, v] : f.template_labels) t.Field(k, v);
    t.EndObject();
  }
  t.EndObject();
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

StatusOr<std::shared_ptr<api::Job>> JobFromFile(const JobRunOptions& f, const std::string& ns) {
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

Status CreateJob(kube::Client& client, api::Job& job, const std::string& scheduler) {
  api::JobDefaultingOptions defaults;
  defaults.scheduler_name = scheduler;
  api::ApplyJobDefaults(&job, defaults);
  StatusOr<api::StaticQueueLookup> queues = ListQueues(client);
  api::FieldErrors errors = api::ValidateJobCreate(job, queues.ok() ? &*queues : nullptr);
  const std::string what = job.metadata.namespace_ + "/" + job.metadata.name;
  if (!errors.empty()) {
    return Status(StatusCode::kFailedPrecondition,
                  "job " + what + " refused: " + api::FormatFieldErrors(errors));
  }
  StatusOr<std::string> created =
      client.Create(api::kJobs, job.metadata.namespace_, api::EncodeJob(job));
  return created.ok() ? Status::Ok() : Describe(created.status(), "creating job " + what);
}

}  // namespace tephra::cli
