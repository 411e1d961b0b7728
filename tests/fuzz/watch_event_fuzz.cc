// Fuzzes the watch-stream decoder: arbitrary bytes split into lines at arbitrary chunk
// boundaries must decode to events or errors, never crash.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>

#include "kube/client.h"

namespace {

class Chunks : public tephra::kube::ResponseStream {
 public:
  Chunks(std::string body, size_t cut) {
    if (cut == 0) cut = 1;
    for (size_t i = 0; i < body.size(); i += cut) chunks_.push_back(body.substr(i, cut));
  }
  int status() const override { return 200; }
  tephra::StatusOr<bool> Read(std::string* out) override {
    if (chunks_.empty()) return false;
    *out += chunks_.front();
    chunks_.pop_front();
    return true;
  }
  void Close() override {}

 private:
  std::deque<std::string> chunks_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string body(reinterpret_cast<const char*>(data) + 1, size - 1);
  size_t cut = data[0] % 64 + 1;
  (void)tephra::kube::DecodeWatchEvent(body);
  tephra::kube::Watch watch(std::make_unique<Chunks>(body, cut));
  for (int i = 0; i < 1000; ++i) {
    auto ev = watch.Next();
    if (!ev.ok() || !ev->has_value()) break;
    (void)(*ev)->resource_version();
  }
  return 0;
}
