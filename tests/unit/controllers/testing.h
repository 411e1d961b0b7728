// Builders of Jobs and pods for the controller unit tests.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "api/batch.h"
#include "api/core.h"
#include "api/defaulting.h"
#include "api/labels.h"

namespace tephra::controllers::testing {

// A Job from its JSON text, defaulted as the webhook would.
inline api::Job MakeJob(const std::string& json, bool defaults = true) {
  auto job = api::DecodeJob(json);
  INFO(job.status().ToString());
  REQUIRE(job.ok());
  api::Job out = **job;
  if (defaults) api::ApplyJobDefaults(&out);
  return out;
}

// A job "j" in namespace "ns" with uid "u1" and the given tasks (JSON array) and extra spec.
inline std::string JobJson(const std::string& tasks, const std::string& extra_spec = "",
                           const std::string& status = "{}") {
  return R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{"name":"j",)"
         R"("namespace":"ns","uid":"u1","creationTimestamp":"2026-01-01T00:00:00Z"},)"
         R"("spec":{)" +
         extra_spec + (extra_spec.empty() ? "" : ",") + R"("tasks":)" + tasks + R"(},"status":)" +
         status + "}";
}

inline std::string Task(const std::string& name, int replicas, const std::string& extra = "",
                        const std::string& pod_spec =
                            R"({"containers":[{"name":"c","image":"busybox",)"
                            R"("resources":{"requests":{"cpu":"1","memory":"1Gi"}}}]})") {
  return R"({"name":")" + name + R"(","replicas":)" + std::to_string(replicas) +
         (extra.empty() ? "" : "," + extra) + R"(,"template":{"spec":)" + pod_spec + "}}";
}

// A pod of job "j" (uid u1) in task `task` with index `index`, in `phase`.
inline std::shared_ptr<const api::Pod> MakePod(const std::string& task, int index,
                                               const std::string& phase, int version = 0,
                                               const std::string& job_uid = "u1") {
  auto pod = std::make_shared<api::Pod>();
  pod->metadata.name = "j-" + task + "-" + std::to_string(index);
  pod->metadata.namespace_ = "ns";
  pod->metadata.uid = "pod-" + task + "-" + std::to_string(index);
  pod->metadata.labels[std::string(api::kTaskSpecKey)] = task;
  pod->metadata.labels[std::string(api::kTaskIndexKey)] = std::to_string(index);
  pod->metadata.labels[std::string(api::kJobNameKey)] = "j";
  pod->metadata.annotations[std::string(api::kJobVersionAnnotation)] = std::to_string(version);
  kube::OwnerReference owner;
  owner.api_version = "batch.volcano.sh/v1alpha1";
  owner.kind = "Job";
  owner.name = "j";
  owner.uid = job_uid;
  owner.controller = true;
  pod->metadata.owner_references.push_back(owner);
  pod->status.phase = phase;
  return pod;
}

}  // namespace tephra::controllers::testing
