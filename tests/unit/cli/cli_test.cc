// tephractl without an API server: output formats, and every bad command line refused with a
// message that names the argument.
#include "cli/cli.h"

#include <sstream>

#include <catch2/catch.hpp>

#include "cli/common.h"
#include "cli/output.h"
#include "tests/unit/cli/run_cli.h"

namespace tephra::cli {
namespace {

TEST_CASE("tables pad columns like kubectl") {
  Table t({"NAME", "PHASE"});
  t.Add({"a-long-name", "Running"});
  t.Add({"b", "Pending"});
  CHECK(t.Render() == "NAME          PHASE\na-long-name   Running\nb             Pending\n");
}

TEST_CASE("JSON becomes YAML that reads back as the same JSON") {
  std::string json =
      R"({"a":"true","b":"123","c":"x y","d":1,"e":[1,"2",false,null],"f":{"g":"","h":1.5}})";
  StatusOr<std::string> yaml = JsonToYaml(json);
  REQUIRE(yaml.ok());
  INFO(*yaml);
  CHECK(yaml->find("a: \"true\"") != std::string::npos);
  CHECK(yaml->find("b: \"123\"") != std::string::npos);
  CHECK(yaml->find("c: x y") != std::string::npos);
  StatusOr<std::string> back = YamlToJson(*yaml);
  REQUIRE(back.ok());
  CHECK(*back == json);
}

TEST_CASE("YAML errors say where") {
  StatusOr<std::string> bad = YamlToJson("a: [1, 2\nb: 3\n");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("line ") != std::string::npos);
  CHECK_FALSE(YamlToJson("- just\n- a list\n").ok());
}

TEST_CASE("output formats and resource lists are checked") {
  CHECK(*ParseOutputFormat("") == OutputFormat::kTable);
  CHECK(*ParseOutputFormat("yaml") == OutputFormat::kYaml);
  auto bad = ParseOutputFormat("xml");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message() == "--output: must be one of table, yaml, json; got \"xml\"");
  auto list = ParseResourceList("requests", "cpu=500m,memory=1Gi");
  REQUIRE(list.ok());
  CHECK(list->Find("cpu")->String() == "500m");
  CHECK(ParseResourceList("requests", "cpu")
            .status()
            .message()
            .find("--requests: \"cpu\" is not NAME=QUANTITY") == 0);
  CHECK(ParseResourceList("limits", "cpu=lots").status().message().find("--limits: cpu: ") == 0);
  CHECK(ParseResourceList("requests", "cpu=-1").status().message() ==
        "--requests: cpu must not be negative");
  CHECK(Age(base::Time(std::chrono::seconds(1000)), base::Time(std::chrono::seconds(1090))) ==
        "90s");
  CHECK(Age(base::Time(std::chrono::seconds(0)), base::Time(std::chrono::seconds(3 * 86400))) ==
        "3d");
}

TEST_CASE("bad command lines are refused naming the argument") {
  auto r = RunCli({});
  CHECK(r.code == kExitUsage);
  CHECK(r.err.find("Usage: tephractl <command>") != std::string::npos);

  r = RunCli({"frob"});
  CHECK(r.code == kExitUsage);
  CHECK(r.err.find("error: unknown command \"frob\"") != std::string::npos);

  r = RunCli({"job", "frob"});
  CHECK(r.code == kExitUsage);
  CHECK(r.err.find("unknown job command \"frob\" (one of: ") != std::string::npos);

  r = RunCli({"job", "get"});
  CHECK(r.code == kExitUsage);
  CHECK(r.err.find("job get: missing NAME (the job to show)") != std::string::npos);

  r = RunCli({"job", "get", "a", "b"});
  CHECK(r.err.find("job get: unexpected argument \"b\"") != std::string::npos);

  r = RunCli({"job", "list", "-o", "xml"});
  CHECK(r.code == kExitUsage);
  CHECK(r.err.find("--output: must be one of table, yaml, json; got \"xml\"") != std::string::npos);

  r = RunCli({"job", "list", "--bogus"});
  CHECK(r.err.find("unknown flag --bogus") != std::string::npos);

  r = RunCli({"job", "run", "x", "-n", "ns", "-R", "cpu=abc"});
  CHECK(r.code == kExitUsage);
  CHECK(r.err.find("--requests: cpu: ") != std::string::npos);

  r = RunCli({"job", "run", "x", "-n", "ns", "-m", "3", "-r", "2"});
  CHECK(r.err.find("--min: must be between 1 and --replicas (2)") != std::string::npos);

  r = RunCli({"job", "run", "x", "-n", "ns", "--name", "y"});
  CHECK(r.err.find("NAME \"x\" and --name \"y\" disagree") != std::string::npos);

  r = RunCli({"job", "run", "-n", "ns"});
  CHECK(r.err.find("job run: missing NAME (or --name, or --filename)") != std::string::npos);

  r = RunCli({"job", "run", "-n", "ns", "-f", "/nonexistent.yaml"});
  CHECK(r.err.find("--filename: cannot read /nonexistent.yaml") != std::string::npos);

  r = RunCli({"queue", "create", "q", "--state", "Frozen"});
  CHECK(r.err.find("--state: must be Open or Closed; got \"Frozen\"") != std::string::npos);

  r = RunCli({"queue", "create", "q", "--weight", "0"});
  CHECK(r.err.find("--weight: must be between 1 and 65535") != std::string::npos);

  r = RunCli({"queue", "create", "q", "--capability", "cpu"});
  CHECK(r.err.find("--capability: \"cpu\" is not NAME=QUANTITY") != std::string::npos);

  r = RunCli({"queue", "create", "q", "-l", "novalue"});
  CHECK(r.err.find("--label: \"novalue\" is not KEY=VALUE") != std::string::npos);

  r = RunCli({"job", "explain", "x", "-n", "ns", "--admin-key", "/k.pem"});
  CHECK(r.err.find("--admin-key needs --admin-cert") != std::string::npos);

  r = RunCli({"job", "explain", "x", "-n", "ns", "--admin-ca", "/nonexistent/ca.pem"});
  CHECK(r.err.find("--admin-ca: cannot read /nonexistent/ca.pem") != std::string::npos);

  r = RunCli({"queue", "usage", "a", "b"});
  CHECK(r.err.find("queue usage: unexpected argument \"b\"") != std::string::npos);
}

TEST_CASE("help and version need no cluster") {
  auto r = RunCli({"--help"});
  CHECK(r.code == kExitOk);
  CHECK(r.out.find("job explain NAME") != std::string::npos);
  CHECK(r.out.find("queue close NAME") != std::string::npos);

  r = RunCli({"job", "run", "--help"});
  CHECK(r.code == kExitOk);
  CHECK(r.out.find("--requests") != std::string::npos);
  CHECK(r.out.find("--admin-address") != std::string::npos);

  r = RunCli({"version", "--client"});
  CHECK(r.code == kExitOk);
  CHECK(r.out == std::string("tephractl: ") + TEPHRA_VERSION + "\n");

  // As a kubectl plugin the help reads the way the user typed it.
  r = RunCli({"--help"}, "/usr/local/bin/kubectl-tephra");
  CHECK(r.out.find("Usage: kubectl tephra <command>") != std::string::npos);

  r = RunCli({"queue"});
  CHECK(r.code == kExitUsage);
  CHECK(r.out.find("Usage: tephractl queue <") != std::string::npos);
}

TEST_CASE("global flags may come before the command, as with kubectl") {
  auto r = RunCli({"--admin-timeout", "1s", "-A", "version", "--client"});
  CHECK(r.code == kExitOk);
  CHECK(r.out == std::string("tephractl: ") + TEPHRA_VERSION + "\n");
  r = RunCli({"-n", "ns", "-o=yaml", "queue", "create", "q", "-l", "novalue"});
  CHECK(r.code == kExitUsage);
  CHECK(r.err.find("--label: \"novalue\" is not KEY=VALUE") != std::string::npos);
  // The value of a flag is not mistaken for the command.
  r = RunCli({"-n", "job", "frob"});
  CHECK(r.err.find("error: unknown command \"frob\"") != std::string::npos);
  r = RunCli({"-n", "ns"});
  CHECK(r.code == kExitUsage);
  CHECK(r.err.find("missing command") != std::string::npos);
}

}  // namespace
}  // namespace tephra::cli
