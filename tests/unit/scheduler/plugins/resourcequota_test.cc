// The resourcequota plugin's admission vote: every ResourceQuota of a job's namespace must hold
// used + admitted this session + the job's minResources, in the resources both name
// (docs/scheduler.md, Plugins: resourcequota).
#include <catch2/catch.hpp>

#include "tests/unit/scheduler/plugins/plugin_session.h"

namespace tephra::scheduler::testing {
namespace {

const char kResourceQuota[] = "- plugins:\n  - name: resourcequota\n";

api::ResourceList List(std::initializer_list<std::pair<const char*, const char*>> entries) {
  api::ResourceList out;
  for (const auto& [name, amount] : entries) out.Set(name, *api::Quantity::Parse(amount));
  return out;
}

// A Pending PodGroup "ns/name" with minResources as the controller writes them.
void Pending(Harness& h, const std::string& ns, const std::string& name, const char* cpu) {
  auto pg = std::make_shared<api::PodGroup>();
  pg->metadata.namespace_ = ns;
  pg->metadata.name = name;
  pg->metadata.uid = "pg-" + ns + "/" + name;
  pg->spec.queue = "default";
  pg->spec.min_member = 1;
  pg->spec.min_resources = List({{"cpu", cpu}, {"requests.cpu", cpu}, {"count/pods", "1"}});
  pg->status.phase = "Pending";
  h.cache().UpsertPodGroup(pg);
}

void Quota(Harness& h, const std::string& ns, const std::string& name, api::ResourceList hard,
           api::ResourceList used) {
  auto q = std::make_shared<QuotaInfo>();
  q->metadata.namespace_ = ns;
  q->metadata.name = name;
  q->hard = std::move(hard);
  q->used = std::move(used);
  h.cache().UpsertQuota(q);
}

// Namespace team: requests.cpu 4 with 1 used, at most 3 pods with 1 used.
void Cluster(Harness& h) {
  h.Node("n1", "cpu=16").Queue("default");
  Quota(h, "team", "compute", List({{"requests.cpu", "4"}}), List({{"requests.cpu", "1"}}));
  Quota(h, "team", "objects", List({{"count/pods", "3"}}), List({{"count/pods", "1"}}));
  Pending(h, "team", "fits", "3");
  Pending(h, "team", "too-big", "3500m");
  Pending(h, "team", "small", "1");
  Pending(h, "other", "free", "100");
}

TEST_CASE("resourcequota: admits what its namespace's quotas hold, in the resources they limit") {
  Harness h;
  Cluster(h);
  PluginSession s(h, kResourceQuota);
  CHECK(s->JobEnqueueable(s.Job("team/fits")));           // 1 + 3 <= 4
  CHECK_FALSE(s->JobEnqueueable(s.Job("team/too-big")));  // 1 + 3.5 > 4
  CHECK(s->JobEnqueueable(s.Job("other/free")));          // no quota in that namespace
}

TEST_CASE("resourcequota: a refusal names the quota, the resource and the numbers") {
  Harness h;
  Cluster(h);
  PluginSession s(h, kResourceQuota);
  REQUIRE_FALSE(s->JobEnqueueable(s.Job("team/too-big")));
  const std::vector<JobNote>* notes = s->JobNotes(s.JobAt("team/too-big"));
  REQUIRE(notes != nullptr);
  REQUIRE(notes->size() == 1);
  CHECK(notes->front().plugin == "resourcequota");
  CHECK(notes->front().message ==
        "namespace team ResourceQuota compute: requests.cpu: used 1 + admitted 0 + minResources "
        "3500m > hard 4");
}

TEST_CASE("resourcequota: jobs admitted in the session count against the quota") {
  Harness h;
  Cluster(h);
  PluginSession s(h, kResourceQuota);
  REQUIRE(s->JobEnqueueable(s.Job("team/fits")));
  s->JobEnqueued(s.Job("team/fits"));  // requests.cpu 1 + 3 = 4, pods 1 + 1 = 2
  CHECK_FALSE(s->JobEnqueueable(s.Job("team/small")));
  const std::vector<JobNote>* notes = s->JobNotes(s.JobAt("team/small"));
  REQUIRE(notes != nullptr);
  CHECK(notes->front().message ==
        "namespace team ResourceQuota compute: requests.cpu: used 1 + admitted 3 + minResources 1 "
        "> hard 4");
}

TEST_CASE("resourcequota: the pod count limits too, and a group without minResources passes") {
  Harness h;
  h.Node("n1", "cpu=16").Queue("default");
  Quota(h, "team", "objects", List({{"count/pods", "1"}}), List({{"count/pods", "1"}}));
  Pending(h, "team", "one-more", "1");
  h.Group("team/no-min", "default", 1, "Pending");
  PluginSession s(h, kResourceQuota);
  CHECK_FALSE(s->JobEnqueueable(s.Job("team/one-more")));
  CHECK(s->JobEnqueueable(s.Job("team/no-min")));
}

}  // namespace
}  // namespace tephra::scheduler::testing
