// The pdb plugin's veto: PodDisruptionBudgets bound the victims, counting the session's own
// evictions (docs/scheduler.md, Plugins: pdb).
#include <catch2/catch.hpp>

#include "tests/unit/scheduler/plugins/plugin_session.h"

namespace tephra::scheduler::testing {
namespace {

const char kPdb[] = "- plugins:\n  - name: offer-all\n  - name: pdb\n";

void Budget(Harness& h, const std::string& ns, const std::string& name,
            std::map<std::string, std::string> match, int32_t allowed) {
  auto pdb = std::make_shared<PdbInfo>();
  pdb->metadata.namespace_ = ns;
  pdb->metadata.name = name;
  pdb->selector.match_labels = std::move(match);
  pdb->disruptions_allowed = allowed;
  h.cache().UpsertPdb(pdb);
}

void Cluster(Harness& h) {
  h.Node("n1", "cpu=8").Queue("default");
  h.Group("ns/new", "default", 1)
      .Group("ns/db", "default", 1, "Running")
      .Group("other/db", "default", 1, "Running");
  h.Pod("ns/new-0", "new").Request("cpu=1").Add();
  h.Pod("ns/db-0", "db").Labels({{"app", "db"}}).Request("cpu=1").On("n1").Add();
  h.Pod("ns/db-1", "db").Labels({{"app", "db"}}).Request("cpu=1").On("n1").Add();
  h.Pod("ns/web-0", "db").Labels({{"app", "web"}}).Request("cpu=1").On("n1").Add();
  h.Pod("other/db-elsewhere", "db").Labels({{"app", "db"}}).Request("cpu=1").On("n1").Add();
}

TEST_CASE("pdb: a budget allows as many victims as it has disruptions left") {
  Harness h;
  Cluster(h);
  Budget(h, "ns", "db", {{"app", "db"}}, 1);
  PluginSession s(h, kPdb);
  // One of the two db pods; web is not covered; the other namespace's db pod is not covered.
  CHECK(s.Preemptable("ns/new-0", {"ns/db-0", "ns/db-1", "ns/web-0", "other/db-elsewhere"}) ==
        std::vector<std::string>{"db-0", "web-0", "db-elsewhere"});
  CHECK(s.Reclaimable("ns/new-0", {"ns/db-0", "ns/db-1"}) == std::vector<std::string>{"db-0"});
}

TEST_CASE(
    "pdb: a budget with no disruptions left protects its pods, an empty selector covers nothing") {
  Harness h;
  Cluster(h);
  Budget(h, "ns", "frozen", {{"app", "db"}}, 0);
  Budget(h, "ns", "empty", {}, 0);
  PluginSession s(h, kPdb);
  CHECK(s.Preemptable("ns/new-0", {"ns/db-0", "ns/web-0"}) == std::vector<std::string>{"web-0"});
}

TEST_CASE("pdb: evictions in the session use up the budget, and undoing them gives it back") {
  Harness h;
  Cluster(h);
  Budget(h, "ns", "db", {{"app", "db"}}, 1);
  PluginSession s(h, kPdb);
  {
    Statement st(s.session());
    REQUIRE(st.Evict(s.JobAt("ns/db"), s.Task("ns/db-0").uid(), "test").ok());
    CHECK(s.Preemptable("ns/new-0", {"ns/db-1"}).empty());
    st.Discard();  // the eviction undone gives its disruption back
  }
  CHECK(s.Preemptable("ns/new-0", {"ns/db-1"}) == std::vector<std::string>{"db-1"});
}

}  // namespace
}  // namespace tephra::scheduler::testing
