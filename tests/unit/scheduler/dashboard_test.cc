// The dashboard in-process: the history ring, the JSON documents, and the server over loopback
// HTTP, fed by a real session of the test harness. The pages themselves are tested in a real
// browser by tests/e2e/dashboard.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <rapidjson/document.h>

#include "json/json.h"
#include "scheduler/dashboard/dashboard_server.h"
#include "scheduler/dashboard/views.h"
#include "tests/unit/scheduler/harness.h"

namespace tephra::scheduler::testing {
namespace {

base::Time At(int64_t seconds) {
  return base::Time(std::chrono::seconds(seconds));
}

SessionSample Sample(int64_t at, int64_t binds, int64_t pending, int ms) {
  SessionSample s;
  s.time = At(at);
  s.binds = binds;
  s.pending_pods = pending;
  s.duration = std::chrono::milliseconds(ms);
  return s;
}

TEST_CASE("History keeps sums per bucket, the last session's figures, and only its window") {
  History h({std::chrono::seconds(10), 3, 2});
  h.Add(Sample(1000, 4, 10, 2));
  h.Add(Sample(1005, 6, 7, 8));  // same bucket
  h.Add(Sample(1012, 1, 3, 1));
  auto b = h.Buckets(At(1015));
  REQUIRE(b.size() == 2);
  CHECK(b[0].start == At(1000));
  CHECK(b[0].sessions == 2);
  CHECK(b[0].binds == 10);
  CHECK(b[0].pending_pods == 7);
  CHECK(b[0].session_ms_sum == Approx(10));
  CHECK(b[0].session_ms_max == Approx(8));
  CHECK(b[1].binds == 1);
  // Three buckets of ten seconds: at 1035 the bucket of 1000 is gone, and a sample in the slot it
  // used does not add to it.
  h.Add(Sample(1030, 2, 0, 1));
  b = h.Buckets(At(1035));
  REQUIRE(b.size() == 2);
  CHECK(b[0].start == At(1010));
  CHECK(b[1].start == At(1030));
  CHECK(b[1].binds == 2);
  CHECK(b[1].sessions == 1);
  // A late sample joins the newest bucket rather than reopening an old one.
  h.Add(Sample(900, 5, 0, 1));
  CHECK(h.Buckets(At(1035)).back().binds == 7);

  SessionSample many = Sample(1040, 0, 0, 1);
  for (const char* q : {"a", "b", "c", "d"}) many.queues[q] = QueuePoint();
  h.Add(many);
  CHECK(h.Buckets(At(1040)).back().queues.size() == 2);  // max_queues
}

// A job that cannot fit (two 3-CPU pods, nodes of 2) and one that runs, in two queues.
void Populate(Harness& h) {
  h.Node("n1", "cpu=2,memory=8Gi").Node("n2", "cpu=2,memory=8Gi").Queue("default").Queue("other");
  h.Group("ns/big", "default", 2);
  for (int i = 0; i < 2; ++i) h.Pod("ns/big-" + std::to_string(i), "big").Request("cpu=3").Add();
  h.Group("ns/small", "other", 1);
  h.Pod("ns/small-0", "small").Request("cpu=1").Add();
}

struct Recorded {
  Harness h;
  SessionRecorder recorder{{100, false}};
  History history;
  std::unique_ptr<DecisionLog> log;

  Recorded() {
    Populate(h);
    log = std::make_unique<DecisionLog>(&h.binder(), &h.binder());
    h.decisions = log.get();
    h.inspect = [this](const Session& ssn) {
      Decisions d = log->Take(ssn);
      SessionSample s = SampleSession(ssn, d, ssn.Now());
      history.Add(std::move(s));
      recorder.Record(ssn, std::move(d), ssn.Now());
    };
    h.Run();
  }

  DashboardSources Sources() {
    DashboardSources sources;
    sources.recorder = &recorder;
    sources.cache = &h.cache();
    sources.history = &history;
    sources.scheduler_names = {"volcano"};
    sources.version = "9.9.9";
    return sources;
  }
};

json::Document Parse(const std::string& text) {
  json::Document doc;
  REQUIRE(json::Parse(text, &doc).ok());
  return doc;
}

TEST_CASE("The jobs document filters, orders and bounds its rows, and says why a job waits") {
  Recorded r;
  auto snap = r.h.cache().TakeSnapshot();
  JobFilter all;
  json::Document doc = Parse(JobsJson(*snap, r.recorder, all, base::Clock::now()));
  json::Errors errors;
  json::Reader root(&doc, &errors);
  CHECK(root["total"].Int() == 2);
  CHECK_FALSE(root["truncated"].Bool());
  std::map<std::string, std::string> why;
  root["jobs"].ForEach(
      [&](const json::Reader& j) { why[j["name"].String()] = j["summary"].String(); });
  CHECK(why["big"].find("2 nodes Insufficient cpu") != std::string::npos);
  CHECK(why["small"].empty());

  JobFilter one;
  one.queue = "other";
  doc = Parse(JobsJson(*snap, r.recorder, one, base::Clock::now()));
  json::Reader filtered(&doc, &errors);
  CHECK(filtered["total"].Int() == 1);
  CHECK(filtered["jobs"][size_t{0}]["name"].String() == "small");

  JobFilter limited;
  limited.limit = 1;
  doc = Parse(JobsJson(*snap, r.recorder, limited, base::Clock::now()));
  json::Reader bounded(&doc, &errors);
  CHECK(bounded["shown"].Int() == 1);
  CHECK(bounded["truncated"].Bool());
  CHECK(errors.empty());
}

TEST_CASE("The cluster document counts pending pods by reason and bounds the nodes it lists") {
  Recorded r;
  auto snap = r.h.cache().TakeSnapshot();
  json::Document doc = Parse(ClusterJson(*snap, r.recorder, 1));
  json::Errors errors;
  json::Reader root(&doc, &errors);
  CHECK(root["total_nodes"].Int() == 2);
  CHECK(root["shown_nodes"].Int() == 1);
  CHECK(root["nodes"].size() == 1);
  REQUIRE(root["pending_by_reason"].size() == 1);
  CHECK(root["pending_by_reason"][size_t{0}]["reason"].String() == "Insufficient cpu");
  CHECK(root["pending_by_reason"][size_t{0}]["pods"].Int() == 2);
  CHECK(root["pending_by_reason"][size_t{0}]["jobs"].Int() == 1);
  CHECK(errors.empty());
}

TEST_CASE("The job document carries the explanation and events as text, clipped") {
  Recorded r;
  auto job = r.h.cache().Job("ns/big");
  REQUIRE(job);
  const std::string hostile = "<script>alert(1)</script>\"quoted\" & more";
  std::vector<EventRow> events = {
      {"Warning", "<b>", hostile, "PodGroup/big", 2, "t"},
      {"Normal", "Long", std::string(5000, 'x'), "PodGroup/big", 1, "s"}};
  json::Document doc =
      Parse(JobJson(*job, r.recorder.Explanation(job->id).get(), true, events, base::Clock::now()));
  json::Errors errors;
  json::Reader root(&doc, &errors);
  CHECK(root["explanation"]["considered"].Bool());
  CHECK(root["explanation"]["unplaced"][size_t{0}]["reasons"][size_t{0}]["nodes"].Int() == 2);
  CHECK(root["events"][size_t{0}]["message"].String() == hostile);
  CHECK(root["events"][size_t{0}]["reason"].String() == "<b>");
  CHECK(root["events"][size_t{1}]["message"].String().size() == kMaxTextBytes);
  CHECK(root["pods"].size() == 2);
  CHECK(errors.empty());
}

TEST_CASE("Events are kept newest first, at most kMaxEvents") {
  std::vector<EventRow> rows;
  for (int i = 0; i < 30; ++i) {
    EventRow e;
    e.last_seen = "2026-12-03T05:" + std::string(i < 10 ? "0" : "") + std::to_string(i) + ":00Z";
    rows.push_back(e);
  }
  KeepNewestEvents(&rows);
  REQUIRE(rows.size() == kMaxEvents);
  CHECK(rows.front().last_seen == "2026-12-03T05:29:00Z");
}

TEST_CASE("ParseLimit takes whole numbers within bounds and names the parameter otherwise") {
  CHECK(*ParseLimit(std::nullopt, 7, 10) == 7);
  CHECK(*ParseLimit(std::string("10"), 7, 10) == 10);
  for (const char* bad : {"0", "11", "-1", "1e3", "", "99999999999999999999", "3x"}) {
    auto r = ParseLimit(std::string(bad), 7, 10);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message().rfind("limit: must be a whole number from 1 to 10", 0) == 0);
  }
}

// One request over a fresh loopback connection; the whole answer (status line, headers, body).
std::string Fetch(int port, const std::string& request) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  REQUIRE(::send(fd, request.data(), request.size(), 0) == static_cast<ssize_t>(request.size()));
  std::string out;
  char buf[8192];
  ssize_t n;
  while ((n = ::recv(fd, buf, sizeof(buf), 0)) > 0) out.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return out;
}

std::string Get(int port, const std::string& target) {
  return Fetch(port, "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
}

TEST_CASE("The dashboard serves its pages and documents read-only, with safe headers") {
  Recorded r;
  auto started = DashboardServer::Start("127.0.0.1:0", AdminServerOptions(), r.Sources());
  REQUIRE(started.ok());
  const int port = (*started)->port();

  std::string page = Get(port, "/");
  CHECK(page.rfind("HTTP/1.1 200", 0) == 0);
  CHECK(page.find("Content-Security-Policy: default-src 'none'; script-src 'self'") !=
        std::string::npos);
  CHECK(page.find("X-Frame-Options: DENY") != std::string::npos);
  CHECK(page.find("<script src=\"/app.js\" defer></script>") != std::string::npos);
  std::string script = Get(port, "/app.js");
  CHECK(script.find("text/javascript") != std::string::npos);
  // Text goes into the DOM as text: no markup sinks anywhere in the script.
  for (const char* sink : {"innerHTML =", "outerHTML", "insertAdjacentHTML", "document.write"})
    CHECK(script.find(sink) == std::string::npos);

  std::string jobs = Get(port, "/api/v1/jobs?queue=default");
  CHECK(jobs.rfind("HTTP/1.1 200", 0) == 0);
  CHECK(jobs.find("Cache-Control: no-store") != std::string::npos);
  CHECK(jobs.find("\"total\":1") != std::string::npos);
  CHECK(Get(port, "/api/v1/job?namespace=ns&name=big").find("Insufficient cpu") !=
        std::string::npos);
  CHECK(Get(port, "/api/v1/job?namespace=ns&name=nothing").rfind("HTTP/1.1 404", 0) == 0);
  std::string bad = Get(port, "/api/v1/jobs?limit=abc");
  CHECK(bad.rfind("HTTP/1.1 400", 0) == 0);
  CHECK(bad.find("limit: must be a whole number") != std::string::npos);
  CHECK(Get(port, "/api/v1/job?name=big").find("namespace: required") != std::string::npos);
  CHECK(Get(port, "/api/v1/job?namespace=ns&name=" + std::string(300, 'x'))
            .find("name: at most 253 characters") != std::string::npos);
  CHECK(Get(port, "/api/v1/history").find("\"binds\":1") != std::string::npos);
  CHECK(Get(port, "/api/v1/queues").find("\"name\":\"other\"") != std::string::npos);
  CHECK(Get(port, "/api/v1/overview").find("\"version\":\"9.9.9\"") != std::string::npos);
  CHECK(Get(port, "/api/v1/cluster").find("\"total_nodes\":2") != std::string::npos);
  std::string post = Fetch(port,
                           "POST /api/v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: "
                           "0\r\nConnection: close\r\n\r\n");
  CHECK(post.rfind("HTTP/1.1 405", 0) == 0);
}

TEST_CASE("The dashboard follows the admin API's rules for addresses and certificates") {
  Recorded r;
  DashboardSources sources = r.Sources();
  auto open = DashboardServer::Start("0.0.0.0:0", AdminServerOptions(), sources);
  REQUIRE_FALSE(open.ok());
  CHECK(open.status().message().rfind("--dashboard-address 0.0.0.0:0: beyond loopback", 0) == 0);
  AdminServerOptions half;
  half.tls_cert_file = "/nonexistent/cert.pem";
  auto cert_only = DashboardServer::Start("127.0.0.1:0", half, sources);
  REQUIRE_FALSE(cert_only.ok());
  CHECK(cert_only.status().message() ==
        "--admin-tls-cert and --admin-tls-key must be given together");
  auto bad = DashboardServer::Start("127.0.0.1", AdminServerOptions(), sources);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("dashboard-address") != std::string::npos);
}

}  // namespace
}  // namespace tephra::scheduler::testing
