#include "api/resources.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <unordered_map>

#include "base/strings.h"
#include "sync/mutex.h"

namespace tephra::api {

// ---------------------------------------------------------------------------------------------
// ResourceList

ResourceList::ResourceList(std::initializer_list<Entry> entries) {
  for (const Entry& e : entries) Set(e.first, e.second);
}

ResourceList::ResourceList(std::vector<Entry> entries) : entries_(std::move(entries)) {
  std::stable_sort(entries_.begin(), entries_.end(),
                   [](const Entry& a, const Entry& b) { return a.first < b.first; });
  // Keep the last of each run of equal names.
  auto last_of_run = [&](size_t i) {
    return i + 1 == entries_.size() || entries_[i + 1].first != entries_[i].first;
  };
  size_t out = 0;
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (!last_of_run(i)) continue;
    if (out != i) entries_[out] = std::move(entries_[i]);
    ++out;
  }
  entries_.resize(out);
}

const Quantity* ResourceList::Find(std::string_view name) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), name,
                             [](const Entry& e, std::string_view n) { return e.first < n; });
  return it != entries_.end() && it->first == name ? &it->second : nullptr;
}

void ResourceList::Set(std::string_view name, Quantity quantity) {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), name,
                             [](const Entry& e, std::string_view n) { return e.first < n; });
  if (it != entries_.end() && it->first == name) {
    it->second = std::move(quantity);
  } else {
    entries_.emplace(it, std::string(name), std::move(quantity));
  }
}

bool ResourceList::Erase(std::string_view name) {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), name,
                             [](const Entry& e, std::string_view n) { return e.first < n; });
  if (it == entries_.end() || it->first != name) return false;
  entries_.erase(it);
  return true;
}

StatusOr<ResourceList> ParseResourceList(std::string_view text) {
  ResourceList list;
  for (const std::string& item : base::SplitCommaList(text)) {
    const std::string_view view = item;
    const size_t eq = view.find('=');
    const std::string_view name =
        eq == std::string_view::npos ? std::string_view() : base::TrimSpace(view.substr(0, eq));
    if (name.empty()) {
      return InvalidArgument("\"" + item + "\" is not NAME=QUANTITY (e.g. cpu=500m,memory=1Gi)");
    }
    StatusOr<Quantity> quantity = Quantity::Parse(base::TrimSpace(view.substr(eq + 1)));
    if (!quantity.ok())
      return InvalidArgument(std::string(name) + ": " + quantity.status().message());
    list.Set(name, *std::move(quantity));
  }
  return list;
}

// ---------------------------------------------------------------------------------------------
// Interned extended-resource names

namespace {

class NameTable {
 public:
  ResourceId Intern(std::string_view name) {
    {
      sync::ReaderMutexLock lock(mu_);
      auto it = ids_.find(name);
      if (it != ids_.end()) return it->second;
    }
    sync::WriterMutexLock lock(mu_);
    auto it = ids_.find(name);
    if (it != ids_.end()) return it->second;
    names_.emplace_back(name);
    auto id = static_cast<ResourceId>(names_.size() - 1);
    ids_.emplace(names_.back(), id);
    return id;
  }

  std::optional<ResourceId> Find(std::string_view name) const {
    sync::ReaderMutexLock lock(mu_);
    auto it = ids_.find(name);
    if (it == ids_.end()) return std::nullopt;
    return it->second;
  }

  const std::string& Name(ResourceId id) const {
    static const std::string kUnknown = "<unknown resource>";
    sync::ReaderMutexLock lock(mu_);
    return id < names_.size() ? names_[id] : kUnknown;
  }

 private:
  mutable sync::SharedMutex mu_;
  // A deque keeps references stable as it grows.
  std::deque<std::string> names_ GUARDED_BY(mu_);
  std::unordered_map<std::string_view, ResourceId> ids_ GUARDED_BY(mu_);
};

NameTable& Names() {
  static NameTable* table = new NameTable();  // never destroyed: used until process exit
  return *table;
}

int64_t SaturatingSub(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) {
    return b < 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  }
  return r;
}

int64_t SaturatingMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) {
    return (a < 0) == (b < 0) ? std::numeric_limits<int64_t>::max()
                              : std::numeric_limits<int64_t>::min();
  }
  return r;
}

int64_t RoundToInt64(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9.2e18) return std::numeric_limits<int64_t>::max();
  if (v <= -9.2e18) return std::numeric_limits<int64_t>::min();
  return std::llround(v);
}

constexpr std::string_view kFixedNames[] = {kResourceCpu, kResourceMemory,
                                            kResourceEphemeralStorage, kResourcePods};

int FixedIndex(std::string_view name) {
  for (int i = 0; i < 4; ++i) {
    if (kFixedNames[i] == name) return i;
  }
  return -1;
}

bool IsHugePages(std::string_view name) {
  return name.substr(0, kResourceHugePagesPrefix.size()) == kResourceHugePagesPrefix;
}

// The quantity a dimension's value stands for, in the form Kubernetes writes such values.
Quantity FixedQuantity(int index, int64_t value) {
  switch (index) {
    case 0:
      return Quantity::FromMilli(value);
    case 1:
    case 2:
      return Quantity::FromInt(value, QuantityFormat::kBinarySI);
    default:
      return Quantity::FromInt(value);
  }
}

Quantity ScalarQuantity(std::string_view name, int64_t milli) {
  if (IsHugePages(name) && milli % 1000 == 0) {
    return Quantity::FromInt(milli / 1000, QuantityFormat::kBinarySI);
  }
  return Quantity::FromMilli(milli);
}

}  // namespace

int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) {
    return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  }
  return r;
}

bool IsQuotaOnlyName(std::string_view name) {
  return name.starts_with(kQuotaRequestsPrefix) || name.starts_with(kQuotaLimitsPrefix) ||
         name.starts_with("count/");
}

ResourceId InternResourceName(std::string_view name) {
  return Names().Intern(name);
}

std::optional<ResourceId> FindResourceId(std::string_view name) {
  return Names().Find(name);
}

const std::string& ResourceIdName(ResourceId id) {
  return Names().Name(id);
}

// ---------------------------------------------------------------------------------------------
// Resources

bool CountedInMilli(std::string_view name) {
  return FixedIndex(name) < 0 || name == kResourceCpu;
}

Quantity LargestCountable(std::string_view name) {
  constexpr int64_t kMost = std::numeric_limits<int64_t>::max();
  return CountedInMilli(name) ? Quantity::FromMilli(kMost) : Quantity::FromInt(kMost);
}

Resources Resources::FromList(const ResourceList& list) {
  Resources r;
  for (const auto& [name, quantity] : list) {
    const int64_t amount = CountedInMilli(name) ? quantity.MilliValue() : quantity.Value();
    const int f = FixedIndex(name);
    if (f < 0) {
      r.SetScalar(InternResourceName(name), amount);
    } else {
      r.SetFixed(static_cast<Fixed>(f), amount);
    }
  }
  return r;
}

StatusOr<Resources> Resources::FromString(std::string_view text) {
  TEPHRA_ASSIGN_OR_RETURN(ResourceList list, ParseResourceList(text));
  return FromList(list);
}

Resources& Resources::SetFixed(Fixed f, int64_t v) {
  fixed_[f] = v;
  present_ = static_cast<uint8_t>(present_ | (1u << f));
  return *this;
}

bool Resources::Has(std::string_view name) const {
  int f = FixedIndex(name);
  if (f >= 0) return HasFixed(static_cast<size_t>(f));
  std::optional<ResourceId> id = FindResourceId(name);
  if (!id) return false;
  return std::any_of(scalars_.begin(), scalars_.end(),
                     [&](const Scalar& s) { return s.id == *id; });
}

int64_t Resources::Get(std::string_view name) const {
  int f = FixedIndex(name);
  if (f >= 0) return fixed_[f];
  std::optional<ResourceId> id = FindResourceId(name);
  if (!id) return 0;
  for (const Scalar& s : scalars_) {
    if (s.id == *id) return s.value;
  }
  return 0;
}

Resources& Resources::Set(std::string_view name, int64_t value) {
  int f = FixedIndex(name);
  if (f >= 0) return SetFixed(static_cast<Fixed>(f), value);
  return SetScalar(InternResourceName(name), value);
}

Resources& Resources::Erase(std::string_view name) {
  int f = FixedIndex(name);
  if (f >= 0) {
    fixed_[f] = 0;
    present_ = static_cast<uint8_t>(present_ & ~(1u << f));
    return *this;
  }
  std::optional<ResourceId> id = FindResourceId(name);
  if (!id) return *this;
  std::erase_if(scalars_, [&](const Scalar& s) { return s.id == *id; });
  return *this;
}

Resources& Resources::SetScalar(ResourceId id, int64_t value) {
  auto it = std::lower_bound(scalars_.begin(), scalars_.end(), id,
                             [](const Scalar& s, ResourceId i) { return s.id < i; });
  if (it != scalars_.end() && it->id == id) {
    it->value = value;
  } else {
    scalars_.insert(it, Scalar{id, value});
  }
  return *this;
}

std::vector<std::string> Resources::Names() const {
  std::vector<std::string> names;
  for (size_t f = 0; f < kFixedCount; ++f) {
    if (HasFixed(f)) names.emplace_back(kFixedNames[f]);
  }
  size_t fixed = names.size();
  for (const Scalar& s : scalars_) names.push_back(ResourceIdName(s.id));
  std::sort(names.begin() + static_cast<std::ptrdiff_t>(fixed), names.end());
  return names;
}

template <typename Fn>
Resources& Resources::Combine(const Resources& other, Fn fn) {
  for (size_t f = 0; f < kFixedCount; ++f) {
    if (HasFixed(f) || other.HasFixed(f)) {
      SetFixed(static_cast<Fixed>(f), fn(fixed_[f], other.fixed_[f]));
    }
  }
  if (other.scalars_.empty()) {
    for (Scalar& s : scalars_) s.value = fn(s.value, 0);
    return *this;
  }
  // Merge two id-sorted vectors.
  std::vector<Scalar> merged;
  merged.reserve(scalars_.size() + other.scalars_.size());
  auto a = scalars_.begin();
  auto b = other.scalars_.begin();
  while (a != scalars_.end() || b != other.scalars_.end()) {
    if (b == other.scalars_.end() || (a != scalars_.end() && a->id < b->id)) {
      merged.push_back({a->id, fn(a->value, 0)});
      ++a;
    } else if (a == scalars_.end() || b->id < a->id) {
      merged.push_back({b->id, fn(0, b->value)});
      ++b;
    } else {
      merged.push_back({a->id, fn(a->value, b->value)});
      ++a;
      ++b;
    }
  }
  scalars_ = std::move(merged);
  return *this;
}

Resources& Resources::Add(const Resources& other) {
  return Combine(other, SaturatingAdd);
}

Resources& Resources::Sub(const Resources& other) {
  return Combine(other,
                 [](int64_t a, int64_t b) { return std::max<int64_t>(0, SaturatingSub(a, b)); });
}

Resources& Resources::SubAllowNegative(const Resources& other) {
  return Combine(other, SaturatingSub);
}

Resources& Resources::MaxWith(const Resources& other) {
  return Combine(other, [](int64_t a, int64_t b) { return std::max(a, b); });
}

Resources& Resources::Multiply(int64_t factor) {
  for (size_t f = 0; f < kFixedCount; ++f) fixed_[f] = SaturatingMul(fixed_[f], factor);
  for (Scalar& s : scalars_) s.value = SaturatingMul(s.value, factor);
  return *this;
}

Resources& Resources::Scale(double ratio) {
  for (size_t f = 0; f < kFixedCount; ++f) {
    fixed_[f] = RoundToInt64(static_cast<double>(fixed_[f]) * ratio);
  }
  for (Scalar& s : scalars_) s.value = RoundToInt64(static_cast<double>(s.value) * ratio);
  return *this;
}

namespace {

// Calls fn(name_or_id, value, limit_value_or_nullopt) for each dimension present on either side.
template <typename Fn>
void ForEachPair(const int64_t* fixed, uint8_t present, const std::vector<Resources::Scalar>& sa,
                 const int64_t* limit_fixed, uint8_t limit_present,
                 const std::vector<Resources::Scalar>& sb, Fn fn) {
  for (size_t f = 0; f < 4; ++f) {
    bool in_a = (static_cast<unsigned>(present) >> f) & 1u;
    bool in_b = (static_cast<unsigned>(limit_present) >> f) & 1u;
    if (!in_a && !in_b) continue;
    fn(kFixedNames[f], in_a ? fixed[f] : 0,
       in_b ? std::optional<int64_t>(limit_fixed[f]) : std::nullopt);
  }
  auto a = sa.begin();
  auto b = sb.begin();
  while (a != sa.end() || b != sb.end()) {
    if (b == sb.end() || (a != sa.end() && a->id < b->id)) {
      fn(ResourceIdName(a->id), a->value, std::nullopt);
      ++a;
    } else if (a == sa.end() || b->id < a->id) {
      fn(ResourceIdName(b->id), 0, std::optional<int64_t>(b->value));
      ++b;
    } else {
      fn(ResourceIdName(a->id), a->value, std::optional<int64_t>(b->value));
      ++a;
      ++b;
    }
  }
}

bool WithinLimit(int64_t value, std::optional<int64_t> limit, Resources::Missing missing) {
  if (limit) return value <= *limit;
  return missing == Resources::Missing::kUnlimited || value <= 0;
}

}  // namespace

bool Resources::LessEqual(const Resources& limit, Missing missing_in_limit) const {
  // The scheduler calls this per node and pod: no name lookups, no allocation. A missing fixed
  // dimension always holds 0, so only the limit's presence matters.
  const bool missing_is_zero = missing_in_limit == Missing::kZero;
  for (size_t f = 0; f < kFixedCount; ++f) {
    if (limit.HasFixed(f)) {
      if (fixed_[f] > limit.fixed_[f]) return false;
    } else if (missing_is_zero && fixed_[f] > 0) {
      return false;
    }
  }
  if (scalars_.empty() && limit.scalars_.empty()) return true;
  auto a = scalars_.begin();
  auto b = limit.scalars_.begin();
  while (a != scalars_.end() || b != limit.scalars_.end()) {
    if (b == limit.scalars_.end() || (a != scalars_.end() && a->id < b->id)) {
      if (missing_is_zero && a->value > 0) return false;
      ++a;
    } else if (a == scalars_.end() || b->id < a->id) {
      if (b->value < 0) return false;
      ++b;
    } else {
      if (a->value > b->value) return false;
      ++a;
      ++b;
    }
  }
  return true;
}

bool Resources::LessEqualInDims(const Resources& limit, const Resources& dims) const {
  for (const auto& n : dims.Names()) {
    if (dims.Get(n) <= 0 || n == kResourcePods) continue;
    if (Get(n) > limit.Get(n)) return false;
  }
  return true;
}

std::vector<std::string> Resources::Exceeding(const Resources& limit,
                                              Missing missing_in_limit) const {
  std::vector<std::string> out;
  ForEachPair(fixed_, present_, scalars_, limit.fixed_, limit.present_, limit.scalars_,
              [&](std::string_view name, int64_t value, std::optional<int64_t> lim) {
                if (!WithinLimit(value, lim, missing_in_limit)) out.emplace_back(name);
              });
  return out;
}

bool Resources::IsZero() const {
  for (size_t f = 0; f < kFixedCount; ++f) {
    if (HasFixed(f) && fixed_[f] != 0) return false;
  }
  return std::all_of(scalars_.begin(), scalars_.end(),
                     [](const Scalar& s) { return s.value == 0; });
}

double Resources::DominantShare(const Resources& total) const {
  double share = 0;
  ForEachPair(fixed_, present_, scalars_, total.fixed_, total.present_, total.scalars_,
              [&](std::string_view, int64_t value, std::optional<int64_t> t) {
                if (value <= 0) return;
                double s = t && *t > 0 ? static_cast<double>(value) / static_cast<double>(*t) : 1.0;
                share = std::max(share, s);
              });
  return share;
}

std::string Resources::ToString() const {
  std::string out;
  for (const auto& [name, quantity] : ToList()) {
    if (!out.empty()) out += ", ";
    out += name;
    out += ' ';
    out += quantity.ReadableString();
  }
  return out.empty() ? "none" : out;
}

ResourceList Resources::ToList() const {
  ResourceList list;
  for (size_t f = 0; f < kFixedCount; ++f) {
    if (HasFixed(f)) list.Set(kFixedNames[f], FixedQuantity(static_cast<int>(f), fixed_[f]));
  }
  for (const Scalar& s : scalars_) {
    const std::string& name = ResourceIdName(s.id);
    list.Set(name, ScalarQuantity(name, s.value));
  }
  return list;
}

}  // namespace tephra::api
