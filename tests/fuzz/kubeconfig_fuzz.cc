// Fuzzes the kubeconfig parser: any YAML (or garbage) yields a config or an error.
#include <cstddef>
#include <cstdint>
#include <string>

#include "kube/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  // No base directory: relative file references resolve nowhere and must fail cleanly.
  (void)tephra::kube::ParseKubeconfig(text, "", "");
  (void)tephra::kube::ParseKubeconfig(text, "", "other");
  return 0;
}
