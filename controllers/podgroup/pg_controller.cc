#include "controllers/podgroup/pg_controller.h"

#include <algorithm>
#include <cctype>

#include <glog/logging.h>
#include <rapidjson/document.h>

#include "api/informers/informers.h"
#include "api/kinds.h"
#include "api/labels.h"
#include "json/json.h"

namespace tephra::controllers::podgroup {
namespace {

// The REST resource of an owner reference ("apps/v1" ReplicaSet → replicasets.v1.apps).
kube::Resource ResourceOf(const kube::OwnerReference& owner) {
  kube::Resource r;
  size_t slash = owner.api_version.find('/');
  if (slash == std::string::npos) {
    r.version = owner.api_version;
  } else {
    r.group = owner.api_version.substr(0, slash);
    r.version = owner.api_version.substr(slash + 1);
  }
  std::string plural = owner.kind;
  for (char& c : plural) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  r.plural = plural + "s";
  r.kind = owner.kind;
  return r;
}

}  // namespace

PodGroupController::PodGroupController() = default;
PodGroupController::~PodGroupController() {
  Stop();
}

bool PodGroupController::Ours(const api::Pod& pod) const {
  const auto& names = ctx_.options.scheduler_names;
  if (std::find(names.begin(), names.end(), pod.spec.scheduler_name) == names.end()) return false;
  // A pod labelled for a scheduler-plugins (scheduling.x-k8s.io) PodGroup already has its group:
  // the scheduler gangs it with its siblings there. A group of its own would split the gang.
  if (!pod.metadata.Label(api::kSchedPluginsPodGroupLabel).empty()) return false;
  // No group named, or the one made here for it: tephra-scheduler names that one in the pod's
  // binding, perhaps before this controller got to the pod (or while it was not running).
  const std::string named = pod.metadata.Annotation(api::kGroupNameAnnotation);
  return named.empty() || named == api::ImplicitPodGroupName(pod.metadata);
}

Status PodGroupController::Initialize(ControllerContext& context) {
  ctx_ = context;
  pods_ =
      ctx_.informers->For(kube::resources::kPods, api::PodDecoder(), NamespacedScope(ctx_.options));
  podgroups_ =
      ctx_.informers->For(api::kPodGroups, api::PodGroupDecoder(), NamespacedScope(ctx_.options));
  base::WorkQueueOptions qo = QueueOptions(ctx_, "pg-controller");
  queue_ = std::make_unique<base::WorkQueue>(qo);
  kube::EventHandlers h;
  h.on_add = [this](const kube::ObjectPtr& o) {
    if (Ours(static_cast<const api::Pod&>(*o))) queue_->Add(o->metadata.Key());
  };
  pods_->AddEventHandler(h);
  // A ReplicaSet scaled to zero (the old one after a Deployment rollout) takes its PodGroup
  // along, as Volcano's controller does (docs/compatibility.md §2.8).
  replica_sets_ = ctx_.informers->For(kube::resources::kReplicaSets, api::ReplicaSetDecoder(),
                                      NamespacedScope(ctx_.options));
  kube::EventHandlers rs;
  rs.on_add = [this](const kube::ObjectPtr& o) {
    if (static_cast<const api::ReplicaSet&>(*o).replicas == 0) {
      queue_->Add(std::string(kDrainedPrefix) + o->metadata.Key());
    }
  };
  rs.on_update = [add = rs.on_add](const kube::ObjectPtr&, const kube::ObjectPtr& o) { add(o); };
  replica_sets_->AddEventHandler(rs);
  return Status::Ok();
}

void PodGroupController::Start() {
  workers_.Start(queue_.get(), ctx_.options.worker_threads_for_podgroup, "pod",
                 [this](const std::string& key) { return Sync(key); });
}

void PodGroupController::Stop() {
  workers_.Stop();
}

std::map<std::string, std::string> PodGroupController::OwnerAnnotations(const api::Pod& pod) const {
  const kube::OwnerReference* owner = pod.metadata.ControllerRef();
  if (owner == nullptr) return {};
  StatusOr<std::string> text =
      ctx_.client->Get(ResourceOf(*owner), pod.metadata.namespace_, owner->name);
  if (!text.ok()) {
    VLOG(2) << "pod " << pod.metadata.Key() << ": owner " << owner->kind << "/" << owner->name
            << " unreadable (" << text.status().ToString() << "); minMember 1";
    return {};
  }
  json::Document doc;
  if (!json::Parse(*text, &doc).ok()) return {};
  json::Errors errors;
  return json::Reader(&doc, &errors)["metadata"]["annotations"].StringMap();
}

Status PodGroupController::DeleteDrainedGroup(const std::string& rs_key) {
  kube::ObjectPtr obj = replica_sets_->store().Get(rs_key);
  if (!obj || static_cast<const api::ReplicaSet&>(*obj).replicas != 0) return Status::Ok();
  const std::string name = api::ImplicitPodGroupNameOf(obj->metadata.uid);
  if (!podgroups_->store().Get(kube::ObjectKey(obj->metadata.namespace_, name))) {
    return Status::Ok();
  }
  Status deleted = ctx_.client->Delete(api::kPodGroups, obj->metadata.namespace_, name);
  if (!deleted.ok() && deleted.code() != StatusCode::kNotFound) {
    return deleted.WithContext("deleting PodGroup " + name + " of drained ReplicaSet " + rs_key);
  }
  return Status::Ok();
}

std::chrono::nanoseconds PodGroupController::AnnotationWait(const api::Pod& pod) const {
  if (!pod.spec.node_name.empty() || !pod.metadata.creation_timestamp) return {};
  auto age = ctx_.clock->Now() - *pod.metadata.creation_timestamp;
  // Never longer than the grace: the two clocks may disagree.
  return std::clamp<std::chrono::nanoseconds>(kAnnotationGrace - age, {}, kAnnotationGrace);
}

Status PodGroupController::Sync(const std::string& key) {
  if (key.starts_with(kDrainedPrefix)) return DeleteDrainedGroup(key.substr(kDrainedPrefix.size()));
  const std::string& pod_key = key;
  kube::ObjectPtr obj = pods_->store().Get(pod_key);
  if (!obj) return Status::Ok();
  const auto& pod = static_cast<const api::Pod&>(*obj);
  if (!Ours(pod) || pod.metadata.deletion_timestamp) return Status::Ok();
  const std::string name = api::ImplicitPodGroupName(pod.metadata);
  if (!podgroups_->store().Get(kube::ObjectKey(pod.metadata.namespace_, name))) {
    api::PodGroup pg =
        api::ImplicitPodGroup(pod, OwnerAnnotations(pod), ctx_.options.default_queue);
    auto created =
        ctx_.client->Create(api::kPodGroups, pod.metadata.namespace_, api::EncodePodGroup(pg));
    if (!created.ok() && created.status().code() != StatusCode::kAlreadyExists) {
      return created.status().WithContext("creating PodGroup " + name);
    }
  }
  if (!pod.metadata.Annotation(api::kGroupNameAnnotation).empty()) return Status::Ok();
  // Back after the grace: by then the pod carries the annotation or is annotated here.
  if (auto wait = AnnotationWait(pod); wait.count() > 0) {
    queue_->AddAfter(key, wait);
    return Status::Ok();
  }
  auto patched = ctx_.client->Patch(
      kube::resources::kPods, pod.metadata.namespace_, pod.metadata.name, kube::PatchType::kMerge,
      R"({"metadata":{"annotations":{")" + std::string(api::kGroupNameAnnotation) + R"(":")" +
          name + R"("}}})");
  if (!patched.ok() && patched.status().code() != StatusCode::kNotFound) {
    return patched.status().WithContext("annotating pod " + pod.metadata.name);
  }
  return Status::Ok();
}

}  // namespace tephra::controllers::podgroup
