#include "metrics/metrics.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <sys/resource.h>
#include <unistd.h>

#include <glog/logging.h>

namespace tephra::metrics {
namespace {

constexpr std::string_view kReplacementChar = "\xEF\xBF\xBD";  // U+FFFD
constexpr std::string_view kOverflowLabelValue = "other";

// Length of the valid UTF-8 sequence starting at s[i], or 0 if it is invalid (overlong forms,
// surrogates and code points above U+10FFFF included).
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b0 = byte(i);
  if (b0 < 0x80) return 1;
  size_t len = 0;
  unsigned char lo = 0x80;
  unsigned char hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t k = 2; k < len; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return len;
}

bool IsValidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    size_t n = Utf8SequenceLength(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string SanitizeUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    size_t n = Utf8SequenceLength(s, i);
    if (n == 0) {
      out += kReplacementChar;
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

void AppendEscapedLabelValue(std::string_view value, std::string* out) {
  for (char c : value) {
    switch (c) {
      case '\\':
        *out += "\\\\";
        break;
      case '"':
        *out += "\\\"";
        break;
      case '\n':
        *out += "\\n";
        break;
      default:
        *out += c;
    }
  }
}

void AppendEscapedHelp(std::string_view help, std::string* out) {
  for (char c : help) {
    switch (c) {
      case '\\':
        *out += "\\\\";
        break;
      case '\n':
        *out += "\\n";
        break;
      default:
        *out += c;
    }
  }
}

// name{labels} value\n, where `labels` is already rendered.
void AppendSample(std::string_view name, std::string_view suffix, const std::string& labels,
                  std::string_view value, std::string* out) {
  *out += name;
  *out += suffix;
  if (!labels.empty()) {
    *out += '{';
    *out += labels;
    *out += '}';
  }
  *out += ' ';
  *out += value;
  *out += '\n';
}

// A metric whose value is read when scraped.
class FuncChild final : public internal::Child {
 public:
  explicit FuncChild(std::function<double()> read) : read_(std::move(read)) {}

  void Render(const std::string& name, const std::string& labels, std::string* out) const override {
    AppendSample(name, "", labels, FormatValue(read_()), out);
  }

 private:
  std::function<double()> read_;
};

}  // namespace

std::string FormatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  if (value == 0) return "0";
  // Go's strconv 'g' with shortest precision: scientific when the decimal exponent is below -4
  // or at least 6 ("1e+06", "1.5e-05"), fixed otherwise ("123456", "0.005").
  char buf[64];
  auto sci = std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::scientific);
  std::string_view text(buf, static_cast<size_t>(sci.ptr - buf));
  size_t e = text.find('e');
  int exponent = 0;
  if (e != std::string_view::npos) {
    std::string_view digits = text.substr(e + 1);
    if (!digits.empty() && digits[0] == '+') digits.remove_prefix(1);
    std::from_chars(digits.data(), digits.data() + digits.size(), exponent);
  }
  if (exponent < -4 || exponent >= 6) return std::string(text);
  auto fixed = std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::fixed);
  return std::string(buf, static_cast<size_t>(fixed.ptr - buf));
}

bool IsValidMetricName(std::string_view name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
    const bool digit = c >= '0' && c <= '9';
    if (!alpha && !(digit && i > 0)) return false;
  }
  return true;
}

bool IsValidLabelName(std::string_view name) {
  if (name.empty() || name.substr(0, 2) == "__") return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    const bool digit = c >= '0' && c <= '9';
    if (!alpha && !(digit && i > 0)) return false;
  }
  return true;
}

// ---- Counter, Gauge, Histogram ------------------------------------------------------------

void Counter::Inc(double delta) {
  if (!(delta >= 0)) return;  // also drops NaN
  // Integers up to 2^53 are exact in a double, so they can take the integer path.
  constexpr double kExactIntegers = 9007199254740992.0;
  if (delta < kExactIntegers && delta == std::floor(delta)) {
    whole_.fetch_add(static_cast<uint64_t>(delta), std::memory_order_relaxed);
  } else {
    fraction_.fetch_add(delta, std::memory_order_relaxed);
  }
}

double Counter::Value() const {
  return static_cast<double>(whole_.load(std::memory_order_relaxed)) +
         fraction_.load(std::memory_order_relaxed);
}

void Counter::Render(const std::string& name, const std::string& labels, std::string* out) const {
  AppendSample(name, "", labels, FormatValue(Value()), out);
}

void Gauge::Add(double delta) {
  value_.fetch_add(delta, std::memory_order_relaxed);
}

void Gauge::Render(const std::string& name, const std::string& labels, std::string* out) const {
  AppendSample(name, "", labels, FormatValue(Value()), out);
}

Histogram::Histogram(std::shared_ptr<const std::vector<double>> upper_bounds)
    : bounds_(std::move(upper_bounds)),
      counts_(std::make_unique<std::atomic<uint64_t>[]>(bounds_->size() + 1)) {}

void Histogram::Observe(double value) {
  // The first bucket whose upper bound is >= value (bounds are inclusive); NaN lands in +Inf.
  size_t index = bounds_->size();
  if (!std::isnan(value)) {
    index = static_cast<size_t>(std::lower_bound(bounds_->begin(), bounds_->end(), value) -
                                bounds_->begin());
  }
  counts_[index].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(value, std::memory_order_relaxed);
}

Histogram::Snapshot Histogram::Snap() const {
  Snapshot snap;
  snap.cumulative.resize(bounds_->size() + 1);
  uint64_t running = 0;
  for (size_t i = 0; i <= bounds_->size(); ++i) {
    running += counts_[i].load(std::memory_order_relaxed);
    snap.cumulative[i] = running;
  }
  snap.count = running;
  snap.sum = sum_.load(std::memory_order_relaxed);
  return snap;
}

void Histogram::Render(const std::string& name, const std::string& labels, std::string* out) const {
  const Snapshot snap = Snap();
  const std::string prefix = labels.empty() ? "" : labels + ",";
  for (size_t i = 0; i < bounds_->size(); ++i) {
    AppendSample(name, "_bucket", prefix + "le=\"" + FormatValue((*bounds_)[i]) + "\"",
                 std::to_string(snap.cumulative[i]), out);
  }
  AppendSample(name, "_bucket", prefix + "le=\"+Inf\"", std::to_string(snap.count), out);
  AppendSample(name, "_sum", labels, FormatValue(snap.sum), out);
  AppendSample(name, "_count", labels, std::to_string(snap.count), out);
}

std::vector<double> DefaultBuckets() {
  return {.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10};
}

std::vector<double> ExponentialBuckets(double start, double factor, int count) {
  std::vector<double> out;
  double bound = start;
  for (int i = 0; i < count; ++i) {
    out.push_back(bound);
    bound *= factor;
  }
  return out;
}

std::vector<double> LinearBuckets(double start, double width, int count) {
  std::vector<double> out;
  for (int i = 0; i < count; ++i) out.push_back(start + width * i);
  return out;
}

// ---- Family ---------------------------------------------------------------------------------

namespace internal {

Family::Family(std::string name, std::string help, std::string type,
               std::vector<std::string> label_names, FamilyOptions options, ChildFactory factory)
    : name_(std::move(name)),
      help_(std::move(help)),
      type_(std::move(type)),
      label_names_(std::move(label_names)),
      options_(options),
      factory_(std::move(factory)) {}

Child& Family::Get(const std::vector<std::string>& values) {
  sync::MutexLock lock(mu_);
  if (values.size() != label_names_.size()) {
    if (!warned_arity_) {
      LOG(ERROR) << "metric " << name_ << " has " << label_names_.size() << " labels but was given "
                 << values.size() << " values; the samples are dropped";
      warned_arity_ = true;
    }
    if (!discard_) discard_ = factory_();
    return *discard_;
  }
  const bool valid = std::all_of(values.begin(), values.end(),
                                 [](const std::string& v) { return IsValidUtf8(v); });
  std::vector<std::string> sanitized;
  if (!valid) {
    for (const auto& v : values) sanitized.push_back(SanitizeUtf8(v));
  }
  const std::vector<std::string>& key = valid ? values : sanitized;
  if (auto it = children_.find(key); it != children_.end()) return *it->second;

  std::vector<std::string> overflow;
  const std::vector<std::string>* chosen = &key;
  if (options_.max_label_sets > 0) {
    overflow.assign(label_names_.size(), std::string(kOverflowLabelValue));
    const size_t counted = children_.size() - (children_.count(overflow) > 0 ? 1 : 0);
    if (counted >= options_.max_label_sets) {
      if (!warned_cap_) {
        LOG(WARNING) << "metric " << name_ << " reached its limit of " << options_.max_label_sets
                     << " label sets; further new label sets are counted as \"other\"";
        warned_cap_ = true;
      }
      chosen = &overflow;
      if (auto it = children_.find(overflow); it != children_.end()) return *it->second;
    }
  }
  auto [it, inserted] = children_.emplace(*chosen, factory_());
  return *it->second;
}

size_t Family::size() const {
  sync::MutexLock lock(mu_);
  return children_.size();
}

void Family::Render(std::string* out) const {
  sync::MutexLock lock(mu_);
  if (children_.empty()) return;
  *out += "# HELP ";
  *out += name_;
  *out += ' ';
  AppendEscapedHelp(help_, out);
  *out += "\n# TYPE ";
  *out += name_;
  *out += ' ';
  *out += type_;
  *out += '\n';
  std::string labels;
  for (const auto& [values, child] : children_) {
    labels.clear();
    for (size_t i = 0; i < values.size(); ++i) {
      if (i > 0) labels += ',';
      labels += label_names_[i];
      labels += "=\"";
      AppendEscapedLabelValue(values[i], &labels);
      labels += '"';
    }
    child->Render(name_, labels, out);
  }
}

}  // namespace internal

// ---- Registry -------------------------------------------------------------------------------

Registry::Registry() = default;
Registry::~Registry() = default;

Registry::Entry& Registry::AddFamily(std::string_view name, std::string_view help, std::string type,
                                     std::vector<std::string> label_names, FamilyOptions options,
                                     std::string signature,
                                     internal::Family::ChildFactory factory) {
  CHECK(IsValidMetricName(name)) << "invalid metric name \"" << name << "\"";
  for (const auto& label : label_names) {
    CHECK(IsValidLabelName(label))
        << "metric " << name << ": invalid label name \"" << label << "\"";
    CHECK(!(type == "histogram" && label == "le"))
        << "metric " << name << ": histograms reserve the label \"le\"";
  }
  sync::MutexLock lock(mu_);
  if (auto it = families_.find(name); it != families_.end()) {
    CHECK(it->second.signature == signature)
        << "metric " << name << " registered twice with different definitions ("
        << it->second.signature << " vs " << signature << ")";
    return it->second;
  }
  Entry entry;
  entry.signature = std::move(signature);
  entry.family =
      std::make_unique<internal::Family>(std::string(name), std::string(help), std::move(type),
                                         std::move(label_names), options, std::move(factory));
  auto [it, inserted] = families_.emplace(std::string(name), std::move(entry));
  return it->second;
}

template <typename M>
MetricVec<M>& Registry::VecOf(Entry& entry) {
  sync::MutexLock lock(mu_);
  if (std::holds_alternative<std::monostate>(entry.vec)) {
    entry.vec.emplace<MetricVec<M>>(entry.family.get());
  }
  return std::get<MetricVec<M>>(entry.vec);
}

namespace {

std::string Signature(std::string_view type, const std::vector<std::string>& labels,
                      const FamilyOptions& options, const std::vector<double>* bounds) {
  std::string sig(type);
  sig += " labels=[";
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i > 0) sig += ',';
    sig += labels[i];
  }
  sig += "] max_label_sets=" + std::to_string(options.max_label_sets);
  if (bounds != nullptr) {
    sig += " buckets=[";
    for (size_t i = 0; i < bounds->size(); ++i) {
      if (i > 0) sig += ',';
      sig += FormatValue((*bounds)[i]);
    }
    sig += ']';
  }
  return sig;
}

std::shared_ptr<const std::vector<double>> CheckedBounds(std::string_view name,
                                                         std::vector<double> bounds) {
  if (!bounds.empty() && std::isinf(bounds.back()) && bounds.back() > 0) bounds.pop_back();
  for (size_t i = 0; i < bounds.size(); ++i) {
    CHECK(std::isfinite(bounds[i])) << "metric " << name << ": bucket bounds must be finite";
    CHECK(i == 0 || bounds[i - 1] < bounds[i])
        << "metric " << name << ": bucket bounds must be strictly increasing";
  }
  return std::make_shared<const std::vector<double>>(std::move(bounds));
}

}  // namespace

Counter& Registry::AddCounter(std::string_view name, std::string_view help) {
  return AddCounterVec(name, help, {}).WithLabels({});
}

CounterVec& Registry::AddCounterVec(std::string_view name, std::string_view help,
                                    std::vector<std::string> label_names, FamilyOptions options) {
  std::string sig = Signature("counter", label_names, options, nullptr);
  Entry& entry = AddFamily(name, help, "counter", std::move(label_names), options, std::move(sig),
                           [] { return std::make_unique<Counter>(); });
  return VecOf<Counter>(entry);
}

Gauge& Registry::AddGauge(std::string_view name, std::string_view help) {
  return AddGaugeVec(name, help, {}).WithLabels({});
}

GaugeVec& Registry::AddGaugeVec(std::string_view name, std::string_view help,
                                std::vector<std::string> label_names, FamilyOptions options) {
  std::string sig = Signature("gauge", label_names, options, nullptr);
  Entry& entry = AddFamily(name, help, "gauge", std::move(label_names), options, std::move(sig),
                           [] { return std::make_unique<Gauge>(); });
  return VecOf<Gauge>(entry);
}

Histogram& Registry::AddHistogram(std::string_view name, std::string_view help,
                                  std::vector<double> upper_bounds) {
  return AddHistogramVec(name, help, {}, std::move(upper_bounds)).WithLabels({});
}

HistogramVec& Registry::AddHistogramVec(std::string_view name, std::string_view help,
                                        std::vector<std::string> label_names,
                                        std::vector<double> upper_bounds, FamilyOptions options) {
  auto bounds = CheckedBounds(name, std::move(upper_bounds));
  std::string sig = Signature("histogram", label_names, options, bounds.get());
  Entry& entry = AddFamily(name, help, "histogram", std::move(label_names), options, std::move(sig),
                           [bounds] { return std::make_unique<Histogram>(bounds); });
  return VecOf<Histogram>(entry);
}

void Registry::AddGaugeFunc(std::string_view name, std::string_view help,
                            std::function<double()> read) {
  // The first registration wins: a second one keeps the function already exported.
  Entry& entry = AddFamily(name, help, "gauge", {}, {}, "gauge func",
                           [read = std::move(read)] { return std::make_unique<FuncChild>(read); });
  entry.family->Get({});
}

void Registry::AddCounterFunc(std::string_view name, std::string_view help,
                              std::function<double()> read) {
  Entry& entry = AddFamily(name, help, "counter", {}, {}, "counter func",
                           [read = std::move(read)] { return std::make_unique<FuncChild>(read); });
  entry.family->Get({});
}

std::string Registry::Render() const {
  std::vector<const internal::Family*> families;
  {
    sync::MutexLock lock(mu_);
    for (const auto& [name, entry] : families_) families.push_back(entry.family.get());
  }
  // Families are never removed, so rendering outside mu_ is safe and keeps registration fast.
  std::string out;
  for (const auto* family : families) family->Render(&out);
  return out;
}

Registry& DefaultRegistry() {
  // Leaked on purpose: metrics may be touched by threads still running during exit.
  static Registry* registry = [] {
    auto* r = new Registry();
    RegisterProcessMetrics(*r);
    return r;
  }();
  return *registry;
}

// ---- Process metrics ------------------------------------------------------------------------

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Fields of /proc/self/stat after the command name, so fields[0] is field 3 ("state").
std::vector<std::string> ReadProcStat() {
  std::ifstream in("/proc/self/stat");
  std::string line;
  std::getline(in, line);
  size_t close = line.rfind(')');  // the command name may itself contain spaces and ')'
  if (close == std::string::npos) return {};
  std::istringstream fields(line.substr(close + 1));
  std::vector<std::string> out;
  for (std::string f; fields >> f;) out.push_back(f);
  return out;
}

double StatField(size_t field_number) {
  std::vector<std::string> fields = ReadProcStat();
  const size_t index = field_number - 3;
  if (index >= fields.size()) return kNaN;
  unsigned long long value = 0;
  const std::string& f = fields[index];
  auto [ptr, ec] = std::from_chars(f.data(), f.data() + f.size(), value);
  if (ec != std::errc()) return kNaN;
  return static_cast<double>(value);
}

double ClockTicksPerSecond() {
  long ticks = sysconf(_SC_CLK_TCK);
  return ticks > 0 ? static_cast<double>(ticks) : 100.0;
}

double BootTimeSeconds() {
  std::ifstream in("/proc/stat");
  std::string key;
  while (in >> key) {
    if (key == "btime") {
      double value = kNaN;
      in >> value;
      return value;
    }
    in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  return kNaN;
}

}  // namespace

void RegisterProcessMetrics(Registry& registry) {
  // Field numbers from proc(5): utime 14, stime 15, starttime 22, vsize 23, rss 24.
  registry.AddCounterFunc("process_cpu_seconds_total",
                          "Total user and system CPU time spent in seconds.",
                          [] { return (StatField(14) + StatField(15)) / ClockTicksPerSecond(); });
  registry.AddGaugeFunc("process_resident_memory_bytes", "Resident memory size in bytes.",
                        [] { return StatField(24) * static_cast<double>(sysconf(_SC_PAGESIZE)); });
  registry.AddGaugeFunc("process_virtual_memory_bytes", "Virtual memory size in bytes.",
                        [] { return StatField(23); });
  const double start = BootTimeSeconds() + StatField(22) / ClockTicksPerSecond();
  registry.AddGaugeFunc("process_start_time_seconds",
                        "Start time of the process since unix epoch in seconds.",
                        [start] { return start; });
  registry.AddGaugeFunc("process_open_fds", "Number of open file descriptors.", [] {
    std::error_code ec;
    double count = 0;
    for (std::filesystem::directory_iterator it("/proc/self/fd", ec), end; !ec && it != end;
         it.increment(ec)) {
      ++count;
    }
    return ec ? kNaN : count;
  });
  registry.AddGaugeFunc("process_max_fds", "Maximum number of open file descriptors.", [] {
    rlimit limit{};
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return kNaN;
    return static_cast<double>(limit.rlim_cur);
  });
}

}  // namespace tephra::metrics
