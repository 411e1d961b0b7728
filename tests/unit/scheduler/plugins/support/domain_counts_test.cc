// Pod counts per label domain (scheduler/plugins/support/domain_counts.h), which inter-pod
// affinity and topology spread read.
#include "scheduler/plugins/support/domain_counts.h"

#include <catch2/catch.hpp>

#include "tests/unit/scheduler/plugins/plugin_session.h"

namespace tephra::scheduler::testing {
namespace {

TEST_CASE("domain counts: pods counted per label domain, kept current as the session places them") {
  Harness h;
  h.Node("n-a1", "cpu=8", {{"zone", "a"}})
      .Node("n-a2", "cpu=8", {{"zone", "a"}})
      .Node("n-b", "cpu=8", {{"zone", "b"}});
  h.Node("n-none", "cpu=8")
      .Queue("default")
      .Group("ns/g", "default", 1)
      .Group("other/g", "default", 1);
  h.Pod("ns/w0", "g").Labels({{"app", "web"}}).Request("cpu=1").On("n-a1").Add();
  h.Pod("ns/w1", "g").Labels({{"app", "web"}}).Request("cpu=1").On("n-a2").Add();
  h.Pod("ns/db", "g").Labels({{"app", "db"}}).Request("cpu=1").On("n-b").Add();
  h.Pod("ns/w-gone", "g").Labels({{"app", "web"}}).Request("cpu=1").On("n-b").Terminating().Add();
  h.Pod("other/w", "g").Labels({{"app", "web"}}).Request("cpu=1").On("n-b").Add();
  h.Pod("ns/w2", "g").Labels({{"app", "web"}}).Request("cpu=1").Add();
  PluginSession s(h, "- plugins:\n  - name: predicates\n");
  api::LabelSelector web;
  web.match_labels = {{"app", "web"}};
  NamespaceScope scope;
  scope.names.insert("ns");
  DomainCounter counter("zone", web, scope);
  counter.Build(s.session());
  CHECK(counter.Count("a") == 2);
  CHECK(counter.Count("b") == 0);  // db does not match, w-gone is leaving, other/w is out of scope
  CHECK(counter.Total() == 2);
  CHECK(counter.domains().size() == 2);  // n-none has no zone
  CHECK(counter.DomainOf(s.Node("n-none")) == nullptr);
  REQUIRE(counter.DomainOf(s.Node("n-b")) != nullptr);
  CHECK(*counter.DomainOf(s.Node("n-b")) == "b");
  counter.Update(s.session(), *s.Task("ns/w2").pod, s.Node("n-b"), +1);
  CHECK(counter.Count("b") == 1);
  CHECK(counter.Total() == 3);
  counter.Update(s.session(), *s.Task("ns/w2").pod, s.Node("n-b"), -1);
  CHECK(counter.Count("b") == 0);
}

}  // namespace
}  // namespace tephra::scheduler::testing
