#include "cel/program.h"

#include <algorithm>
#include <re2/re2.h>

#include "api/regex.h"
#include "cel/checker.h"
#include "cel/parser.h"

namespace tephra::cel {
namespace {

// The instructions of the stack machine. Operands: a, b, c (see each).
enum class Op : uint8_t {
  kConst,       // push constant a
  kVar,         // push variable a
  kLocal,       // push local slot a
  kSetLocal,    // pop into local slot a
  kSelect,      // replace the top with its field named by constant a; b: has() test
  kCall,        // call site a with the top b values as arguments
  kList,        // replace the top a values with a list of them
  kMap,         // replace the top 2a values (key, value, ...) with a map
  kJump,        // go to a
  kAndShort,    // the top is false: go to a (keeping it)
  kOrShort,     // the top is true: go to a (keeping it)
  kAnd,         // combine the top two as && does, errors absorbed by false
  kOr,          // combine the top two as || does, errors absorbed by true
  kBranch,      // pop the condition: true goes on, false goes to a, else push an error, go to b
  kLoopBegin,   // pop the range and start a loop (macro, first local slot b, c: two variables);
                // a range that cannot be iterated pushes an error and goes to a
  kLoopNext,    // bind the next element, or go to a (the loop's end) when done
  kLoopPred,    // pop the predicate and fold it into the loop's result (all, exists, existsOne)
  kLoopFilter,  // pop the filter: true goes on, false (or an error) goes to a (the next element)
  kLoopAppend,  // pop a value onto the loop's list
  kLoopPut,     // pop a value into the loop's map under the current key
  kLoopMerge,   // pop a map and merge it into the loop's map (transformMapEntry)
  kLoopEnd,     // end the loop, pushing its result
};

struct Instr {
  Op op;
  MacroKind macro = MacroKind::kNone;
  uint32_t a = 0;
  uint32_t b = 0;
  uint32_t c = 0;
};

// cel-go's costs of building aggregates.
constexpr uint64_t kListCost = 10;
constexpr uint64_t kMapCost = 30;

}  // namespace

struct CallSite {
  std::string name;
  std::vector<FunctionImpl> impls;
  const re2::RE2* regex = nullptr;
};

struct Program::Code {
  std::string source;
  std::vector<Instr> code;
  std::vector<Value> constants;       // own their data
  std::vector<Value> constant_views;  // the same values borrowed: pushing one copies no owner
  std::vector<CallSite> calls;
  std::vector<std::unique_ptr<re2::RE2>> regexes;
  std::vector<std::string> variable_names;
  uint32_t locals = 0;
  uint64_t cost_limit = 0;
  TypeRef result_type;
};

namespace {

class Compiler {
 public:
  Compiler(const CheckedAst& checked, Program::Code& code, std::string_view source)
      : checked_(checked), code_(code), source_(source) {}

  Status Run();

 private:
  struct Work {
    uint32_t node;
    uint32_t step = 0;
    uint32_t patch1 = 0;
    uint32_t patch2 = 0;
  };

  const Expr& Node(uint32_t i) const { return checked_.ast.nodes[i]; }
  uint32_t Here() const { return static_cast<uint32_t>(code_.code.size()); }
  uint32_t Emit(Instr instr) {
    code_.code.push_back(instr);
    return Here() - 1;
  }
  uint32_t Constant(Value v) {
    // The view borrows from the owned value, whose data stays where it is as the pool grows.
    code_.constant_views.push_back(v.View());
    code_.constants.push_back(std::move(v));
    return static_cast<uint32_t>(code_.constants.size() - 1);
  }
  void Fold(uint32_t node);
  void Ident(uint32_t node);
  Status Call(uint32_t node);
  bool Loop(Work& w, std::vector<Work>& stack);

  const CheckedAst& checked_;
  Program::Code& code_;
  std::string_view source_;
  std::vector<uint32_t> start_;  // per node: where its code begins
  uint64_t fold_cost_ = 0;       // spent on folding constants, at most code_.cost_limit
};

// Runs code[begin, end) within a cost limit and returns what it leaves on the stack (defined
// below).
Value Execute(const Program::Code& c, size_t begin, size_t end, std::span<const Value> variables,
              uint64_t limit, uint64_t* cost_out);

// A call, list or map whose operands are all constants is computed here, once, and becomes a
// constant (as cel-go's optimised programs, which Kubernetes uses, precompute them): a
// selector's quantity('40Gi') or list literal is not rebuilt for every device. All folding
// together may cost what one evaluation may; what does not fit is computed (and limited) at
// evaluation.
void Compiler::Fold(uint32_t node) {
  uint32_t begin = start_[node];
  uint32_t end = Here();
  for (uint32_t i = begin; i + 1 < end; ++i) {
    if (code_.code[i].op != Op::kConst) return;
  }
  uint64_t cost = 0;
  Value v = Execute(code_, begin, end, {}, code_.cost_limit - fold_cost_, &cost);
  fold_cost_ += std::min(cost, code_.cost_limit - fold_cost_);
  if (v.IsError() && v.error_message() == kCostLimitExceeded) return;
  code_.code.resize(begin);
  Emit({Op::kConst, MacroKind::kNone, Constant(std::move(v))});
}

void Compiler::Ident(uint32_t node) {
  const Reference& ref = checked_.references[node];
  switch (ref.kind) {
    case Reference::Kind::kVariable:
      Emit({Op::kVar, MacroKind::kNone, ref.index});
      return;
    case Reference::Kind::kLocal:
      Emit({Op::kLocal, MacroKind::kNone, ref.index});
      return;
    case Reference::Kind::kType:
      Emit({Op::kConst, MacroKind::kNone, Constant(Value::Type(*ref.type_value))});
      return;
    default: {
      std::string name = Node(node).name;
      if (!name.empty() && name[0] == '.') name.erase(0, 1);
      Emit({Op::kConst, MacroKind::kNone,
            Constant(Value::Error("undeclared reference to '" + name + "' (in container '')"))});
      return;
    }
  }
}

Status Compiler::Call(uint32_t node) {
  const Expr& e = Node(node);
  const CallTarget& target = checked_.calls[node];
  CallSite site;
  site.name = target.name;
  size_t first = target.namespace_receiver ? 1 : 0;
  bool member = e.has_target && !target.namespace_receiver;
  size_t argc = e.args.size() - first;
  for (const FunctionPiece* piece : target.pieces) {
    // Only pieces declaring this call's style and arity (unchecked programs reach here with
    // any call).
    bool fits = std::any_of(
        piece->overloads.begin(), piece->overloads.end(),
        [&](const Overload& o) { return o.member == member && o.params.size() == argc; });
    if (!fits) continue;
    if (piece->impl != nullptr) site.impls.push_back(piece->impl);
    if (piece->pattern_arg < 0 || site.regex != nullptr) continue;
    size_t arg = first + static_cast<size_t>(piece->pattern_arg);
    if (arg >= e.args.size()) continue;
    const Expr& pattern = Node(e.args[arg]);
    if (pattern.kind != ExprKind::kConst || pattern.constant.kind() != ValueKind::kString) continue;
    // A constant pattern is checked here, as Kubernetes validates regex literals.
    std::string problem;
    std::unique_ptr<re2::RE2> re = api::CompileRegex(pattern.constant.text(), &problem);
    if (re == nullptr) {
      return InvalidArgument(SourceLocation(source_, pattern.position) +
                             ": invalid regular expression: " + problem);
    }
    site.regex = re.get();
    code_.regexes.push_back(std::move(re));
  }
  code_.calls.push_back(std::move(site));
  Emit({Op::kCall, MacroKind::kNone, static_cast<uint32_t>(code_.calls.size() - 1),
        static_cast<uint32_t>(argc)});
  return Status::Ok();
}

// One step of a comprehension; true when it is finished.
bool Compiler::Loop(Work& w, std::vector<Work>& stack) {
  const Expr& e = Node(w.node);
  uint32_t slot = checked_.slots[w.node];
  if (e.macro == MacroKind::kBind) {
    if (w.step == 0) {
      w.step = 1;
      stack.push_back({e.args[0]});
      return false;
    }
    if (w.step == 1) {
      Emit({Op::kSetLocal, MacroKind::kNone, slot});
      w.step = 2;
      stack.push_back({e.args[1]});
      return false;
    }
    return true;
  }
  switch (w.step) {
    case 0:
      w.step = 1;
      stack.push_back({e.args[0]});
      return false;
    case 1:
      w.patch1 = Emit({Op::kLoopBegin, e.macro, 0, slot, e.var2.empty() ? 0u : 1u});
      w.patch2 = Emit({Op::kLoopNext});
      w.step = HasFilter(e.macro) ? 2 : 3;
      stack.push_back({e.args[1]});
      return false;
    case 2:
      Emit({Op::kLoopFilter, MacroKind::kNone, w.patch2});
      if (e.macro == MacroKind::kFilter) {
        Emit({Op::kLocal, MacroKind::kNone, slot});
        Emit({Op::kLoopAppend});
        break;
      }
      w.step = 3;
      stack.push_back({e.args[2]});
      return false;
    default:
      if (IsPredicateMacro(e.macro)) {
        Emit({Op::kLoopPred});
      } else if (e.macro == MacroKind::kTransformMap || e.macro == MacroKind::kTransformMapFilter) {
        Emit({Op::kLoopPut});
      } else if (e.macro == MacroKind::kTransformMapEntry ||
                 e.macro == MacroKind::kTransformMapEntryFilter) {
        Emit({Op::kLoopMerge});
      } else {
        Emit({Op::kLoopAppend});
      }
      break;
  }
  Emit({Op::kJump, MacroKind::kNone, w.patch2});
  uint32_t end = Emit({Op::kLoopEnd});
  code_.code[w.patch2].a = end;
  code_.code[w.patch1].a = end + 1;
  return true;
}

Status Compiler::Run() {
  start_.assign(checked_.ast.nodes.size(), 0);
  std::vector<Work> stack{{checked_.ast.root}};
  while (!stack.empty()) {
    Work w = stack.back();
    stack.pop_back();
    const Expr& e = Node(w.node);
    if (w.step == 0) start_[w.node] = Here();
    switch (e.kind) {
      case ExprKind::kConst:
        Emit({Op::kConst, MacroKind::kNone, Constant(e.constant)});
        continue;
      case ExprKind::kIdent:
        Ident(w.node);
        continue;
      case ExprKind::kSelect:
        if (checked_.references[w.node].kind == Reference::Kind::kVariable) {
          Ident(w.node);
          continue;
        }
        if (w.step == 0) {
          stack.push_back({w.node, 1});
          stack.push_back({e.args[0]});
          continue;
        }
        Emit({Op::kSelect, MacroKind::kNone, Constant(Value::String(e.name)),
              e.test_only ? 1u : 0u});
        continue;
      case ExprKind::kCall: {
        const CallTarget& target = checked_.calls[w.node];
        bool builtin = target.function != nullptr && !target.pieces.empty() &&
                       target.pieces.front()->impl == nullptr;
        if (builtin && (target.name == "_&&_" || target.name == "_||_")) {
          bool is_and = target.name == "_&&_";
          if (w.step == 0) {
            stack.push_back({w.node, 1});
            stack.push_back({e.args[0]});
          } else if (w.step == 1) {
            uint32_t jump = Emit({is_and ? Op::kAndShort : Op::kOrShort});
            stack.push_back({w.node, 2, jump});
            stack.push_back({e.args[1]});
          } else {
            Emit({is_and ? Op::kAnd : Op::kOr});
            code_.code[w.patch1].a = Here();
          }
          continue;
        }
        if (builtin && target.name == "_?_:_") {
          if (w.step == 0) {
            stack.push_back({w.node, 1});
            stack.push_back({e.args[0]});
          } else if (w.step == 1) {
            uint32_t branch = Emit({Op::kBranch});
            stack.push_back({w.node, 2, branch});
            stack.push_back({e.args[1]});
          } else if (w.step == 2) {
            uint32_t jump = Emit({Op::kJump});
            code_.code[w.patch1].a = Here();
            stack.push_back({w.node, 3, w.patch1, jump});
            stack.push_back({e.args[2]});
          } else {
            code_.code[w.patch1].b = Here();
            code_.code[w.patch2].a = Here();
          }
          continue;
        }
        size_t first = target.namespace_receiver ? 1 : 0;
        size_t next = first + w.step;
        if (next < e.args.size()) {
          stack.push_back({w.node, w.step + 1});
          stack.push_back({e.args[next]});
          continue;
        }
        TEPHRA_RETURN_IF_ERROR(Call(w.node));
        Fold(w.node);
        continue;
      }
      case ExprKind::kList:
      case ExprKind::kMap:
        if (w.step < e.args.size()) {
          stack.push_back({w.node, w.step + 1});
          stack.push_back({e.args[w.step]});
          continue;
        }
        if (e.kind == ExprKind::kList) {
          Emit({Op::kList, MacroKind::kNone, static_cast<uint32_t>(e.args.size())});
        } else {
          Emit({Op::kMap, MacroKind::kNone, static_cast<uint32_t>(e.args.size() / 2)});
        }
        Fold(w.node);
        continue;
      case ExprKind::kComprehension: {
        stack.push_back(w);
        size_t at = stack.size() - 1;
        Work copy = stack[at];
        bool done = Loop(copy, stack);
        stack[at] = copy;
        if (done) stack.erase(stack.begin() + static_cast<std::ptrdiff_t>(at));
        continue;
      }
    }
  }
  return Status::Ok();
}

// What an evaluation needs besides the program; one per thread, reused, so evaluating does
// not allocate its stacks.
struct LoopFrame {
  Value range;
  size_t index = 0;
  size_t size = 0;
  bool is_map = false;
  bool two_vars = false;
  bool done = false;
  MacroKind kind = MacroKind::kNone;
  uint32_t slot = 0;
  Value result;
  int64_t count = 0;
  std::shared_ptr<VectorList> list;
  std::shared_ptr<EntryMap> map;
  Value key;
};

struct Scratch {
  std::vector<Value> stack;
  std::vector<Value> locals;
  std::vector<LoopFrame> loops;

  void Clear() {
    stack.clear();
    locals.clear();
    loops.clear();
  }
};

thread_local Scratch scratch;

// The first error among stack[base..], or null when there is none.
const Value* FirstError(const std::vector<Value>& stack, size_t base) {
  for (size_t i = base; i < stack.size(); ++i) {
    if (stack[i].IsError()) return &stack[i];
  }
  return nullptr;
}

Value Select(const Value& operand, std::string_view field, bool test_only) {
  if (operand.IsError()) return operand;
  if (operand.kind() != ValueKind::kMap) {
    return Value::Error("type '" + std::string(operand.Type().name) +
                        "' does not support field selection");
  }
  Value found;
  bool present = operand.map().Find(Value::StringView(field), &found);
  if (test_only) return Value::Bool(present);
  if (!present) return Value::Error("no such key: " + std::string(field));
  return found;
}

// && and || over the left (not the deciding value: the jump took that) and the right.
Value Logical(const Value& left, const Value& right, bool is_and) {
  bool decider = !is_and;  // false decides &&, true decides ||
  if (right.IsBool() && right.bool_value() == decider) return right;
  if (left.IsBool() && right.IsBool()) return Value::Bool(!decider);
  if (left.IsError()) return left;
  if (right.IsError()) return right;
  return Value::Error(is_and ? "no such overload: _&&_" : "no such overload: _||_");
}

void FoldPredicate(LoopFrame& f, const Value& p) {
  bool is_all = f.kind == MacroKind::kAll || f.kind == MacroKind::kAll2;
  bool is_exists = f.kind == MacroKind::kExists || f.kind == MacroKind::kExists2;
  if (p.IsBool()) {
    if (is_all && !p.bool_value()) {
      f.result = Value::Bool(false);  // false absorbs earlier errors
      f.done = true;
    } else if (is_exists && p.bool_value()) {
      f.result = Value::Bool(true);
      f.done = true;
    } else if (!is_all && !is_exists && p.bool_value()) {
      ++f.count;
    }
    return;
  }
  Value error = p.IsError() ? p : Value::Error("no such overload: predicate is not a bool");
  if (!is_all && !is_exists) {
    f.result = error;  // exists_one cannot absorb an error
    f.done = true;
  } else if (!f.result.IsError()) {
    f.result = error;  // kept unless a later element decides
  }
}

}  // namespace

const TypeRef& Program::result_type() const {
  return code_->result_type;
}

const std::string& Program::source() const {
  return code_->source;
}

Value Program::Evaluate(std::span<const Value> variables, uint64_t* cost_out) const {
  return Execute(*code_, 0, code_->code.size(), variables, code_->cost_limit, cost_out);
}

namespace {

Value Execute(const Program::Code& c, size_t begin, size_t end, std::span<const Value> variables,
              uint64_t limit, uint64_t* cost_out) {
  Scratch& s = scratch;
  s.Clear();
  s.locals.resize(c.locals);
  std::vector<Value>& stack = s.stack;
  uint64_t cost = 0;
  size_t pc = begin;
  while (pc < end) {
    const Instr& in = c.code[pc++];
    switch (in.op) {
      case Op::kConst:
        stack.push_back(c.constant_views[in.a]);
        break;
      case Op::kVar:
        cost += 1;
        if (in.a < variables.size()) {
          stack.push_back(variables[in.a]);
        } else {
          stack.push_back(Value::Error("no value for variable '" + c.variable_names[in.a] + "'"));
        }
        break;
      case Op::kLocal:
        stack.push_back(s.locals[in.a]);
        break;
      case Op::kSetLocal:
        s.locals[in.a] = std::move(stack.back());
        stack.pop_back();
        break;
      case Op::kSelect:
        cost += 1;
        stack.back() = Select(stack.back(), c.constant_views[in.a].text(), in.b != 0);
        break;
      case Op::kCall: {
        cost += 1;
        const CallSite& site = c.calls[in.a];
        size_t argc = in.b;
        const Value* args = stack.data() + (stack.size() - argc);
        Value result;
        if (const Value* error = FirstError(stack, stack.size() - argc)) {
          result = *error;
        } else {
          if (site.impls.empty()) {
            result = Value::Error("unbound function: " + site.name);
          } else {
            CallContext ctx;
            ctx.regex = site.regex;
            for (FunctionImpl impl : site.impls) {
              result = impl(args, argc, ctx);
              if (!IsNoSuchOverload(result)) break;
            }
            if (IsNoSuchOverload(result)) result = NoMatchingOverload(site.name, args, argc);
            cost += ctx.cost;
          }
        }
        stack.resize(stack.size() - argc);
        stack.push_back(std::move(result));
        break;
      }
      case Op::kList: {
        cost += kListCost;
        size_t base = stack.size() - in.a;
        Value result;
        if (const Value* error = FirstError(stack, base)) {
          result = *error;
        } else {
          auto list = std::make_shared<VectorList>();
          list->items().assign(
              std::make_move_iterator(stack.begin() + static_cast<ptrdiff_t>(base)),
              std::make_move_iterator(stack.end()));
          result = Value::List(std::move(list));
        }
        stack.resize(base);
        stack.push_back(std::move(result));
        break;
      }
      case Op::kMap: {
        cost += kMapCost;
        size_t base = stack.size() - 2 * size_t{in.a};
        Value result;
        if (const Value* error = FirstError(stack, base)) {
          result = *error;
        } else {
          auto map = std::make_shared<EntryMap>();
          for (size_t i = base; i < stack.size(); i += 2) {
            if (!IsKeyKind(stack[i].kind())) {
              result = Value::Error("unsupported key type: " + std::string(stack[i].Type().name));
              break;
            }
            if (!map->Insert(stack[i], stack[i + 1])) {
              result = Value::Error("Failed with repeated key: " + stack[i].DebugString());
              break;
            }
          }
          if (!result.IsError()) result = Value::Map(std::move(map));
        }
        stack.resize(base);
        stack.push_back(std::move(result));
        break;
      }
      case Op::kJump:
        pc = in.a;
        break;
      case Op::kAndShort:
        if (stack.back().IsFalse()) pc = in.a;
        break;
      case Op::kOrShort:
        if (stack.back().IsTrue()) pc = in.a;
        break;
      case Op::kAnd:
      case Op::kOr: {
        Value right = std::move(stack.back());
        stack.pop_back();
        stack.back() = Logical(stack.back(), right, in.op == Op::kAnd);
        break;
      }
      case Op::kBranch: {
        Value cond = std::move(stack.back());
        stack.pop_back();
        if (cond.IsTrue()) break;
        if (cond.IsFalse()) {
          pc = in.a;
          break;
        }
        stack.push_back(cond.IsError() ? cond : Value::Error("no such overload: _?_:_"));
        pc = in.b;
        break;
      }
      case Op::kLoopBegin: {
        Value range = std::move(stack.back());
        stack.pop_back();
        if (range.kind() != ValueKind::kList && range.kind() != ValueKind::kMap) {
          stack.push_back(range.IsError() ? range
                                          : Value::Error("cannot iterate over a value of type " +
                                                         std::string(range.Type().name)));
          pc = in.a;
          break;
        }
        LoopFrame& f = s.loops.emplace_back();
        f.is_map = range.kind() == ValueKind::kMap;
        f.size = f.is_map ? range.map().size() : range.list().size();
        f.range = std::move(range);
        f.kind = in.macro;
        f.slot = in.b;
        f.two_vars = in.c != 0;
        switch (f.kind) {
          case MacroKind::kAll:
          case MacroKind::kAll2:
            f.result = Value::Bool(true);
            break;
          case MacroKind::kExists:
          case MacroKind::kExists2:
            f.result = Value::Bool(false);
            break;
          case MacroKind::kTransformMap:
          case MacroKind::kTransformMapFilter:
          case MacroKind::kTransformMapEntry:
          case MacroKind::kTransformMapEntryFilter:
            f.map = std::make_shared<EntryMap>();
            break;
          case MacroKind::kExistsOne:
          case MacroKind::kExistsOne2:
            break;
          default:
            f.list = std::make_shared<VectorList>();
            break;
        }
        break;
      }
      case Op::kLoopNext: {
        LoopFrame& f = s.loops.back();
        if (f.done || f.index >= f.size) {
          pc = in.a;
          break;
        }
        cost += 1;
        size_t i = f.index++;
        if (f.is_map) {
          f.key = f.range.map().KeyAt(i);
          s.locals[f.slot] = f.key;
          if (f.two_vars) s.locals[f.slot + 1] = f.range.map().ValueAt(i);
        } else {
          f.key = Value::Int(static_cast<int64_t>(i));
          if (f.two_vars) {
            s.locals[f.slot] = f.key;
            s.locals[f.slot + 1] = f.range.list().Get(i);
          } else {
            s.locals[f.slot] = f.range.list().Get(i);
          }
        }
        break;
      }
      case Op::kLoopPred:
        FoldPredicate(s.loops.back(), stack.back());
        stack.pop_back();
        break;
      case Op::kLoopFilter: {
        Value p = std::move(stack.back());
        stack.pop_back();
        if (p.IsTrue()) break;
        if (!p.IsFalse()) {
          LoopFrame& f = s.loops.back();
          f.result = p.IsError() ? p : Value::Error("no such overload: filter is not a bool");
          f.done = true;
        }
        pc = in.a;
        break;
      }
      case Op::kLoopAppend:
      case Op::kLoopPut:
      case Op::kLoopMerge: {
        LoopFrame& f = s.loops.back();
        Value v = std::move(stack.back());
        stack.pop_back();
        if (v.IsError()) {
          f.result = std::move(v);
          f.done = true;
        } else if (in.op == Op::kLoopAppend) {
          f.list->items().push_back(std::move(v));
        } else if (in.op == Op::kLoopPut) {
          f.map->Insert(f.key, std::move(v));
        } else if (v.kind() != ValueKind::kMap) {
          f.result = Value::Error("transformMapEntry: the transform must be a map, not " +
                                  std::string(v.Type().name));
          f.done = true;
        } else {
          const MapValue& entries = v.map();
          cost += entries.size();
          for (size_t i = 0; i < entries.size(); ++i) {
            if (!f.map->Insert(entries.KeyAt(i), entries.ValueAt(i))) {
              f.result =
                  Value::Error("transformMapEntry: repeated key " + entries.KeyAt(i).DebugString());
              f.done = true;
              break;
            }
          }
        }
        break;
      }
      case Op::kLoopEnd: {
        LoopFrame& f = s.loops.back();
        Value result;
        if (f.result.IsError() || f.kind == MacroKind::kAll || f.kind == MacroKind::kAll2 ||
            f.kind == MacroKind::kExists || f.kind == MacroKind::kExists2) {
          result = std::move(f.result);
        } else if (f.kind == MacroKind::kExistsOne || f.kind == MacroKind::kExistsOne2) {
          result = Value::Bool(f.count == 1);
        } else if (f.map) {
          result = Value::Map(std::move(f.map));
        } else {
          result = Value::List(std::move(f.list));
        }
        s.loops.pop_back();
        stack.push_back(std::move(result));
        break;
      }
    }
    if (cost > limit) {
      s.Clear();
      if (cost_out != nullptr) *cost_out = cost;
      return Value::Error(std::string(kCostLimitExceeded));
    }
  }
  Value result = std::move(stack.back());
  s.Clear();
  if (cost_out != nullptr) *cost_out = cost;
  return result;
}

}  // namespace

StatusOr<Program> Compile(std::string_view expression, const Environment& env) {
  ParseOptions options;
  options.max_length = env.max_expression_length();
  options.enable_macros = env.macros();
  TEPHRA_ASSIGN_OR_RETURN(Ast ast, Parse(expression, options));
  TEPHRA_ASSIGN_OR_RETURN(CheckedAst checked, Check(std::move(ast), expression, env));
  const TypeRef& type = checked.types[checked.ast.root];
  if (env.result_type() && env.check_types() && type->kind() != TypeKind::kDyn &&
      !SameType(type, env.result_type())) {
    return InvalidArgument("the expression must evaluate to " + env.result_type()->ToString() +
                           ", not " + type->ToString());
  }
  auto code = std::make_shared<Program::Code>();
  code->source = std::string(expression);
  code->locals = checked.locals;
  code->cost_limit = env.cost_limit();
  code->result_type = type;
  for (size_t i = 0; i < env.variable_count(); ++i) {
    code->variable_names.push_back(env.variable_name(i));
  }
  Compiler compiler(checked, *code, expression);
  TEPHRA_RETURN_IF_ERROR(compiler.Run());
  return Program(std::move(code));
}

}  // namespace tephra::cel
