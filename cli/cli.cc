#include "cli/cli.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>

#include <glog/logging.h>

#include "cli/vcctl.h"
#include "json/json.h"
#include "kube/config.h"

namespace tephra::cli {
namespace {

std::string Getenv(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

std::string ProgramName(const char* argv0) {
  std::string p = argv0 == nullptr ? "tephractl" : argv0;
  size_t slash = p.rfind('/');
  if (slash != std::string::npos) p = p.substr(slash + 1);
  // kubectl runs plugins as kubectl-<name>; help should read as the user typed it.
  if (p.rfind("kubectl-", 0) == 0) return "kubectl " + p.substr(8);
  return p.empty() ? "tephractl" : p;
}

void AddGlobalFlags(base::FlagSet& f, GlobalOptions* o) {
  f.SetGroup("Global");
  f.AddString("kubeconfig", &o->kubeconfig,
              "Path to the kubeconfig file (default $KUBECONFIG or ~/.kube/config).");
  f.AddString("context", &o->context, "The kubeconfig context to use.");
  f.AddString("namespace", &o->namespace_, "Namespace (default: the context's, else default).");
  f.AddShorthand("n", "namespace");
  f.AddBool("all-namespaces", &o->all_namespaces,
            "List across all namespaces (wins over --namespace, as in kubectl).");
  f.AddShorthand("A", "all-namespaces");
  f.AddString("output", &o->output, "Output format: table, yaml or json.");
  f.AddShorthand("o", "output");
  f.AddInt("v", &o->verbosity, "Log verbosity (client requests at 4 and above).");
  f.SetGroup("Scheduler admin API");
  f.AddString("admin-address", &o->admin.address,
              "host:port of tephra-scheduler's admin API (default $TEPHRA_ADMIN_ADDRESS or "
              "127.0.0.1:8091).");
  f.AddString("admin-ca", &o->admin.ca_file,
              "CA bundle to verify the admin API's certificate (enables TLS).");
  f.AddString("admin-cert", &o->admin.cert_file,
              "Client certificate for the admin API (mutual TLS).");
  f.AddString("admin-key", &o->admin.key_file, "Client key for --admin-cert.");
  f.AddString("admin-server-name", &o->admin.server_name,
              "Name to verify the admin API certificate against.");
  f.AddDuration("admin-timeout", &o->admin.timeout, "How long to wait for the admin API.");
}

// Global flags that take no value (every other flag before the command words takes one).
bool IsBoolGlobal(const std::string& arg) {
  return arg == "-A" || arg == "--A" || arg == "--all-namespaces" || arg == "-all-namespaces" ||
         arg == "-h" || arg == "--help";
}

std::string CommandLine(const Command& c) {
  std::string s = c.group.empty() ? c.verb : c.group + " " + c.verb;
  if (!c.args.empty()) s += " " + c.args;
  return s;
}

std::string Overview(const std::string& program, const std::vector<Command>& commands) {
  std::string out = "Usage: " + program +
                    " <command> [flags]\n\n"
                    "Volcano-compatible jobs and queues, and why a job is pending.\n\nCommands:\n";
  size_t width = 0;
  for (const auto& c : commands) width = std::max(width, CommandLine(c).size());
  for (const auto& c : commands) {
    std::string line = CommandLine(c);
    out += "  " + line + std::string(width - line.size() + 3, ' ') + c.summary + "\n";
  }
  out += "\nRun '" + program + " <command> --help' for a command's flags.\n";
  return out;
}

}  // namespace

StatusOr<std::shared_ptr<kube::Client>> Context::Client() {
  if (client_) return client_;
  StatusOr<kube::RestConfig> cfg = InvalidArgument("unset");
  if (!options_.kubeconfig.empty() || !Getenv("KUBECONFIG").empty()) {
    cfg = kube::LoadKubeconfig({options_.kubeconfig, options_.context});
  } else {
    cfg = kube::LoadKubeconfig({"", options_.context});
    if (!cfg.ok()) {
      StatusOr<kube::RestConfig> in_cluster = kube::InClusterConfig();
      if (!in_cluster.ok()) {
        return NotFound("no Kubernetes configuration: " + cfg.status().message() +
                        "; pass --kubeconfig");
      }
      cfg = std::move(in_cluster);
    }
  }
  if (!cfg.ok()) return cfg.status().WithContext("--kubeconfig");
  cfg->user_agent = "tephractl";
  config_namespace_ = cfg->namespace_;
  TEPHRA_ASSIGN_OR_RETURN(client_, kube::Client::FromConfig(*cfg));
  return client_;
}

bool Context::IsSet(std::initializer_list<std::string_view> names) const {
  if (flags_ == nullptr) return false;
  for (auto n : names) {
    if (flags_->IsSet(n)) return true;
  }
  return false;
}

std::string Context::Namespace() {
  if (!options_.namespace_.empty()) return options_.namespace_;
  if (!client_) (void)Client();
  return config_namespace_.empty() ? "default" : config_namespace_;
}

int Fail(Context& ctx, const Status& error) {
  ctx.err() << "error: " << error.message() << "\n";
  return error.code() == StatusCode::kInvalidArgument ? kExitUsage : kExitFailed;
}

int UsageError(Context& ctx, const std::string& message) {
  ctx.err() << "error: " << message << "\nSee '" << ctx.program() << " --help'.\n";
  return kExitUsage;
}

int ExpectArgs(Context& ctx, const std::string& command, const std::vector<std::string>& positional,
               const std::vector<std::string>& names, size_t optional) {
  const size_t required = names.size() - optional;
  if (positional.size() < required) {
    return UsageError(ctx, command + ": missing " + names[positional.size()]);
  }
  if (positional.size() > names.size()) {
    return UsageError(ctx, command + ": unexpected argument \"" + positional[names.size()] + "\"");
  }
  return kExitOk;
}

int PrintObject(Context& ctx, OutputFormat format, const std::string& json) {
  StatusOr<std::string> text = format == OutputFormat::kYaml ? JsonToYaml(json) : PrettyJson(json);
  if (!text.ok()) return Fail(ctx, text.status());
  ctx.out() << *text;
  return kExitOk;
}

int PrintList(Context& ctx, OutputFormat format, const std::vector<std::string>& items) {
  json::Writer w;
  w.StartObject().Field("apiVersion", "v1").Field("kind", "List").Key("items").StartArray();
  for (const auto& item : items) w.Raw(item);
  w.EndArray().EndObject();
  return PrintObject(ctx, format, w.str());
}

int PrintTable(Context& ctx, const Table& table, const std::string& empty_message) {
  if (table.empty()) {
    ctx.err() << empty_message << "\n";
  } else {
    ctx.out() << table.Render();
  }
  return kExitOk;
}

Status Describe(const Status& s, const std::string& what) {
  if (s.ok()) return s;
  if (s.code() == StatusCode::kNotFound) return NotFound(what + " not found");
  if (s.code() == StatusCode::kForbidden)
    return Status(s.code(), what + ": forbidden: " + s.message());
  return Status(s.code(), what + ": " + s.message());
}

std::vector<size_t> CommandWords(const std::vector<std::string>& args,
                                 bool (*takes_no_value)(const std::string&)) {
  std::vector<size_t> words;
  for (size_t i = 0; i < args.size() && words.size() < 2; ++i) {
    if (args[i].size() > 1 && args[i][0] == '-') {
      if (args[i].find('=') == std::string::npos && !takes_no_value(args[i])) ++i;  // its value
      continue;
    }
    words.push_back(i);
  }
  return words;
}

const Command* FindCommand(const std::vector<Command>& commands,
                           const std::vector<std::string>& args, const std::vector<size_t>& words,
                           size_t* consumed) {
  auto word = [&](size_t k) { return k < words.size() ? args[words[k]] : std::string(); };
  const Command* command = nullptr;
  for (const auto& c : commands) {
    if (c.group.empty() && word(0) == c.verb) {
      command = &c;
      *consumed = 1;
    } else if (!c.group.empty() && word(0) == c.group && word(1) == c.verb) {
      command = &c;
      *consumed = 2;
    }
  }
  return command;
}

std::vector<std::string> WithoutWords(const std::vector<std::string>& args,
                                      const std::vector<size_t>& words, size_t consumed) {
  std::vector<std::string> rest;
  auto end = words.begin() + static_cast<std::ptrdiff_t>(std::min(consumed, words.size()));
  for (size_t i = 0; i < args.size(); ++i) {
    if (std::find(words.begin(), end, i) == end) rest.push_back(args[i]);
  }
  return rest;
}

int Run(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  const std::string program = ProgramName(argc > 0 ? argv[0] : nullptr);
  std::vector<std::string> args(argv + (argc > 0 ? 1 : 0), argv + argc);
  // Run as vcctl (the link, or --vcctl first): Volcano's vcctl command line and output.
  if (IsVcctlInvocation(program, &args)) return RunVcctl(args, out, err);
  std::vector<Command> commands;
  for (auto list : {JobCommands(), QueueCommands(), AdminCommands()}) {
    for (auto& c : list) commands.push_back(std::move(c));
  }
  std::sort(commands.begin(), commands.end(), [](const Command& a, const Command& b) {
    return std::make_pair(a.group, a.verb) < std::make_pair(b.group, b.verb);
  });
  if (args.empty() || args[0] == "help" || args[0] == "--help" || args[0] == "-h") {
    (args.empty() ? err : out) << Overview(program, commands);
    return args.empty() ? kExitUsage : kExitOk;
  }
  if (args[0] == "--version") args[0] = "version";

  // "<group> <verb>" or a top-level "<verb>": the first words that are not flags, so global
  // flags may come first as with kubectl ("tephractl -n ns job list").
  std::vector<size_t> words = CommandWords(args, IsBoolGlobal);
  auto word = [&](size_t k) -> const std::string& {
    static const std::string kNone;
    return k < words.size() ? args[words[k]] : kNone;
  };
  size_t consumed = 0;
  const Command* command = FindCommand(commands, args, words, &consumed);
  Context ctx(program, out, err);
  if (command == nullptr) {
    if (words.empty()) return UsageError(ctx, "missing command; see '" + program + " --help'");
    std::string known;
    for (const auto& c : commands) {
      if (c.group == word(0)) known += (known.empty() ? "" : ", ") + c.verb;
    }
    if (!known.empty() && words.size() > 1) {
      return UsageError(
          ctx, "unknown " + word(0) + " command \"" + word(1) + "\" (one of: " + known + ")");
    }
    if (!known.empty()) {
      out << "Usage: " << program << " " << word(0) << " <" << known << "> [flags]\n";
      bool help = std::find(args.begin(), args.end(), "--help") != args.end() ||
                  std::find(args.begin(), args.end(), "-h") != args.end();
      return help ? kExitOk : kExitUsage;
    }
    return UsageError(ctx, "unknown command \"" + word(0) + "\"");
  }
  std::vector<std::string> rest = WithoutWords(args, words, consumed);

  base::FlagSet flags(
      program + " " + CommandLine(*command),
      command->summary + (command->details.empty() ? "" : "\n\n" + command->details));
  GlobalOptions& o = ctx.options();
  o.admin.address =
      Getenv("TEPHRA_ADMIN_ADDRESS").empty() ? "127.0.0.1:8091" : Getenv("TEPHRA_ADMIN_ADDRESS");
  AddGlobalFlags(flags, &o);
  flags.SetGroup("Command");
  if (command->flags) command->flags(flags);
  Status parsed = flags.Parse(rest);
  if (!parsed.ok()) return UsageError(ctx, parsed.message());
  if (flags.HelpRequested()) {
    out << flags.Usage();
    return kExitOk;
  }
  if (flags.VersionRequested()) {
    out << program << " " << TEPHRA_VERSION << "\n";
    return kExitOk;
  }
  if (StatusOr<OutputFormat> f = ctx.Output(); !f.ok())
    return UsageError(ctx, f.status().message());
  ctx.set_flags(&flags);
  FLAGS_minloglevel = o.verbosity > 0 ? 0 : 2;
  FLAGS_v = o.verbosity;
  return command->run(ctx, flags.positional());
}

}  // namespace tephra::cli
