#include "metrics/metrics.h"

#include <limits>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

namespace tephra::metrics {
namespace {

TEST_CASE("Exposition text matches the Prometheus 0.0.4 format exactly") {
  Registry registry;
  auto& requests =
      registry.AddCounterVec("http_requests_total", "Requests served.\nBy path.", {"path", "code"});
  requests.WithLabels({"/a\"b", "200"}).Inc(3);
  requests.WithLabels({"/back\\slash\nnl", "500"}).Inc();
  registry.AddGauge("temperature_celsius", "Current temperature with a \\ backslash.").Set(-1.5);
  auto& latency = registry.AddHistogramVec("latency_seconds", "Latency.", {"op"}, {0.1, 0.5, 1});
  for (double v : {0.0625, 0.5, 0.75, 3.0}) latency.WithLabels({"get"}).Observe(v);
  registry.AddCounter("plain_total", "No labels.");

  const std::string expected =
      "# HELP http_requests_total Requests served.\\nBy path.\n"
      "# TYPE http_requests_total counter\n"
      "http_requests_total{path=\"/a\\\"b\",code=\"200\"} 3\n"
      "http_requests_total{path=\"/back\\\\slash\\nnl\",code=\"500\"} 1\n"
      "# HELP latency_seconds Latency.\n"
      "# TYPE latency_seconds histogram\n"
      "latency_seconds_bucket{op=\"get\",le=\"0.1\"} 1\n"
      "latency_seconds_bucket{op=\"get\",le=\"0.5\"} 2\n"
      "latency_seconds_bucket{op=\"get\",le=\"1\"} 3\n"
      "latency_seconds_bucket{op=\"get\",le=\"+Inf\"} 4\n"
      "latency_seconds_sum{op=\"get\"} 4.3125\n"
      "latency_seconds_count{op=\"get\"} 4\n"
      "# HELP plain_total No labels.\n"
      "# TYPE plain_total counter\n"
      "plain_total 0\n"
      "# HELP temperature_celsius Current temperature with a \\\\ backslash.\n"
      "# TYPE temperature_celsius gauge\n"
      "temperature_celsius -1.5\n";
  CHECK(registry.Render() == expected);
}

TEST_CASE("An unlabelled histogram uses the default buckets") {
  Registry registry;
  registry.AddHistogram("op_seconds", "Op.").Observe(0.003);
  const std::string text = registry.Render();
  CHECK(text.find("op_seconds_bucket{le=\"0.005\"} 1\n") != std::string::npos);
  CHECK(text.find("op_seconds_bucket{le=\"2.5\"} 1\n") != std::string::npos);
  CHECK(text.find("op_seconds_bucket{le=\"10\"} 1\n") != std::string::npos);
  CHECK(text.find("op_seconds_bucket{le=\"+Inf\"} 1\n") != std::string::npos);
  CHECK(text.find("op_seconds_sum 0.003\n") != std::string::npos);
  CHECK(text.find("op_seconds_count 1\n") != std::string::npos);
  CHECK(DefaultBuckets().size() == 11);
}

TEST_CASE("Values are formatted like Prometheus' Go client") {
  CHECK(FormatValue(0) == "0");
  CHECK(FormatValue(1) == "1");
  CHECK(FormatValue(-2.5) == "-2.5");
  CHECK(FormatValue(0.005) == "0.005");
  CHECK(FormatValue(123456) == "123456");
  CHECK(FormatValue(1e6) == "1e+06");
  CHECK(FormatValue(1234567) == "1.234567e+06");
  CHECK(FormatValue(0.0001) == "0.0001");
  CHECK(FormatValue(0.00001) == "1e-05");
  CHECK(FormatValue(std::numeric_limits<double>::infinity()) == "+Inf");
  CHECK(FormatValue(-std::numeric_limits<double>::infinity()) == "-Inf");
  CHECK(FormatValue(std::numeric_limits<double>::quiet_NaN()) == "NaN");
}

TEST_CASE("Empty label families are not exported and gauges move both ways") {
  Registry registry;
  auto& vec = registry.AddGaugeVec("unused", "Never touched.", {"x"});
  CHECK(registry.Render().empty());
  auto& g = vec.WithLabels({"a"});
  g.Inc();
  g.Add(4);
  g.Dec();
  g.Sub(0.5);
  CHECK(g.Value() == 3.5);
  CHECK(registry.Render() ==
        "# HELP unused Never touched.\n# TYPE unused gauge\nunused{x=\"a\"} 3.5\n");
}

TEST_CASE("Counters never go down") {
  Registry registry;
  Counter& c = registry.AddCounter("c_total", "c");
  c.Inc(2);
  c.Inc(-5);
  c.Inc(std::numeric_limits<double>::quiet_NaN());
  CHECK(c.Value() == 2);
  c.Inc(0.25);  // whole and fractional increments add up
  c.Inc();
  c.Inc(1e300);
  CHECK(c.Value() == 1e300);
  Counter& d = registry.AddCounter("d_total", "d");
  d.Inc(0.25);
  d.Inc(3);
  CHECK(d.Value() == 3.25);
  CHECK(registry.Render().find("d_total 3.25\n") != std::string::npos);
}

TEST_CASE("Registering the same definition twice returns the same metric") {
  Registry registry;
  auto& a = registry.AddCounterVec("jobs_total", "Jobs.", {"queue"});
  auto& b = registry.AddCounterVec("jobs_total", "Jobs.", {"queue"});
  CHECK(&a == &b);
  a.WithLabels({"q1"}).Inc();
  CHECK(b.WithLabels({"q1"}).Value() == 1);
  CHECK(&registry.AddGauge("g", "g") == &registry.AddGauge("g", "g"));
}

TEST_CASE("Concurrent increments and observations all count") {
  Registry registry;
  auto& counter = registry.AddCounterVec("hits_total", "Hits.", {"worker"});
  auto& histogram = registry.AddHistogram("h_seconds", "H.", {1, 2});
  Gauge& gauge = registry.AddGauge("g", "G.");
  constexpr int kThreads = 8;
  constexpr int kPerThread = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      // Half the threads share one label set, half look it up every time.
      Counter& shared = counter.WithLabels({"shared"});
      for (int i = 0; i < kPerThread; ++i) {
        shared.Inc();
        counter.WithLabels({"w" + std::to_string(t % 2)}).Inc();
        histogram.Observe(i % 3);
        gauge.Inc();
        gauge.Dec();
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(counter.WithLabels({"shared"}).Value() == kThreads * kPerThread);
  CHECK(counter.WithLabels({"w0"}).Value() + counter.WithLabels({"w1"}).Value() ==
        kThreads * kPerThread);
  Histogram::Snapshot snap = histogram.Snap();
  CHECK(snap.count == static_cast<uint64_t>(kThreads * kPerThread));
  CHECK(snap.cumulative.back() == snap.count);
  CHECK(gauge.Value() == 0);
}

TEST_CASE("A family's label sets are capped and the excess goes to \"other\"") {
  Registry registry;
  FamilyOptions options;
  options.max_label_sets = 2;
  auto& vec = registry.AddCounterVec("by_path_total", "By path.", {"path", "verdict"}, options);
  vec.WithLabels({"/a", "ok"}).Inc();
  vec.WithLabels({"/b", "ok"}).Inc();
  vec.WithLabels({"/c", "ok"}).Inc();
  vec.WithLabels({"/d", "no"}).Inc(2);
  vec.WithLabels({"/a", "ok"}).Inc();  // existing sets keep working after the cap
  CHECK(vec.size() == 3);
  CHECK(vec.WithLabels({"/a", "ok"}).Value() == 2);
  CHECK(vec.WithLabels({"/zzz", "x"}).Value() == 3);  // the "other" set
  const std::string text = registry.Render();
  CHECK(text.find("by_path_total{path=\"other\",verdict=\"other\"} 3\n") != std::string::npos);
  CHECK(text.find("/c") == std::string::npos);
}

TEST_CASE("Label values with invalid UTF-8 are repaired and a wrong arity is dropped") {
  Registry registry;
  auto& vec = registry.AddCounterVec("bytes_total", "B.", {"v"});
  vec.WithLabels({std::string("caf\xC3\xA9 \xFF end")}).Inc();
  vec.WithLabels({"a", "b"}).Inc();  // two values for one label: not exported
  const std::string text = registry.Render();
  CHECK(text.find("bytes_total{v=\"caf\xC3\xA9 \xEF\xBF\xBD end\"} 1\n") != std::string::npos);
  CHECK(vec.size() == 1);
}

TEST_CASE("Metric and label names are validated") {
  CHECK(IsValidMetricName("workqueue_depth"));
  CHECK(IsValidMetricName("ns:rule_total"));
  CHECK_FALSE(IsValidMetricName("1abc"));
  CHECK_FALSE(IsValidMetricName("with-dash"));
  CHECK_FALSE(IsValidMetricName(""));
  CHECK(IsValidLabelName("verdict"));
  CHECK_FALSE(IsValidLabelName("__reserved"));
  CHECK_FALSE(IsValidLabelName("a:b"));
}

TEST_CASE("Gauge and counter functions are read at scrape time") {
  Registry registry;
  double cache_size = 7;
  registry.AddGaugeFunc("cache_objects", "Objects cached.", [&] { return cache_size; });
  CHECK(registry.Render().find("cache_objects 7\n") != std::string::npos);
  cache_size = 9;
  CHECK(registry.Render().find("cache_objects 9\n") != std::string::npos);
}

TEST_CASE("Process metrics come from /proc") {
  Registry registry;
  RegisterProcessMetrics(registry);
  const std::string text = registry.Render();
  for (const char* name : {"process_cpu_seconds_total ", "process_resident_memory_bytes ",
                           "process_virtual_memory_bytes ", "process_start_time_seconds ",
                           "process_open_fds ", "process_max_fds "}) {
    INFO(name);
    size_t at = text.find(std::string("\n") + name);
    REQUIRE(at != std::string::npos);
    const double value = std::stod(text.substr(at + 1 + std::string(name).size()));
    CHECK(value >= 0);
    if (std::string(name) != "process_cpu_seconds_total ") CHECK(value > 0);
  }
  CHECK(text.find("# TYPE process_cpu_seconds_total counter") != std::string::npos);
  // The start time is a plausible Unix time (after 2020).
  size_t at = text.find("\nprocess_start_time_seconds ");
  CHECK(std::stod(text.substr(at + 28)) > 1.5e9);
  // The default registry carries them too.
  CHECK(DefaultRegistry().Render().find("process_open_fds") != std::string::npos);
}

}  // namespace
}  // namespace tephra::metrics
