// Kubernetes' CEL environment for Dynamic Resource Allocation device selectors (docs/cel.md,
// "Device selectors"): DeviceClass and ResourceClaim selectors are compiled once and evaluated
// per device.
//
//   StatusOr<Program> selector = CompileDeviceSelector(
//       "device.driver == 'gpu.example.com' && device.attributes['gpu.example.com'].model == 'a'");
//   DraDevice gpu("gpu.example.com");
//   gpu.SetString("model", "a");                  // in the driver's domain
//   StatusOr<bool> match = DeviceMatches(*selector, gpu);
//
// The variable `device` has driver (string), attributes (domain -> name -> int, bool, string,
// version or a list of one of those), capacity (domain -> name -> quantity) and
// allowMultipleAllocations (bool). As in Kubernetes, device.attributes[d] and
// device.capacity[d] are empty maps for a domain the device does not have, so
// `device.attributes['other.com'].x` is a "no such key" error and has(...) of it is false.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "api/quantity.h"
#include "base/status.h"
#include "cel/environment.h"
#include "cel/program.h"
#include "cel/value.h"

namespace tephra::cel {

// Kubernetes' limits for a selector (resource.k8s.io: CELSelectorExpressionMaxCost and
// CELSelectorExpressionMaxLength, in bytes).
inline constexpr uint64_t kDeviceSelectorCostLimit = 1'000'000;
inline constexpr size_t kDeviceSelectorMaxLength = 10 * 1024;

// A device as selectors see it. Built once (from a ResourceSlice's device), then read by any
// number of evaluations, from any number of threads, without copying.
class DraDevice {
 public:
  explicit DraDevice(std::string driver, bool allow_multiple_allocations = false);
  DraDevice(DraDevice&&) noexcept;
  DraDevice& operator=(DraDevice&&) noexcept;
  ~DraDevice();

  // Attributes by qualified name: "domain/name", or "name" for the driver's domain.
  void SetInt(std::string_view name, int64_t value);
  void SetBool(std::string_view name, bool value);
  void SetString(std::string_view name, std::string value);
  // A version attribute; a version that is not semver 2.0 makes reading the attribute an error
  // (the API server refuses such slices).
  void SetVersion(std::string_view name, std::string_view version);
  // A list-valued attribute (Kubernetes' list-type attributes): ints, bools, strings or versions.
  void SetList(std::string_view name, std::vector<Value> values);
  void SetCapacity(std::string_view name, api::Quantity value);

  const std::string& driver() const;

  // The value of the `device` variable; valid while this device lives and is not changed.
  Value AsValue() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The type of `device`: kubernetes.DRADevice.
TypeRef DraDeviceType();

// The selector environment: `device`, Kubernetes' libraries, bool results, the cost limit.
const Environment& DeviceSelectorEnvironment();

// Compiles a selector; the error names the position and the rule, as the API server's does.
StatusOr<Program> CompileDeviceSelector(std::string_view expression);

// Whether the device satisfies the selector. An evaluation error (a missing attribute, a
// type mismatch, the cost limit) or a result that is not a bool is an error, never a match.
StatusOr<bool> DeviceMatches(const Program& selector, const DraDevice& device);

}  // namespace tephra::cel
