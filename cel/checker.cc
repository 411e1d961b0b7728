#include "cel/checker.h"

#include <algorithm>
#include <initializer_list>
#include <optional>

#include "cel/functions.h"

namespace tephra::cel {
namespace {

// Functions of Kubernetes' CEL libraries (and CEL features) this library does not implement;
// an expression using one gets a compile error that says so instead of a bare "undeclared".
struct Unsupported {
  std::string_view name;
  std::string_view what;
};
constexpr Unsupported kUnsupported[] = {
    {"url", "Kubernetes' URL library"},
    {"isURL", "Kubernetes' URL library"},
    {"getScheme", "Kubernetes' URL library"},
    {"getHost", "Kubernetes' URL library"},
    {"getHostname", "Kubernetes' URL library"},
    {"getPort", "Kubernetes' URL library"},
    {"getEscapedPath", "Kubernetes' URL library"},
    {"getQuery", "Kubernetes' URL library"},
    {"ip", "Kubernetes' IP library"},
    {"isIP", "Kubernetes' IP library"},
    {"ip.isCanonical", "Kubernetes' IP library"},
    {"family", "Kubernetes' IP library"},
    {"isUnspecified", "Kubernetes' IP library"},
    {"isLoopback", "Kubernetes' IP library"},
    {"isLinkLocalMulticast", "Kubernetes' IP library"},
    {"isLinkLocalUnicast", "Kubernetes' IP library"},
    {"isGlobalUnicast", "Kubernetes' IP library"},
    {"cidr", "Kubernetes' CIDR library"},
    {"isCIDR", "Kubernetes' CIDR library"},
    {"containsIP", "Kubernetes' CIDR library"},
    {"containsCIDR", "Kubernetes' CIDR library"},
    {"prefixLength", "Kubernetes' CIDR library"},
    {"masked", "Kubernetes' CIDR library"},
    {"validate", "Kubernetes' format library"},
    {"format.named", "Kubernetes' format library"},
    {"timestamp", "timestamps"},
    {"duration", "durations"},
    {"optional.of", "optional types"},
    {"optional.ofNonZeroValue", "optional types"},
    {"optional.none", "optional types"},
    {"sortBy", "the lists extension's sortBy macro"},
};

struct TypeName {
  std::string_view name;
  const TypeValue* value;
};
const TypeName kTypeNames[] = {
    {"int", &types::kInt},        {"uint", &types::kUint},     {"double", &types::kDouble},
    {"bool", &types::kBool},      {"string", &types::kString}, {"bytes", &types::kBytes},
    {"list", &types::kList},      {"map", &types::kMap},       {"type", &types::kType},
    {"null_type", &types::kNull},
};

TypeRef StaticTypeOf(const TypeValue* value) {
  if (value == &types::kInt) return Type::Int();
  if (value == &types::kUint) return Type::Uint();
  if (value == &types::kDouble) return Type::Double();
  if (value == &types::kBool) return Type::Bool();
  if (value == &types::kString) return Type::String();
  if (value == &types::kBytes) return Type::Bytes();
  if (value == &types::kList) return Type::List(Type::Dyn());
  if (value == &types::kMap) return Type::Map(Type::Dyn(), Type::Dyn());
  if (value == &types::kNull) return Type::Null();
  return Type::TypeOf(nullptr);
}

TypeRef ConstantType(const Value& v) {
  switch (v.kind()) {
    case ValueKind::kNull:
      return Type::Null();
    case ValueKind::kBool:
      return Type::Bool();
    case ValueKind::kInt:
      return Type::Int();
    case ValueKind::kUint:
      return Type::Uint();
    case ValueKind::kDouble:
      return Type::Double();
    case ValueKind::kString:
      return Type::String();
    case ValueKind::kBytes:
      return Type::Bytes();
    default:
      return Type::Dyn();
  }
}

bool IsDynOrError(const TypeRef& t) {
  return t->kind() == TypeKind::kDyn || t->kind() == TypeKind::kError;
}

// The kinds a format() clause takes when its argument's type is known at compile: what either
// version of cel-go's format validator accepts, Kubernetes' (strings extension version 2; %f
// and %e take strings too) or the later one the conformance data follows (%d, %f and %e take
// any number).
constexpr uint32_t Kinds(std::initializer_list<TypeKind> kinds) {
  uint32_t bits = 0;
  for (TypeKind k : kinds) bits |= 1u << static_cast<unsigned>(k);
  return bits;
}
struct FormatClause {
  char clause;
  uint32_t takes;  // a bit per TypeKind
};
constexpr FormatClause kFormatClauses[] = {
    {'s', Kinds({TypeKind::kList, TypeKind::kMap, TypeKind::kInt, TypeKind::kUint,
                 TypeKind::kDouble, TypeKind::kBool, TypeKind::kString, TypeKind::kBytes,
                 TypeKind::kType, TypeKind::kNull})},
    {'d', Kinds({TypeKind::kInt, TypeKind::kUint, TypeKind::kDouble})},
    {'f', Kinds({TypeKind::kInt, TypeKind::kUint, TypeKind::kDouble, TypeKind::kString})},
    {'e', Kinds({TypeKind::kInt, TypeKind::kUint, TypeKind::kDouble, TypeKind::kString})},
    {'b', Kinds({TypeKind::kInt, TypeKind::kUint, TypeKind::kBool})},
    {'x', Kinds({TypeKind::kInt, TypeKind::kUint, TypeKind::kString, TypeKind::kBytes})},
    {'X', Kinds({TypeKind::kInt, TypeKind::kUint, TypeKind::kString, TypeKind::kBytes})},
    {'o', Kinds({TypeKind::kInt, TypeKind::kUint})},
};

// A type as cel-go's format messages name it: containers without their parameters, a device
// attribute's value (Kubernetes declares it google.protobuf.Any) by that name.
std::string FormatTypeName(const TypeRef& t) {
  if (t == Type::Any()) return "google.protobuf.Any";
  if (t->kind() == TypeKind::kList) return "list";
  if (t->kind() == TypeKind::kMap) return "map";
  if (t->kind() == TypeKind::kType) return "type";
  return t->ToString();
}

class Checker {
 public:
  Checker(Ast ast, std::string_view source, const Environment& env)
      : source_(source), env_(env), registry_(FunctionRegistry::Get()) {
    out_.ast = std::move(ast);
    size_t n = out_.ast.nodes.size();
    out_.types.assign(n, Type::Dyn());
    out_.references.assign(n, Reference());
    out_.calls.resize(n);
    out_.slots.assign(n, 0);
    analyzed_.assign(n, false);
  }

  StatusOr<CheckedAst> Run();

 private:
  struct Work {
    uint32_t node;
    uint32_t step;
  };
  struct Local {
    std::string name;
    uint32_t slot;
    TypeRef type;
  };

  const Expr& Node(uint32_t i) const { return out_.ast.nodes[i]; }
  Status Error(uint32_t node, std::string message) const {
    return InvalidArgument(SourceLocation(source_, Node(node).position) + ": " + message);
  }
  bool strict() const { return env_.check_types(); }

  const Local* FindLocal(std::string_view name) const;
  std::optional<size_t> FindVariable(std::string_view name) const;
  const Function* FindFunction(std::string_view name) const;
  // The dotted name a chain of selects over an identifier spells, or nullopt.
  std::optional<std::vector<uint32_t>> NameChain(uint32_t node) const;

  Status Ident(uint32_t node);
  bool QualifiedSelect(uint32_t node);
  Status FinishSelect(uint32_t node);
  bool NamespaceCall(uint32_t node);
  Status FinishCall(uint32_t node);
  Status FinishAggregate(uint32_t node);
  Status EnterComprehensionScope(uint32_t node);
  Status FinishComprehension(uint32_t node);
  std::string ArgTypes(const std::vector<TypeRef>& args, bool member) const;
  Status CheckFormat(uint32_t node) const;
  Status CheckFormatArgument(uint32_t arg, const FormatClause& clause) const;

  std::string_view source_;
  const Environment& env_;
  const FunctionRegistry& registry_;
  CheckedAst out_;
  std::vector<bool> analyzed_;  // selects whose name chain was already tried
  uint32_t inside_format_ = 0;  // format() calls being checked: their literals may mix types
  std::vector<Local> scope_;
  uint32_t used_slots_ = 0;
};

const Checker::Local* Checker::FindLocal(std::string_view name) const {
  for (auto it = scope_.rbegin(); it != scope_.rend(); ++it) {
    if (it->name == name) return &*it;
  }
  return nullptr;
}

std::optional<size_t> Checker::FindVariable(std::string_view name) const {
  if (!name.empty() && name[0] == '.') return env_.FindVariable(name.substr(1));
  std::string container = env_.container();
  while (true) {
    std::string candidate =
        container.empty() ? std::string(name) : container + "." + std::string(name);
    if (auto index = env_.FindVariable(candidate)) return index;
    if (container.empty()) return std::nullopt;
    size_t dot = container.rfind('.');
    container = dot == std::string::npos ? "" : container.substr(0, dot);
  }
}

const Function* Checker::FindFunction(std::string_view name) const {
  if (!name.empty() && name[0] == '.') name.remove_prefix(1);
  const Function* f = registry_.Find(name);
  if (f == nullptr) return nullptr;
  for (const FunctionPiece& piece : f->pieces) {
    if (env_.LibraryEnabled(piece.library)) return f;
  }
  return nullptr;
}

std::optional<std::vector<uint32_t>> Checker::NameChain(uint32_t node) const {
  std::vector<uint32_t> chain;  // from the identifier up to node
  uint32_t at = node;
  while (Node(at).kind == ExprKind::kSelect) {
    if (Node(at).test_only && at != node) return std::nullopt;
    chain.push_back(at);
    at = Node(at).args[0];
  }
  if (Node(at).kind != ExprKind::kIdent) return std::nullopt;
  chain.push_back(at);
  std::reverse(chain.begin(), chain.end());
  return chain;
}

Status Checker::Ident(uint32_t node) {
  const Expr& e = Node(node);
  Reference& ref = out_.references[node];
  if (e.name[0] != '.') {
    if (const Local* local = FindLocal(e.name)) {
      ref.kind = Reference::Kind::kLocal;
      ref.index = local->slot;
      out_.types[node] = local->type;
      return Status::Ok();
    }
  }
  if (auto index = FindVariable(e.name)) {
    ref.kind = Reference::Kind::kVariable;
    ref.index = static_cast<uint32_t>(*index);
    out_.types[node] = env_.variable_type(*index);
    return Status::Ok();
  }
  std::string_view bare = e.name[0] == '.' ? std::string_view(e.name).substr(1) : e.name;
  for (const TypeName& t : kTypeNames) {
    if (t.name == bare) {
      ref.kind = Reference::Kind::kType;
      ref.type_value = t.value;
      out_.types[node] = Type::TypeOf(StaticTypeOf(t.value));
      return Status::Ok();
    }
  }
  if (strict()) {
    return Error(node, "undeclared reference to '" + std::string(bare) + "' (in container '" +
                           env_.container() + "')");
  }
  ref.kind = Reference::Kind::kUnbound;
  return Status::Ok();
}

// a.b.c where a.b (or a.b.c) is a declared variable: the longest declared prefix wins.
bool Checker::QualifiedSelect(uint32_t node) {
  if (analyzed_[node]) return out_.references[node].kind == Reference::Kind::kVariable;
  std::optional<std::vector<uint32_t>> chain = NameChain(node);
  if (!chain) return false;
  for (uint32_t n : *chain) analyzed_[n] = true;
  const Expr& root = Node(chain->front());
  if (root.name[0] != '.' && FindLocal(root.name) != nullptr) return false;
  // Only names as long as the longest declared one can resolve, so a long chain costs time
  // linear in its length (and nothing when no declared name has a dot).
  size_t segments = std::min(chain->size(), env_.max_variable_segments());
  std::string qualified = root.name;
  std::vector<std::string> names{qualified};
  for (size_t i = 1; i < segments; ++i) {
    qualified += "." + Node((*chain)[i]).name;
    names.push_back(qualified);
  }
  // The node tested by has() is a field of its operand, never part of the name.
  size_t longest = std::min(chain->size() - (Node(node).test_only ? 2 : 1), names.size() - 1);
  for (size_t i = longest; i >= 1; --i) {
    if (auto index = FindVariable(names[i])) {
      uint32_t resolved = (*chain)[i];
      out_.references[resolved].kind = Reference::Kind::kVariable;
      out_.references[resolved].index = static_cast<uint32_t>(*index);
      out_.types[resolved] = env_.variable_type(*index);
      return resolved == node;
    }
  }
  return false;
}

Status Checker::FinishSelect(uint32_t node) {
  const Expr& e = Node(node);
  const TypeRef& operand = out_.types[e.args[0]];
  TypeRef result = Type::Dyn();
  switch (operand->kind()) {
    case TypeKind::kMap:
      result = operand->params()[1];
      break;
    case TypeKind::kObject:
      result = operand->Field(e.name);
      if (!result) {
        if (strict()) return Error(node, "undefined field '" + e.name + "'");
        result = Type::Dyn();
      }
      break;
    case TypeKind::kDyn:
    case TypeKind::kError:
    case TypeKind::kParam:
      break;
    default:
      if (strict()) {
        return Error(node, "type '" + operand->ToString() + "' does not support field selection");
      }
  }
  out_.types[node] = e.test_only ? Type::Bool() : result;
  return Status::Ok();
}

// sets.contains(a, b) parses as a member call on the identifier `sets`.
bool Checker::NamespaceCall(uint32_t node) {
  const Expr& e = Node(node);
  if (!e.has_target) return false;
  std::optional<std::vector<uint32_t>> chain = NameChain(e.args[0]);
  if (!chain) return false;
  const Expr& root = Node(chain->front());
  if (root.name[0] != '.' && FindLocal(root.name) != nullptr) return false;
  std::string qualified = root.name;
  for (size_t i = 1; i < chain->size(); ++i) qualified += "." + Node((*chain)[i]).name;
  if (FindVariable(qualified) || FindVariable(root.name)) return false;
  std::string name = qualified + "." + e.name;
  if (FindFunction(name) == nullptr) {
    if (name[0] == '.') name.erase(0, 1);
    for (const Unsupported& u : kUnsupported) {
      if (u.name == name) {
        out_.calls[node].name = name;
        out_.calls[node].namespace_receiver = true;
        return true;
      }
    }
    return false;
  }
  out_.calls[node].name = name[0] == '.' ? name.substr(1) : name;
  out_.calls[node].namespace_receiver = true;
  return true;
}

std::string Checker::ArgTypes(const std::vector<TypeRef>& args, bool member) const {
  std::string out;
  size_t start = 0;
  if (member && !args.empty()) {
    out = args[0]->ToString() + ".";
    start = 1;
  }
  out += "(";
  for (size_t i = start; i < args.size(); ++i) {
    if (i > start) out += ", ";
    out += args[i]->ToString();
  }
  return out + ")";
}

// As Kubernetes' compiler does (cel-go's format validator): a constant format string applied
// to a list literal is parsed at compile, and its clauses are counted against the list and
// checked against the types of their arguments; other format() calls are checked at evaluation.
Status Checker::CheckFormat(uint32_t node) const {
  const Expr& e = Node(node);
  const Expr& receiver = Node(e.args[0]);
  const Expr& list = Node(e.args[1]);
  if (receiver.kind != ExprKind::kConst || !receiver.constant.IsString() ||
      list.kind != ExprKind::kList) {
    return Status::Ok();
  }
  std::string_view f = receiver.constant.text();
  size_t requested = 0;
  for (size_t i = 0; i < f.size(); ++i) {
    if (f[i] != '%') continue;
    if (i + 1 < f.size() && f[i + 1] == '%') {
      ++i;
      continue;
    }
    if (++i >= f.size()) return Error(node, "unexpected end of string");
    if (requested >= list.args.size()) {
      return Error(node, "index " + std::to_string(requested) + " out of range");
    }
    if (f[i] == '.') {
      while (++i < f.size() && f[i] >= '0' && f[i] <= '9') {
      }
      if (i >= f.size()) {
        return Error(node,
                     "could not parse formatting clause: error while parsing precision: could "
                     "not find end of precision specifier");
      }
    }
    const FormatClause* clause = nullptr;
    for (const FormatClause& c : kFormatClauses) {
      if (c.clause == f[i]) clause = &c;
    }
    if (clause == nullptr) {
      return Error(node, std::string("could not parse formatting clause: unrecognized "
                                     "formatting clause \"") +
                             f[i] + "\"");
    }
    TEPHRA_RETURN_IF_ERROR(CheckFormatArgument(list.args[requested++], *clause));
  }
  if (list.args.size() > requested) {
    return Error(node, "too many arguments supplied to string.format (expected " +
                           std::to_string(requested) + ", got " + std::to_string(list.args.size()) +
                           ")");
  }
  return Status::Ok();
}

// One argument against its clause; %s also looks into list and map literals, element by element
// (an explicit stack: literals nest as deep as the parser allows).
Status Checker::CheckFormatArgument(uint32_t arg, const FormatClause& clause) const {
  std::vector<uint32_t> pending = {arg};
  while (!pending.empty()) {
    uint32_t node = pending.back();
    pending.pop_back();
    const TypeRef& t = out_.types[node];
    // Unknown types are checked at evaluation; a device attribute's value is not unknown but
    // google.protobuf.Any, which no clause takes (Kubernetes refuses it here too).
    if (IsDynOrError(t) && t != Type::Any()) continue;
    if ((clause.takes & (1u << static_cast<unsigned>(t->kind()))) == 0) {
      return Error(node,
                   "error during formatting: " + std::string(FormatClauseRule(clause.clause)) +
                       ", was given " + FormatTypeName(t));
    }
    const Expr& e = Node(node);
    if (clause.clause == 's' && (e.kind == ExprKind::kList || e.kind == ExprKind::kMap)) {
      pending.insert(pending.end(), e.args.rbegin(), e.args.rend());
    }
  }
  return Status::Ok();
}

Status Checker::FinishCall(uint32_t node) {
  const Expr& e = Node(node);
  CallTarget& call = out_.calls[node];
  bool member = e.has_target && !call.namespace_receiver;
  if (call.name.empty()) call.name = e.name[0] == '.' ? e.name.substr(1) : e.name;
  std::vector<TypeRef> args;
  for (size_t i = call.namespace_receiver ? 1 : 0; i < e.args.size(); ++i) {
    args.push_back(out_.types[e.args[i]]);
  }
  call.function = FindFunction(call.name);
  if (call.function == nullptr) {
    if (!strict()) return Status::Ok();
    for (const Unsupported& u : kUnsupported) {
      if (u.name == call.name) {
        return Error(node,
                     "function '" + call.name + "' (" + std::string(u.what) + ") is not supported");
      }
    }
    return Error(node, "undeclared reference to '" + call.name + "' (in container '" +
                           env_.container() + "')");
  }
  std::vector<TypeRef> results;
  for (const FunctionPiece& piece : call.function->pieces) {
    if (!env_.LibraryEnabled(piece.library)) continue;
    bool piece_matches = false;
    for (const Overload& overload : piece.overloads) {
      if (overload.member != member || overload.params.size() != args.size()) continue;
      Substitution subst;
      bool ok = true;
      for (size_t i = 0; i < args.size() && ok; ++i) {
        ok = IsAssignable(overload.params[i], args[i], &subst);
      }
      if (!ok) continue;
      piece_matches = true;
      results.push_back(Substitute(overload.result, subst));
    }
    if (piece_matches || !strict()) call.pieces.push_back(&piece);
  }
  if (results.empty()) {
    if (!strict()) return Status::Ok();
    return Error(node, "found no matching overload for '" + call.name + "' applied to '" +
                           ArgTypes(args, member) + "'");
  }
  if (strict() && member && call.name == "format" && e.args.size() == 2 &&
      env_.LibraryEnabled(Library::kStrings)) {
    TEPHRA_RETURN_IF_ERROR(CheckFormat(node));
  }
  TypeRef result = results[0];
  for (const TypeRef& r : results) {
    if (!SameType(r, result)) {
      result = Type::Dyn();
      break;
    }
  }
  out_.types[node] = result;
  return Status::Ok();
}

Status Checker::FinishAggregate(uint32_t node) {
  const Expr& e = Node(node);
  bool is_map = e.kind == ExprKind::kMap;
  size_t stride = is_map ? 2 : 1;
  TypeRef joined[2];
  bool mixed[2] = {false, false};
  for (size_t part = 0; part < stride; ++part) {
    for (size_t i = part; i < e.args.size(); i += stride) {
      const TypeRef& t = out_.types[e.args[i]];
      if (IsDynOrError(t)) {
        mixed[part] = mixed[part] || !joined[part];  // an explicit dyn keeps the join dyn
        continue;
      }
      if (!joined[part]) {
        joined[part] = t;
      } else if (!SameType(joined[part], t)) {
        if (strict() && env_.homogeneous_aggregate_literals() && inside_format_ == 0) {
          return Error(e.args[i], "expected type '" + joined[part]->ToString() + "' but found '" +
                                      t->ToString() + "'");
        }
        mixed[part] = true;
      }
    }
  }
  auto pick = [&](size_t part) {
    return joined[part] && !mixed[part] ? joined[part] : Type::Dyn();
  };
  out_.types[node] = is_map ? Type::Map(pick(0), pick(1)) : Type::List(pick(0));
  return Status::Ok();
}

Status Checker::EnterComprehensionScope(uint32_t node) {
  const Expr& e = Node(node);
  const TypeRef& range = out_.types[e.args[0]];
  out_.slots[node] = used_slots_;
  if (e.macro == MacroKind::kBind) {
    scope_.push_back({e.name, used_slots_++, range});
    out_.locals = std::max(out_.locals, used_slots_);
    return Status::Ok();
  }
  TypeRef first = Type::Dyn();
  TypeRef second = Type::Dyn();
  switch (range->kind()) {
    case TypeKind::kList:
      if (e.var2.empty()) {
        first = range->params()[0];
      } else {
        first = Type::Int();
        second = range->params()[0];
      }
      break;
    case TypeKind::kMap:
      first = range->params()[0];
      second = range->params()[1];
      break;
    case TypeKind::kDyn:
    case TypeKind::kError:
      break;
    default:
      if (strict()) {
        return Error(e.args[0], "expression of type '" + range->ToString() +
                                    "' cannot be the range of a comprehension (must be list, "
                                    "map, or dynamic)");
      }
  }
  scope_.push_back({e.name, used_slots_++, first});
  if (!e.var2.empty()) scope_.push_back({e.var2, used_slots_++, second});
  out_.locals = std::max(out_.locals, used_slots_);
  return Status::Ok();
}

Status Checker::FinishComprehension(uint32_t node) {
  const Expr& e = Node(node);
  size_t vars = e.macro == MacroKind::kBind || e.var2.empty() ? 1 : 2;
  scope_.resize(scope_.size() - vars);
  used_slots_ -= static_cast<uint32_t>(vars);
  auto require_bool = [&](uint32_t arg) -> Status {
    const TypeRef& t = out_.types[arg];
    if (strict() && !IsDynOrError(t) && t->kind() != TypeKind::kBool) {
      return Error(arg, "expected a bool, found '" + t->ToString() + "'");
    }
    return Status::Ok();
  };
  const TypeRef& range = out_.types[e.args[0]];
  TypeRef key = range->kind() == TypeKind::kMap    ? range->params()[0]
                : range->kind() == TypeKind::kList ? Type::Int()
                                                   : Type::Dyn();
  TypeRef element = range->kind() == TypeKind::kList  ? range->params()[0]
                    : range->kind() == TypeKind::kMap ? range->params()[0]
                                                      : Type::Dyn();
  const TypeRef& last = out_.types[e.args.back()];
  if (IsPredicateMacro(e.macro)) {
    out_.types[node] = Type::Bool();
    return require_bool(e.args[1]);
  }
  switch (e.macro) {
    case MacroKind::kBind:
      out_.types[node] = last;
      return Status::Ok();
    case MacroKind::kFilter:
      out_.types[node] = Type::List(element);
      return require_bool(e.args[1]);
    case MacroKind::kMap:
    case MacroKind::kTransformList:
      out_.types[node] = Type::List(last);
      return Status::Ok();
    case MacroKind::kMapFilter:
    case MacroKind::kTransformListFilter:
      out_.types[node] = Type::List(last);
      return require_bool(e.args[1]);
    case MacroKind::kTransformMap:
    case MacroKind::kTransformMapFilter:
      out_.types[node] = Type::Map(key, last);
      if (e.macro == MacroKind::kTransformMapFilter) return require_bool(e.args[1]);
      return Status::Ok();
    case MacroKind::kTransformMapEntry:
    case MacroKind::kTransformMapEntryFilter:
      out_.types[node] =
          last->kind() == TypeKind::kMap ? last : Type::Map(Type::Dyn(), Type::Dyn());
      if (e.macro == MacroKind::kTransformMapEntryFilter) return require_bool(e.args[1]);
      return Status::Ok();
    default:  // the predicates, above
      break;
  }
  return Status::Ok();
}

StatusOr<CheckedAst> Checker::Run() {
  std::vector<Work> stack{{out_.ast.root, 0}};
  while (!stack.empty()) {
    Work w = stack.back();
    const Expr& e = Node(w.node);
    switch (e.kind) {
      case ExprKind::kConst:
        out_.types[w.node] = ConstantType(e.constant);
        stack.pop_back();
        continue;
      case ExprKind::kIdent:
        TEPHRA_RETURN_IF_ERROR(Ident(w.node));
        stack.pop_back();
        continue;
      case ExprKind::kSelect:
        if (w.step == 0) {
          if (out_.references[w.node].kind == Reference::Kind::kVariable ||
              QualifiedSelect(w.node)) {
            stack.pop_back();
            continue;
          }
          stack.back().step = 1;
          stack.push_back({e.args[0], 0});
          continue;
        }
        TEPHRA_RETURN_IF_ERROR(FinishSelect(w.node));
        stack.pop_back();
        continue;
      case ExprKind::kCall:
        if (w.step == 0) {
          // As in Kubernetes (cel-go exempts any literal inside a call named format), format()'s
          // arguments may mix types: "%d %s".format([1, "a"]).
          if (e.name == "format") ++inside_format_;
          w.step = NamespaceCall(w.node) ? 2 : 1;  // step - 1 is the next argument
          stack.back().step = w.step;
        }
        if (w.step - 1 < e.args.size()) {
          stack.back().step = w.step + 1;
          stack.push_back({e.args[w.step - 1], 0});
          continue;
        }
        TEPHRA_RETURN_IF_ERROR(FinishCall(w.node));
        if (e.name == "format") --inside_format_;
        stack.pop_back();
        continue;
      case ExprKind::kList:
      case ExprKind::kMap:
        if (w.step < e.args.size()) {
          stack.back().step = w.step + 1;
          stack.push_back({e.args[w.step], 0});
          continue;
        }
        TEPHRA_RETURN_IF_ERROR(FinishAggregate(w.node));
        stack.pop_back();
        continue;
      case ExprKind::kComprehension:
        // Step 0 checks the range (or cel.bind's value) outside the new scope.
        if (w.step == 1) TEPHRA_RETURN_IF_ERROR(EnterComprehensionScope(w.node));
        if (w.step < e.args.size()) {
          stack.back().step = w.step + 1;
          stack.push_back({e.args[w.step], 0});
          continue;
        }
        TEPHRA_RETURN_IF_ERROR(FinishComprehension(w.node));
        stack.pop_back();
        continue;
    }
  }
  return std::move(out_);
}

}  // namespace

StatusOr<CheckedAst> Check(Ast ast, std::string_view source, const Environment& env) {
  Checker checker(std::move(ast), source, env);
  return checker.Run();
}

}  // namespace tephra::cel
