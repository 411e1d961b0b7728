// A compiled CEL expression and its evaluation (docs/cel.md).
//
//   StatusOr<Program> p = Compile("device.driver == 'gpu.example.com'", env);
//   Value v = p->Evaluate({device_value});
//
// Compile parses, checks and lowers the expression once to a flat instruction list; Evaluate
// runs it on a small stack machine, as often as needed, without recursion and, for
// expressions that only read and compare, without allocating. Evaluate is const and
// thread-safe: one Program may be evaluated by many threads at once.
//
// Errors are values: Evaluate returns an error value (Value::IsError) for a runtime error,
// including an evaluation whose cost passes the environment's limit, which stops there.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "base/status.h"
#include "cel/environment.h"
#include "cel/types.h"
#include "cel/value.h"

namespace tephra::cel {

class Program {
 public:
  // The result may borrow from this program and from the variables: use it while both live.
  // cost, when given, receives the evaluation's cost.
  Value Evaluate(std::span<const Value> variables, uint64_t* cost = nullptr) const;

  // The checked type of the expression (dyn when unknown until evaluated).
  const TypeRef& result_type() const;
  const std::string& source() const;

  struct Code;  // the instructions and constants

 private:
  friend StatusOr<Program> Compile(std::string_view expression, const Environment& env);
  explicit Program(std::shared_ptr<const Code> code) : code_(std::move(code)) {}
  std::shared_ptr<const Code> code_;
};

// Parses, checks and compiles. The error names the position and the rule:
// "1:17: undeclared reference to 'devce' (in container '')".
StatusOr<Program> Compile(std::string_view expression, const Environment& env);

// The message Evaluate's error carries when the cost limit stops an evaluation.
inline constexpr std::string_view kCostLimitExceeded =
    "operation cancelled: actual cost limit exceeded";

}  // namespace tephra::cel
