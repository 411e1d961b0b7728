// Fuzzes the scheduler snapshot decoder (tephra-scheduler --replay, tephractl snapshot): any
// text gives a snapshot or an error naming the path, never a crash; a decoded snapshot encodes
// to text that decodes again, and that text is stable.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "scheduler/replay/snapshot_io.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tephra;  // NOLINT(build/namespaces): a fuzz target's own file
  std::string_view text(reinterpret_cast<const char*>(data), size);
  scheduler::SpecInterner interner;
  auto doc = scheduler::DecodeSnapshot(text, interner);
  if (!doc.ok()) {
    fuzz::Check(!doc.status().message().empty());
    return 0;
  }
  std::string once = scheduler::EncodeSnapshot(*doc);
  auto again = scheduler::DecodeSnapshot(once, interner);
  fuzz::Check(again.ok());
  fuzz::Check(scheduler::EncodeSnapshot(*again) == once);
  return 0;
}
