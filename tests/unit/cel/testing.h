// Helpers for the CEL unit tests: compile and evaluate in one call, results as text.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "cel/environment.h"
#include "cel/program.h"

namespace tephra::cel::testing {

// The compile error, or "" when the expression compiles.
inline std::string CompileError(std::string_view expr,
                                const Environment& env = Environment::Kubernetes()) {
  StatusOr<Program> p = Compile(expr, env);
  return p.ok() ? "" : p.status().message();
}

// The result in CEL syntax ("error: <message>" for an error); "compile: <message>" when the
// expression does not compile.
inline std::string Eval(std::string_view expr, const Environment& env = Environment::Kubernetes(),
                        std::span<const Value> variables = {}) {
  StatusOr<Program> p = Compile(expr, env);
  if (!p.ok()) return "compile: " + p.status().message();
  return p->Evaluate(variables).DebugString();
}

// An environment with every library this library implements, without Kubernetes'
// homogeneous-literal rule, so that mixed lists and maps can be written.
inline Environment Everything() {
  Environment env = Environment::Kubernetes();
  env.SetHomogeneousAggregateLiterals(false);
  return env;
}

}  // namespace tephra::cel::testing
