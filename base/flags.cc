#include "base/flags.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>

#include <glog/logging.h>

#include "base/strings.h"
#include "base/suggest.h"
#include "base/time.h"

namespace tephra::base {

using std::chrono::nanoseconds;

// ---- Value parsing --------------------------------------------------------------------------

namespace {

template <typename T>
Status ParseInteger(std::string_view text, T* out, const char* range) {
  std::string_view digits = text;
  if (!digits.empty() && digits[0] == '+') digits.remove_prefix(1);  // from_chars rejects '+'
  T value{};
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec == std::errc::result_out_of_range) {
    return InvalidArgument(std::string("out of range for ") + range);
  }
  if (digits.empty() || ec != std::errc() || ptr != digits.data() + digits.size()) {
    return InvalidArgument("expected an integer");
  }
  *out = value;
  return Status::Ok();
}

Status ParseDouble(std::string_view text, double* out) {
  std::string_view digits = text;
  if (!digits.empty() && digits[0] == '+') digits.remove_prefix(1);
  double value = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || ec != std::errc() || ptr != digits.data() + digits.size() ||
      !std::isfinite(value)) {
    return InvalidArgument("expected a finite number");
  }
  *out = value;
  return Status::Ok();
}

// Go's strconv.ParseBool spellings.
Status ParseBool(std::string_view text, bool* out) {
  for (std::string_view t : {"1", "t", "T", "true", "TRUE", "True"}) {
    if (text == t) {
      *out = true;
      return Status::Ok();
    }
  }
  for (std::string_view f : {"0", "f", "F", "false", "FALSE", "False"}) {
    if (text == f) {
      *out = false;
      return Status::Ok();
    }
  }
  return InvalidArgument("expected true or false");
}

std::string FormatNumber(double value) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), value);
  return std::string(buf, static_cast<size_t>(r.ptr - buf));
}

std::string Quote(std::string_view s) {
  return "\"" + std::string(s) + "\"";
}

std::string FormatList(const std::vector<std::string>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ",";
    out += values[i];
  }
  return out + "]";
}

std::string Normalize(std::string_view name) {
  std::string out(name);
  std::replace(out.begin(), out.end(), '_', '-');
  return out;
}

bool IsValidFlagName(std::string_view name) {
  if (name.empty() || !std::isalnum(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
  });
}

// Defaults equal to a type's zero value are not shown in --help (as pflag does).
bool IsZeroDefault(std::string_view text) {
  return text.empty() || text == "0" || text == "false" || text == "\"\"" || text == "[]" ||
         text == "0s";
}

}  // namespace

// ---- FlagSet --------------------------------------------------------------------------------

FlagSet::FlagSet(std::string program, std::string description)
    : program_(std::move(program)), description_(std::move(description)) {
  group_order_.push_back("");
}

FlagSet::~FlagSet() = default;

void FlagSet::SetGroup(std::string group) {
  group_ = std::move(group);
  if (std::find(group_order_.begin(), group_order_.end(), group_) == group_order_.end()) {
    group_order_.push_back(group_);
  }
}

void FlagSet::SetVersion(std::string version) {
  version_ = std::move(version);
}

void FlagSet::Register(std::string_view name, std::string type, std::string default_text,
                       std::string_view help, bool is_bool,
                       std::function<Status(std::string_view)> set) {
  const std::string key = Normalize(name);
  if (!IsValidFlagName(name)) {
    registration_errors_.push_back("invalid flag name " + Quote(name) +
                                   " (letters, digits, '-' and '_', starting with a letter or "
                                   "digit)");
    return;
  }
  if (key == "help" || key == "h" || key == "version") {
    registration_errors_.push_back("flag name --" + key + " is reserved");
    return;
  }
  if (flags_.count(key) > 0) {
    registration_errors_.push_back("flag --" + key + " is registered twice");
    return;
  }
  Flag flag;
  flag.name = key;
  flag.type = std::move(type);
  flag.help = std::string(help);
  flag.group = group_;
  flag.default_text = std::move(default_text);
  flag.is_bool = is_bool;
  flag.set = std::move(set);
  flags_.emplace(key, std::move(flag));
}

void FlagSet::AddString(std::string_view name, std::string* target, std::string_view help) {
  Register(name, "string", Quote(*target), help, false, [target](std::string_view v) {
    *target = std::string(v);
    return Status::Ok();
  });
}

void FlagSet::AddInt(std::string_view name, int* target, std::string_view help) {
  Register(name, "int", std::to_string(*target), help, false,
           [target](std::string_view v) { return ParseInteger(v, target, "a 32-bit integer"); });
}

void FlagSet::AddInt64(std::string_view name, int64_t* target, std::string_view help) {
  Register(name, "int64", std::to_string(*target), help, false,
           [target](std::string_view v) { return ParseInteger(v, target, "a 64-bit integer"); });
}

void FlagSet::AddDouble(std::string_view name, double* target, std::string_view help) {
  Register(name, "float", FormatNumber(*target), help, false,
           [target](std::string_view v) { return ParseDouble(v, target); });
}

void FlagSet::AddBool(std::string_view name, bool* target, std::string_view help) {
  Register(name, "", *target ? "true" : "false", help, true,
           [target](std::string_view v) { return ParseBool(v, target); });
}

void FlagSet::AddDurationNanos(std::string_view name, nanoseconds current, nanoseconds unit,
                               std::string_view help, std::function<void(nanoseconds)> assign) {
  Register(name, "duration", FormatDuration(current), help, false,
           [unit, assign = std::move(assign)](std::string_view v) -> Status {
             TEPHRA_ASSIGN_OR_RETURN(nanoseconds value, ParseDuration(v));
             if (value % unit != nanoseconds(0)) {
               return InvalidArgument("must be a whole number of " + FormatDuration(unit));
             }
             assign(value);
             return Status::Ok();
           });
}

void FlagSet::AddStringList(std::string_view name, std::vector<std::string>* target,
                            std::string_view help) {
  auto replaced = std::make_shared<bool>(false);  // the first occurrence drops the default
  Register(name, "stringArray", FormatList(*target), help, false,
           [target, replaced](std::string_view v) {
             if (!*replaced) target->clear();
             *replaced = true;
             target->emplace_back(v);
             return Status::Ok();
           });
}

void FlagSet::AddCommaList(std::string_view name, std::vector<std::string>* target,
                           std::string_view help) {
  auto replaced = std::make_shared<bool>(false);
  Register(name, "strings", FormatList(*target), help, false,
           [target, replaced](std::string_view v) {
             if (!*replaced) target->clear();
             *replaced = true;
             for (auto& item : SplitCommaList(v)) target->push_back(std::move(item));
             return Status::Ok();
           });
}

void FlagSet::AddCustom(std::string_view name, std::string_view type, std::string default_text,
                        std::string_view help, std::function<Status(std::string_view)> set) {
  Register(name, std::string(type), std::move(default_text), help, false, std::move(set));
}

void FlagSet::AddGlogFlags() {
  const std::string saved_group = group_;
  SetGroup("Logging");
  // glog's flag variables are plain globals (int32 is int, strings are std::string), so most
  // bind directly.
  AddInt("v", &FLAGS_v, "Log level for V logs; higher is more verbose.");
  Register(
      "vmodule", "string", Quote(FLAGS_vmodule),
      "Per-file V levels: comma list of pattern=N (file names without extension, * and ? "
      "wildcards), e.g. workqueue=4,http_*=2.",
      false, [](std::string_view text) -> Status {
        std::vector<std::pair<std::string, int>> levels;
        for (const std::string& item : SplitCommaList(text)) {
          const size_t eq = item.find('=');
          int level = 0;
          if (eq == std::string::npos || eq == 0 ||
              !ParseInteger(std::string_view(item).substr(eq + 1), &level, "an integer").ok()) {
            return InvalidArgument("expected pattern=N, got " + Quote(item));
          }
          levels.emplace_back(item.substr(0, eq), level);
        }
        FLAGS_vmodule = std::string(text);
        // FLAGS_vmodule is read only once by glog; set the levels directly as well.
        for (const auto& [pattern, level] : levels) {
          google::SetVLOGLevel(pattern.c_str(), level);
        }
        return Status::Ok();
      });
  AddBool("logtostderr", &FLAGS_logtostderr, "Log to standard error instead of files.");
  AddBool("alsologtostderr", &FLAGS_alsologtostderr, "Log to standard error as well as files.");
  Register("stderrthreshold", "int", std::to_string(FLAGS_stderrthreshold),
           "Also copy logs at or above this severity to standard error (0 INFO, 1 WARNING, "
           "2 ERROR, 3 FATAL).",
           false, [](std::string_view text) -> Status {
             int level = 0;
             TEPHRA_RETURN_IF_ERROR(ParseInteger(text, &level, "a 32-bit integer"));
             if (level < 0 || level > 3) return InvalidArgument("must be between 0 and 3");
             FLAGS_stderrthreshold = level;
             return Status::Ok();
           });
  AddString("log-dir", &FLAGS_log_dir,
            "Directory for log files when not logging to standard error.");
  group_ = saved_group;
}

void FlagSet::AddShorthand(std::string_view short_name, std::string_view long_name) {
  const Flag* target = Find(Normalize(long_name));
  if (target == nullptr) {
    registration_errors_.push_back("shorthand " + Quote(short_name) + " for unknown flag --" +
                                   std::string(long_name));
    return;
  }
  Flag copy = *target;  // Register inserts into flags_
  Register(short_name, copy.type, copy.default_text, "Short for --" + std::string(long_name) + ".",
           copy.is_bool, copy.set);
}

FlagSet::Flag* FlagSet::Find(std::string_view name) {
  auto it = flags_.find(name);
  return it == flags_.end() ? nullptr : &it->second;
}

bool FlagSet::Has(std::string_view name) const {
  return flags_.count(Normalize(name)) > 0;
}

bool FlagSet::IsSet(std::string_view name) const {
  auto it = flags_.find(Normalize(name));
  return it != flags_.end() && it->second.set_on_command_line;
}

std::string FlagSet::Suggest(std::string_view name) const {
  std::vector<std::string> names;
  for (const auto& [key, flag] : flags_) names.push_back(key);
  std::string best = NearestName(name, names);
  return best.empty() ? "" : " (did you mean --" + best + "?)";
}

Status FlagSet::Parse(int argc, const char* const* argv) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  return Parse(args);
}

Status FlagSet::Parse(const std::vector<std::string>& args) {
  if (!registration_errors_.empty()) {
    std::string message = "flag registration: " + registration_errors_[0];
    for (size_t i = 1; i < registration_errors_.size(); ++i) {
      message += "; " + registration_errors_[i];
    }
    return InvalidArgument(std::move(message));
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      positional_.insert(positional_.end(), args.begin() + static_cast<ptrdiff_t>(i) + 1,
                         args.end());
      break;
    }
    if (arg.size() < 2 || arg[0] != '-') {
      positional_.push_back(arg);
      continue;
    }
    std::string_view body(arg);
    body.remove_prefix(arg[1] == '-' ? 2 : 1);
    if (body.empty() || body[0] == '-' || body[0] == '=') {
      return InvalidArgument("bad flag syntax: " + arg);
    }
    const size_t eq = body.find('=');
    const std::string name = Normalize(body.substr(0, eq));
    std::optional<std::string> value;
    if (eq != std::string_view::npos) value = std::string(body.substr(eq + 1));

    if (name == "help" || name == "h") {
      help_requested_ = true;
      return Status::Ok();
    }
    if (name == "version") {
      version_requested_ = true;
      return Status::Ok();
    }
    Flag* flag = Find(name);
    bool negated = false;
    if (flag == nullptr && name.rfind("no-", 0) == 0) {
      Flag* base = Find(std::string_view(name).substr(3));
      if (base != nullptr && base->is_bool) {
        flag = base;
        negated = true;
      }
    }
    if (flag == nullptr) return InvalidArgument("unknown flag --" + name + Suggest(name));
    if (negated) {
      if (value) return InvalidArgument("flag --" + name + " takes no value");
      value = "false";
    } else if (!value) {
      if (flag->is_bool) {
        value = "true";  // a bool never takes the next argument: "--leader-elect false" is not
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        return InvalidArgument("flag --" + flag->name + " needs a value");
      }
    }
    Status status = flag->set(*value);
    if (!status.ok()) {
      return InvalidArgument("invalid value " + Quote(*value) + " for flag --" + flag->name + ": " +
                             status.message());
    }
    flag->set_on_command_line = true;
  }
  return Status::Ok();
}

std::string FlagSet::Usage() const {
  struct Line {
    std::string left;
    std::string help;
  };
  std::map<std::string, std::vector<std::pair<std::string, Line>>> by_group;
  for (const auto& [key, flag] : flags_) {
    std::string left = key.size() == 1 ? "  -" + key + ", --" + key : "      --" + key;
    if (!flag.type.empty()) left += " " + flag.type;
    std::string help = flag.help;
    if (!IsZeroDefault(flag.default_text)) help += " (default " + flag.default_text + ")";
    by_group[flag.group].push_back({key, {std::move(left), std::move(help)}});
  }
  by_group[""].push_back({"help", {"  -h, --help", "Show this help and exit."}});
  by_group[""].push_back({"version", {"      --version", "Show the version and exit."}});

  size_t width = 0;
  for (const auto& [group, lines] : by_group) {
    for (const auto& [key, line] : lines) width = std::max(width, line.left.size());
  }
  std::string out = "Usage: " + program_ + " [flags]\n";
  if (!description_.empty()) out += "\n" + description_ + "\n";
  for (const auto& group : group_order_) {
    auto it = by_group.find(group);
    if (it == by_group.end()) continue;
    auto lines = it->second;
    std::sort(lines.begin(), lines.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    out += "\n" + (group.empty() ? std::string("Flags") : group + " flags") + ":\n";
    for (const auto& [key, line] : lines) {
      out += line.left + std::string(width - line.left.size() + 3, ' ');
      // Continuation lines of a multi-line help text line up with its first line.
      for (char c : line.help) {
        out += c;
        if (c == '\n') out += std::string(width + 3, ' ');
      }
      out += "\n";
    }
  }
  return out;
}

std::string FlagSet::VersionText() const {
  return program_ + " " + (version_.empty() ? std::string("unknown") : version_) + "\n";
}

}  // namespace tephra::base
