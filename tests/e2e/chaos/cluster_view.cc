#include "tests/e2e/chaos/cluster_view.h"

#include "api/batch.h"
#include "api/core.h"
#include "api/kinds.h"
#include "api/labels.h"
#include "api/resources.h"
#include "api/scheduling.h"

namespace tephra::chaos {
namespace {

// Lists every item of `r` and hands each decoded object to `take`; a decode error fails the read
// (an object the checker cannot read is an object it cannot vouch for).
template <typename Decode, typename Take>
Status ListEach(kube::Client& c, const kube::Resource& r, const std::string& ns,
                const std::string& selector, Decode decode, Take take) {
  kube::ListOptions o;
  o.label_selector = selector;
  StatusOr<std::string> rv = c.ListAll(r, ns, o, [&](const json::Value& v) -> Status {
    auto obj = decode(v, api::DecodeOptions{});
    if (!obj.ok()) return obj.status();
    take(**obj);
    return Status::Ok();
  });
  return rv.ok() ? Status::Ok() : rv.status();
}

std::string ControllerUid(const kube::ObjectMeta& m) {
  const kube::OwnerReference* ref = m.ControllerRef();
  return ref == nullptr ? "" : ref->uid;
}

}  // namespace

StatusOr<Snapshot> ReadSnapshot(kube::Client& client, const ViewScope& scope) {
  Snapshot s;
  auto node = [&](const api::Node& n) {
    api::Resources a = api::Resources::FromList(n.status.allocatable);
    s.nodes.push_back({n.metadata.name, a.milli_cpu(), a.memory(), a.pods()});
  };
  auto decode_node = [](const json::Value& v, const api::DecodeOptions& o) {
    return api::DecodeNode(v, o);
  };
  auto decode_pod = [](const json::Value& v, const api::DecodeOptions& o) {
    return api::DecodePod(v, o);
  };
  if (Status st = ListEach(client, kube::resources::kNodes, "", "", decode_node, node); !st.ok())
    return st;
  if (Status st = ListEach(client, kube::resources::kNodes, "", scope.node_selector, decode_node,
                           [&](const api::Node& n) { s.watched_nodes.insert(n.metadata.name); });
      !st.ok()) {
    return st;
  }
  // Every namespace: a pod of anyone bound into the pool counts against its capacity.
  Status st = ListEach(client, kube::resources::kPods, "", "", decode_pod, [&](const api::Pod& p) {
    if (p.metadata.namespace_ != scope.namespace_ && s.watched_nodes.count(p.spec.node_name) == 0)
      return;
    api::Resources req = api::PodRequest(p.spec);
    s.pods.push_back({p.metadata.uid, p.metadata.namespace_, p.metadata.name, p.spec.node_name,
                      p.status.phase, p.metadata.deletion_timestamp.has_value(),
                      ControllerUid(p.metadata), p.metadata.Annotation(api::kGroupNameAnnotation),
                      req.milli_cpu(), req.memory()});
  });
  if (!st.ok()) return st;
  st = ListEach(
      client, api::kJobs, scope.namespace_, "",
      [](const json::Value& v, const api::DecodeOptions& o) { return api::DecodeJob(v, o); },
      [&](const api::Job& j) {
        JobView v{j.metadata.uid,
                  j.metadata.name,
                  j.status.state.phase,
                  j.metadata.deletion_timestamp.has_value(),
                  j.spec.ttl_seconds_after_finished,
                  j.spec.min_available,
                  j.status.pending,
                  j.status.running,
                  j.status.succeeded,
                  j.status.failed};
        s.jobs.push_back(std::move(v));
      });
  if (!st.ok()) return st;
  st = ListEach(
      client, api::kPodGroups, scope.namespace_, "",
      [](const json::Value& v, const api::DecodeOptions& o) { return api::DecodePodGroup(v, o); },
      [&](const api::PodGroup& g) {
        s.podgroups.push_back({g.metadata.uid, g.metadata.namespace_, g.metadata.name,
                               ControllerUid(g.metadata), g.status.phase, g.spec.min_member,
                               g.metadata.deletion_timestamp.has_value()});
      });
  if (!st.ok()) return st;
  st = ListEach(
      client, api::kQueues, "", scope.queue_selector,
      [](const json::Value& v, const api::DecodeOptions& o) { return api::DecodeQueue(v, o); },
      [&](const api::Queue& q) {
        s.queues.push_back(
            {q.metadata.uid, q.metadata.name, q.metadata.deletion_timestamp.has_value()});
      });
  if (!st.ok()) return st;
  s.time = Clock::now();
  return s;
}

}  // namespace tephra::chaos
