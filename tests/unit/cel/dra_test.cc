// The DRA selector environment with the selectors real drivers ship in their DeviceClasses
// (NVIDIA's GPU, MIG and ComputeDomain classes, the example driver's, Intel's, DRANET's) and
// the ones users write on top (product names, versions, memory capacity).
#include "cel/dra.h"

#include <map>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace tephra::cel {
namespace {

api::Quantity Q(std::string_view text) {
  StatusOr<api::Quantity> q = api::Quantity::Parse(text);
  REQUIRE(q.ok());
  return *q;
}

// A small fleet of devices as their drivers publish them.
std::map<std::string, DraDevice> Fleet() {
  std::map<std::string, DraDevice> fleet;
  auto add = [&](const std::string& name, DraDevice d) { fleet.emplace(name, std::move(d)); };

  DraDevice h100("gpu.nvidia.com");
  h100.SetString("type", "gpu");
  h100.SetString("productName", "NVIDIA H100 80GB HBM3");
  h100.SetString("architecture", "Hopper");
  h100.SetVersion("cudaComputeCapability", "9.0.0");
  h100.SetVersion("driverVersion", "570.124.6");
  h100.SetInt("index", 0);
  h100.SetCapacity("memory", Q("80Gi"));
  add("nvidia-h100", std::move(h100));

  DraDevice l4("gpu.nvidia.com");
  l4.SetString("type", "gpu");
  l4.SetString("productName", "NVIDIA L4");
  l4.SetVersion("cudaComputeCapability", "8.9.0");
  l4.SetCapacity("gpu.nvidia.com/memory", Q("23034Mi"));  // the qualified form of the same name
  add("nvidia-l4", std::move(l4));

  DraDevice mig("gpu.nvidia.com");
  mig.SetString("type", "mig");
  mig.SetString("profile", "1g.10gb");
  mig.SetCapacity("memory", Q("9856Mi"));
  add("nvidia-mig", std::move(mig));

  DraDevice channel0("compute-domain.nvidia.com");
  channel0.SetString("type", "channel");
  channel0.SetInt("id", 0);
  add("cd-channel-0", std::move(channel0));

  DraDevice channel1("compute-domain.nvidia.com");
  channel1.SetString("type", "channel");
  channel1.SetInt("id", 1);
  add("cd-channel-1", std::move(channel1));

  DraDevice daemon("compute-domain.nvidia.com");
  daemon.SetString("type", "daemon");
  daemon.SetInt("id", 0);
  add("cd-daemon", std::move(daemon));

  DraDevice example("gpu.example.com");
  example.SetString("model", "LATEST-GPU-MODEL");
  example.SetString("uuid", "gpu-18db0e85-99e9-c746-8531-ffeb86328b39");
  example.SetInt("index", 3);
  example.SetVersion("driverVersion", "1.0.0");
  example.SetCapacity("memory", Q("80Gi"));
  add("example-gpu", std::move(example));

  add("intel-gpu", DraDevice("gpu.intel.com"));

  DraDevice rdma("dra.net");
  rdma.SetString("pciAddress", "0000:8a:00.0");
  rdma.SetBool("rdma", true);
  rdma.SetString("ifName", "eth1");
  add("dranet-rdma", std::move(rdma));

  DraDevice nic("dra.net");
  nic.SetString("ifName", "eth0");  // no PCI address, no RDMA
  add("dranet-plain", std::move(nic));
  return fleet;
}

// The devices the selector matches; any evaluation error fails the test.
std::vector<std::string> Matching(std::string_view selector) {
  StatusOr<Program> program = CompileDeviceSelector(selector);
  INFO(selector);
  REQUIRE(program.ok());
  std::vector<std::string> out;
  for (const auto& [name, device] : Fleet()) {
    StatusOr<bool> match = DeviceMatches(*program, device);
    INFO(name << ": " << match.status().message());
    REQUIRE(match.ok());
    if (*match) out.push_back(name);
  }
  return out;
}

using Names = std::vector<std::string>;

TEST_CASE("the DeviceClass selectors drivers ship select their devices and no others") {
  // NVIDIA's dra-driver-nvidia-gpu chart: gpu.nvidia.com and mig.nvidia.com.
  CHECK(Matching("device.driver == 'gpu.nvidia.com' && "
                 "device.attributes['gpu.nvidia.com'].type == 'gpu'") ==
        Names{"nvidia-h100", "nvidia-l4"});
  CHECK(Matching("device.driver == 'gpu.nvidia.com' && "
                 "device.attributes['gpu.nvidia.com'].type == 'mig'") == Names{"nvidia-mig"});
  // Its ComputeDomain classes.
  CHECK(Matching("device.driver == 'compute-domain.nvidia.com' && "
                 "device.attributes['compute-domain.nvidia.com'].type == 'daemon'") ==
        Names{"cd-daemon"});
  CHECK(Matching("device.driver == 'compute-domain.nvidia.com' && "
                 "device.attributes['compute-domain.nvidia.com'].type == 'channel' && "
                 "device.attributes['compute-domain.nvidia.com'].id == 0") ==
        Names{"cd-channel-0"});
  // The DRA example driver's and Intel's classes select by driver alone.
  CHECK(Matching("device.driver == 'gpu.example.com'") == Names{"example-gpu"});
  CHECK(Matching("device.driver == \"gpu.intel.com\"") == Names{"intel-gpu"});
  // DRANET's RDMA class guards optional attributes with has().
  CHECK(Matching("device.driver == 'dra.net' && has(device.attributes['dra.net'].pciAddress) && "
                 "has(device.attributes['dra.net'].rdma) && "
                 "device.attributes['dra.net'].rdma == true") == Names{"dranet-rdma"});
}

TEST_CASE("selectors users write: names, versions, capacity, cel.bind") {
  CHECK(Matching("device.driver == 'gpu.nvidia.com' && "
                 "device.attributes['gpu.nvidia.com'].type == 'gpu' && "
                 "device.attributes['gpu.nvidia.com'].productName.contains('H100')") ==
        Names{"nvidia-h100"});
  CHECK(Matching("device.driver == 'gpu.nvidia.com' && "
                 "device.attributes['gpu.nvidia.com'].type == 'gpu' && "
                 "!device.attributes['gpu.nvidia.com'].cudaComputeCapability"
                 ".isLessThan(semver('9.0.0'))") == Names{"nvidia-h100"});
  CHECK(Matching("device.driver == 'gpu.nvidia.com' && "
                 "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('20Gi')) >= 0") ==
        Names{"nvidia-h100", "nvidia-l4"});
  CHECK(Matching("has(device.capacity[device.driver].memory) && "
                 "device.capacity[device.driver].memory.isGreaterThan(quantity('40Gi'))") ==
        Names{"example-gpu", "nvidia-h100"});
  CHECK(Matching("device.driver == 'gpu.example.com' && "
                 "cel.bind(dra, device.attributes['gpu.example.com'], "
                 "dra.model == 'LATEST-GPU-MODEL' && dra.index < 4)") == Names{"example-gpu"});
  CHECK(Matching("device.attributes.exists(domain, domain == 'dra.net')") ==
        Names{"dranet-plain", "dranet-rdma"});
  CHECK(Matching("'compute-domain.nvidia.com' in device.attributes && "
                 "device.attributes['compute-domain.nvidia.com'].id > 0") == Names{"cd-channel-1"});
  CHECK(Matching("device.driver == 'gpu.nvidia.com' && has(device.attributes[device.driver]"
                 ".productName) && device.attributes[device.driver].productName"
                 ".matches('^NVIDIA (H|L)[0-9]+')") == Names{"nvidia-h100", "nvidia-l4"});
}

TEST_CASE("a missing attribute is an error, never a match") {
  std::map<std::string, DraDevice> fleet = Fleet();
  StatusOr<Program> model =
      CompileDeviceSelector("device.attributes['gpu.example.com'].model == 'LATEST-GPU-MODEL'");
  REQUIRE(model.ok());
  CHECK(*DeviceMatches(*model, fleet.at("example-gpu")));
  // Another driver's device has no such domain: Kubernetes reads it as an empty map, so the
  // lookup of `model` fails.
  StatusOr<bool> other = DeviceMatches(*model, fleet.at("nvidia-h100"));
  REQUIRE_FALSE(other.ok());
  CHECK(other.status().message() == "CEL runtime error: no such key: model");
  // has() on it is false, and `in` says the domain is absent.
  StatusOr<Program> has = CompileDeviceSelector("has(device.attributes['gpu.example.com'].model)");
  StatusOr<Program> in = CompileDeviceSelector("'gpu.example.com' in device.attributes");
  REQUIRE(has.ok());
  REQUIRE(in.ok());
  CHECK_FALSE(*DeviceMatches(*has, fleet.at("nvidia-h100")));
  CHECK_FALSE(*DeviceMatches(*in, fleet.at("nvidia-h100")));
  CHECK(*DeviceMatches(*has, fleet.at("example-gpu")));
  CHECK(*DeviceMatches(*in, fleet.at("example-gpu")));
  // A dyn result that is not a bool is an error too.
  StatusOr<Program> text = CompileDeviceSelector("device.attributes['gpu.example.com'].model");
  REQUIRE(text.ok());
  CHECK(DeviceMatches(*text, fleet.at("example-gpu")).status().message() ==
        "CEL result of type string could not be converted to bool");
  // An attribute compared with the wrong type is an error, not false.
  StatusOr<Program> wrong =
      CompileDeviceSelector("device.attributes['gpu.example.com'].index.startsWith('3')");
  REQUIRE(wrong.ok());
  CHECK(DeviceMatches(*wrong, fleet.at("example-gpu")).status().message() ==
        "CEL runtime error: no such overload: startsWith(int, string)");
}

TEST_CASE("the device variable: unqualified names, allowMultipleAllocations, list attributes") {
  DraDevice d("net.example.com", /*allow_multiple_allocations=*/true);
  d.SetInt("vf", 3);  // the driver's domain
  d.SetInt("topology.example.com/numa", 1);
  d.SetList("ports", {Value::Int(1), Value::Int(2)});
  d.SetVersion("firmware", "not-a-version");
  auto match = [&](std::string_view selector) {
    StatusOr<Program> p = CompileDeviceSelector(selector);
    REQUIRE(p.ok());
    return DeviceMatches(*p, d);
  };
  CHECK(*match("device.attributes['net.example.com'].vf == 3"));
  CHECK(*match("device.attributes['topology.example.com'].numa == 1"));
  CHECK(*match("device.allowMultipleAllocations"));
  CHECK(*match("device.attributes['net.example.com'].ports.exists(p, p == 2)"));
  CHECK(*match("size(device.attributes) == 2 && size(device.capacity) == 0"));
  CHECK(match("device.attributes['net.example.com'].firmware.major() > 0").status().message() ==
        "CEL runtime error: attribute firmware: invalid semantic version \"not-a-version\": "
        "expected MAJOR.MINOR.PATCH");
}

TEST_CASE("selector limits: Kubernetes' cost limit and length") {
  DraDevice d("gpu.example.com");
  StatusOr<Program> costly = CompileDeviceSelector(
      "lists.range(100).all(i, lists.range(100).all(j, lists.range(100).all(k, true)))");
  REQUIRE(costly.ok());
  CHECK(DeviceMatches(*costly, d).status().message() ==
        "CEL runtime error: " + std::string(kCostLimitExceeded));
  std::string longest = "device.driver == '" + std::string(kDeviceSelectorMaxLength, 'a') + "'";
  CHECK(CompileDeviceSelector(longest).status().message() ==
        "the expression is 10259 bytes long; at most 10240 are allowed");
}

}  // namespace
}  // namespace tephra::cel
