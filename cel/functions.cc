#include "cel/functions.h"

#include <glog/logging.h>

namespace tephra::cel {
namespace {

constexpr std::string_view kNoSuchOverload = "no such overload";

std::string_view Trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// Splits "a, map(b, c), d" at the commas outside parentheses.
std::vector<std::string_view> SplitTopLevel(std::string_view s) {
  std::vector<std::string_view> parts;
  if (Trim(s).empty()) return parts;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '(') ++depth;
    if (s[i] == ')') --depth;
    if (s[i] == ',' && depth == 0) {
      parts.push_back(Trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  parts.push_back(Trim(s.substr(start)));
  return parts;
}

TypeRef MustParse(std::string_view text) {
  StatusOr<TypeRef> type = Type::Parse(text);
  CHECK(type.ok()) << type.status().message();
  return *type;
}

// "(int, int) -> int" or "string.(string) -> bool"; the declarations are constants of this
// library, so a malformed one is a programming error.
Overload ParseSignature(std::string_view signature) {
  size_t arrow = signature.find("->");
  CHECK(arrow != std::string_view::npos) << "no result in " << signature;
  std::string_view left = Trim(signature.substr(0, arrow));
  Overload overload;
  overload.result = MustParse(Trim(signature.substr(arrow + 2)));
  if (left.front() != '(') {
    size_t dot = left.find(".(");
    CHECK(dot != std::string_view::npos) << "bad signature " << signature;
    overload.member = true;
    overload.params.push_back(MustParse(left.substr(0, dot)));
    left = left.substr(dot + 1);
  }
  CHECK(left.front() == '(' && left.back() == ')') << "bad signature " << signature;
  for (std::string_view param : SplitTopLevel(left.substr(1, left.size() - 2))) {
    overload.params.push_back(MustParse(param));
  }
  return overload;
}

}  // namespace

const FunctionRegistry& FunctionRegistry::Get() {
  static const FunctionRegistry* registry = [] {
    auto* r = new FunctionRegistry();
    RegisterStandardFunctions(*r);
    RegisterStringFunctions(*r);
    RegisterListFunctions(*r);
    RegisterKubernetesFunctions(*r);
    return r;
  }();
  return *registry;
}

const Function* FunctionRegistry::Find(std::string_view name) const {
  auto it = functions_.find(name);
  return it == functions_.end() ? nullptr : &it->second;
}

void FunctionRegistry::Add(Library library, std::string_view name, FunctionImpl impl,
                           std::initializer_list<std::string_view> signatures, int pattern_arg) {
  Function& function = functions_[std::string(name)];
  function.name = std::string(name);
  FunctionPiece piece;
  piece.library = library;
  piece.impl = impl;
  piece.pattern_arg = pattern_arg;
  for (std::string_view signature : signatures) {
    piece.overloads.push_back(ParseSignature(signature));
  }
  function.pieces.push_back(std::move(piece));
}

namespace {
// Every answer shares one message buffer, so IsNoSuchOverload compares a pointer and trying the
// next piece allocates nothing.
const Value& SharedNoSuchOverload() {
  static const Value* value = new Value(Value::Error(std::string(kNoSuchOverload)));
  return *value;
}
}  // namespace

Value NoSuchOverload() {
  return SharedNoSuchOverload();
}

bool IsNoSuchOverload(const Value& v) {
  return v.IsError() && v.error_message().data() == SharedNoSuchOverload().error_message().data();
}

Value NoMatchingOverload(std::string_view function, const Value* args, size_t count) {
  std::string message = "no such overload: " + std::string(function) + "(";
  for (size_t i = 0; i < count; ++i) {
    if (i > 0) message += ", ";
    message += args[i].Type().name;
  }
  return Value::Error(message + ")");
}

}  // namespace tephra::cel
