// Runs the CEL specification's conformance data (cel-spec's tests/simple/testdata) against
// this library and compares the outcome with conformance_expected.txt (docs/cel.md,
// "Conformance").
//
// The data is read where it lies, never copied into the repository (docs/cel.md, "Conformance",
// says where it is looked for). Without it the test says so and passes. The files are protobuf text
// format (SimpleTestFile); protobuf's Importer builds their descriptors from the .proto files next
// to them at run time, so no code is generated.
//
// Every section of every file is run and printed ("passed N of M"). The expectation file says,
// per file/section, "pass" (every test must pass), "except a|b -- why" (the named tests may
// fail) or "out-of-scope -- why" (run and printed, not enforced); a section missing from it
// fails the test, so the list of passing sections can only grow.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include <catch2/catch.hpp>
#include <google/protobuf/compiler/importer.h>
#include <google/protobuf/dynamic_message.h>
#include <google/protobuf/text_format.h>

#include "cel/environment.h"
#include "cel/program.h"
#include "cel/value.h"

namespace tephra::cel {
namespace {

namespace pb = google::protobuf;
namespace fs = std::filesystem;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

fs::path ConformanceDir() {
  if (const char* dir = std::getenv("TEPHRA_CEL_CONFORMANCE_DIR")) return dir;
  return fs::path(TEPHRA_SOURCE_DIR) / ".." / "shared" / "reference" / "cel-spec-conformance";
}

// Reflection helpers over the dynamic messages.
const pb::FieldDescriptor* Field(const pb::Message& m, const std::string& name) {
  const pb::FieldDescriptor* f = m.GetDescriptor()->FindFieldByName(name);
  REQUIRE(f != nullptr);
  return f;
}
std::string Str(const pb::Message& m, const std::string& name) {
  return m.GetReflection()->GetString(m, Field(m, name));
}
bool Bool(const pb::Message& m, const std::string& name) {
  return m.GetReflection()->GetBool(m, Field(m, name));
}
const pb::Message& Sub(const pb::Message& m, const std::string& name) {
  return m.GetReflection()->GetMessage(m, Field(m, name));
}
std::vector<const pb::Message*> Repeated(const pb::Message& m, const std::string& name) {
  std::vector<const pb::Message*> out;
  const pb::FieldDescriptor* f = Field(m, name);
  for (int i = 0; i < m.GetReflection()->FieldSize(m, f); ++i) {
    out.push_back(&m.GetReflection()->GetRepeatedMessage(m, f, i));
  }
  return out;
}
// The name of the oneof member set in m, or "".
std::string OneofCase(const pb::Message& m, const std::string& oneof) {
  const pb::OneofDescriptor* o = m.GetDescriptor()->FindOneofByName(oneof);
  REQUIRE(o != nullptr);
  const pb::FieldDescriptor* f = m.GetReflection()->GetOneofFieldDescriptor(m, o);
  return f == nullptr ? "" : f->name();
}

// cel.expr.Type -> the checker's type; nullptr when this library has no such type.
TypeRef ConvertType(const pb::Message& t) {
  std::string kind = OneofCase(t, "type_kind");
  if (kind == "dyn") return Type::Dyn();
  if (kind == "null") return Type::Null();
  if (kind == "primitive") {
    switch (t.GetReflection()->GetEnumValue(t, Field(t, "primitive"))) {
      case 1:
        return Type::Bool();
      case 2:
        return Type::Int();
      case 3:
        return Type::Uint();
      case 4:
        return Type::Double();
      case 5:
        return Type::String();
      case 6:
        return Type::Bytes();
      default:
        return nullptr;
    }
  }
  if (kind == "list_type") {
    TypeRef elem = ConvertType(Sub(Sub(t, "list_type"), "elem_type"));
    return elem ? Type::List(elem) : nullptr;
  }
  if (kind == "map_type") {
    TypeRef key = ConvertType(Sub(Sub(t, "map_type"), "key_type"));
    TypeRef value = ConvertType(Sub(Sub(t, "map_type"), "value_type"));
    return key && value ? Type::Map(key, value) : nullptr;
  }
  if (kind == "type") {
    TypeRef inner = ConvertType(Sub(t, "type"));
    return inner ? Type::TypeOf(inner) : nullptr;
  }
  if (kind == "type_param") return Type::Dyn();
  return nullptr;  // messages, wrappers, well-known types, functions, abstract types
}

const TypeValue* TypeNamed(const std::string& name) {
  static const TypeValue* kAll[] = {&types::kNull,   &types::kBool,   &types::kInt,   &types::kUint,
                                    &types::kDouble, &types::kString, &types::kBytes, &types::kList,
                                    &types::kMap,    &types::kType};
  for (const TypeValue* t : kAll) {
    if (t->name == name) return t;
  }
  return nullptr;
}

// cel.expr.Value -> Value; false when this library has no such value (messages, enums).
bool ConvertValue(const pb::Message& v, Value* out) {
  const pb::Reflection* r = v.GetReflection();
  std::string kind = OneofCase(v, "kind");
  if (kind == "null_value") {
    *out = Value::Null();
  } else if (kind == "bool_value") {
    *out = Value::Bool(r->GetBool(v, Field(v, kind)));
  } else if (kind == "int64_value") {
    *out = Value::Int(r->GetInt64(v, Field(v, kind)));
  } else if (kind == "uint64_value") {
    *out = Value::Uint(r->GetUInt64(v, Field(v, kind)));
  } else if (kind == "double_value") {
    *out = Value::Double(r->GetDouble(v, Field(v, kind)));
  } else if (kind == "string_value") {
    *out = Value::String(r->GetString(v, Field(v, kind)));
  } else if (kind == "bytes_value") {
    *out = Value::Bytes(r->GetString(v, Field(v, kind)));
  } else if (kind == "type_value") {
    const TypeValue* t = TypeNamed(r->GetString(v, Field(v, kind)));
    if (t == nullptr) return false;
    *out = Value::Type(*t);
  } else if (kind == "list_value") {
    auto list = std::make_shared<VectorList>();
    for (const pb::Message* item : Repeated(Sub(v, "list_value"), "values")) {
      Value element;
      if (!ConvertValue(*item, &element)) return false;
      list->items().push_back(std::move(element));
    }
    *out = Value::List(std::move(list));
  } else if (kind == "map_value") {
    auto map = std::make_shared<EntryMap>();
    for (const pb::Message* entry : Repeated(Sub(v, "map_value"), "entries")) {
      Value key;
      Value value;
      if (!ConvertValue(Sub(*entry, "key"), &key) || !ConvertValue(Sub(*entry, "value"), &value)) {
        return false;
      }
      map->Insert(std::move(key), std::move(value));
    }
    *out = Value::Map(std::move(map));
  } else {
    return false;  // object_value, enum_value
  }
  return true;
}

// Conformance equality: the kinds must agree (1 and 1u differ here), NaN matches NaN.
bool SameValue(const Value& a, const Value& b) {
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case ValueKind::kDouble:
      if (std::isnan(a.double_value())) return std::isnan(b.double_value());
      return a.double_value() == b.double_value() &&
             std::signbit(a.double_value()) == std::signbit(b.double_value());
    case ValueKind::kList:
      if (a.list().size() != b.list().size()) return false;
      for (size_t i = 0; i < a.list().size(); ++i) {
        if (!SameValue(a.list().Get(i), b.list().Get(i))) return false;
      }
      return true;
    case ValueKind::kMap:
      if (a.map().size() != b.map().size()) return false;
      for (size_t i = 0; i < a.map().size(); ++i) {
        Value other;
        if (!b.map().Find(a.map().KeyAt(i), &other)) return false;
        if (!SameValue(a.map().ValueAt(i), other)) return false;
      }
      return true;
    default:
      return Equal(a, b);
  }
}

struct Outcome {
  bool passed = false;
  std::string detail;
};

Outcome RunTest(const pb::Message& test) {
  Outcome o;
  std::string expr = Str(test, "expr");
  Environment env;
  env.EnableLibrary(Library::kStrings)
      .EnableLibrary(Library::kLists)
      .EnableLibrary(Library::kSets)
      .EnableLibrary(Library::kKubernetes);
  env.SetContainer(Str(test, "container"));
  env.SetMacros(!Bool(test, "disable_macros"));
  bool check = !Bool(test, "disable_check");
  env.SetCheckTypes(check);
  for (const pb::Message* decl : Repeated(test, "type_env")) {
    if (OneofCase(*decl, "decl_kind") != "ident") {
      o.detail = "declares a function";
      return o;
    }
    TypeRef type = ConvertType(Sub(Sub(*decl, "ident"), "type"));
    if (!type) {
      o.detail = "declares a type this library does not have";
      return o;
    }
    env.DeclareVariable(Str(*decl, "name"), type);
  }
  // Bindings, in declaration order; an undeclared binding is declared dyn.
  const pb::FieldDescriptor* bindings_field = Field(test, "bindings");
  const pb::Reflection* r = test.GetReflection();
  std::map<std::string, Value> bound;
  for (int i = 0; i < r->FieldSize(test, bindings_field); ++i) {
    const pb::Message& entry = r->GetRepeatedMessage(test, bindings_field, i);
    std::string name = Str(entry, "key");
    const pb::Message& expr_value = Sub(entry, "value");
    if (OneofCase(expr_value, "kind") != "value") {
      o.detail = "binds an error or unknown";
      return o;
    }
    Value v;
    if (!ConvertValue(Sub(expr_value, "value"), &v)) {
      o.detail = "binds a value this library does not have";
      return o;
    }
    if (!env.FindVariable(name)) env.DeclareVariable(name, Type::Dyn());
    bound[name] = std::move(v);
  }
  std::vector<Value> variables(env.variable_count());
  for (size_t i = 0; i < env.variable_count(); ++i) {
    auto it = bound.find(env.variable_name(i));
    if (it != bound.end()) variables[i] = it->second;
  }

  std::string expect = OneofCase(test, "result_matcher");
  StatusOr<Program> program = Compile(expr, env);
  if (!program.ok()) {
    bool wants_error = expect == "eval_error" || expect == "any_eval_errors";
    o.passed = wants_error;
    o.detail = "compile: " + program.status().message();
    return o;
  }
  if (Bool(test, "check_only")) {
    o.passed = true;
    return o;
  }
  Value result = program->Evaluate(variables);
  if (expect == "eval_error" || expect == "any_eval_errors") {
    o.passed = result.IsError();
    o.detail = "got " + result.DebugString();
    return o;
  }
  if (result.IsError()) {
    o.detail = "error: " + std::string(result.error_message());
    return o;
  }
  Value want;
  if (expect.empty()) {
    want = Value::Bool(true);
  } else if (expect == "value" || expect == "typed_result") {
    const pb::Message& v =
        expect == "value" ? Sub(test, "value") : Sub(Sub(test, "typed_result"), "result");
    if (!ConvertValue(v, &want)) {
      o.detail = "expects a value this library does not have";
      return o;
    }
  } else {
    o.detail = "expects " + expect;
    return o;
  }
  o.passed = SameValue(result, want);
  if (!o.passed) o.detail = "got " + result.DebugString() + ", want " + want.DebugString();
  return o;
}

struct Expectation {
  std::string kind;  // pass, except, out-of-scope
  std::set<std::string> allowed_failures;
  std::string reason;
};

// "file/section pass", "file/section except a|b c -- why", "file/* out-of-scope -- why".
std::map<std::string, Expectation> ReadExpectations(const fs::path& path) {
  std::map<std::string, Expectation> out;
  std::istringstream in(ReadFile(path));
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::string reason;
    if (size_t dash = line.find(" -- "); dash != std::string::npos) {
      reason = line.substr(dash + 4);
      line = line.substr(0, dash);
    }
    std::istringstream words(line);
    std::string key;
    Expectation e;
    words >> key >> e.kind;
    e.reason = reason;
    if (e.kind == "except") {
      std::string rest;
      std::getline(words, rest);
      rest.erase(0, rest.find_first_not_of(' '));
      std::istringstream names(rest);
      std::string name;
      while (std::getline(names, name, '|')) e.allowed_failures.insert(name);
    }
    out[key] = e;
  }
  return out;
}

TEST_CASE("the CEL specification's conformance tests pass as conformance_expected.txt says") {
  fs::path dir = ConformanceDir();
  if (!fs::exists(dir / "tests" / "simple" / "testdata")) {
    WARN("CEL conformance data not found at " << dir.string()
                                              << " (set TEPHRA_CEL_CONFORMANCE_DIR); skipped");
    return;
  }
  struct Collector : pb::compiler::MultiFileErrorCollector {
    void AddError(const std::string& file, int line, int, const std::string& message) override {
      errors += file + ":" + std::to_string(line) + ": " + message + "\n";
    }
    std::string errors;
  } collector;
  pb::compiler::DiskSourceTree tree;
  tree.MapPath("", (dir / "proto").string());
  tree.MapPath("", "/usr/include");
  pb::compiler::Importer importer(&tree, &collector);
  for (const char* file : {"cel/expr/conformance/test/simple.proto",
                           "cel/expr/conformance/proto2/test_all_types.proto",
                           "cel/expr/conformance/proto2/test_all_types_extensions.proto",
                           "cel/expr/conformance/proto3/test_all_types.proto"}) {
    INFO(collector.errors);
    REQUIRE(importer.Import(file) != nullptr);
  }
  const pb::Descriptor* file_type =
      importer.pool()->FindMessageTypeByName("cel.expr.conformance.test.SimpleTestFile");
  REQUIRE(file_type != nullptr);
  pb::DynamicMessageFactory factory(importer.pool());

  std::map<std::string, Expectation> expectations =
      ReadExpectations(fs::path(TEPHRA_SOURCE_DIR) / "tests/unit/cel/conformance_expected.txt");
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir / "tests" / "simple" / "testdata")) {
    if (entry.path().extension() == ".textproto") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());

  std::vector<std::string> regressions;
  std::vector<std::string> improvements;
  size_t total_passed = 0;
  size_t total = 0;
  size_t scope_passed = 0;  // in the sections listed pass or except
  size_t scope_total = 0;
  for (const fs::path& path : files) {
    std::unique_ptr<pb::Message> message(factory.GetPrototype(file_type)->New());
    pb::TextFormat::Parser parser;
    bool parsed = parser.ParseFromString(ReadFile(path), message.get());
    std::string file = path.stem().string();
    if (!parsed) {
      regressions.push_back(file + ": the text format did not parse");
      continue;
    }
    for (const pb::Message* section : Repeated(*message, "section")) {
      std::string key = file + "/" + Str(*section, "name");
      auto it = expectations.find(key);
      if (it == expectations.end()) it = expectations.find(file + "/*");
      size_t passed = 0;
      std::vector<std::string> failed;
      std::vector<const pb::Message*> tests = Repeated(*section, "test");
      for (const pb::Message* test : tests) {
        Outcome o = RunTest(*test);
        if (o.passed) {
          ++passed;
        } else {
          failed.push_back(Str(*test, "name") + " [" + Str(*test, "expr") + "]: " + o.detail);
        }
      }
      total_passed += passed;
      total += tests.size();
      std::cout << key << ": passed " << passed << " of " << tests.size();
      if (it != expectations.end() && it->second.kind == "out-of-scope") {
        std::cout << " (out of scope: " << it->second.reason << ")";
      }
      std::cout << "\n";
      if (it == expectations.end()) {
        regressions.push_back(key + ": not listed in conformance_expected.txt");
        continue;
      }
      const Expectation& e = it->second;
      if (e.kind == "out-of-scope") continue;
      scope_passed += passed;
      scope_total += tests.size();
      for (const std::string& f : failed) {
        std::string name = f.substr(0, f.find(" ["));
        if (e.kind == "except" && e.allowed_failures.count(name) > 0) continue;
        regressions.push_back(key + ": " + f);
      }
      if (e.kind == "except" && failed.size() < e.allowed_failures.size()) {
        improvements.push_back(key + ": fewer failures than listed");
      }
    }
  }
  std::cout << "in scope: passed " << scope_passed << " of " << scope_total << "\n";
  std::cout << "all files: passed " << total_passed << " of " << total << "\n";
  for (const std::string& i : improvements) {
    std::cout << "better than expected (update conformance_expected.txt): " << i << "\n";
  }
  for (const std::string& r : regressions) std::cout << "REGRESSION " << r << "\n";
  CHECK(regressions.empty());
}

}  // namespace
}  // namespace tephra::cel
