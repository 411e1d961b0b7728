// Benchmark of tephra-admission's request path: Job validation reviews over loopback TLS to the
// daemon's own server (AdmissionServer: Beast HTTPS, the router, the /jobs/validate handler with
// a queue cache), from 64 keep-alive connections of an asynchronous Beast client.
//
//   bench_admission [--connections 64] [--rate 1000] [--seconds 10] [--json FILE]
//
// Two runs: a fixed offered load (--rate requests/s, open loop: each request has a scheduled
// send time and its latency counts from that time, so a stalled server cannot hide queueing),
// then maximum throughput (closed loop: every connection sends its next request as soon as the
// previous answer arrived). The first second of each run is warm-up and not recorded.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <glog/logging.h>

#include "api/scheduling.h"
#include "api/validation.h"
#include "metrics/metrics.h"
#include "webhooks/admission/handlers.h"
#include "webhooks/certs/certificates.h"
#include "webhooks/server/server.h"

namespace {

using namespace tephra;  // NOLINT(build/namespaces): a benchmark's own file
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using Clock = std::chrono::steady_clock;

std::string Arg(int argc, char** argv, const std::string& name, const std::string& def) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (argv[i] == name) return argv[i + 1];
  }
  return def;
}

// A review of a two-task training job as kubectl would send it after mutation (~2 KB).
std::string JobReview() {
  const std::string container =
      R"({"name":"trainer","image":"registry.example.com/ml/trainer:2.3.1","command":["python","train.py"],
      "env":[{"name":"EPOCHS","value":"90"},{"name":"BATCH","value":"256"}],
      "resources":{"requests":{"cpu":"4","memory":"16Gi","nvidia.com/gpu":"1"},
                   "limits":{"cpu":"4","memory":"16Gi","nvidia.com/gpu":"1"}},
      "volumeMounts":[{"name":"data","mountPath":"/data"}]})";
  auto task = [&](const std::string& name, int replicas) {
    return R"({"name":")" + name + R"(","replicas":)" + std::to_string(replicas) +
           R"(,"minAvailable":)" + std::to_string(replicas) +
           R"(,"maxRetry":3,"policies":[{"event":"PodEvicted","action":"RestartJob"}],
           "template":{"metadata":{"labels":{"app":"resnet"}},"spec":{"restartPolicy":"OnFailure",
           "containers":[)" +
           container +
           R"(],"volumes":[{"name":"data","persistentVolumeClaim":{"claimName":"imagenet"}}]}}})";
  };
  std::string job =
      R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{"name":"resnet",
      "namespace":"ml","labels":{"team":"vision"}},"spec":{"schedulerName":"volcano","queue":"default",
      "minAvailable":5,"maxRetry":3,"plugins":{"pytorch":["--master=master","--worker=worker"],"svc":[]},
      "policies":[{"event":"PodFailed","action":"RestartJob"}],"tasks":[)" +
      task("master", 1) + "," + task("worker", 4) + "]}}";
  return R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"b5d7e3a4",
      "kind":{"group":"batch.volcano.sh","version":"v1alpha1","kind":"Job"},
      "resource":{"group":"batch.volcano.sh","version":"v1alpha1","resource":"jobs"},
      "name":"resnet","namespace":"ml","operation":"CREATE","userInfo":{"username":"alice"},
      "object":)" +
         job + R"(,"dryRun":false}})";
}

struct Run {
  double rate = 0;  // 0: as fast as possible
  Clock::time_point start;
  Clock::time_point record_from;
  Clock::time_point end;
  std::atomic<int64_t> next_slot{0};
  std::vector<double> latencies_ms;  // the client's single thread appends
  int64_t errors = 0;
};

// One keep-alive TLS connection sending reviews one after another.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(asio::io_context& io, ssl::context& tls, Run& run,
             const http::request<http::string_body>& req)
      : stream_(io, tls), timer_(io), run_(run), req_(req) {}

  void Start(const asio::ip::tcp::endpoint& endpoint) {
    beast::get_lowest_layer(stream_).async_connect(
        endpoint, [self = shared_from_this()](beast::error_code ec) {
          if (ec) return self->Fail("connect", ec);
          self->stream_.async_handshake(ssl::stream_base::client, [self](beast::error_code e) {
            if (e) return self->Fail("handshake", e);
            self->Next();
          });
        });
  }

 private:
  void Next() {
    if (run_.rate <= 0) {
      scheduled_ = Clock::now();
      if (scheduled_ >= run_.end) return;
      Send();
      return;
    }
    int64_t slot = run_.next_slot++;
    scheduled_ =
        run_.start + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(static_cast<double>(slot) / run_.rate));
    if (scheduled_ >= run_.end) return;
    timer_.expires_at(scheduled_);
    timer_.async_wait([self = shared_from_this()](beast::error_code) { self->Send(); });
  }

  void Send() {
    http::async_write(stream_, req_, [self = shared_from_this()](beast::error_code ec, size_t) {
      if (ec) return self->Fail("write", ec);
      self->res_ = {};
      http::async_read(self->stream_, self->buffer_, self->res_,
                       [self](beast::error_code e, size_t) {
                         if (e) return self->Fail("read", e);
                         self->Record();
                         self->Next();
                       });
    });
  }

  void Record() {
    bool ok =
        res_.result_int() == 200 && res_.body().find(R"("allowed":true)") != std::string::npos;
    if (scheduled_ < run_.record_from) return;
    if (!ok) {
      ++run_.errors;
      return;
    }
    run_.latencies_ms.push_back(
        std::chrono::duration<double, std::milli>(Clock::now() - scheduled_).count());
  }

  void Fail(const char* what, beast::error_code ec) {
    ++run_.errors;
    std::fprintf(stderr, "connection %s: %s\n", what, ec.message().c_str());
  }

  ssl::stream<beast::tcp_stream> stream_;
  asio::steady_timer timer_;
  Run& run_;
  const http::request<http::string_body>& req_;
  beast::flat_buffer buffer_;
  http::response<http::string_body> res_;
  Clock::time_point scheduled_;
};

struct Result {
  double offered = 0;
  double achieved = 0;
  int64_t requests = 0;
  int64_t errors = 0;
  double p50 = 0, p90 = 0, p99 = 0, p999 = 0, max = 0;
};

double Percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  size_t i = static_cast<size_t>(p * static_cast<double>(sorted.size() - 1) + 0.5);
  return sorted[std::min(i, sorted.size() - 1)];
}

Result Measure(uint16_t port, const std::string& ca_file, int connections, double rate,
               double seconds) {
  asio::io_context io;
  ssl::context tls(ssl::context::tls_client);
  tls.load_verify_file(ca_file);
  tls.set_verify_mode(ssl::verify_peer);
  http::request<http::string_body> req{http::verb::post, "/jobs/validate", 11};
  req.set(http::field::host, "127.0.0.1");
  req.set(http::field::content_type, "application/json");
  req.keep_alive(true);
  req.body() = JobReview();
  req.prepare_payload();

  Run run;
  run.rate = rate;
  run.start = Clock::now() + std::chrono::milliseconds(200);  // connections set up first
  run.record_from = run.start + std::chrono::seconds(1);
  run.end = run.record_from +
            std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  asio::ip::tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), port);
  for (int i = 0; i < connections; ++i) {
    std::make_shared<Connection>(io, tls, run, req)->Start(endpoint);
  }
  io.run();

  Result r;
  std::sort(run.latencies_ms.begin(), run.latencies_ms.end());
  r.offered = rate;
  r.requests = static_cast<int64_t>(run.latencies_ms.size());
  r.errors = run.errors;
  r.achieved = static_cast<double>(r.requests) / seconds;
  r.p50 = Percentile(run.latencies_ms, 0.50);
  r.p90 = Percentile(run.latencies_ms, 0.90);
  r.p99 = Percentile(run.latencies_ms, 0.99);
  r.p999 = Percentile(run.latencies_ms, 0.999);
  r.max = run.latencies_ms.empty() ? 0 : run.latencies_ms.back();
  return r;
}

std::string ToJson(const Result& r) {
  char buf[512];
  std::snprintf(
      buf, sizeof(buf),
      R"({"offered_rps": %.0f, "achieved_rps": %.1f, "requests": %lld, "errors": %lld, )"
      R"("p50_ms": %.3f, "p90_ms": %.3f, "p99_ms": %.3f, "p999_ms": %.3f, "max_ms": %.3f})",
      r.offered, r.achieved, static_cast<long long>(r.requests), static_cast<long long>(r.errors),
      r.p50, r.p90, r.p99, r.p999, r.max);
  return buf;
}

void Print(const char* what, const Result& r) {
  std::printf(
      "%-22s %9.1f req/s  p50 %.3f ms  p90 %.3f ms  p99 %.3f ms  p99.9 %.3f ms  max %.3f ms  "
      "errors %lld\n",
      what, r.achieved, r.p50, r.p90, r.p99, r.p999, r.max, static_cast<long long>(r.errors));
}

bool WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  return static_cast<bool>(out);
}

}  // namespace

int main(int argc, char** argv) {
  FLAGS_logtostderr = true;
  FLAGS_minloglevel = google::GLOG_WARNING;
  google::InitGoogleLogging(argv[0]);
  const int connections = std::atoi(Arg(argc, argv, "--connections", "64").c_str());
  const double rate = std::atof(Arg(argc, argv, "--rate", "1000").c_str());
  const double seconds = std::atof(Arg(argc, argv, "--seconds", "10").c_str());
  const std::string json_out = Arg(argc, argv, "--json", "");

  // Certificates as the daemon makes them, in a scratch directory.
  std::string dir = "/tmp/tephra-bench-admission-XXXXXX";
  if (::mkdtemp(dir.data()) == nullptr) return 1;
  auto now = std::chrono::system_clock::now();
  auto ca = webhooks::GenerateCa("bench-ca", std::chrono::hours(24), now);
  webhooks::SubjectAltNames sans;
  if (!ca.ok() || !webhooks::AddSubjectAltName("IP:127.0.0.1", &sans).ok()) return 1;
  auto serving =
      webhooks::IssueServingCertificate(*ca, "tephra-admission", sans, std::chrono::hours(24), now);
  if (!serving.ok() || !WriteFile(dir + "/ca.crt", ca->cert_pem) ||
      !WriteFile(dir + "/tls.crt", serving->cert_pem) ||
      !WriteFile(dir + "/tls.key", serving->key_pem)) {
    return 1;
  }

  api::StaticQueueLookup queues;
  auto queue = api::DecodeQueue(R"({"metadata":{"name":"default"},"status":{"state":"Open"}})");
  if (!queue.ok()) return 1;
  queues.Put(*queue);
  metrics::Registry registry;
  webhooks::AdmissionServerOptions options;
  options.address = "127.0.0.1";
  options.port = 0;
  options.cert_file = dir + "/tls.crt";
  options.key_file = dir + "/tls.key";
  webhooks::AdmissionServer server(options, registry);
  if (!server.AddAdmission(std::string(webhooks::kJobsValidate), webhooks::NewJobValidator(queues))
           .ok() ||
      !server.StartWebhooks().ok()) {
    return 1;
  }
  std::printf(
      "tephra-admission /jobs/validate over loopback TLS, %d connections, %u cores, %zu-byte "
      "reviews\n",
      connections, std::thread::hardware_concurrency(), JobReview().size());
  Result fixed = Measure(server.webhook_port(), dir + "/ca.crt", connections, rate, seconds);
  Print("fixed offered load", fixed);
  Result fastest = Measure(server.webhook_port(), dir + "/ca.crt", connections, 0, seconds);
  Print("maximum throughput", fastest);
  server.Stop(std::chrono::seconds(1));
  for (const char* f : {"/ca.crt", "/tls.crt", "/tls.key"}) ::unlink((dir + f).c_str());
  ::rmdir(dir.c_str());

  if (!json_out.empty()) {
    std::string text = "{\n  \"connections\": " + std::to_string(connections) +
                       ",\n  \"cores\": " + std::to_string(std::thread::hardware_concurrency()) +
                       ",\n  \"fixed_load\": " + ToJson(fixed) +
                       ",\n  \"max_throughput\": " + ToJson(fastest) + "\n}\n";
    if (!WriteFile(json_out, text)) return 1;
  }
  return fixed.errors + fastest.errors == 0 ? 0 : 1;
}
