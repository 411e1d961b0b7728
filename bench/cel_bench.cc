// CEL device selectors: compile time, and evaluation time and allocations over 1,000 devices
// (docs/cel.md). Run by bench/cel.sh (release build). The evaluation rows time one pass over
// 1,000 devices in microseconds, so their Time column reads as nanoseconds per evaluation;
// `allocs/eval` counts heap allocations per evaluation.
#include <atomic>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "cel/dra.h"

// The replacement operator new below takes its memory from malloc, so its delete frees it; g++
// sees new and free meet after inlining and warns of a mismatch that is not one.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace {

// Every heap allocation of the process, so a benchmark can count those of its loop.
std::atomic<uint64_t> allocations{0};

}  // namespace

void* operator new(std::size_t size) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}

namespace {

using namespace tephra;

api::Quantity Q(const std::string& text) {
  return *api::Quantity::Parse(text);
}

// 1,000 devices as a GPU cluster publishes them: NVIDIA GPUs and MIG slices, example-driver
// GPUs and DRANET NICs, each with the attributes its driver sets.
const std::vector<cel::DraDevice>& Devices() {
  static const std::vector<cel::DraDevice>* devices = [] {
    auto* out = new std::vector<cel::DraDevice>();
    for (int i = 0; i < 1000; ++i) {
      switch (i % 4) {
        case 0:
        case 1: {
          cel::DraDevice d("gpu.nvidia.com");
          bool mig = i % 4 == 1;
          d.SetString("type", mig ? "mig" : "gpu");
          d.SetString("uuid", "GPU-" + std::to_string(100000 + i));
          d.SetString("productName", i % 8 < 4 ? "NVIDIA H100 80GB HBM3" : "NVIDIA L4");
          d.SetString("brand", "Nvidia");
          d.SetString("architecture", i % 8 < 4 ? "Hopper" : "Ada Lovelace");
          d.SetVersion("cudaComputeCapability", i % 8 < 4 ? "9.0.0" : "8.9.0");
          d.SetVersion("driverVersion", "570.124.6");
          d.SetVersion("cudaDriverVersion", "12.8.0");
          d.SetInt("index", i % 8);
          d.SetString("pcieBusID", "0000:" + std::to_string(10 + i % 8) + ":00.0");
          d.SetString("resource.kubernetes.io/pcieRoot", "pci0000:" + std::to_string(i % 2));
          d.SetCapacity("memory", Q(mig ? "9856Mi" : (i % 8 < 4 ? "80Gi" : "23034Mi")));
          out->push_back(std::move(d));
          break;
        }
        case 2: {
          cel::DraDevice d("gpu.example.com");
          d.SetString("model", "LATEST-GPU-MODEL");
          d.SetString("uuid", "gpu-" + std::to_string(i));
          d.SetInt("index", i % 8);
          d.SetVersion("driverVersion", "1.0.0");
          d.SetCapacity("memory", Q("80Gi"));
          out->push_back(std::move(d));
          break;
        }
        default: {
          cel::DraDevice d("dra.net");
          d.SetString("ifName", "eth" + std::to_string(i % 8));
          if (i % 8 == 3) {
            d.SetString("pciAddress", "0000:8a:00." + std::to_string(i % 8));
            d.SetBool("rdma", true);
          }
          d.SetInt("mtu", 9000);
          out->push_back(std::move(d));
          break;
        }
      }
    }
    return out;
  }();
  return *devices;
}

const char* const kSelectors[] = {
    // NVIDIA's gpu.nvidia.com DeviceClass.
    "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'",
    // The DRA example driver's class.
    "device.driver == 'gpu.example.com'",
    // A claim on top of the class: a product, and memory by quantity.
    "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu' && "
    "device.attributes['gpu.nvidia.com'].productName.contains('H100') && "
    "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0",
    // A compute capability by semantic version.
    "device.driver == 'gpu.nvidia.com' && "
    "!device.attributes['gpu.nvidia.com'].cudaComputeCapability.isLessThan(semver('9.0.0'))",
    // DRANET's RDMA class, optional attributes guarded with has().
    "device.driver == 'dra.net' && has(device.attributes['dra.net'].pciAddress) && "
    "has(device.attributes['dra.net'].rdma) && device.attributes['dra.net'].rdma == true",
    // cel.bind and a macro over a list literal.
    "device.driver == 'gpu.nvidia.com' && cel.bind(a, device.attributes['gpu.nvidia.com'], "
    "['Hopper', 'Blackwell'].exists(x, x == a.architecture) && a.index < 4)",
};

void BM_Compile(benchmark::State& state) {
  const char* selector = kSelectors[state.range(0)];
  for (auto _ : state) {
    StatusOr<cel::Program> p = cel::CompileDeviceSelector(selector);
    benchmark::DoNotOptimize(p);
  }
}

void BM_EvaluateOver1000Devices(benchmark::State& state) {
  StatusOr<cel::Program> p = cel::CompileDeviceSelector(kSelectors[state.range(0)]);
  if (!p.ok()) {
    state.SkipWithError(p.status().message().c_str());
    return;
  }
  const std::vector<cel::DraDevice>& devices = Devices();
  int64_t matches = 0;
  int64_t errors = 0;
  uint64_t before = allocations.load();
  for (auto _ : state) {
    for (const cel::DraDevice& device : devices) {
      StatusOr<bool> m = cel::DeviceMatches(*p, device);
      if (!m.ok()) {
        ++errors;
      } else if (*m) {
        ++matches;
      }
    }
  }
  uint64_t allocated = allocations.load() - before;
  auto evaluations = static_cast<double>(state.iterations()) * static_cast<double>(devices.size());
  state.SetItemsProcessed(static_cast<int64_t>(evaluations));
  state.counters["allocs/eval"] = static_cast<double>(allocated) / evaluations;
  state.counters["matches"] =
      static_cast<double>(matches) / static_cast<double>(state.iterations());
  state.counters["errors"] = static_cast<double>(errors) / static_cast<double>(state.iterations());
  state.SetLabel(kSelectors[state.range(0)]);
}

constexpr auto kLastSelector = static_cast<int64_t>(std::size(kSelectors)) - 1;
BENCHMARK(BM_Compile)->DenseRange(0, kLastSelector)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_EvaluateOver1000Devices)->DenseRange(0, kLastSelector)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
