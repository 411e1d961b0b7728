// Tephra's CEL evaluation of DRA device selectors against kube-scheduler v1.37's (docs/cel.md,
// "Device selectors"), on the real control plane.
//
// For each selector the test publishes two drivers' devices in ResourceSlices on a kwok node of
// its own, creates a DeviceClass whose first selector admits only those drivers and whose
// second is the selector under test, and a ResourceClaim asking for allocationMode All of the
// class, used by a pod that a kube-scheduler of the test's own (its own scheduler name, so it
// meets no other scheduler) places on that node. kube-scheduler allocates every device the
// selector matches, or reports the CEL runtime error on the pod, or finds nothing to allocate;
// cel::DeviceMatches over the same devices must say the same. Selectors that do not compile
// are compared with kube-apiserver's validation of a DeviceClass (server-side dry run).
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <rapidjson/document.h>

#include "cel/dra.h"
#include "tests/support/cluster.h"
#include "tests/support/process.h"

namespace tephra::testing {
namespace {

// An attribute as a ResourceSlice carries it: kind s(tring), i(nt), b(ool) or v(ersion).
struct Attribute {
  std::string name;
  char kind;
  std::string value;
};

struct Device {
  std::string name;
  bool nic;  // published by the NIC driver ({N}), else by the GPU driver ({G})
  std::vector<Attribute> attributes;
  std::vector<std::pair<std::string, std::string>> capacity;
};

// Attribute names are qualified or not ("type" is the driver's own); {G} is the GPU driver.
const std::vector<Device>& Devices() {
  static const std::vector<Device> devices = {
      {"gpu-0",
       false,
       {{"type", 's', "gpu"},
        {"productName", 's', "NVIDIA H100 80GB HBM3"},
        {"index", 'i', "0"},
        {"healthy", 'b', "true"},
        {"cudaComputeCapability", 'v', "9.0.0"},
        {"{G}/serial", 's', "S0"},
        {"topology.example.com/numa", 'i', "0"}},
       {{"memory", "80Gi"}}},
      {"gpu-1",
       false,
       {{"type", 's', "gpu"},
        {"productName", 's', "NVIDIA L4"},
        {"index", 'i', "1"},
        {"healthy", 'b', "false"},
        {"cudaComputeCapability", 'v', "8.9.0"},
        {"topology.example.com/numa", 'i', "1"}},
       {{"memory", "23034Mi"}}},
      {"gpu-2",
       false,
       {{"type", 's', "gpu"},
        {"productName", 's', "NVIDIA H100 80GB HBM3"},
        {"index", 'i', "3"},
        {"healthy", 'b', "true"},
        {"cudaComputeCapability", 'v', "9.0.0-rc.1"}},
       {{"memory", "80Gi"}}},
      {"mig-0",
       false,
       {{"type", 's', "mig"},
        {"profile", 's', "1g.10gb"},
        {"index", 'i', "2"},
        {"healthy", 'b', "true"},
        {"cudaComputeCapability", 'v', "9.0.0"}},
       {{"memory", "9856Mi"}}},
      {"nic-0", true, {{"rdma", 'b', "true"}, {"pciAddress", 's', "0000:8a:00.0"}}, {}},
      {"nic-1", true, {{"ifName", 's', "eth1"}}, {}},
  };
  return devices;
}

std::string Substitute(std::string text, const std::string& gpu, const std::string& nic) {
  text = ReplaceAll(std::move(text), "{G}", gpu);
  return ReplaceAll(std::move(text), "{N}", nic);
}

std::string Json(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string SliceJson(const std::string& name, const std::string& driver, const std::string& node,
                      bool nics, const std::string& gpu, const std::string& nic) {
  std::string devices;
  for (const Device& d : Devices()) {
    if (d.nic != nics) continue;
    std::string attributes;
    for (const Attribute& a : d.attributes) {
      if (!attributes.empty()) attributes += ",";
      std::string key = a.kind == 's'   ? "string"
                        : a.kind == 'i' ? "int"
                        : a.kind == 'b' ? "bool"
                                        : "version";
      std::string value = a.kind == 'i' || a.kind == 'b' ? a.value : Json(a.value);
      attributes += Json(Substitute(a.name, gpu, nic)) + ":{\"" + key + "\":" + value + "}";
    }
    std::string capacity;
    for (const auto& [n, v] : d.capacity) {
      if (!capacity.empty()) capacity += ",";
      capacity += Json(n) + ":{\"value\":" + Json(v) + "}";
    }
    if (!devices.empty()) devices += ",";
    devices += "{\"name\":" + Json(d.name) + ",\"attributes\":{" + attributes + "},\"capacity\":{" +
               capacity + "}}";
  }
  return R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","metadata":{"name":)" +
         Json(name) + R"(},"spec":{"driver":)" + Json(driver) + R"(,"nodeName":)" + Json(node) +
         R"(,"pool":{"name":)" + Json(node) +
         R"(,"generation":1,"resourceSliceCount":1},"devices":[)" + devices + "]}}";
}

cel::DraDevice ToDraDevice(const Device& d, const std::string& gpu, const std::string& nic) {
  cel::DraDevice device(d.nic ? nic : gpu);
  for (const Attribute& a : d.attributes) {
    std::string name = Substitute(a.name, gpu, nic);
    switch (a.kind) {
      case 's':
        device.SetString(name, a.value);
        break;
      case 'i':
        device.SetInt(name, std::stoll(a.value));
        break;
      case 'b':
        device.SetBool(name, a.value == "true");
        break;
      default:
        device.SetVersion(name, a.value);
        break;
    }
  }
  for (const auto& [n, v] : d.capacity) device.SetCapacity(n, *api::Quantity::Parse(v));
  return device;
}

// What an allocation of every matching device comes to: the devices, none, or an error.
struct Outcome {
  std::set<std::string> devices;
  bool error = false;
  std::set<std::string> messages;  // Tephra: one per distinct error; kube-scheduler: its message

  std::string Describe() const {
    if (error) return "error: " + *messages.begin();
    std::string out = "{";
    for (const std::string& d : devices) out += (out.size() > 1 ? ", " : "") + d;
    return out + "}";
  }
};

Outcome Tephra(const std::string& selector, const std::string& gpu, const std::string& nic) {
  Outcome o;
  StatusOr<cel::Program> program = cel::CompileDeviceSelector(selector);
  if (!program.ok()) {
    o.error = true;
    o.messages.insert("compile: " + program.status().message());
    return o;
  }
  for (const Device& d : Devices()) {
    StatusOr<bool> match = cel::DeviceMatches(*program, ToDraDevice(d, gpu, nic));
    if (!match.ok()) {
      o.error = true;
      o.messages.insert(match.status().message());
    } else if (*match) {
      o.devices.insert(d.name);
    }
  }
  return o;
}

std::string Get(const Kubectl& k, const std::string& ns, const std::string& what,
                const std::string& jsonpath) {
  CommandResult r = k.Run({"-n", ns, "get", what, "-o", "jsonpath=" + jsonpath});
  return r.ok() ? r.out : "";
}

// kube-scheduler's answer for one claim: its allocated devices, or the pod's PodScheduled
// message once the scheduler gave up. Empty devices and message until it decided.
bool KubeSchedulerDecided(const Kubectl& k, const std::string& ns, const std::string& claim,
                          const std::string& pod, Outcome* out) {
  std::string results = Get(k, ns, "resourceclaim/" + claim,
                            "{range .status.allocation.devices.results[*]}{.device}{\"\\n\"}{end}");
  if (!results.empty()) {
    std::istringstream lines(results);
    std::string device;
    while (std::getline(lines, device)) {
      if (!device.empty()) out->devices.insert(device);
    }
    return true;
  }
  std::string reason =
      Get(k, ns, "pod/" + pod, R"({.status.conditions[?(@.type=="PodScheduled")].reason})");
  std::string message =
      Get(k, ns, "pod/" + pod, R"({.status.conditions[?(@.type=="PodScheduled")].message})");
  if (reason == "SchedulerError" && message.find("CEL") != std::string::npos) {
    out->error = true;
    out->messages = {message};
    return true;
  }
  return message.find("cannot allocate all claims") != std::string::npos;
}

// A kube-scheduler of this test's own: its own scheduler name, port and directory; stopped with
// the object.
class KubeScheduler {
 public:
  explicit KubeScheduler(const std::string& name) : name_(name) {
    dir_ = std::filesystem::temp_directory_path() / ("cel-agreement-" + RandomSuffix());
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / "config.yaml")
        << "apiVersion: kubescheduler.config.k8s.io/v1\n"
        << "kind: KubeSchedulerConfiguration\n"
        << "clientConnection:\n  kubeconfig: " << ClusterEnv::Get().kubeconfig << "\n"
        << "leaderElection:\n  leaderElect: false\n"
        << "profiles:\n- schedulerName: " << name << "\n";
    const char* tools = std::getenv("TEPHRA_TOOLS_BIN");
    std::string binary =
        tools != nullptr ? std::string(tools) + "/kube-scheduler" : "kube-scheduler";
    port_ = FreeLoopbackPort();
    process_ = std::make_unique<BackgroundProcess>(
        std::vector<std::string>{
            binary, "--config=" + (dir_ / "config.yaml").string(), "--bind-address=127.0.0.1",
            "--secure-port=" + std::to_string(port_), "--cert-dir=" + (dir_ / "certs").string(),
            "--authorization-always-allow-paths=/healthz", "--authentication-skip-lookup=true"},
        (dir_ / "kube-scheduler.log").string());
  }
  ~KubeScheduler() {
    process_.reset();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  bool Healthy() const {
    return RunCommand({"curl", "-skf", "https://127.0.0.1:" + std::to_string(port_) + "/healthz"},
                      {}, std::chrono::seconds(5))
        .ok();
  }
  std::string Log() const { return ReadFile((dir_ / "kube-scheduler.log").string()); }

 private:
  std::string name_;
  std::filesystem::path dir_;
  uint16_t port_ = 0;
  std::unique_ptr<BackgroundProcess> process_;
};

// Cluster-scoped objects the test creates, deleted at the end.
struct ClusterObjects {
  const Kubectl& k;
  std::vector<std::string> names;  // kind/name
  ~ClusterObjects() {
    for (const std::string& n : names) k.Run({"delete", n, "--wait=false", "--ignore-not-found"});
  }
};

TEST_CASE("device selectors select the devices kube-scheduler allocates, and fail where it fails") {
  const ClusterEnv& env = ClusterEnv::Get();
  Kubectl k(env.kubeconfig);
  REQUIRE(k.Run({"get", "--raw", "/apis/resource.k8s.io/v1"}).ok());  // DRA is served (GA)
  TestNamespace ns(k, "it-cel");
  const std::string suffix = RandomSuffix();
  const std::string scheduler = "tephra-cel-agreement-" + suffix;
  const std::string node = "kwok-cel-" + suffix;
  ClusterObjects objects{k, {"node/" + node}};
  k.MustRun({"create", "-f", "-"},
            R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")" + node +
                R"(","annotations":{"kwok.x-k8s.io/node":"fake"},
                "labels":{"type":"kwok-cel","kubernetes.io/hostname":")" +
                node + R"("}},"status":{"capacity":{"cpu":"8","memory":"16Gi","pods":"110"},
                "allocatable":{"cpu":"8","memory":"16Gi","pods":"110"}}})");
  KubeScheduler ks(scheduler);
  REQUIRE(Eventually([&] { return ks.Healthy(); }, std::chrono::seconds(60)));

  // The selectors: what drivers ship (NVIDIA's GPU and MIG classes, DRANET's has() guards) and
  // what users write on top; then errors (a missing attribute, a non-bool result, overflow)
  // and a selector that matches nothing.
  const std::vector<std::string> selectors = {
      "device.driver == '{G}' && device.attributes['{G}'].type == 'gpu'",
      "device.driver == '{G}' && device.attributes['{G}'].type == 'mig'",
      "device.driver == '{G}' && device.attributes['{G}'].productName.contains('H100')",
      "device.driver == '{G}' && "
      "device.attributes['{G}'].cudaComputeCapability.compareTo(semver('9.0.0')) >= 0",
      "device.driver == '{G}' && !device.attributes['{G}'].cudaComputeCapability"
      ".isLessThan(semver('8.9.0')) && device.attributes['{G}'].cudaComputeCapability.major() == 9",
      "device.driver == '{G}' && device.capacity['{G}'].memory.compareTo(quantity('40Gi')) >= 0",
      "has(device.capacity['{G}'].memory) && "
      "device.capacity['{G}'].memory.isLessThan(quantity('24000Mi'))",
      "device.driver == '{N}' && has(device.attributes['{N}'].pciAddress) && "
      "has(device.attributes['{N}'].rdma) && device.attributes['{N}'].rdma == true",
      "has(device.attributes['topology.example.com'].numa) && "
      "device.attributes['topology.example.com'].numa == 0",
      "'topology.example.com' in device.attributes",
      "device.driver == '{G}' && cel.bind(a, device.attributes['{G}'], "
      "has(a.productName) && ['H100', 'L4'].exists(p, a.productName.contains(p)))",
      "device.driver == '{G}' && device.attributes['{G}'].healthy",
      "device.driver == '{G}' && device.attributes['{G}'].index % 2 == 0",
      "device.driver == '{N}' || "
      "(has(device.attributes['{G}'].serial) && device.attributes['{G}'].serial == 'S0')",
      "device.driver == '{G}' && has(device.attributes['{G}'].productName) && "
      "device.attributes['{G}'].productName.matches('^NVIDIA (H|L)[0-9]+')",
      "device.driver == '{N}' && size(device.attributes['{N}']) == 2",
      "device.driver == '{G}' && device.attributes['{G}'].index == 1.0",
      "device.driver == '{G}' && device.attributes['{G}'].index in [0, 1] && [3, 1, 2].sum() == 6",
      "device.driver.startsWith('n') && device.driver.endsWith('.example.com') && "
      "!device.allowMultipleAllocations",
      "device.attributes.exists(d, d == 'topology.example.com') || "
      "device.attributes['{G}'].exists_one(k, k == 'profile')",
      // errors and nothing
      "device.attributes['{G}'].productName.contains('H')",
      "device.attributes['{G}'].type",
      "device.driver == '{G}' && device.attributes['{G}'].index + 9223372036854775807 > 0",
      "device.driver == '{G}' && device.attributes['{G}'].type == 'tpu'",
  };

  struct Case {
    std::string selector;
    std::string gpu;
    std::string nic;
    std::string claim;
    std::string pod;
  };
  std::vector<Case> cases;
  for (size_t i = 0; i < selectors.size(); ++i) {
    std::string id = "c" + std::to_string(i) + "-" + suffix;
    Case c{"", "g" + id + ".example.com", "n" + id + ".example.com", "claim-" + std::to_string(i),
           "pod-" + std::to_string(i)};
    c.selector = Substitute(selectors[i], c.gpu, c.nic);
    for (bool nics : {false, true}) {
      std::string slice = (nics ? "n" : "g") + id;
      k.MustRun({"create", "-f", "-"},
                SliceJson(slice, nics ? c.nic : c.gpu, node, nics, c.gpu, c.nic));
      objects.names.push_back("resourceslice/" + slice);
    }
    std::string klass = "cel-" + id;
    k.MustRun({"create", "-f", "-"},
              R"({"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","metadata":{"name":")" +
                  klass + R"("},"spec":{"selectors":[{"cel":{"expression":)" +
                  Json("device.driver in ['" + c.gpu + "', '" + c.nic + "']") +
                  R"(}},{"cel":{"expression":)" + Json(c.selector) + "}}]}}");
    objects.names.push_back("deviceclass/" + klass);
    k.MustRun({"-n", ns.name(), "create", "-f", "-"},
              R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":")" +
                  c.claim + R"("},"spec":{"devices":{"requests":[{"name":"r","exactly":{
                  "deviceClassName":")" +
                  klass + R"(","allocationMode":"All"}}]}}})");
    k.MustRun({"-n", ns.name(), "create", "-f", "-"},
              R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + c.pod +
                  R"("},"spec":{"schedulerName":")" + scheduler + R"(",
                  "nodeSelector":{"kubernetes.io/hostname":")" +
                  node + R"("},"resourceClaims":[{"name":"r","resourceClaimName":")" + c.claim +
                  R"("}],"containers":[{"name":"c","image":"busybox",
                  "resources":{"claims":[{"name":"r"}]}}]}})");
    cases.push_back(std::move(c));
  }

  int agreed = 0;
  for (const Case& c : cases) {
    Outcome ours = Tephra(c.selector, c.gpu, c.nic);
    Outcome theirs;
    bool decided =
        Eventually([&] { return KubeSchedulerDecided(k, ns.name(), c.claim, c.pod, &theirs); },
                   std::chrono::seconds(90));
    INFO("selector: " << c.selector);
    INFO("tephra: " << ours.Describe() << "\nkube-scheduler: " << theirs.Describe());
    if (!decided) INFO("kube-scheduler log:\n" << ks.Log());
    REQUIRE(decided);
    // kube-scheduler stops at the first device whose evaluation fails; its message carries the
    // same CEL error text as ours for one of the failing devices.
    bool same_error = false;
    for (const std::string& m : ours.messages) {
      std::string text = m.starts_with("CEL runtime error: ") ? m.substr(19) : m;
      same_error =
          same_error || (theirs.error && theirs.messages.begin()->find(text) != std::string::npos);
    }
    bool agree =
        ours.error ? theirs.error && same_error : !theirs.error && ours.devices == theirs.devices;
    CHECK(ours.error == theirs.error);
    if (ours.error && theirs.error) {
      CHECK(same_error);
    } else {
      CHECK(ours.devices == theirs.devices);
    }
    agreed += agree ? 1 : 0;
    std::cout << (agree ? "agree" : "DIFFER") << ": " << ours.Describe() << "  " << c.selector
              << "\n";
  }
  std::cout << agreed << " of " << cases.size() << " selectors agree with kube-scheduler\n";
}

TEST_CASE("selectors Tephra refuses to compile are the ones kube-apiserver refuses") {
  Kubectl k(ClusterEnv::Get().kubeconfig);
  struct Probe {
    std::string expression;
    bool accepted;  // by both
  };
  const std::vector<Probe> probes = {
      {"device.driver == 1", false},
      {"device.drivr == 'a'", false},
      {"device.driver", false},
      {"[1, 'a'].size() == 2", false},
      {"quantity('1').sign() == 1", false},
      {"device.attributes['a'].model.matches('[')", false},
      {"1 == 1.0", false},
      {"'abc'.reverse() == 'cba'", false},
      {"device.attributes['a'].model.startsWith(1)", false},
      {"sign(quantity('1')) == 1", true},
      {"dyn(1) == 1.0", true},
      {"device.allowMultipleAllocations == false", true},
      {"'%d %s'.format([1, 'a']) != ''", true},
      {"'%d'.format([1, 'a']) != ''", false},
      {"'%d %s'.format([1]) != ''", false},
      {"'%d'.format(['a']) != ''", false},
      {"'%s'.format([[1, quantity('1')]]) != ''", false},
      {"'%q'.format([1]) != ''", false},
      {"'%s'.format([device.attributes['a'].x]) != ''", false},
      {"'%s'.format([string(device.attributes['a'].x)]) != ''", true},
      {"'%d'.format(device.attributes['a'].x) != ''", true},
      {"device.attributes['a'].x.mul(2) == 1", false},
      {"semver('1.0.0', true).isLessThan(semver('2.0.0'))", true},
      {"[1, 2].all(i, v, v > i)", true},
      {"device.attributes['a'].transformMap(k, v, v) == {}", true},
  };
  for (const Probe& p : probes) {
    CommandResult api = k.Run(
        {"create", "--dry-run=server", "-f", "-"},
        R"({"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","metadata":{"name":"cel-probe"},
            "spec":{"selectors":[{"cel":{"expression":)" +
            Json(p.expression) + "}}]}}");
    StatusOr<cel::Program> ours = cel::CompileDeviceSelector(p.expression);
    INFO(p.expression << "\nkube-apiserver: " << api.out << api.err
                      << "\ntephra: " << ours.status().message());
    CHECK(api.ok() == p.accepted);
    CHECK(ours.ok() == p.accepted);
    // Where both name the rule the way cel-go does, they name the same place and rule.
    if (!ours.ok() && (ours.status().message().find("overload") != std::string::npos ||
                       ours.status().message().find("format") != std::string::npos ||
                       ours.status().message().find("out of range") != std::string::npos)) {
      CHECK(api.err.find(ours.status().message()) != std::string::npos);
    }
  }
}

}  // namespace
}  // namespace tephra::testing
