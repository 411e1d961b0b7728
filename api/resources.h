// Resource lists as the API writes them (ResourceList: name -> Quantity) and the resource vector
// the scheduler does arithmetic on (Resources: fixed integer fields plus extended resources).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/quantity.h"

namespace tephra::api {

inline constexpr std::string_view kResourceCpu = "cpu";
inline constexpr std::string_view kResourceMemory = "memory";
inline constexpr std::string_view kResourcePods = "pods";
inline constexpr std::string_view kResourceEphemeralStorage = "ephemeral-storage";
inline constexpr std::string_view kResourceHugePagesPrefix = "hugepages-";
// ResourceQuota-style names, which Volcano also writes into a PodGroup's minResources.
inline constexpr std::string_view kQuotaRequestsPrefix = "requests.";
inline constexpr std::string_view kQuotaLimitsPrefix = "limits.";
inline constexpr std::string_view kQuotaCountPods = "count/pods";
// A name a ResourceQuota counts but no node offers: requests.*, limits.*, count/*.
bool IsQuotaOnlyName(std::string_view name);
// a + b, clamped to the int64 range (amounts come from user input).
int64_t SaturatingAdd(int64_t a, int64_t b);

// A Kubernetes ResourceList (spec.containers[].resources.requests, Queue capability, ...):
// resource name -> exact quantity, kept sorted by name in one flat vector.
class ResourceList {
 public:
  using Entry = std::pair<std::string, Quantity>;

  ResourceList() = default;
  ResourceList(std::initializer_list<Entry> entries);
  // Entries in any order (a repeated name: the last wins); n log n where Set per entry would
  // shift the vector each time.
  explicit ResourceList(std::vector<Entry> entries);

  const Quantity* Find(std::string_view name) const;
  bool Contains(std::string_view name) const { return Find(name) != nullptr; }
  void Set(std::string_view name, Quantity quantity);
  bool Erase(std::string_view name);

  bool empty() const { return entries_.empty(); }
  size_t size() const { return entries_.size(); }
  std::vector<Entry>::const_iterator begin() const { return entries_.begin(); }
  std::vector<Entry>::const_iterator end() const { return entries_.end(); }
  bool operator==(const ResourceList& other) const = default;

 private:
  std::vector<Entry> entries_;
};

// "cpu=500m,memory=1Gi,nvidia.com/gpu=1" as a ResourceList: the one reader of name=quantity
// lists (tephractl's --requests and --capability, Resources::FromString). Whitespace around
// items, names and quantities is ignored, and "" is the empty list. The error names the item
// that is not name=quantity, or the name whose quantity does not parse ("cpu: ...").
StatusOr<ResourceList> ParseResourceList(std::string_view text);

// Extended resource names ("nvidia.com/gpu", "hugepages-2Mi") are interned once into small ids
// so the vector arithmetic compares integers. Thread-safe; ids are never reused.
using ResourceId = uint32_t;
ResourceId InternResourceName(std::string_view name);
// The id of a name interned before, without interning it.
std::optional<ResourceId> FindResourceId(std::string_view name);
const std::string& ResourceIdName(ResourceId id);

// Whether Resources counts `name` in milli-units (cpu and extended resources) rather than
// units (memory, ephemeral-storage, pods), as Kubernetes' own accounting does.
bool CountedInMilli(std::string_view name);
// The largest quantity of `name` those int64 units hold: 9223372036854775807m for a resource
// counted in milli-units, 9223372036854775807 otherwise. Admission refuses more
// (docs/admission.md, Tephra-only refusals); Resources saturates at it.
Quantity LargestCountable(std::string_view name);

// A resource vector for scheduling arithmetic. cpu is in millicores, memory and
// ephemeral-storage in bytes, pods a count, and extended resources in milli-units (1 GPU is
// 1000). The four common dimensions are plain fields; extended resources live in a small
// vector sorted by id, so a cpu/memory-only vector never allocates.
//
// A dimension is either present (with a value, possibly 0) or missing. Arithmetic works on the
// union of present dimensions, treating a missing one as 0. Comparisons say what a dimension
// missing from the right-hand side means (Missing::kZero for "this node has none",
// Missing::kUnlimited for "this quota does not limit it"); a dimension missing from the left
// side is a demand of 0.
class Resources {
 public:
  enum class Missing { kZero, kUnlimited };
  struct Scalar {
    ResourceId id;
    int64_t value;
    bool operator==(const Scalar&) const = default;
  };

  Resources() = default;
  // Reads cpu with MilliValue(), memory, ephemeral-storage and pods with Value(), every other
  // resource with MilliValue(), all rounded up as Kubernetes does.
  static Resources FromList(const ResourceList& list);
  // Text form for tests and tools: FromString("cpu=2,memory=4Gi,nvidia.com/gpu=1").
  static StatusOr<Resources> FromString(std::string_view text);

  int64_t milli_cpu() const { return fixed_[kCpu]; }
  int64_t memory() const { return fixed_[kMemory]; }
  int64_t pods() const { return fixed_[kPods]; }
  int64_t ephemeral_storage() const { return fixed_[kEphemeral]; }
  Resources& SetMilliCpu(int64_t v) { return SetFixed(kCpu, v); }
  Resources& SetMemory(int64_t v) { return SetFixed(kMemory, v); }
  Resources& SetPods(int64_t v) { return SetFixed(kPods, v); }
  Resources& SetEphemeralStorage(int64_t v) { return SetFixed(kEphemeral, v); }

  // Any dimension by resource name, in the units above.
  bool Has(std::string_view name) const;
  int64_t Get(std::string_view name) const;  // 0 when missing
  Resources& Set(std::string_view name, int64_t value);
  Resources& SetScalar(ResourceId id, int64_t value);
  // Makes the dimension missing (not 0).
  Resources& Erase(std::string_view name);
  const std::vector<Scalar>& scalars() const { return scalars_; }
  // Names of the present dimensions: cpu, memory, ephemeral-storage, pods, then extended
  // resources by name.
  std::vector<std::string> Names() const;

  // Element-wise arithmetic; all saturate instead of overflowing.
  Resources& Add(const Resources& other);
  // Never goes below zero: a dimension that would is set to 0.
  Resources& Sub(const Resources& other);
  Resources& SubAllowNegative(const Resources& other);
  Resources& MaxWith(const Resources& other);
  Resources& Multiply(int64_t factor);
  // Multiplies by a ratio, rounding each dimension to the nearest unit.
  Resources& Scale(double ratio);

  // Every dimension of *this is <= the same dimension of `limit`.
  bool LessEqual(const Resources& limit, Missing missing_in_limit) const;
  // A request fits into what a node has left: missing on the node means none.
  bool FitsIn(const Resources& available) const { return LessEqual(available, Missing::kZero); }
  // *this <= `limit` in every dimension `dims` asks for (> 0), pods aside: whether what a
  // queue would hold stays within a bound in the dimensions a request actually uses. A
  // dimension missing from either side counts as 0.
  bool LessEqualInDims(const Resources& limit, const Resources& dims) const;
  // The dimensions (by name) where *this exceeds `limit`, for explanations.
  std::vector<std::string> Exceeding(const Resources& limit, Missing missing_in_limit) const;

  // No dimension is present.
  bool IsEmpty() const { return present_ == 0 && scalars_.empty(); }
  // Every present dimension is 0 (an empty vector is zero too).
  bool IsZero() const;

  // max over dimensions of value/total (DRF). A dimension the total lacks or has as 0 counts
  // as a share of 1 when this vector uses it and 0 otherwise.
  double DominantShare(const Resources& total) const;

  // "cpu 2, memory 4Gi, nvidia.com/gpu 1": present dimensions by name, values as
  // Quantity::ReadableString (for messages: odd byte counts are rounded); "none" when empty.
  std::string ToString() const;
  // The same values as a ResourceList (cpu/extended in DecimalSI, byte sizes in BinarySI).
  ResourceList ToList() const;

  bool operator==(const Resources& other) const = default;

 private:
  enum Fixed : uint8_t { kCpu = 0, kMemory = 1, kEphemeral = 2, kPods = 3, kFixedCount = 4 };

  Resources& SetFixed(Fixed f, int64_t v);
  bool HasFixed(size_t f) const { return (present_ >> f) & 1u; }
  // Applies fn(a, b) -> new a over the union of both vectors' dimensions.
  template <typename Fn>
  Resources& Combine(const Resources& other, Fn fn);

  int64_t fixed_[kFixedCount] = {0, 0, 0, 0};  // 0 for every missing dimension
  uint8_t present_ = 0;                        // bit per Fixed
  std::vector<Scalar> scalars_;
};

}  // namespace tephra::api
