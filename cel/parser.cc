#include "cel/parser.h"

#include <limits>
#include <optional>

#include "cel/unicode.h"
#include "cel/value.h"

namespace tephra::cel {

std::string SourceLocation(std::string_view source, uint32_t offset) {
  size_t line = 1;
  size_t column = 1;
  for (size_t i = 0; i < offset && i < source.size(); ++i) {
    auto c = static_cast<unsigned char>(source[i]);
    if (c == '\n') {
      ++line;
      column = 1;
    } else if ((c & 0xC0) != 0x80) {
      ++column;  // count code points, not bytes
    }
  }
  return std::to_string(line) + ":" + std::to_string(column);
}

namespace {

enum class Tok : uint8_t {
  kEnd,
  kInt,
  kUint,
  kDouble,
  kString,
  kBytes,
  kIdent,
  kQuotedIdent,
  kTrue,
  kFalse,
  kNull,
  kIn,
  kLParen,
  kRParen,
  kLBracket,
  kRBracket,
  kLBrace,
  kRBrace,
  kDot,
  kComma,
  kColon,
  kQuestion,
  kPlus,
  kMinus,
  kStar,
  kSlash,
  kPercent,
  kNot,
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  kAnd,
  kOr,
};

struct Token {
  Tok kind = Tok::kEnd;
  uint32_t pos = 0;
  uint64_t magnitude = 0;  // kInt, kUint
  double number = 0;       // kDouble
  std::string text;        // identifiers, string and bytes contents, the token's spelling
  bool reserved = false;   // kIdent: a reserved word, allowed only as a field or method name
};

bool IsIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool IsIdentChar(char c) {
  return IsIdentStart(c) || (c >= '0' && c <= '9');
}
bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}
int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool IsReserved(std::string_view word) {
  static constexpr std::string_view kReserved[] = {
      "as",  "break", "const",   "continue",  "else",   "for", "function", "if",   "import",
      "let", "loop",  "package", "namespace", "return", "var", "void",     "while"};
  for (std::string_view r : kReserved) {
    if (r == word) return true;
  }
  return false;
}

class Lexer {
 public:
  explicit Lexer(std::string_view source) : src_(source) {}

  Status Next(Token* tok);

  Status Error(size_t pos, std::string_view message) const {
    return InvalidArgument(SourceLocation(src_, static_cast<uint32_t>(pos)) +
                           ": Syntax error: " + std::string(message));
  }

 private:
  char At(size_t i) const { return i < src_.size() ? src_[i] : '\0'; }
  Status SkipSpace();
  Status LexNumber(Token* tok);
  Status LexString(Token* tok, bool raw, bool bytes);
  Status LexQuotedIdent(Token* tok);

  std::string_view src_;
  size_t pos_ = 0;
};

Status Lexer::SkipSpace() {
  while (pos_ < src_.size()) {
    char c = src_[pos_];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
      ++pos_;
    } else if (c == '/' && At(pos_ + 1) == '/') {
      while (pos_ < src_.size() && src_[pos_] != '\n') ++pos_;
    } else {
      break;
    }
  }
  return Status::Ok();
}

Status Lexer::Next(Token* tok) {
  TEPHRA_RETURN_IF_ERROR(SkipSpace());
  *tok = Token();
  tok->pos = static_cast<uint32_t>(pos_);
  if (pos_ >= src_.size()) return Status::Ok();
  char c = src_[pos_];
  auto single = [&](Tok kind, size_t length) {
    tok->kind = kind;
    tok->text = std::string(src_.substr(pos_, length));
    pos_ += length;
    return Status::Ok();
  };
  switch (c) {
    case '(':
      return single(Tok::kLParen, 1);
    case ')':
      return single(Tok::kRParen, 1);
    case '[':
      return single(Tok::kLBracket, 1);
    case ']':
      return single(Tok::kRBracket, 1);
    case '{':
      return single(Tok::kLBrace, 1);
    case '}':
      return single(Tok::kRBrace, 1);
    case ',':
      return single(Tok::kComma, 1);
    case ':':
      return single(Tok::kColon, 1);
    case '?':
      return single(Tok::kQuestion, 1);
    case '+':
      return single(Tok::kPlus, 1);
    case '-':
      return single(Tok::kMinus, 1);
    case '*':
      return single(Tok::kStar, 1);
    case '/':
      return single(Tok::kSlash, 1);
    case '%':
      return single(Tok::kPercent, 1);
    case '!':
      return At(pos_ + 1) == '=' ? single(Tok::kNe, 2) : single(Tok::kNot, 1);
    case '=':
      if (At(pos_ + 1) == '=') return single(Tok::kEq, 2);
      return Error(pos_, "'=' is not an operator (did you mean '=='?)");
    case '<':
      return At(pos_ + 1) == '=' ? single(Tok::kLe, 2) : single(Tok::kLt, 1);
    case '>':
      return At(pos_ + 1) == '=' ? single(Tok::kGe, 2) : single(Tok::kGt, 1);
    case '&':
      if (At(pos_ + 1) == '&') return single(Tok::kAnd, 2);
      return Error(pos_, "'&' is not an operator (did you mean '&&'?)");
    case '|':
      if (At(pos_ + 1) == '|') return single(Tok::kOr, 2);
      return Error(pos_, "'|' is not an operator (did you mean '||'?)");
    case '.':
      if (IsDigit(At(pos_ + 1))) return LexNumber(tok);
      return single(Tok::kDot, 1);
    case '`':
      return LexQuotedIdent(tok);
    case '"':
    case '\'':
      return LexString(tok, false, false);
    default:
      break;
  }
  if (IsDigit(c)) return LexNumber(tok);
  if (IsIdentStart(c)) {
    // String prefixes: r (raw), b (bytes), in either order and case, right before a quote.
    size_t p = pos_;
    bool raw = false;
    bool bytes = false;
    for (int i = 0; i < 2; ++i) {
      char l = At(p);
      if ((l == 'r' || l == 'R') && !raw) {
        raw = true;
        ++p;
      } else if ((l == 'b' || l == 'B') && !bytes) {
        bytes = true;
        ++p;
      } else {
        break;
      }
    }
    if ((raw || bytes) && (At(p) == '"' || At(p) == '\'')) {
      pos_ = p;
      return LexString(tok, raw, bytes);
    }
    size_t start = pos_;
    while (pos_ < src_.size() && IsIdentChar(src_[pos_])) ++pos_;
    tok->text = std::string(src_.substr(start, pos_ - start));
    if (tok->text == "true") {
      tok->kind = Tok::kTrue;
    } else if (tok->text == "false") {
      tok->kind = Tok::kFalse;
    } else if (tok->text == "null") {
      tok->kind = Tok::kNull;
    } else if (tok->text == "in") {
      tok->kind = Tok::kIn;
    } else {
      tok->kind = Tok::kIdent;
      tok->reserved = IsReserved(tok->text);
    }
    return Status::Ok();
  }
  return Error(pos_, "token recognition error at: '" + std::string(1, c) + "'");
}

Status Lexer::LexNumber(Token* tok) {
  size_t start = pos_;
  if (src_[pos_] == '0' && (At(pos_ + 1) == 'x' || At(pos_ + 1) == 'X')) {
    pos_ += 2;
    uint64_t value = 0;
    size_t digits = 0;
    bool overflow = false;
    while (HexValue(At(pos_)) >= 0) {
      if (value > (std::numeric_limits<uint64_t>::max() >> 4)) overflow = true;
      value = (value << 4) | static_cast<uint64_t>(HexValue(At(pos_)));
      ++pos_;
      ++digits;
    }
    if (digits == 0) return Error(start, "hexadecimal literal without digits");
    if (overflow) return Error(start, "invalid int literal");
    tok->magnitude = value;
    tok->kind = Tok::kInt;
    if (At(pos_) == 'u' || At(pos_) == 'U') {
      ++pos_;
      tok->kind = Tok::kUint;
    }
    tok->text = std::string(src_.substr(start, pos_ - start));
    return Status::Ok();
  }
  bool is_double = false;
  while (IsDigit(At(pos_))) ++pos_;
  if (At(pos_) == '.' && IsDigit(At(pos_ + 1))) {
    is_double = true;
    ++pos_;
    while (IsDigit(At(pos_))) ++pos_;
  }
  if (At(pos_) == 'e' || At(pos_) == 'E') {
    size_t e = pos_ + 1;
    if (At(e) == '+' || At(e) == '-') ++e;
    if (IsDigit(At(e))) {
      is_double = true;
      pos_ = e;
      while (IsDigit(At(pos_))) ++pos_;
    }
  }
  std::string_view text = src_.substr(start, pos_ - start);
  tok->text = std::string(text);
  if (is_double) {
    std::string digits = text[0] == '.' ? "0" + std::string(text) : std::string(text);
    double value = 0;
    if (!ParseDouble(digits, &value)) {
      return Error(start, "invalid double literal: " + std::string(text));
    }
    tok->kind = Tok::kDouble;
    tok->number = value;
    return Status::Ok();
  }
  uint64_t value = 0;
  for (char c : text) {
    auto digit = static_cast<uint64_t>(c - '0');
    if (value > (std::numeric_limits<uint64_t>::max() - digit) / 10) {
      return Error(start, "invalid int literal: " + std::string(text));
    }
    value = value * 10 + digit;
  }
  tok->magnitude = value;
  tok->kind = Tok::kInt;
  if (At(pos_) == 'u' || At(pos_) == 'U') {
    ++pos_;
    tok->kind = Tok::kUint;
    tok->text.push_back('u');
  }
  return Status::Ok();
}

Status Lexer::LexQuotedIdent(Token* tok) {
  size_t start = pos_++;
  size_t end = src_.find('`', pos_);
  if (end == std::string_view::npos) return Error(start, "unterminated quoted identifier");
  std::string_view name = src_.substr(pos_, end - pos_);
  if (name.empty()) return Error(start, "empty quoted identifier");
  for (char c : name) {
    if (!IsIdentChar(c) && c != '.' && c != '-' && c != '/' && c != '~') {
      return Error(start, "invalid character in quoted identifier: '" + std::string(1, c) + "'");
    }
  }
  tok->kind = Tok::kQuotedIdent;
  tok->text = std::string(name);
  pos_ = end + 1;
  return Status::Ok();
}

Status Lexer::LexString(Token* tok, bool raw, bool bytes) {
  size_t start = tok->pos;
  char quote = src_[pos_];
  bool triple = At(pos_ + 1) == quote && At(pos_ + 2) == quote;
  pos_ += triple ? 3 : 1;
  std::string out;
  while (true) {
    if (pos_ >= src_.size()) return Error(start, "unterminated string literal");
    char c = src_[pos_];
    if (c == quote && (!triple || (At(pos_ + 1) == quote && At(pos_ + 2) == quote))) {
      pos_ += triple ? 3 : 1;
      break;
    }
    if (!triple && (c == '\n' || c == '\r')) {
      return Error(pos_, "newline in a single-quoted string literal");
    }
    if (c != '\\' || raw) {
      out.push_back(c);
      ++pos_;
      continue;
    }
    size_t escape = pos_;
    char e = At(pos_ + 1);
    pos_ += 2;
    switch (e) {
      case 'a':
        out.push_back('\a');
        continue;
      case 'b':
        out.push_back('\b');
        continue;
      case 'f':
        out.push_back('\f');
        continue;
      case 'n':
        out.push_back('\n');
        continue;
      case 'r':
        out.push_back('\r');
        continue;
      case 't':
        out.push_back('\t');
        continue;
      case 'v':
        out.push_back('\v');
        continue;
      case '\\':
      case '\'':
      case '"':
      case '`':
      case '?':
        out.push_back(e);
        continue;
      default:
        break;
    }
    uint32_t code = 0;
    int digits = 0;
    int base = 16;
    if (e == 'x' || e == 'X') {
      digits = 2;
    } else if (e == 'u') {
      digits = 4;
    } else if (e == 'U') {
      digits = 8;
    } else if (e >= '0' && e <= '3') {
      base = 8;
      digits = 2;
      code = static_cast<uint32_t>(e - '0');
    } else {
      return Error(escape, "invalid escape sequence");
    }
    if ((e == 'u' || e == 'U') && bytes) {
      return Error(escape, "\\u and \\U escapes are not allowed in bytes literals");
    }
    for (int i = 0; i < digits; ++i) {
      int d = HexValue(At(pos_));
      if (d < 0 || d >= base) return Error(escape, "invalid escape sequence");
      code = code * static_cast<uint32_t>(base) + static_cast<uint32_t>(d);
      ++pos_;
    }
    if (bytes) {
      out.push_back(static_cast<char>(code));
    } else if (!AppendUtf8(&out, code)) {
      return Error(escape, "escape sequence is not a valid code point");
    }
  }
  tok->kind = bytes ? Tok::kBytes : Tok::kString;
  tok->text = std::move(out);
  return Status::Ok();
}

// Binary operators: precedence (higher binds tighter) and the function they call.
struct BinaryOp {
  int precedence;
  const char* function;
};

std::optional<BinaryOp> BinaryOperator(Tok kind) {
  switch (kind) {
    case Tok::kOr:
      return BinaryOp{1, "_||_"};
    case Tok::kAnd:
      return BinaryOp{2, "_&&_"};
    case Tok::kEq:
      return BinaryOp{3, "_==_"};
    case Tok::kNe:
      return BinaryOp{3, "_!=_"};
    case Tok::kLt:
      return BinaryOp{3, "_<_"};
    case Tok::kLe:
      return BinaryOp{3, "_<=_"};
    case Tok::kGt:
      return BinaryOp{3, "_>_"};
    case Tok::kGe:
      return BinaryOp{3, "_>=_"};
    case Tok::kIn:
      return BinaryOp{3, "@in"};
    case Tok::kPlus:
      return BinaryOp{4, "_+_"};
    case Tok::kMinus:
      return BinaryOp{4, "_-_"};
    case Tok::kStar:
      return BinaryOp{5, "_*_"};
    case Tok::kSlash:
      return BinaryOp{5, "_/_"};
    case Tok::kPercent:
      return BinaryOp{5, "_%_"};
    default:
      return std::nullopt;
  }
}

std::string Describe(const Token& t) {
  if (t.kind == Tok::kEnd) return "end of input";
  return "'" + t.text + "'";
}

class Parser {
 public:
  Parser(std::string_view source, const ParseOptions& options)
      : source_(source), lexer_(source), options_(options) {}

  StatusOr<Ast> Run();

 private:
  enum class FrameKind : uint8_t {
    kParen,
    kCall,
    kIndex,
    kList,
    kMap,
    kThen,
    kElse,
    kBinary,
    kUnary
  };
  struct Frame {
    FrameKind kind;
    uint32_t pos;
    uint32_t base;  // operands_.size() where the frame's operands start
    std::string name;
    int precedence = 0;
    bool has_target = false;
    bool map_value = false;  // kMap: a value comes next
  };

  Status Advance(Token* tok);
  Status Peek(Tok* kind);
  Status Expect(Tok kind, Token* tok, std::string_view what);
  Status Error(uint32_t pos, std::string_view message) const { return lexer_.Error(pos, message); }
  Status PushFrame(Frame frame);

  uint32_t Add(Expr e);
  uint32_t AddConst(uint32_t pos, Value v);
  uint32_t AddCall(uint32_t pos, std::string name, std::vector<uint32_t> args, bool has_target);
  std::vector<uint32_t> TakeOperands(uint32_t base);

  Status ReduceOperators(int min_precedence);
  Status ReduceAll();
  Status Reduce(Frame& frame);
  Status CloseCall(Frame frame);
  Status ExpandMacro(const Frame& frame, std::vector<uint32_t>& args, bool* expanded);
  Status SimpleName(uint32_t node, std::string_view macro, std::string* name);

  Status Operand(Token& t, bool* expect_operand);
  Status Operator(Token& t, bool* expect_operand, bool* done);

  std::string_view source_;
  Lexer lexer_;
  ParseOptions options_;
  std::optional<Token> peeked_;
  Ast ast_;
  std::vector<uint32_t> operands_;
  std::vector<Frame> frames_;
};

Status Parser::Advance(Token* tok) {
  if (peeked_) {
    *tok = std::move(*peeked_);
    peeked_.reset();
    return Status::Ok();
  }
  return lexer_.Next(tok);
}

Status Parser::Peek(Tok* kind) {
  if (!peeked_) {
    Token t;
    TEPHRA_RETURN_IF_ERROR(lexer_.Next(&t));
    peeked_ = std::move(t);
  }
  *kind = peeked_->kind;
  return Status::Ok();
}

Status Parser::Expect(Tok kind, Token* tok, std::string_view what) {
  TEPHRA_RETURN_IF_ERROR(Advance(tok));
  if (tok->kind != kind) {
    return Error(tok->pos, "expected " + std::string(what) + ", found " + Describe(*tok));
  }
  return Status::Ok();
}

Status Parser::PushFrame(Frame frame) {
  if (frames_.size() >= kMaxNesting) {
    return Error(frame.pos,
                 "expression nests deeper than " + std::to_string(kMaxNesting) + " levels");
  }
  frames_.push_back(std::move(frame));
  return Status::Ok();
}

uint32_t Parser::Add(Expr e) {
  ast_.nodes.push_back(std::move(e));
  return static_cast<uint32_t>(ast_.nodes.size() - 1);
}

uint32_t Parser::AddConst(uint32_t pos, Value v) {
  Expr e;
  e.kind = ExprKind::kConst;
  e.position = pos;
  e.constant = std::move(v);
  return Add(std::move(e));
}

uint32_t Parser::AddCall(uint32_t pos, std::string name, std::vector<uint32_t> args,
                         bool has_target) {
  Expr e;
  e.kind = ExprKind::kCall;
  e.position = pos;
  e.name = std::move(name);
  e.args = std::move(args);
  e.has_target = has_target;
  return Add(std::move(e));
}

std::vector<uint32_t> Parser::TakeOperands(uint32_t base) {
  std::vector<uint32_t> taken(operands_.begin() + base, operands_.end());
  operands_.resize(base);
  return taken;
}

Status Parser::SimpleName(uint32_t node, std::string_view macro, std::string* name) {
  const Expr& e = ast_.nodes[node];
  if (e.kind != ExprKind::kIdent || e.name.empty() || e.name[0] == '.') {
    return Error(e.position, std::string(macro) + "() variable must be a simple name");
  }
  if (e.name == "__result__") {
    return Error(e.position, "the variable name __result__ is reserved");
  }
  *name = e.name;
  return Status::Ok();
}

Status Parser::ExpandMacro(const Frame& frame, std::vector<uint32_t>& args, bool* expanded) {
  *expanded = false;
  if (!options_.enable_macros) return Status::Ok();
  const std::string& fn = frame.name;
  if (!frame.has_target) {
    if (fn == "has" && args.size() == 1) {
      Expr& arg = ast_.nodes[args[0]];
      if (arg.kind != ExprKind::kSelect || arg.test_only) {
        return Error(frame.pos, "invalid argument to has() macro: it takes a field selection");
      }
      arg.test_only = true;
      operands_.push_back(args[0]);
      *expanded = true;
    }
    return Status::Ok();
  }
  // args[0] is the receiver.
  size_t n = args.size() - 1;
  Expr e;
  e.kind = ExprKind::kComprehension;
  e.position = frame.pos;
  const Expr& target = ast_.nodes[args[0]];
  if (fn == "bind" && n == 3 && target.kind == ExprKind::kIdent && target.name == "cel") {
    TEPHRA_RETURN_IF_ERROR(SimpleName(args[1], "cel.bind", &e.name));
    e.macro = MacroKind::kBind;
    e.args = {args[2], args[3]};
    operands_.push_back(Add(std::move(e)));
    *expanded = true;
    return Status::Ok();
  }
  struct Shape {
    const char* name;
    size_t arity;
    MacroKind kind;
    int vars;
  };
  static constexpr Shape kShapes[] = {
      {"all", 2, MacroKind::kAll, 1},
      {"exists", 2, MacroKind::kExists, 1},
      {"exists_one", 2, MacroKind::kExistsOne, 1},
      {"existsOne", 2, MacroKind::kExistsOne, 1},
      {"map", 2, MacroKind::kMap, 1},
      {"map", 3, MacroKind::kMapFilter, 1},
      {"filter", 2, MacroKind::kFilter, 1},
      {"all", 3, MacroKind::kAll2, 2},
      {"exists", 3, MacroKind::kExists2, 2},
      {"exists_one", 3, MacroKind::kExistsOne2, 2},
      {"existsOne", 3, MacroKind::kExistsOne2, 2},
      {"transformList", 3, MacroKind::kTransformList, 2},
      {"transformList", 4, MacroKind::kTransformListFilter, 2},
      {"transformMap", 3, MacroKind::kTransformMap, 2},
      {"transformMap", 4, MacroKind::kTransformMapFilter, 2},
      {"transformMapEntry", 3, MacroKind::kTransformMapEntry, 2},
      {"transformMapEntry", 4, MacroKind::kTransformMapEntryFilter, 2},
  };
  for (const Shape& shape : kShapes) {
    if (fn != shape.name || n != shape.arity) continue;
    TEPHRA_RETURN_IF_ERROR(SimpleName(args[1], fn, &e.name));
    if (shape.vars == 2) {
      TEPHRA_RETURN_IF_ERROR(SimpleName(args[2], fn, &e.var2));
      if (e.var2 == e.name) {
        return Error(ast_.nodes[args[2]].position,
                     fn + "() variables must differ: both are named " + e.name);
      }
    }
    e.macro = shape.kind;
    e.args.push_back(args[0]);
    for (size_t i = 1 + static_cast<size_t>(shape.vars); i < args.size(); ++i) {
      e.args.push_back(args[i]);
    }
    operands_.push_back(Add(std::move(e)));
    *expanded = true;
    return Status::Ok();
  }
  return Status::Ok();
}

Status Parser::CloseCall(Frame frame) {
  std::vector<uint32_t> args = TakeOperands(frame.base);
  bool expanded = false;
  TEPHRA_RETURN_IF_ERROR(ExpandMacro(frame, args, &expanded));
  if (!expanded) {
    operands_.push_back(
        AddCall(frame.pos, std::move(frame.name), std::move(args), frame.has_target));
  }
  return Status::Ok();
}

Status Parser::Reduce(Frame& frame) {
  switch (frame.kind) {
    case FrameKind::kUnary:
    case FrameKind::kBinary:
    case FrameKind::kElse: {
      std::vector<uint32_t> args = TakeOperands(frame.base);
      operands_.push_back(AddCall(frame.pos, std::move(frame.name), std::move(args), false));
      return Status::Ok();
    }
    default:
      return Error(frame.pos, "internal parser error");
  }
}

Status Parser::ReduceOperators(int min_precedence) {
  while (!frames_.empty()) {
    Frame& top = frames_.back();
    bool reducible = top.kind == FrameKind::kUnary ||
                     (top.kind == FrameKind::kBinary && top.precedence >= min_precedence);
    if (!reducible) break;
    Frame frame = std::move(top);
    frames_.pop_back();
    TEPHRA_RETURN_IF_ERROR(Reduce(frame));
  }
  return Status::Ok();
}

Status Parser::ReduceAll() {
  while (!frames_.empty()) {
    FrameKind kind = frames_.back().kind;
    if (kind != FrameKind::kUnary && kind != FrameKind::kBinary && kind != FrameKind::kElse) break;
    Frame frame = std::move(frames_.back());
    frames_.pop_back();
    TEPHRA_RETURN_IF_ERROR(Reduce(frame));
  }
  return Status::Ok();
}

Status Parser::Operand(Token& t, bool* expect_operand) {
  Tok next;
  switch (t.kind) {
    case Tok::kInt:
      if (t.magnitude > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return Error(t.pos, "invalid int literal: " + t.text + " is out of range");
      }
      operands_.push_back(AddConst(t.pos, Value::Int(static_cast<int64_t>(t.magnitude))));
      break;
    case Tok::kUint:
      operands_.push_back(AddConst(t.pos, Value::Uint(t.magnitude)));
      break;
    case Tok::kDouble:
      operands_.push_back(AddConst(t.pos, Value::Double(t.number)));
      break;
    case Tok::kString:
      operands_.push_back(AddConst(t.pos, Value::String(std::move(t.text))));
      break;
    case Tok::kBytes:
      operands_.push_back(AddConst(t.pos, Value::Bytes(std::move(t.text))));
      break;
    case Tok::kTrue:
      operands_.push_back(AddConst(t.pos, Value::Bool(true)));
      break;
    case Tok::kFalse:
      operands_.push_back(AddConst(t.pos, Value::Bool(false)));
      break;
    case Tok::kNull:
      operands_.push_back(AddConst(t.pos, Value::Null()));
      break;
    case Tok::kMinus: {
      TEPHRA_RETURN_IF_ERROR(Peek(&next));
      if (next == Tok::kInt || next == Tok::kDouble) {
        // A negative literal, so that -9223372036854775808 is the smallest int.
        Token number;
        TEPHRA_RETURN_IF_ERROR(Advance(&number));
        if (number.kind == Tok::kDouble) {
          operands_.push_back(AddConst(t.pos, Value::Double(-number.number)));
        } else if (number.magnitude > uint64_t{1} << 63) {
          return Error(t.pos, "invalid int literal: -" + number.text + " is out of range");
        } else {
          operands_.push_back(
              AddConst(t.pos, Value::Int(static_cast<int64_t>(0 - number.magnitude))));
        }
        break;
      }
      return PushFrame({FrameKind::kUnary, t.pos, static_cast<uint32_t>(operands_.size()), "-_"});
    }
    case Tok::kNot:
      return PushFrame({FrameKind::kUnary, t.pos, static_cast<uint32_t>(operands_.size()), "!_"});
    case Tok::kLParen:
      return PushFrame({FrameKind::kParen, t.pos, static_cast<uint32_t>(operands_.size()), ""});
    case Tok::kLBracket:
    case Tok::kLBrace: {
      bool list = t.kind == Tok::kLBracket;
      TEPHRA_RETURN_IF_ERROR(Peek(&next));
      if (next == Tok::kQuestion) return Error(t.pos, "optional syntax is not supported");
      if (next == (list ? Tok::kRBracket : Tok::kRBrace)) {
        Token close;
        TEPHRA_RETURN_IF_ERROR(Advance(&close));
        Expr e;
        e.kind = list ? ExprKind::kList : ExprKind::kMap;
        e.position = t.pos;
        operands_.push_back(Add(std::move(e)));
        break;
      }
      return PushFrame({list ? FrameKind::kList : FrameKind::kMap, t.pos,
                        static_cast<uint32_t>(operands_.size()), ""});
    }
    case Tok::kDot:
    case Tok::kIdent: {
      std::string name;
      uint32_t pos = t.pos;
      if (t.kind == Tok::kDot) {
        Token ident;
        TEPHRA_RETURN_IF_ERROR(Expect(Tok::kIdent, &ident, "an identifier after '.'"));
        if (ident.reserved) return Error(ident.pos, "reserved identifier: " + ident.text);
        name = "." + ident.text;
      } else {
        if (t.reserved) return Error(t.pos, "reserved identifier: " + t.text);
        name = std::move(t.text);
      }
      TEPHRA_RETURN_IF_ERROR(Peek(&next));
      if (next == Tok::kLParen) {
        Token open;
        TEPHRA_RETURN_IF_ERROR(Advance(&open));
        // As cel-go, a call is placed at its opening parenthesis.
        Frame call{FrameKind::kCall, open.pos, static_cast<uint32_t>(operands_.size()), name};
        TEPHRA_RETURN_IF_ERROR(Peek(&next));
        if (next == Tok::kRParen) {
          Token close;
          TEPHRA_RETURN_IF_ERROR(Advance(&close));
          TEPHRA_RETURN_IF_ERROR(CloseCall(std::move(call)));
          break;
        }
        return PushFrame(std::move(call));
      }
      Expr e;
      e.kind = ExprKind::kIdent;
      e.position = pos;
      e.name = std::move(name);
      operands_.push_back(Add(std::move(e)));
      break;
    }
    default:
      return Error(t.pos, "unexpected " + Describe(t));
  }
  *expect_operand = false;
  return Status::Ok();
}

Status Parser::Operator(Token& t, bool* expect_operand, bool* done) {
  Tok next;
  if (std::optional<BinaryOp> op = BinaryOperator(t.kind)) {
    TEPHRA_RETURN_IF_ERROR(ReduceOperators(op->precedence));
    *expect_operand = true;
    Frame frame{FrameKind::kBinary, t.pos, static_cast<uint32_t>(operands_.size() - 1),
                op->function};
    frame.precedence = op->precedence;
    return PushFrame(std::move(frame));
  }
  switch (t.kind) {
    case Tok::kDot: {
      Token field;
      TEPHRA_RETURN_IF_ERROR(Advance(&field));
      if (field.kind == Tok::kQuestion) return Error(t.pos, "optional syntax is not supported");
      if (field.kind != Tok::kIdent && field.kind != Tok::kQuotedIdent) {
        return Error(field.pos, "expected a field name after '.', found " + Describe(field));
      }
      if (field.kind == Tok::kIdent) {
        TEPHRA_RETURN_IF_ERROR(Peek(&next));
        if (next == Tok::kLParen) {
          Token open;
          TEPHRA_RETURN_IF_ERROR(Advance(&open));
          Frame call{FrameKind::kCall, open.pos, static_cast<uint32_t>(operands_.size() - 1),
                     field.text};
          call.has_target = true;
          TEPHRA_RETURN_IF_ERROR(Peek(&next));
          if (next == Tok::kRParen) {
            Token close;
            TEPHRA_RETURN_IF_ERROR(Advance(&close));
            return CloseCall(std::move(call));
          }
          *expect_operand = true;
          return PushFrame(std::move(call));
        }
      }
      Expr e;
      e.kind = ExprKind::kSelect;
      e.position = t.pos;  // the '.', where cel-go places a selection
      e.name = std::move(field.text);
      e.args = {operands_.back()};
      operands_.back() = Add(std::move(e));
      return Status::Ok();
    }
    case Tok::kLBracket:
      TEPHRA_RETURN_IF_ERROR(Peek(&next));
      if (next == Tok::kQuestion) return Error(t.pos, "optional syntax is not supported");
      *expect_operand = true;
      return PushFrame(
          {FrameKind::kIndex, t.pos, static_cast<uint32_t>(operands_.size() - 1), "_[_]"});
    case Tok::kLBrace:
      return Error(t.pos, "message construction (Name{field: value}) is not supported");
    case Tok::kQuestion:
      TEPHRA_RETURN_IF_ERROR(ReduceOperators(0));
      if (!frames_.empty() && frames_.back().kind == FrameKind::kThen) {
        return Error(t.pos, "a conditional between '?' and ':' needs parentheses");
      }
      *expect_operand = true;
      return PushFrame(
          {FrameKind::kThen, t.pos, static_cast<uint32_t>(operands_.size() - 1), "_?_:_"});
    case Tok::kColon:
      TEPHRA_RETURN_IF_ERROR(ReduceOperators(0));
      if (!frames_.empty() && frames_.back().kind == FrameKind::kThen) {
        frames_.back().kind = FrameKind::kElse;
        *expect_operand = true;
        return Status::Ok();
      }
      if (!frames_.empty() && frames_.back().kind == FrameKind::kMap && !frames_.back().map_value) {
        frames_.back().map_value = true;
        *expect_operand = true;
        return Status::Ok();
      }
      return Error(t.pos, "unexpected ':'");
    case Tok::kComma: {
      TEPHRA_RETURN_IF_ERROR(ReduceAll());
      if (frames_.empty()) return Error(t.pos, "unexpected ','");
      Frame& top = frames_.back();
      if (top.kind == FrameKind::kMap) {
        if (!top.map_value) return Error(t.pos, "expected ':' after a map key, found ','");
        top.map_value = false;
      } else if (top.kind != FrameKind::kCall && top.kind != FrameKind::kList) {
        return Error(t.pos, "unexpected ','");
      }
      *expect_operand = true;
      if (top.kind != FrameKind::kCall) {  // lists and maps allow a trailing comma
        TEPHRA_RETURN_IF_ERROR(Peek(&next));
        Tok close = top.kind == FrameKind::kList ? Tok::kRBracket : Tok::kRBrace;
        if (next == close) {
          Token c;
          TEPHRA_RETURN_IF_ERROR(Advance(&c));
          if (top.kind == FrameKind::kMap) top.map_value = true;
          *expect_operand = false;
          return Operator(c, expect_operand, done);
        }
      }
      return Status::Ok();
    }
    case Tok::kRParen: {
      TEPHRA_RETURN_IF_ERROR(ReduceAll());
      if (frames_.empty()) return Error(t.pos, "unexpected ')'");
      Frame frame = std::move(frames_.back());
      frames_.pop_back();
      if (frame.kind == FrameKind::kParen) return Status::Ok();
      if (frame.kind == FrameKind::kCall) return CloseCall(std::move(frame));
      return Error(t.pos, "unexpected ')'");
    }
    case Tok::kRBracket: {
      TEPHRA_RETURN_IF_ERROR(ReduceAll());
      if (frames_.empty()) return Error(t.pos, "unexpected ']'");
      Frame frame = std::move(frames_.back());
      frames_.pop_back();
      if (frame.kind == FrameKind::kIndex) {
        std::vector<uint32_t> args = TakeOperands(frame.base);
        operands_.push_back(AddCall(frame.pos, "_[_]", std::move(args), false));
        return Status::Ok();
      }
      if (frame.kind == FrameKind::kList) {
        Expr e;
        e.kind = ExprKind::kList;
        e.position = frame.pos;
        e.args = TakeOperands(frame.base);
        operands_.push_back(Add(std::move(e)));
        return Status::Ok();
      }
      return Error(t.pos, "unexpected ']'");
    }
    case Tok::kRBrace: {
      TEPHRA_RETURN_IF_ERROR(ReduceAll());
      if (frames_.empty() || frames_.back().kind != FrameKind::kMap) {
        return Error(t.pos, "unexpected '}'");
      }
      Frame frame = std::move(frames_.back());
      frames_.pop_back();
      if (!frame.map_value) return Error(t.pos, "expected ':' after a map key, found '}'");
      Expr e;
      e.kind = ExprKind::kMap;
      e.position = frame.pos;
      e.args = TakeOperands(frame.base);
      operands_.push_back(Add(std::move(e)));
      return Status::Ok();
    }
    case Tok::kEnd:
      TEPHRA_RETURN_IF_ERROR(ReduceAll());
      if (!frames_.empty()) {
        return Error(t.pos, "unexpected end of input: an opening bracket at " +
                                SourceLocation(source_, frames_.back().pos) + " is not closed");
      }
      *done = true;
      return Status::Ok();
    default:
      return Error(t.pos, "unexpected " + Describe(t));
  }
}

StatusOr<Ast> Parser::Run() {
  size_t code_points = 0;
  if (!IsValidUtf8(source_, &code_points)) {
    return InvalidArgument("the expression is not valid UTF-8");
  }
  if (code_points > options_.max_length) {
    return InvalidArgument("the expression is " + std::to_string(code_points) +
                           " code points long; at most " + std::to_string(options_.max_length) +
                           " are allowed");
  }
  bool expect_operand = true;
  bool done = false;
  while (!done) {
    Token t;
    TEPHRA_RETURN_IF_ERROR(Advance(&t));
    if (expect_operand) {
      if (t.kind == Tok::kEnd) return Error(t.pos, "unexpected end of input");
      TEPHRA_RETURN_IF_ERROR(Operand(t, &expect_operand));
    } else {
      TEPHRA_RETURN_IF_ERROR(Operator(t, &expect_operand, &done));
    }
  }
  ast_.root = operands_.back();
  return std::move(ast_);
}

}  // namespace

StatusOr<Ast> Parse(std::string_view source, const ParseOptions& options) {
  Parser parser(source, options);
  return parser.Run();
}

}  // namespace tephra::cel
