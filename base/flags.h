// Command-line flags for the daemons and the CLI, spelled as Kubernetes components spell them:
//
//   --kube-api-qps=50  --kube-api-qps 50  -v 4  --v=4  --leader-elect=false  --no-leader-elect
//   --scheduler-name volcano --scheduler-name tephra   (repeatable list)
//   --plugins=gang,priority                            (comma list)
//   --lease-duration 15s  --retry-period 1m30s         (Go durations: base/time.h)
//
// Each flag is bound to a variable whose value before Parse() is the default, so an options
// struct's initialisers are the one place defaults live:
//
//   struct Options { double qps = 50; std::chrono::seconds lease = std::chrono::seconds(15); };
//   FlagSet flags("tephra-scheduler", "The Tephra batch scheduler.");
//   flags.AddDouble("kube-api-qps", &options.qps, "QPS towards the API server.");
//   flags.AddDuration("leader-elect-lease-duration", &options.lease, "Lease duration.");
//   Status s = flags.Parse(argc, argv);
//
// One or two leading dashes mean the same; '_' and '-' in names are interchangeable
// (--log_dir is --log-dir). Arguments that are not flags, and everything after "--", are
// positional. Errors name the flag and the rule it broke.
//
// Not thread-safe: register and parse on the main thread at start-up.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace tephra::base {

class FlagSet {
 public:
  // `program` names the binary in --help and --version; `description` follows the usage line.
  explicit FlagSet(std::string program, std::string description = "");
  ~FlagSet();
  FlagSet(const FlagSet&) = delete;
  FlagSet& operator=(const FlagSet&) = delete;

  // Flags registered after this call are listed under `group` in --help ("Leader election").
  void SetGroup(std::string group);
  // Printed by --version ("<program> <version>").
  void SetVersion(std::string version);

  // Binds a flag to *target; the current *target is the default. Registration mistakes (an
  // invalid or duplicate name) are reported by Parse().
  void AddString(std::string_view name, std::string* target, std::string_view help);
  void AddInt(std::string_view name, int* target, std::string_view help);
  void AddInt64(std::string_view name, int64_t* target, std::string_view help);
  void AddDouble(std::string_view name, double* target, std::string_view help);
  // Also --name (true), --name=false and --no-name.
  void AddBool(std::string_view name, bool* target, std::string_view help);
  // A Go duration; it must be a whole number of the target's unit ("1500ms" does not fit
  // std::chrono::seconds).
  template <typename Rep, typename Period>
  void AddDuration(std::string_view name, std::chrono::duration<Rep, Period>* target,
                   std::string_view help);
  // Repeatable: each occurrence adds one value (commas are kept). The first occurrence
  // replaces the default.
  void AddStringList(std::string_view name, std::vector<std::string>* target,
                     std::string_view help);
  // Comma-separated: --x=a,b; occurrences accumulate; the first replaces the default.
  void AddCommaList(std::string_view name, std::vector<std::string>* target, std::string_view help);
  // Any other type: `set` parses a value and returns InvalidArgument explaining the rule.
  // `type` and `default_text` are shown in --help.
  void AddCustom(std::string_view name, std::string_view type, std::string default_text,
                 std::string_view help, std::function<Status(std::string_view)> set);

  // -short_name as another name of the flag `long_name` registered before: the same value,
  // type and default, with the help "Short for --long_name.".
  void AddShorthand(std::string_view short_name, std::string_view long_name);

  // glog's flags, in group "Logging", mapped onto its FLAGS_* variables: -v/--v, --vmodule
  // (also applied through google::SetVLOGLevel), --logtostderr, --alsologtostderr,
  // --stderrthreshold, --log-dir. Defaults are the current FLAGS_* values.
  void AddGlogFlags();

  // Parses the arguments after argv[0]. InvalidArgument on the first error (and on
  // registration mistakes). --help/-h and --version stop parsing and set HelpRequested() /
  // VersionRequested().
  Status Parse(int argc, const char* const* argv);
  Status Parse(const std::vector<std::string>& args);

  bool HelpRequested() const { return help_requested_; }
  bool VersionRequested() const { return version_requested_; }
  // Whether the flag was given on the command line.
  bool IsSet(std::string_view name) const;
  bool Has(std::string_view name) const;
  const std::vector<std::string>& positional() const { return positional_; }
  const std::string& program() const { return program_; }
  const std::string& version() const { return version_; }

  // The --help text: usage line, description, then each group's flags sorted by name.
  std::string Usage() const;
  std::string VersionText() const;

 private:
  struct Flag {
    std::string name;
    std::string type;  // shown in help; empty for bools
    std::string help;
    std::string group;
    std::string default_text;
    bool is_bool = false;
    bool set_on_command_line = false;
    std::function<Status(std::string_view)> set;
  };

  void Register(std::string_view name, std::string type, std::string default_text,
                std::string_view help, bool is_bool, std::function<Status(std::string_view)> set);
  void AddDurationNanos(std::string_view name, std::chrono::nanoseconds current,
                        std::chrono::nanoseconds unit, std::string_view help,
                        std::function<void(std::chrono::nanoseconds)> assign);
  Flag* Find(std::string_view name);
  std::string Suggest(std::string_view name) const;

  std::string program_;
  std::string description_;
  std::string version_;
  std::string group_;
  std::vector<std::string> group_order_;
  std::map<std::string, Flag, std::less<>> flags_;  // by normalised name
  std::vector<std::string> registration_errors_;
  std::vector<std::string> positional_;
  bool help_requested_ = false;
  bool version_requested_ = false;
};

template <typename Rep, typename Period>
void FlagSet::AddDuration(std::string_view name, std::chrono::duration<Rep, Period>* target,
                          std::string_view help) {
  using Target = std::chrono::duration<Rep, Period>;
  // Integer durations accept only whole multiples of their unit; floating ones anything.
  const std::chrono::nanoseconds unit =
      std::chrono::treat_as_floating_point_v<Rep>
          ? std::chrono::nanoseconds(1)
          : std::chrono::duration_cast<std::chrono::nanoseconds>(Target(1));
  AddDurationNanos(name, std::chrono::duration_cast<std::chrono::nanoseconds>(*target), unit, help,
                   [target](std::chrono::nanoseconds value) {
                     *target = std::chrono::duration_cast<Target>(value);
                   });
}

}  // namespace tephra::base
