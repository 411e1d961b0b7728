// The Job `job run` creates, for tephractl and vcctl mode alike: a one-task job from flags, as
// vcctl's `job run` builds it, or a job from a manifest; and creating it after the admission
// webhook's defaulting and validation, so a bad job is refused with the webhook's words.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "api/batch.h"
#include "api/kinds.h"
#include "api/scheduling.h"
#include "base/status.h"
#include "kube/client.h"

namespace tephra::cli {

struct JobRunOptions {
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
  // Labels of the pod template (vcctl puts job.volcano.sh=<name> there).
  std::map<std::string, std::string> template_labels;
};

// A one-task Job in namespace `ns`; errors name the flag.
StatusOr<std::shared_ptr<api::Job>> JobFromFlags(const JobRunOptions& f, const std::string& ns);
// The Job in f.file (YAML or JSON, "-" for stdin), with --name and --queue applied; its namespace
// must be `ns` or unset.
StatusOr<std::shared_ptr<api::Job>> JobFromFile(const JobRunOptions& f, const std::string& ns);

// Defaults `job` (schedulerName `scheduler` when unset), validates it with the webhook's rules
// against the cluster's queues and creates it. A refusal is FailedPrecondition naming the field.
Status CreateJob(kube::Client& client, api::Job& job, const std::string& scheduler);

}  // namespace tephra::cli
