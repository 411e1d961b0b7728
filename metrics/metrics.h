// Prometheus metrics: counters, gauges and histograms, with or without labels, collected in a
// Registry that renders the text exposition format 0.0.4 for /metrics.
//
// Thread-safety: everything here is thread-safe. The hot path (Counter::Inc, Gauge::Set/Add,
// Histogram::Observe) is lock-free atomics. WithLabels takes the family's lock to find or create
// the labelled child; hot paths look a child up once and keep the reference, which stays valid
// for the registry's lifetime.
//
// Registering a metric twice with the same definition returns the existing one (so several
// work queues can share `workqueue_depth{name=...}`); an invalid name or a conflicting
// definition is a programming error and stops the process at start-up.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "sync/mutex.h"

namespace tephra::metrics {

// Content type of Registry::Render()'s output.
inline constexpr std::string_view kTextFormatContentType =
    "text/plain; version=0.0.4; charset=utf-8";

namespace internal {

// One time series of a family. Renders its sample lines given the family name and its own
// rendered labels (`a="x",b="y"`, no braces; empty when unlabelled).
class Child {
 public:
  virtual ~Child() = default;
  virtual void Render(const std::string& name, const std::string& labels,
                      std::string* out) const = 0;
};

}  // namespace internal

// A value that only goes up (requests served, errors seen).
class Counter final : public internal::Child {
 public:
  // Negative deltas are ignored: a counter never decreases.
  void Inc(double delta = 1);
  double Value() const;

  void Render(const std::string& name, const std::string& labels, std::string* out) const override;

 private:
  // Whole increments (the common Inc()) are one atomic add on an integer; only fractional
  // deltas need the compare-and-swap loop of an atomic double.
  std::atomic<uint64_t> whole_{0};
  std::atomic<double> fraction_{0};
};

// A value that goes up and down (queue depth, connections).
class Gauge final : public internal::Child {
 public:
  void Set(double value) { value_.store(value, std::memory_order_relaxed); }
  void Add(double delta);
  void Sub(double delta) { Add(-delta); }
  void Inc() { Add(1); }
  void Dec() { Add(-1); }
  double Value() const { return value_.load(std::memory_order_relaxed); }

  void Render(const std::string& name, const std::string& labels, std::string* out) const override;

 private:
  std::atomic<double> value_{0};
};

// Counts observations into cumulative buckets (`le` upper bounds) plus their sum and count.
class Histogram final : public internal::Child {
 public:
  // `upper_bounds` must be strictly increasing and finite (Registry validates them).
  explicit Histogram(std::shared_ptr<const std::vector<double>> upper_bounds);

  void Observe(double value);

  struct Snapshot {
    std::vector<uint64_t> cumulative;  // one per upper bound, then +Inf (== count)
    double sum = 0;
    uint64_t count = 0;
  };
  // The count is the sum of the buckets, so `_count` always equals the +Inf bucket.
  Snapshot Snap() const;

  void Render(const std::string& name, const std::string& labels, std::string* out) const override;

 private:
  std::shared_ptr<const std::vector<double>> bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> counts_;  // bounds_->size() + 1, non-cumulative
  std::atomic<double> sum_{0};
};

// Prometheus client defaults: .005 .01 .025 .05 .1 .25 .5 1 2.5 5 10 (seconds).
std::vector<double> DefaultBuckets();
// start, start*factor, ... (count values); start > 0, factor > 1.
std::vector<double> ExponentialBuckets(double start, double factor, int count);
// start, start+width, ... (count values); width > 0.
std::vector<double> LinearBuckets(double start, double width, int count);

struct FamilyOptions {
  // Upper bound on distinct label sets (0: unbounded). Label values often come from outside
  // (paths, namespaces); past the cap every new set is counted under one set whose values are
  // all "other", and a warning is logged once.
  size_t max_label_sets = 0;
};

namespace internal {

// Everything one metric name owns: help, type, label names and the labelled children.
class Family {
 public:
  using ChildFactory = std::function<std::unique_ptr<Child>()>;

  Family(std::string name, std::string help, std::string type, std::vector<std::string> label_names,
         FamilyOptions options, ChildFactory factory);

  // Finds or creates the child for `values` (one per label name). A wrong number of values is
  // a caller bug: it is logged once and answered with a child that is never exported.
  Child& Get(const std::vector<std::string>& values);

  // Appends HELP, TYPE and every child's samples; nothing when there are no children yet.
  void Render(std::string* out) const;

  const std::string& name() const { return name_; }
  const std::string& type() const { return type_; }
  const std::vector<std::string>& label_names() const { return label_names_; }
  size_t size() const;

 private:
  const std::string name_;
  const std::string help_;
  const std::string type_;
  const std::vector<std::string> label_names_;
  const FamilyOptions options_;
  const ChildFactory factory_;

  mutable sync::Mutex mu_;
  // Keyed by label values; node-based so child addresses are stable.
  std::map<std::vector<std::string>, std::unique_ptr<Child>> children_ GUARDED_BY(mu_);
  std::unique_ptr<Child> discard_ GUARDED_BY(mu_);  // answers wrong-arity lookups
  bool warned_cap_ GUARDED_BY(mu_) = false;
  bool warned_arity_ GUARDED_BY(mu_) = false;
};

}  // namespace internal

// A family of one metric type keyed by label values, e.g.
//   CounterVec& requests = registry.AddCounterVec("admission_requests_total", "...",
//                                                 {"path", "verdict"});
//   requests.WithLabels({"/jobs/validate", "allowed"}).Inc();
template <typename M>
class MetricVec {
 public:
  explicit MetricVec(internal::Family* family) : family_(family) {}

  // Values in the order of the label names. Invalid UTF-8 is replaced so the exposition stays
  // parseable. The reference stays valid for the registry's lifetime.
  M& WithLabels(const std::vector<std::string>& values) {
    return static_cast<M&>(family_->Get(values));
  }
  // Number of label sets created so far.
  size_t size() const { return family_->size(); }

 private:
  internal::Family* family_;
};

using CounterVec = MetricVec<Counter>;
using GaugeVec = MetricVec<Gauge>;
using HistogramVec = MetricVec<Histogram>;

class Registry {
 public:
  Registry();
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  Counter& AddCounter(std::string_view name, std::string_view help);
  CounterVec& AddCounterVec(std::string_view name, std::string_view help,
                            std::vector<std::string> label_names, FamilyOptions options = {});
  Gauge& AddGauge(std::string_view name, std::string_view help);
  GaugeVec& AddGaugeVec(std::string_view name, std::string_view help,
                        std::vector<std::string> label_names, FamilyOptions options = {});
  Histogram& AddHistogram(std::string_view name, std::string_view help,
                          std::vector<double> upper_bounds = DefaultBuckets());
  HistogramVec& AddHistogramVec(std::string_view name, std::string_view help,
                                std::vector<std::string> label_names,
                                std::vector<double> upper_bounds = DefaultBuckets(),
                                FamilyOptions options = {});

  // Metrics whose value is computed when scraped (process statistics, cache sizes). `read` runs
  // on the scraping thread and must be thread-safe and cheap.
  void AddGaugeFunc(std::string_view name, std::string_view help, std::function<double()> read);
  void AddCounterFunc(std::string_view name, std::string_view help, std::function<double()> read);

  // The text exposition format 0.0.4: families sorted by name, label sets sorted by values.
  std::string Render() const;

 private:
  struct Entry {
    std::unique_ptr<internal::Family> family;
    std::string signature;  // type, labels and buckets: re-registration must match it
    std::variant<std::monostate, CounterVec, GaugeVec, HistogramVec> vec;  // handed out
  };
  // Creates the family, or returns the existing one after checking the definitions match.
  Entry& AddFamily(std::string_view name, std::string_view help, std::string type,
                   std::vector<std::string> label_names, FamilyOptions options,
                   std::string signature, internal::Family::ChildFactory factory);
  template <typename M>
  MetricVec<M>& VecOf(Entry& entry);

  mutable sync::Mutex mu_;
  std::map<std::string, Entry, std::less<>> families_ GUARDED_BY(mu_);
};

// The process-wide registry; it carries the process metrics. Tests use their own Registry.
Registry& DefaultRegistry();

// process_cpu_seconds_total, process_resident_memory_bytes, process_virtual_memory_bytes,
// process_start_time_seconds, process_open_fds and process_max_fds, read from /proc at scrape.
void RegisterProcessMetrics(Registry& registry);

// Validation rules, exposed for tests: metric names [a-zA-Z_:][a-zA-Z0-9_:]*, label names
// [a-zA-Z_][a-zA-Z0-9_]* not starting with "__" (histograms also reserve "le").
bool IsValidMetricName(std::string_view name);
bool IsValidLabelName(std::string_view name);

// Sample value formatting as Prometheus' Go client does it: "0", "1.5", "1e+06", "+Inf", "NaN".
std::string FormatValue(double value);

}  // namespace tephra::metrics
