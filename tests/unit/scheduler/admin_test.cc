// The admin API in-process, over loopback gRPC: tephractl's client against the scheduler's
// server, fed by a real session of the test harness.
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "cli/admin_client.h"
#include "scheduler/admin/admin_server.h"
#include "scheduler/replay/snapshot_io.h"
#include "tests/support/process.h"
#include "tests/unit/scheduler/harness.h"

namespace tephra::scheduler::testing {
namespace {

// A Volcano Job's PodGroup (owned by the Job) whose gang cannot fit, and one that does.
void Populate(Harness& h) {
  h.Node("n1", "cpu=4,memory=8Gi").Node("n2", "cpu=4,memory=8Gi").Queue("default");
  auto pg = std::make_shared<api::PodGroup>();
  pg->metadata.namespace_ = "ns";
  pg->metadata.name = "train-0f3c";
  pg->metadata.uid = "pg-uid";
  pg->metadata.owner_references.push_back(
      {"batch.volcano.sh/v1alpha1", "Job", "train", "job-uid", true, true});
  pg->spec.queue = "default";
  pg->spec.min_member = 3;
  pg->status.phase = "Inqueue";
  h.cache().UpsertPodGroup(pg);
  for (int i = 0; i < 3; ++i)
    h.Pod("ns/train-worker-" + std::to_string(i), "train-0f3c").Request("cpu=3").Add();
  h.Group("ns/small", "default", 1);
  h.Pod("ns/small-0", "small").Request("cpu=1").Add();
}

struct Served {
  Harness h;
  SessionRecorder recorder{{100, true}};
  std::unique_ptr<DecisionLog> log;
  std::unique_ptr<AdminServer> server;

  explicit Served(const AdminServerOptions& options = {"127.0.0.1:0", "", "", ""}) {
    Populate(h);
    log = std::make_unique<DecisionLog>(&h.binder(), &h.binder());
    h.decisions = log.get();
    h.inspect = [this](const Session& ssn) { recorder.Record(ssn, log->Take(ssn), ssn.Now()); };
    h.Run();
    AdminSources sources;
    sources.recorder = &recorder;
    sources.cache = &h.cache();
    sources.scheduler_names = {"volcano"};
    sources.version = "9.9.9";
    auto started = AdminServer::Start(options, sources);
    REQUIRE(started.ok());
    server = std::move(*started);
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(server->port()); }
};

// tephractl's connection settings: plaintext unless a CA is given.
cli::AdminConnection Conn(std::string address, std::string ca = "", std::string cert = "",
                          std::string key = "", std::string server_name = "") {
  cli::AdminConnection c;
  c.address = std::move(address);
  c.ca_file = std::move(ca);
  c.cert_file = std::move(cert);
  c.key_file = std::move(key);
  c.server_name = std::move(server_name);
  return c;
}

std::unique_ptr<cli::AdminClient> Connect(const cli::AdminConnection& c) {
  auto client = cli::AdminClient::Create(c);
  REQUIRE(client.ok());
  return std::move(*client);
}

TEST_CASE("ExplainJob finds a Volcano Job's PodGroup and returns the last session's explanation") {
  Served s;
  auto client = Connect(Conn(s.address()));
  auto e = client->ExplainJob("ns", "train", "");
  REQUIRE(e.ok());
  CHECK(e->pod_group() == "train-0f3c");
  CHECK(e->job() == "train");
  CHECK(e->phase() == "Inqueue");
  CHECK(e->current_phase() == "Inqueue");
  CHECK(e->session().id() == "session-1");
  CHECK(e->summary() == "2/3 tasks fit; 1 needs 3 CPU: 2 nodes Insufficient cpu");
  CHECK(e->gang().min_available() == 3);
  CHECK(e->gang().fit() == 2);
  REQUIRE(e->unplaced_size() == 1);
  CHECK(e->unplaced(0).reasons(0).reason() == "Insufficient cpu");
  CHECK(e->unplaced(0).reasons(0).nodes() == 2);
  CHECK(e->unplaced(0).request().quantities().at("cpu") == "3");
  CHECK(e->queue_state().name() == "default");
  CHECK(e->queue_state().share_plugin() == "proportion");
  CHECK(e->hints_size() > 0);
  CHECK_FALSE(e->scheduled());

  auto by_pg = client->ExplainJob("ns", "", "small");
  REQUIRE(by_pg.ok());
  CHECK(by_pg->scheduled());
  CHECK(by_pg->summary() == "1/1 tasks fit; gang of 1 is placed");
}

TEST_CASE("ExplainJob errors name what is missing") {
  Served s;
  auto client = Connect(Conn(s.address()));
  auto missing = client->ExplainJob("ns", "nope", "");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == StatusCode::kNotFound);
  CHECK(missing.status().message().find("no PodGroup of Job ns/nope") != std::string::npos);
  auto no_ns = client->ExplainJob("", "train", "");
  REQUIRE_FALSE(no_ns.ok());
  CHECK(no_ns.status().code() == StatusCode::kInvalidArgument);
  CHECK(no_ns.status().message().find("namespace") != std::string::npos);
  auto both = client->ExplainJob("ns", "train", "train-0f3c");
  REQUIRE_FALSE(both.ok());
  CHECK(both.status().message().find("exactly one of job and pod_group") != std::string::npos);
}

TEST_CASE("QueueUsage, GetInfo, health and DumpSnapshot") {
  Served s;
  auto client = Connect(Conn(s.address()));
  CHECK_FALSE(client->Health().ok());  // not before the scheduler says its caches synced
  s.server->SetServing(true);
  CHECK(client->Health().ok());
  auto usage = client->QueueUsage("");
  REQUIRE(usage.ok());
  CHECK(usage->session().id() == "session-1");
  REQUIRE(usage->queues_size() == 1);
  const auto& q = usage->queues(0);
  CHECK(q.name() == "default");
  CHECK(q.allocated().quantities().at("cpu") == "1");  // the small job, assumed bound
  CHECK(q.pending().quantities().at("cpu") == "9");
  CHECK(q.share_plugin() == "proportion");
  auto unknown = client->QueueUsage("nope");
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.status().code() == StatusCode::kNotFound);

  auto info = client->GetInfo();
  REQUIRE(info.ok());
  CHECK(info->version() == "9.9.9");
  CHECK(info->sessions() == 1);
  CHECK(info->actions_size() == 3);
  CHECK(info->explanations() == 2);
  CHECK_FALSE(info->tls());

  std::string text;
  REQUIRE(client->DumpSnapshot(false, [&](std::string_view chunk) { text += chunk; }).ok());
  SpecInterner interner;
  auto doc = DecodeSnapshot(text, interner);
  REQUIRE(doc.ok());
  CHECK(doc->session == "session-1");
  REQUIRE(doc->decisions);
  REQUIRE(doc->decisions->binds.size() == 1);
  CHECK(doc->decisions->binds[0].pod == "ns/small-0");
  text.clear();
  REQUIRE(client->DumpSnapshot(true, [&](std::string_view chunk) { text += chunk; }).ok());
  CHECK(DecodeSnapshot(text, interner).ok());

  s.server->Stop(std::chrono::milliseconds(100));
  cli::AdminConnection quick = Conn(s.address());
  quick.timeout = std::chrono::milliseconds(500);
  auto gone = Connect(quick)->ExplainJob("ns", "train", "");
  REQUIRE_FALSE(gone.ok());
  CHECK(gone.status().code() == StatusCode::kUnavailable);
}

TEST_CASE("bad admin server options are refused naming the flag") {
  Harness h;
  SessionRecorder recorder({10, false});
  AdminSources sources;
  sources.recorder = &recorder;
  sources.cache = &h.cache();
  auto no_port = AdminServer::Start({"127.0.0.1", "", "", ""}, sources);
  REQUIRE_FALSE(no_port.ok());
  CHECK(no_port.status().message().find("admin-address") != std::string::npos);
  auto half_tls = AdminServer::Start({"127.0.0.1:0", "/nonexistent/cert.pem", "", ""}, sources);
  REQUIRE_FALSE(half_tls.ok());
  CHECK(half_tls.status().message().find("--admin-tls-cert and --admin-tls-key") !=
        std::string::npos);
  auto unreadable = AdminServer::Start(
      {"127.0.0.1:0", "/nonexistent/cert.pem", "/nonexistent/key.pem", ""}, sources);
  REQUIRE_FALSE(unreadable.ok());
  CHECK(unreadable.status().message().find("--admin-tls-cert: cannot read /nonexistent/cert.pem") !=
        std::string::npos);
  auto ca_only = AdminServer::Start({"127.0.0.1:0", "", "", "/nonexistent/ca.pem"}, sources);
  REQUIRE_FALSE(ca_only.ok());
  CHECK(ca_only.status().message().find("--admin-tls-client-ca needs") != std::string::npos);
}

TEST_CASE("beyond loopback the admin API refuses to serve anonymous clients") {
  Harness h;
  SessionRecorder recorder({10, false});
  AdminSources sources;
  sources.recorder = &recorder;
  sources.cache = &h.cache();
  for (const std::string address : {"0.0.0.0:0", ":0", "[::]:0"}) {
    auto open = AdminServer::Start({address, "", "", ""}, sources);
    REQUIRE_FALSE(open.ok());
    CHECK(open.status().code() == StatusCode::kInvalidArgument);
    CHECK(open.status().message().find("--admin-tls-client-ca") != std::string::npos);
    CHECK(open.status().message().find("--admin-allow-anonymous") != std::string::npos);
  }
  auto loopback = AdminServer::Start({"127.0.0.1:0", "", "", ""}, sources);
  REQUIRE(loopback.ok());
  (*loopback)->Stop(std::chrono::milliseconds(0));
}

// Runs openssl; the test is skipped where it is not installed.
bool Openssl(const std::vector<std::string>& args) {
  std::vector<std::string> argv{"openssl"};
  argv.insert(argv.end(), args.begin(), args.end());
  return ::tephra::testing::RunCommand(argv).ok();
}

TEST_CASE("with a certificate and a client CA the admin API speaks mutual TLS") {
  std::string dir = "/tmp/tephra-admin-tls-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  auto f = [&](const std::string& name) { return dir + "/" + name; };
  std::ofstream(f("ext.cnf")) << "subjectAltName=DNS:localhost,IP:127.0.0.1\n";
  bool made = Openssl({"req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", f("ca.key"),
                       "-out", f("ca.crt"), "-days", "1", "-subj", "/CN=tephra-test-ca"}) &&
              Openssl({"req", "-newkey", "rsa:2048", "-nodes", "-keyout", f("server.key"), "-out",
                       f("server.csr"), "-subj", "/CN=localhost"}) &&
              Openssl({"x509", "-req", "-in", f("server.csr"), "-CA", f("ca.crt"), "-CAkey",
                       f("ca.key"), "-CAcreateserial", "-out", f("server.crt"), "-days", "1",
                       "-extfile", f("ext.cnf")}) &&
              Openssl({"req", "-newkey", "rsa:2048", "-nodes", "-keyout", f("client.key"), "-out",
                       f("client.csr"), "-subj", "/CN=tephractl"}) &&
              Openssl({"x509", "-req", "-in", f("client.csr"), "-CA", f("ca.crt"), "-CAkey",
                       f("ca.key"), "-CAcreateserial", "-out", f("client.crt"), "-days", "1"});
  if (!made) {
    WARN("openssl is not available; TLS test skipped");
    std::filesystem::remove_all(dir);
    return;
  }
  {
    Served s({"127.0.0.1:0", f("server.crt"), f("server.key"), f("ca.crt")});
    cli::AdminConnection c =
        Conn(s.address(), f("ca.crt"), f("client.crt"), f("client.key"), "localhost");
    auto client = Connect(c);
    auto info = client->GetInfo();
    REQUIRE(info.ok());
    CHECK(info->tls());
    // Without a client certificate the handshake fails.
    cli::AdminConnection anonymous = Conn(s.address(), f("ca.crt"), "", "", "localhost");
    anonymous.timeout = std::chrono::milliseconds(2000);
    CHECK_FALSE(Connect(anonymous)->GetInfo().ok());
    // Plaintext against a TLS port fails too.
    cli::AdminConnection plain = Conn(s.address());
    plain.timeout = std::chrono::milliseconds(2000);
    CHECK_FALSE(Connect(plain)->GetInfo().ok());
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tephra::scheduler::testing
