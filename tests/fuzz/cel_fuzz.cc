// Fuzzes CEL device selectors (docs/cel.md): whatever the text, Compile answers with a program
// or an error that names a place, and evaluating a program on a device gives a bool or an error,
// never a crash, within the selector cost limit.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "cel/dra.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tephra;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  static const cel::DraDevice* device = [] {
    auto* d = new cel::DraDevice("gpu.example.com");
    d->SetString("model", "LATEST-GPU-MODEL");
    d->SetInt("index", 3);
    d->SetBool("healthy", true);
    d->SetVersion("driverVersion", "1.2.3-rc.1");
    d->SetList("ports", {cel::Value::Int(1), cel::Value::Int(2)});
    d->SetString("topology.example.com/rack", "r1");
    d->SetCapacity("memory", *api::Quantity::Parse("80Gi"));
    return d;
  }();
  StatusOr<cel::Program> program = cel::CompileDeviceSelector(text);
  if (!program.ok()) {
    fuzz::Check(!program.status().message().empty());
    return 0;
  }
  StatusOr<bool> match = cel::DeviceMatches(*program, *device);
  fuzz::Check(match.ok() || !match.status().message().empty());
  return 0;
}
