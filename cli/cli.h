// tephractl: vcctl's daily commands with kubectl's flags, and `job explain`, which asks the
// scheduler why a job is pending (admin API) or, when the scheduler cannot be reached, shows
// what the API server knows (PodGroup conditions and events).
//
//   tephractl job list|get|run|suspend|resume|delete|explain
//   tephractl queue list|get|create|open|close|delete|usage
//   tephractl pod list -j JOB
//   tephractl snapshot dump
//   tephractl version
//
// Also runs as a kubectl plugin: installed as `kubectl-tephra`, `kubectl tephra job list` works.
#pragma once

#include <functional>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "base/flags.h"
#include "base/status.h"
#include "cli/admin_client.h"
#include "cli/output.h"
#include "kube/client.h"

namespace tephra::cli {

// Exit codes: 0 done, 1 the operation failed, 2 the command line is wrong.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitUsage = 2;

struct GlobalOptions {
  std::string kubeconfig;
  std::string context;
  std::string namespace_;
  bool all_namespaces = false;
  std::string output;
  AdminConnection admin;
  int verbosity = 0;
};

// One command invocation: its options, streams and (lazily) its API client.
class Context {
 public:
  Context(std::string program, std::ostream& out, std::ostream& err)
      : program_(std::move(program)), out_(out), err_(err) {}

  GlobalOptions& options() { return options_; }
  std::ostream& out() { return out_; }
  std::ostream& err() { return err_; }
  const std::string& program() const { return program_; }

  // The API client from --kubeconfig/--context (or $KUBECONFIG, in-cluster, ~/.kube/config).
  StatusOr<std::shared_ptr<kube::Client>> Client();
  // -n, else the kubeconfig context's namespace, else "default".
  std::string Namespace();
  // "" with -A (every namespace), else Namespace().
  std::string ListNamespace() { return options_.all_namespaces ? "" : Namespace(); }
  StatusOr<OutputFormat> Output() const { return ParseOutputFormat(options_.output); }
  StatusOr<std::unique_ptr<AdminClient>> Admin() const {
    return AdminClient::Create(options_.admin);
  }
  // Whether any of the flags was given on the command line.
  bool IsSet(std::initializer_list<std::string_view> names) const;
  void set_flags(const base::FlagSet* flags) { flags_ = flags; }

 private:
  std::string program_;
  std::ostream& out_;
  std::ostream& err_;
  GlobalOptions options_;
  const base::FlagSet* flags_ = nullptr;
  std::shared_ptr<kube::Client> client_;
  std::string config_namespace_;
};

struct Command {
  std::string group;  // "job"; "" for top-level commands (version)
  std::string verb;   // "list"
  std::string args;   // "NAME", "[NAME]"
  std::string summary;
  std::string details;  // extra help text (flags beyond the common ones are listed by the FlagSet)
  // Registers the command's own flags.
  std::function<void(base::FlagSet&)> flags;
  // Runs after parsing; returns the exit code.
  std::function<int(Context&, const std::vector<std::string>& positional)> run;
};

// Every command, grouped (cli/*_commands.cc).
std::vector<Command> JobCommands();
std::vector<Command> QueueCommands();
std::vector<Command> AdminCommands();  // job explain, queue usage, snapshot dump, version

// Runs tephractl with argv (argv[0] decides the program name: kubectl-tephra prints
// "kubectl tephra" in help). Returns the exit code.
int Run(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

// ---- helpers shared by the command files ----

// Where the command words are in `args`: the first two arguments that are neither flags nor a
// flag's value (flags for which `takes_no_value` is false take the next argument).
std::vector<size_t> CommandWords(const std::vector<std::string>& args,
                                 bool (*takes_no_value)(const std::string&));
// The command the words name ("<group> <verb>", or a top-level "<verb>"), or nullptr; *consumed
// is how many of the words it takes.
const Command* FindCommand(const std::vector<Command>& commands,
                           const std::vector<std::string>& args, const std::vector<size_t>& words,
                           size_t* consumed);
// `args` without the first `consumed` command words: the command's flags and arguments.
std::vector<std::string> WithoutWords(const std::vector<std::string>& args,
                                      const std::vector<size_t>& words, size_t consumed);

// Prints `error` as "error: <message>" and returns the exit code for it.
int Fail(Context& ctx, const Status& error);
int UsageError(Context& ctx, const std::string& message);
// Exactly `n` positional arguments named `names` ("NAME"), or a usage error naming what is
// missing or extra. Returns kExitOk when they are right.
int ExpectArgs(Context& ctx, const std::string& command, const std::vector<std::string>& positional,
               const std::vector<std::string>& names, size_t optional = 0);
// Prints one object (JSON text) as YAML or JSON.
int PrintObject(Context& ctx, OutputFormat format, const std::string& json);
// Prints items as a List in YAML or JSON.
int PrintList(Context& ctx, OutputFormat format, const std::vector<std::string>& items);
// Prints a listing's table, or `empty_message` on stderr when it has no rows (as kubectl).
int PrintTable(Context& ctx, const Table& table, const std::string& empty_message);
// The API server's error for an object, phrased for people: "job default/x not found".
Status Describe(const Status& s, const std::string& what);

}  // namespace tephra::cli
