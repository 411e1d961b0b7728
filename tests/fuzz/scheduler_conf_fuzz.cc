// Fuzzes the scheduler configuration parser (volcano-scheduler.conf YAML) with and without the
// registry's action and plugin names: any text gives a configuration or an error, never a crash;
// a configuration's arguments read back through every typed getter, and checked as the
// scheduler checks them at load.
#include <cstddef>
#include <cstdint>
#include <string>

#include "scheduler/builtins.h"
#include "scheduler/framework/conf.h"
#include "scheduler/framework/registry.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using namespace tephra;  // NOLINT(build/namespaces): a fuzz target's own file

void ReadArguments(const scheduler::Arguments& args) {
  for (const auto& [key, value] : args.values()) {
    (void)args.GetInt(key, 0);
    (void)args.GetDouble(key, 0);
    (void)args.GetBool(key, false);
    (void)args.WithPrefix(key.substr(0, key.size() / 2));
  }
  (void)args.Problems();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const scheduler::Registry* registry = [] {
    auto* r = new scheduler::Registry();
    fuzz::Check(scheduler::RegisterBuiltins(*r).ok());
    return r;
  }();
  std::string text(reinterpret_cast<const char*>(data), size);
  for (bool known : {false, true}) {
    auto conf =
        scheduler::ParseSchedulerConf(text, known ? registry->Names() : scheduler::ConfNames{});
    if (!conf.ok()) {
      fuzz::Check(!conf.status().message().empty());
      continue;
    }
    fuzz::Check(!conf->actions.empty());
    fuzz::Check(conf->Warnings().size() == conf->unsupported.size());
    for (const auto& tier : conf->tiers) {
      for (const auto& plugin : tier.plugins) ReadArguments(plugin.arguments);
    }
    for (const auto& action : conf->actions) ReadArguments(conf->ActionArguments(action));
    if (known) (void)registry->ArgumentProblems(*conf);
  }
  return 0;
}
