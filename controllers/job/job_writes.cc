// The API writes of a job controller pass (job_controller.h): pods killed, created and
// deleted, the PodGroup, volumes, the job plugins' objects and the Job's status.
#include <atomic>
#include <functional>
#include <thread>

#include <glog/logging.h>

#include "api/kinds.h"
#include "api/labels.h"
#include "controllers/job/builders.h"
#include "controllers/job/job_controller.h"
#include "controllers/job/plugins/plugin.h"
#include "controllers/job/pod_plan.h"
#include "json/json.h"

namespace tephra::controllers::job {
namespace {

constexpr int kParallelWrites = 16;

// Runs fn(i) for i in [0, n) on up to kParallelWrites threads, each call holding one of the
// process's pod-write slots; the first error wins.
Status ParallelFor(sync::FifoSemaphore& slots, size_t n, const std::function<Status(size_t)>& fn) {
  if (n == 0) return Status::Ok();
  auto call = [&](size_t i) {
    sync::FifoSemaphore::Slot slot(slots);
    return fn(i);
  };
  if (n == 1) return call(0);
  std::atomic<size_t> next{0};
  sync::Mutex mu;
  Status first;
  auto run = [&] {
    for (size_t i = next++; i < n; i = next++) {
      Status s = call(i);
      if (!s.ok()) {
        sync::MutexLock l(mu);
        if (first.ok()) first = s;
      }
    }
  };
  std::vector<std::thread> threads;
  size_t count = std::min<size_t>(n, kParallelWrites);
  for (size_t t = 1; t < count; ++t) threads.emplace_back(run);
  run();
  for (auto& t : threads) t.join();
  return first;
}

}  // namespace

StatusOr<std::set<std::string>> JobController::KillPods(const Pods& pods, Kill kill, Action action,
                                                        const Request& request, Expectations& exp) {
  const std::vector<const api::Pod*> victims =
      PodsToKill(pods, kill, action, request, exp.deleted_pod_uids);
  TEPHRA_RETURN_IF_ERROR(
      ParallelFor(*pod_writes_, victims.size(), [&](size_t i) { return DeletePod(*victims[i]); }));
  std::set<std::string> names;
  for (const api::Pod* p : victims) {
    names.insert(p->metadata.name);
    exp.deleted_pod_uids.insert(p->metadata.uid);
  }
  return names;
}

Status JobController::DeletePod(const api::Pod& pod) {
  const std::string& ns = pod.metadata.namespace_;
  const std::string& name = pod.metadata.name;
  // Marked first, so the deletion event reads as the controller's doing, not an eviction.
  if (pod.metadata.annotations.count(std::string(api::kControllerOutOfSyncAnnotation)) == 0) {
    auto patched =
        ctx_.client->Patch(kube::resources::kPods, ns, name, kube::PatchType::kMerge,
                           R"({"metadata":{"annotations":{")" +
                               std::string(api::kControllerOutOfSyncAnnotation) + R"(":"true"}}})");
    if (patched.status().code() == StatusCode::kNotFound) return Status::Ok();
    if (!patched.ok()) return patched.status().WithContext("marking pod " + name);
  }
  kube::DeleteOptions options;
  options.precondition_uid = pod.metadata.uid;
  Status s = ctx_.client->Delete(kube::resources::kPods, ns, name, options);
  if (s.ok() || s.code() == StatusCode::kNotFound) return Status::Ok();
  // A UID mismatch means the pod was replaced already: nothing of ours to delete.
  if (s.code() == StatusCode::kConflict) return Status::Ok();
  return s.WithContext("deleting pod " + name);
}

Status JobController::DeletePodGroup(const api::Job& job, Expectations& exp) {
  const std::string name = PodGroupName(job);
  kube::ObjectPtr pg = podgroups_->store().Get(kube::ObjectKey(job.metadata.namespace_, name));
  if (!pg || pg->metadata.uid == exp.deleted_podgroup_uid) return Status::Ok();
  kube::DeleteOptions options;
  options.precondition_uid = pg->metadata.uid;
  Status s = ctx_.client->Delete(api::kPodGroups, job.metadata.namespace_, name, options);
  if (!s.ok() && s.code() != StatusCode::kNotFound && s.code() != StatusCode::kConflict) {
    return s.WithContext("deleting PodGroup " + name);
  }
  exp.deleted_podgroup_uid = pg->metadata.uid;
  exp.allocated_hypernode = pg->metadata.Annotation(api::kJobAllocatedHyperNodeAnnotation);
  return Status::Ok();
}

Status JobController::Converge(const api::Job& job, const Pods& pods, bool initiating,
                               Expectations& exp, api::JobStatus& status, PodWrites* writes,
                               std::string* plugin_error) {
  Status plugins = RunPluginsOnJob(job, status, exp, initiating);
  if (plugins.code() == StatusCode::kInvalidArgument) {
    *plugin_error = plugins.message();
    return Status::Ok();
  }
  TEPHRA_RETURN_IF_ERROR(plugins);
  TEPHRA_RETURN_IF_ERROR(EnsureVolumes(job, status));
  TEPHRA_ASSIGN_OR_RETURN(std::string pg_phase, EnsurePodGroup(job, exp));
  if (pg_phase.empty() || pg_phase == api::podgroup_phase::kPending) {
    VLOG(3) << "job " << job.metadata.Key() << ": PodGroup not admitted yet, no pods";
    return Status::Ok();
  }
  api::Job versioned = job;
  versioned.status = status;
  return SyncPods(versioned, pods, exp, writes);
}

StatusOr<std::string> JobController::EnsurePodGroup(const api::Job& job, Expectations& exp) {
  auto priorities = [this](std::string_view name) -> std::optional<int32_t> {
    kube::ObjectPtr pc = priority_classes_->store().Get(std::string(name));
    if (!pc) return std::nullopt;
    return static_cast<const api::PriorityClass&>(*pc).value;
  };
  api::PodGroup want = BuildPodGroup(job, priorities);
  const std::string key = kube::ObjectKey(job.metadata.namespace_, want.metadata.name);
  kube::ObjectPtr cached = podgroups_->store().Get(key);
  if (cached && cached->metadata.uid == exp.deleted_podgroup_uid) {
    // Still the one this process deleted: wait for the cache before recreating it.
    return Conflict("PodGroup " + want.metadata.name + " is still being deleted");
  }
  if (!cached) {
    if (!exp.allocated_hypernode.empty()) {
      want.metadata.annotations[std::string(api::kJobAllocatedHyperNodeAnnotation)] =
          exp.allocated_hypernode;
    }
    StatusOr<std::string> created =
        ctx_.client->Create(api::kPodGroups, job.metadata.namespace_, api::EncodePodGroup(want));
    if (created.ok()) return std::string();
    if (created.status().code() == StatusCode::kAlreadyExists)
      return Conflict("PodGroup not cached yet");
    return created.status().WithContext("creating PodGroup " + want.metadata.name);
  }
  const auto& have = static_cast<const api::PodGroup&>(*cached);
  if (PodGroupSpecDrifted(have, want)) {
    api::PodGroup updated = have;
    updated.spec.min_member = want.spec.min_member;
    updated.spec.min_task_member = want.spec.min_task_member;
    updated.spec.min_resources = want.spec.min_resources;
    updated.spec.priority_class_name = want.spec.priority_class_name;
    updated.spec.sub_group_policy = want.spec.sub_group_policy;
    StatusOr<std::string> r = ctx_.client->Update(api::kPodGroups, job.metadata.namespace_,
                                                  have.metadata.name, api::EncodePodGroup(updated));
    if (!r.ok()) return r.status().WithContext("updating PodGroup " + have.metadata.name);
  }
  if (have.status.phase.empty() || have.status.phase == api::podgroup_phase::kPending) {
    for (auto it = have.status.conditions.rbegin(); it != have.status.conditions.rend(); ++it) {
      if (it->status == "True" && it->type != api::podgroup_condition::kScheduled) {
        RecordEvent(job, true, "PodGroupPending",
                    "PodGroup " + have.metadata.name + " is not admitted: " + it->reason +
                        (it->message.empty() ? "" : ": " + it->message));
        break;
      }
    }
  }
  return have.status.phase;
}

Status JobController::EnsureVolumes(const api::Job& job, api::JobStatus& status) {
  for (size_t i = 0; i < job.spec.volumes.size(); ++i) {
    const api::VolumeSpec& v = job.spec.volumes[i];
    const std::string claim = VolumeClaimName(job, i);
    const std::string record = "volume-pvc-" + claim;
    if (status.controlled_resources.count(record)) continue;
    if (!v.volume_claim_json) {
      auto got = ctx_.client->Get(kube::resources::kPersistentVolumeClaims, job.metadata.namespace_,
                                  claim);
      if (got.status().code() == StatusCode::kNotFound) {
        return Unavailable("pvc " + claim + " not found");
      }
      if (!got.ok()) return got.status();
    } else {
      json::Writer w;
      w.StartObject().Field("apiVersion", "v1").Field("kind", "PersistentVolumeClaim");
      kube::EncodeObjectMeta(JobOwnedMetadata(job, claim), &w);
      w.Key("spec").Raw(*v.volume_claim_json).EndObject();
      auto created = ctx_.client->Create(kube::resources::kPersistentVolumeClaims,
                                         job.metadata.namespace_, w.str());
      if (!created.ok() && created.status().code() != StatusCode::kAlreadyExists) {
        return created.status().WithContext("creating pvc " + claim);
      }
    }
    status.controlled_resources[record] = claim;
  }
  return Status::Ok();
}

Status JobController::RunPluginsOnJob(const api::Job& job, api::JobStatus& status,
                                      Expectations& exp, bool initiating) {
  TEPHRA_ASSIGN_OR_RETURN(auto plugins, JobPlugins(job));
  ClientObjectWriter writer(*ctx_.client);
  bool updated_now = false;
  for (const auto& plugin : plugins) {
    const std::string record = "plugin-" + std::string(plugin->Name());
    if (initiating || status.controlled_resources.count(record) == 0) {
      TEPHRA_RETURN_IF_ERROR(
          plugin->OnJobAdd(job, writer).WithContext("job plugin " + std::string(plugin->Name())));
      status.controlled_resources[record] = std::string(plugin->Name());
    } else if (exp.plugins_updated_generation != job.metadata.generation) {
      TEPHRA_RETURN_IF_ERROR(plugin->OnJobUpdate(job, writer)
                                 .WithContext("job plugin " + std::string(plugin->Name())));
      updated_now = true;
    }
  }
  if (updated_now || exp.plugins_updated_generation < 0) {
    exp.plugins_updated_generation = job.metadata.generation;
  }
  return Status::Ok();
}

Status JobController::SyncPods(const api::Job& job, const Pods& pods, Expectations& exp,
                               PodWrites* writes) {
  const std::vector<const api::Pod*> surplus = SurplusPods(job, pods, exp.deleted_pod_uids);
  TEPHRA_RETURN_IF_ERROR(
      ParallelFor(*pod_writes_, surplus.size(), [&](size_t i) { return DeletePod(*surplus[i]); }));
  for (const api::Pod* p : surplus) {
    writes->deleted.insert(p->metadata.name);
    exp.deleted_pod_uids.insert(p->metadata.uid);
  }

  const std::vector<PodToCreate> missing = MissingPods(job, pods, exp.created);
  if (missing.empty()) return Status::Ok();

  TEPHRA_ASSIGN_OR_RETURN(auto plugins, JobPlugins(job));
  std::vector<std::string> bodies(missing.size());
  for (size_t i = 0; i < missing.size(); ++i) {
    TEPHRA_ASSIGN_OR_RETURN(PodDraft draft, BuildPod(job, *missing[i].task, missing[i].index));
    PodInfo info{missing[i].task, missing[i].index};
    for (const auto& plugin : plugins) {
      TEPHRA_RETURN_IF_ERROR(plugin->OnPodCreate(job, info, &draft)
                                 .WithContext("job plugin " + std::string(plugin->Name())));
    }
    bodies[i] = draft.Json();
  }
  std::vector<char> done(missing.size(), 0);
  Status s = ParallelFor(*pod_writes_, missing.size(), [&](size_t i) -> Status {
    auto r = ctx_.client->Create(kube::resources::kPods, job.metadata.namespace_, bodies[i]);
    if (r.ok() || r.status().code() == StatusCode::kAlreadyExists) {
      done[i] = 1;
      return Status::Ok();
    }
    return r.status().WithContext("creating pod " + missing[i].name);
  });
  const auto now = ctx_.clock->Now();
  for (size_t i = 0; i < missing.size(); ++i) {
    if (!done[i]) continue;
    writes->created.emplace_back(missing[i].name, missing[i].task->name);
    exp.created[missing[i].name] = now;
    if (job.metadata.creation_timestamp) {
      pod_creation_seconds_->Observe(
          std::chrono::duration<double>(now - *job.metadata.creation_timestamp).count());
    }
  }
  return s;
}

Status JobController::WriteStatus(const api::Job& job, const api::JobStatus& status) {
  api::Job copy = job;
  copy.status = status;
  // The status subresource with the cached resourceVersion: a pass that worked from a stale
  // cache gets 409 and re-derives instead of overwriting (it might count a retry twice).
  StatusOr<std::string> r = ctx_.client->Update(
      api::kJobs, job.metadata.namespace_, job.metadata.name, api::EncodeJob(copy), {}, "status");
  if (!r.ok()) return r.status().WithContext("updating status of job " + job.metadata.Key());
  return Status::Ok();
}

}  // namespace tephra::controllers::job
