// The chaos checker on hand-made snapshots: each rule fires on the state it names and stays
// quiet on the legitimate states next to it (a gang being restarted, a TTL deletion, a
// contradiction shorter than the grace period).
#include "tests/e2e/chaos/invariants.h"

#include <algorithm>

#include <catch2/catch.hpp>

#include "tests/e2e/chaos/stats.h"

namespace tephra::chaos {
namespace {

using std::chrono::seconds;

const Clock::time_point t0 = Clock::time_point() + std::chrono::hours(1);

Snapshot Base(Clock::time_point t = t0) {
  Snapshot s;
  s.time = t;
  s.nodes = {{"n1", 4000, 8LL << 30, 10}, {"other", 1000, 1LL << 30, 10}};
  s.watched_nodes = {"n1"};
  s.queues = {{"q-uid", "q"}};
  return s;
}

PodView Pod(const std::string& name, const std::string& node, const std::string& phase,
            int64_t mcpu, const std::string& owner = "", const std::string& group = "") {
  return {"uid-" + name, "ns", name, node, phase, false, owner, group, mcpu, 1LL << 30};
}

std::vector<std::string> Rules(const std::vector<Violation>& v) {
  std::vector<std::string> out;
  for (const auto& x : v) out.push_back(x.rule + " " + x.object);
  return out;
}

TEST_CASE("overcommit counts active pods of every namespace on a watched node") {
  InvariantChecker c(seconds(30));
  Snapshot s = Base();
  s.pods = {Pod("a", "n1", "Running", 3000), Pod("b", "n1", "Succeeded", 3000)};
  CHECK(c.Check(s).empty());  // finished pods hold nothing
  s.pods.push_back(Pod("c", "n1", "Pending", 1500));
  s.pods.back().namespace_ = "someone-else";
  CHECK(Rules(c.Check(s)) == std::vector<std::string>{"overcommit node/n1"});
  CHECK(c.Check(s).empty());  // reported once
  // A node outside the pool is not ours to judge.
  InvariantChecker c2(seconds(30));
  Snapshot o = Base();
  o.pods = {Pod("x", "other", "Running", 5000)};
  CHECK(c2.Check(o).empty());
}

TEST_CASE("a pod bound to a missing node or moved between nodes is reported") {
  InvariantChecker c(seconds(30));
  Snapshot s = Base();
  s.pods = {Pod("a", "n1", "Running", 100), Pod("ghost", "gone-node", "Running", 100)};
  CHECK(Rules(c.Check(s)) == std::vector<std::string>{"unknown-node ns/ghost"});
  s.pods = {Pod("a", "other", "Running", 100)};
  CHECK(Rules(c.Check(s)) == std::vector<std::string>{"double-bind ns/a"});
}

TEST_CASE("a job status contradicting its pods is reported only after the grace period") {
  InvariantChecker c(seconds(30));
  Snapshot s = Base();
  JobView j{"j-uid", "j", "Running", false, std::nullopt, 2, 0, 2, 0, 0};
  s.jobs = {j};
  s.podgroups = {{"pg-uid", "ns", "j-pg", "j-uid", "Running", 2, false}};
  s.pods = {Pod("j-0", "n1", "Running", 100, "j-uid", "j-pg"),
            Pod("j-1", "n1", "Succeeded", 100, "j-uid", "j-pg")};
  CHECK(c.Check(s).empty());  // counts say 2 running, pods say 1 running + 1 succeeded
  s.time = t0 + seconds(29);
  CHECK(c.Check(s).empty());
  s.time = t0 + seconds(31);
  CHECK(Rules(c.Check(s)) == std::vector<std::string>{"job-status job/j/counts"});
}

TEST_CASE("a finished job's counters read 0 whatever pods it keeps") {
  InvariantChecker c(seconds(30));
  Snapshot s = Base();
  s.pods = {Pod("j-0", "n1", "Succeeded", 100, "j-uid", "j-pg")};
  s.jobs = {JobView{"j-uid", "j", "Completed", false, std::nullopt, 1, 0, 0, 0, 0}};
  CHECK(c.Check(s).empty());
  s.time = t0 + seconds(31);
  CHECK(c.Check(s).empty());

  InvariantChecker c2(seconds(30));
  s.jobs = {JobView{"j-uid", "j", "Completed", false, std::nullopt, 1, 0, 0, 1, 0}};
  s.time = t0;
  CHECK(c2.Check(s).empty());
  s.time = t0 + seconds(31);
  CHECK(Rules(c2.Check(s)) == std::vector<std::string>{"job-status job/j/counts"});
}

TEST_CASE("a disruption restarts the grace period, a cleared condition forgets it") {
  InvariantChecker c(seconds(30));
  Snapshot s = Base();
  s.jobs = {{"j-uid", "j", "Completed", false, std::nullopt, 1, 0, 0, 0, 0}};
  s.pods = {Pod("j-0", "n1", "Running", 100, "j-uid")};
  CHECK(c.Check(s).empty());
  c.NoteDisruption(t0 + seconds(20));
  s.time = t0 + seconds(40);
  CHECK(c.Check(s).empty());  // only 20 s since the API server came back
  s.time = t0 + seconds(51);
  CHECK(Rules(c.Check(s)) == std::vector<std::string>{"job-status job/j/finished"});

  InvariantChecker c2(seconds(30));
  Snapshot a = s;
  a.time = t0;
  CHECK(c2.Check(a).empty());
  Snapshot fine = Base(t0 + seconds(20));
  fine.jobs = {{"j-uid", "j", "Completed", false, std::nullopt, 1, 0, 0, 0, 0}};
  CHECK(c2.Check(fine).empty());
  a.time = t0 + seconds(40);
  CHECK(c2.Check(a).empty());  // came back 20 s ago: a new period
}

TEST_CASE("a running gang short of minMember is stranded unless a policy is restarting it") {
  InvariantChecker c(seconds(10));
  Snapshot s = Base();
  s.jobs = {{"j-uid", "j", "Running", false, std::nullopt, 3, 0, 2, 0, 0}};
  s.podgroups = {{"pg-uid", "ns", "j-pg", "j-uid", "Running", 3, false}};
  s.pods = {Pod("j-0", "n1", "Running", 100, "j-uid", "j-pg"),
            Pod("j-1", "n1", "Running", 100, "j-uid", "j-pg"),
            Pod("j-2", "", "Pending", 100, "j-uid", "j-pg")};
  s.jobs[0].pending = 1;
  CHECK(c.Check(s).empty());
  s.time = t0 + seconds(11);
  auto v = Rules(c.Check(s));
  CHECK(std::find(v.begin(), v.end(), "stranded-gang podgroup/j-pg") != v.end());

  InvariantChecker restarting(seconds(10));
  s.jobs[0].phase = "Restarting";
  s.time = t0;
  CHECK(restarting.Check(s).empty());
  s.time = t0 + seconds(11);
  CHECK(restarting.Check(s).empty());
}

TEST_CASE("a steady job without a PodGroup is reported after the grace period") {
  InvariantChecker c(seconds(10));
  Snapshot s = Base();
  s.jobs = {{"j-uid", "j", "Pending", false, std::nullopt, 1, 0, 0, 0, 0}};
  CHECK(c.Check(s).empty());
  s.time = t0 + seconds(10);
  CHECK(Rules(c.Check(s)) == std::vector<std::string>{"podgroup-missing job/j"});
  s.jobs[0].phase = "Aborted";  // finished jobs lose their PodGroup on purpose
  InvariantChecker c2(seconds(10));
  s.time = t0;
  CHECK(c2.Check(s).empty());
  s.time = t0 + seconds(20);
  CHECK(c2.Check(s).empty());
}

TEST_CASE("jobs may vanish only by the user or their TTL, queues only by the user") {
  InvariantChecker c(seconds(30));
  Snapshot s = Base();
  s.jobs = {{"1", "finished-ttl", "Completed", false, 10, 1, 0, 0, 0, 0},
            {"2", "running-ttl", "Running", false, 10, 0, 0, 0, 0, 0},
            {"3", "deleted", "Running", false, std::nullopt, 0, 0, 0, 0, 0},
            {"4", "lost", "Running", false, std::nullopt, 0, 0, 0, 0, 0},
            {"5", "running-ttl-late", "Running", false, 10, 0, 0, 0, 0, 0}};
  s.jobs[0].succeeded = 0;
  s.podgroups = {{"g2", "ns", "pg2", "2", "Inqueue", 0, false},
                 {"g3", "ns", "pg3", "3", "Inqueue", 0, false},
                 {"g4", "ns", "pg4", "4", "Inqueue", 0, false},
                 {"g5", "ns", "pg5", "5", "Inqueue", 0, false}};
  CHECK(c.Check(s).empty());
  Snapshot later = Base(t0 + seconds(5));
  later.jobs = {s.jobs[4]};
  later.podgroups = {s.podgroups[3]};
  later.queues.clear();
  c.ExpectJobDeleted("deleted");
  auto v = Rules(c.Check(later));
  std::sort(v.begin(), v.end());
  // running-ttl was Running 5 s ago: it cannot have finished and outlived a 10 s TTL since.
  CHECK(v == std::vector<std::string>{"job-lost job/lost", "job-lost job/running-ttl",
                                      "queue-lost queue/q"});
  Snapshot much_later = Base(t0 + seconds(30));
  much_later.queues.clear();
  CHECK(c.Check(much_later).empty());  // running-ttl-late: unseen for 25 s > TTL
  CHECK(c.jobs().at("finished-ttl").gone);
}

TEST_CASE("percentiles and slopes") {
  CHECK(Percentile({}, 99) == 0);
  CHECK(Percentile({3, 1, 2}, 50) == 2);
  CHECK(Percentile({3, 1, 2}, 99) == 3);
  CHECK(Slope({{0, 1}, {1, 3}, {2, 5}}) == Approx(2));
  CHECK(Slope({{1, 1}}) == 0);
}

}  // namespace
}  // namespace tephra::chaos
