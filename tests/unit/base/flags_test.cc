#include "base/flags.h"

#include <chrono>
#include <string>
#include <vector>

// glog before Catch, and glog's CHECK dropped: both define a CHECK macro.
#include <glog/logging.h>
#undef CHECK
#include <catch2/catch.hpp>

namespace tephra::base {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;

struct Options {
  std::string kubeconfig;
  std::string scheduler_conf = "/etc/tephra/scheduler.conf";
  int burst = 100;
  int64_t big = 0;
  double qps = 50;
  bool leader_elect = true;
  bool dry_run = false;
  seconds lease = seconds(15);
  milliseconds period = milliseconds(1000);
  nanoseconds resync = nanoseconds(0);
  std::vector<std::string> scheduler_names = {"volcano"};
  std::vector<std::string> plugins = {"gang", "priority"};
};

void Register(FlagSet& flags, Options& o) {
  flags.AddString("kubeconfig", &o.kubeconfig, "Path to a kubeconfig file.");
  flags.AddString("scheduler-conf", &o.scheduler_conf, "Scheduler configuration file.");
  flags.SetGroup("Kubernetes");
  flags.AddInt("kube-api-burst", &o.burst, "Burst towards the API server.");
  flags.AddDouble("kube-api-qps", &o.qps, "QPS towards the API server.");
  flags.AddInt64("big", &o.big, "A 64-bit number.");
  flags.SetGroup("Leader election");
  flags.AddBool("leader-elect", &o.leader_elect, "Elect a leader before acting.");
  flags.AddDuration("leader-elect-lease-duration", &o.lease, "Lease duration.");
  flags.SetGroup("");
  flags.AddBool("dry-run", &o.dry_run, "Change nothing.");
  flags.AddDuration("period", &o.period, "Schedule period.");
  flags.AddDuration("resync", &o.resync, "Resync period.");
  flags.AddStringList("scheduler-name", &o.scheduler_names, "Scheduler names to serve.");
  flags.AddCommaList("plugins", &o.plugins, "Plugins to enable.");
}

Status ParseArgs(FlagSet& flags, std::vector<std::string> args) {
  return flags.Parse(args);
}

TEST_CASE("Every flag type parses in both --flag=value and --flag value forms") {
  Options o;
  FlagSet flags("tephra-scheduler");
  Register(flags, o);
  REQUIRE(ParseArgs(flags, {"--kubeconfig=/k.yaml",
                            "--kube-api-burst",
                            "7",
                            "-kube-api-qps=2.5",
                            "--big",
                            "-9000000000",
                            "--leader-elect=false",
                            "--dry-run",
                            "--leader-elect-lease-duration",
                            "1m30s",
                            "--period=500ms",
                            "--resync",
                            "1.5h",
                            "--scheduler-name",
                            "a,b",
                            "--scheduler-name=c",
                            "--plugins",
                            "drf, binpack",
                            "--plugins=gang",
                            "--scheduler_conf",
                            "/x.conf"})
              .ok());
  CHECK(o.kubeconfig == "/k.yaml");
  CHECK(o.burst == 7);
  CHECK(o.qps == 2.5);
  CHECK(o.big == -9000000000);
  CHECK_FALSE(o.leader_elect);
  CHECK(o.dry_run);
  CHECK(o.lease == seconds(90));
  CHECK(o.period == milliseconds(500));
  CHECK(o.resync == std::chrono::minutes(90));
  CHECK(o.scheduler_names == std::vector<std::string>{"a,b", "c"});
  CHECK(o.plugins == std::vector<std::string>{"drf", "binpack", "gang"});
  CHECK(o.scheduler_conf == "/x.conf");  // '_' and '-' are the same
  CHECK(flags.IsSet("kube-api-burst"));
  CHECK(flags.IsSet("kube-api-qps"));
  CHECK(flags.positional().empty());
}

TEST_CASE("Defaults stay when flags are absent and bools have three spellings") {
  Options o;
  FlagSet flags("p");
  Register(flags, o);
  REQUIRE(
      ParseArgs(flags, {"--no-leader-elect", "--dry-run=true", "file.yaml", "--", "--not-a-flag"})
          .ok());
  CHECK_FALSE(o.leader_elect);
  CHECK(o.dry_run);
  CHECK(o.burst == 100);
  CHECK(o.scheduler_names == std::vector<std::string>{"volcano"});
  CHECK_FALSE(flags.IsSet("kube-api-burst"));
  CHECK(flags.positional() == std::vector<std::string>{"file.yaml", "--not-a-flag"});

  Options o2;
  FlagSet flags2("p");
  Register(flags2, o2);
  // A bool never swallows the next argument.
  REQUIRE(ParseArgs(flags2, {"--dry-run", "false"}).ok());
  CHECK(o2.dry_run);
  CHECK(flags2.positional() == std::vector<std::string>{"false"});
  CHECK(!ParseArgs(flags2, {"--dry-run=maybe"}).ok());
}

TEST_CASE("A shorthand sets its long flag and says so in --help") {
  std::string name = "x";
  bool all = false;
  FlagSet flags("p");
  flags.AddString("name", &name, "The name.");
  flags.AddShorthand("N", "name");
  flags.AddBool("all", &all, "Everything.");
  flags.AddShorthand("A", "all");
  REQUIRE(ParseArgs(flags, {"-N", "job", "-A"}).ok());
  CHECK(name == "job");
  CHECK(all);
  CHECK(flags.Usage().find("Short for --name.") != std::string::npos);

  FlagSet unknown("p");
  unknown.AddShorthand("N", "name");
  CHECK_FALSE(ParseArgs(unknown, {}).ok());
}

TEST_CASE("Bad values name the flag and the rule") {
  auto error = [](std::vector<std::string> args) {
    Options o;
    FlagSet flags("p");
    Register(flags, o);
    Status s = flags.Parse(args);
    CHECK(s.code() == StatusCode::kInvalidArgument);
    return s.message();
  };
  CHECK(error({"--kube-api-burst=abc"}) ==
        "invalid value \"abc\" for flag --kube-api-burst: expected an integer");
  CHECK(error({"--kube-api-burst", "99999999999"}) ==
        "invalid value \"99999999999\" for flag --kube-api-burst: out of range for a 32-bit "
        "integer");
  CHECK(error({"--kube-api-qps=fast"}) ==
        "invalid value \"fast\" for flag --kube-api-qps: expected a finite number");
  CHECK(error({"--kube-api-qps=inf"}) ==
        "invalid value \"inf\" for flag --kube-api-qps: expected a finite number");
  CHECK(error({"--leader-elect=yes"}) ==
        "invalid value \"yes\" for flag --leader-elect: expected true or false");
  CHECK(error({"--leader-elect-lease-duration=1500ms"}) ==
        "invalid value \"1500ms\" for flag --leader-elect-lease-duration: must be a whole "
        "number of 1s");
  CHECK(error({"--period=15"}) ==
        "invalid value \"15\" for flag --period: missing unit in duration \"15\" (use ns, us, "
        "ms, s, m or h)");
  CHECK(error({"--period=2d"}) ==
        "invalid value \"2d\" for flag --period: unknown unit \"d\" in duration \"2d\" (use ns, "
        "us, ms, s, m or h)");
  CHECK(error({"--kube-api-qp=5"}) == "unknown flag --kube-api-qp (did you mean --kube-api-qps?)");
  CHECK(error({"--completely-unknown"}) == "unknown flag --completely-unknown");
  CHECK(error({"--kubeconfig"}) == "flag --kubeconfig needs a value");
  CHECK(error({"--no-leader-elect=true"}) == "flag --no-leader-elect takes no value");
  CHECK(error({"--no-kubeconfig"}) == "unknown flag --no-kubeconfig");
  CHECK(error({"---x"}) == "bad flag syntax: ---x");
}

TEST_CASE("Registration mistakes are reported by Parse") {
  int a = 0;
  int b = 0;
  FlagSet flags("p");
  flags.AddInt("dup", &a, "");
  flags.AddInt("dup", &b, "");
  flags.AddInt("bad name", &a, "");
  flags.AddInt("help", &a, "");
  Status s = flags.Parse(std::vector<std::string>{});
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK(s.message().find("flag --dup is registered twice") != std::string::npos);
  CHECK(s.message().find("invalid flag name \"bad name\"") != std::string::npos);
  CHECK(s.message().find("flag name --help is reserved") != std::string::npos);
}

TEST_CASE("--help and --version stop parsing") {
  Options o;
  FlagSet flags("tephra-scheduler");
  Register(flags, o);
  flags.SetVersion("0.1.0");
  REQUIRE(ParseArgs(flags, {"--kube-api-burst=1", "--help", "--kube-api-burst=bad"}).ok());
  CHECK(flags.HelpRequested());
  CHECK(o.burst == 1);

  FlagSet v("tephra-scheduler");
  v.SetVersion("0.1.0");
  REQUIRE(ParseArgs(v, {"-version"}).ok());
  CHECK(v.VersionRequested());
  CHECK(v.VersionText() == "tephra-scheduler 0.1.0\n");
  CHECK(FlagSet("x").VersionText() == "x unknown\n");
  FlagSet h("x");
  REQUIRE(ParseArgs(h, {"-h"}).ok());
  CHECK(h.HelpRequested());
}

TEST_CASE("Help lists groups in registration order with flags sorted and defaults shown") {
  Options o;
  FlagSet flags("tephra-scheduler", "The Tephra batch scheduler.");
  Register(flags, o);
  const std::string expected =
      "Usage: tephra-scheduler [flags]\n"
      "\n"
      "The Tephra batch scheduler.\n"
      "\n"
      "Flags:\n"
      "      --dry-run                                Change nothing.\n"
      "  -h, --help                                   Show this help and exit.\n"
      "      --kubeconfig string                      Path to a kubeconfig file.\n"
      "      --period duration                        Schedule period. (default 1s)\n"
      "      --plugins strings                        Plugins to enable. (default "
      "[gang,priority])\n"
      "      --resync duration                        Resync period.\n"
      "      --scheduler-conf string                  Scheduler configuration file. (default "
      "\"/etc/tephra/scheduler.conf\")\n"
      "      --scheduler-name stringArray             Scheduler names to serve. (default "
      "[volcano])\n"
      "      --version                                Show the version and exit.\n"
      "\n"
      "Kubernetes flags:\n"
      "      --big int64                              A 64-bit number.\n"
      "      --kube-api-burst int                     Burst towards the API server. (default 100)\n"
      "      --kube-api-qps float                     QPS towards the API server. (default 50)\n"
      "\n"
      "Leader election flags:\n"
      "      --leader-elect                           Elect a leader before acting. (default "
      "true)\n"
      "      --leader-elect-lease-duration duration   Lease duration. (default 15s)\n";
  CHECK(flags.Usage() == expected);
}

TEST_CASE("glog flags map onto glog's FLAGS_ variables") {
  const int saved_v = FLAGS_v;
  const bool saved_logtostderr = FLAGS_logtostderr;
  const std::string saved_vmodule = FLAGS_vmodule;
  const int saved_threshold = FLAGS_stderrthreshold;

  FlagSet flags("p");
  flags.AddGlogFlags();
  CHECK(flags.Has("v"));
  REQUIRE(flags
              .Parse(std::vector<std::string>{"-v", "4", "--logtostderr=false",
                                              "--vmodule=flags_probe=3,other*=1",
                                              "--stderrthreshold=1", "--log_dir=/tmp/x"})
              .ok());
  CHECK(FLAGS_v == 4);
  CHECK_FALSE(FLAGS_logtostderr);
  CHECK(FLAGS_vmodule == "flags_probe=3,other*=1");
  CHECK(FLAGS_stderrthreshold == 1);
  CHECK(FLAGS_log_dir == "/tmp/x");
  // SetVLOGLevel returns the level previously set for that exact pattern.
  CHECK(google::SetVLOGLevel("flags_probe", 0) == 3);
  CHECK(google::SetVLOGLevel("other*", 0) == 1);

  FlagSet again("p");
  again.AddGlogFlags();
  REQUIRE(again.Parse(std::vector<std::string>{"--v=2", "--logtostderr"}).ok());
  CHECK(FLAGS_v == 2);
  CHECK(FLAGS_logtostderr);
  CHECK(!again.Parse(std::vector<std::string>{"--vmodule=novalue"}).ok());
  CHECK(!again.Parse(std::vector<std::string>{"--stderrthreshold=7"}).ok());
  CHECK(again.Usage().find("Logging flags:\n") != std::string::npos);
  CHECK(again.Usage().find("  -v, --v int") != std::string::npos);

  FLAGS_v = saved_v;
  FLAGS_logtostderr = saved_logtostderr;
  FLAGS_vmodule = saved_vmodule;
  FLAGS_stderrthreshold = saved_threshold;
  FLAGS_log_dir = "";
}

TEST_CASE("Custom flags parse with their own rule") {
  std::string mode = "auto";
  FlagSet flags("p");
  flags.AddCustom("mode", "auto|on|off", "\"auto\"", "Mode.", [&](std::string_view v) -> Status {
    if (v != "auto" && v != "on" && v != "off") return InvalidArgument("must be auto, on or off");
    mode = std::string(v);
    return Status::Ok();
  });
  CHECK(flags.Parse(std::vector<std::string>{"--mode=on"}).ok());
  CHECK(mode == "on");
  CHECK(flags.Parse(std::vector<std::string>{"--mode=x"}).message() ==
        "invalid value \"x\" for flag --mode: must be auto, on or off");
  CHECK(flags.Usage().find("--mode auto|on|off   Mode. (default \"auto\")") != std::string::npos);
}

}  // namespace
}  // namespace tephra::base
