#include "json/json.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace tephra::json {

void Errors::Add(std::string path, std::string message) {
  if (path.empty()) {
    items_.push_back(std::move(message));
  } else {
    items_.push_back(std::move(path) + ": " + message);
  }
}

Status Errors::ToStatus(std::string_view what) const {
  if (items_.empty()) return Status::Ok();
  std::string msg(what);
  msg += ": ";
  for (size_t i = 0; i < items_.size(); ++i) {
    if (i > 0) msg += "; ";
    msg += items_[i];
  }
  return InvalidArgument(std::move(msg));
}

// ---------------------------------------------------------------------------------------------
// Numbers

namespace {

bool IsIntegerText(std::string_view text) {
  return text.find_first_of(".eE") == std::string_view::npos;
}

// JSON's number grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
bool IsJsonNumber(std::string_view s) {
  size_t i = 0;
  auto digits = [&] {
    size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i > start;
  };
  if (i < s.size() && s[i] == '-') ++i;
  if (i < s.size() && s[i] == '0') {
    ++i;
  } else if (!digits()) {
    return false;
  }
  if (i < s.size() && s[i] == '.' && (++i, !digits())) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == s.size();
}

// Writes d as Write does (RapidJSON's shortest round-trip form); false for inf and NaN.
bool DoubleText(double d, std::string* out) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  if (!w.Double(d)) return false;
  out->assign(buf.GetString(), buf.GetSize());
  return true;
}

}  // namespace

bool IsRawNumber(const Value& v) {
  return v.IsString() && v.GetStringLength() > 0 && v.GetString()[0] == kRawNumberMark;
}

std::string_view RawNumberText(const Value& v) {
  if (!IsRawNumber(v)) return {};
  return {v.GetString() + 1, v.GetStringLength() - 1};
}

bool IsString(const Value& v) {
  return v.IsString() && !IsRawNumber(v);
}

std::string_view StringOf(const Value& v) {
  if (!IsString(v)) return {};
  return {v.GetString(), v.GetStringLength()};
}

bool IsNumber(const Value& v) {
  return v.IsNumber() || IsRawNumber(v);
}

std::optional<int64_t> IntegerOf(const Value& v) {
  if (v.IsInt64()) return v.GetInt64();
  std::optional<double> d = DoubleOf(v);
  // Integral doubles (3.0, "3.00", -0) are whole numbers; 2^63 and beyond do not fit.
  if (!d || std::floor(*d) != *d || std::fabs(*d) >= 9.2e18) return std::nullopt;
  return static_cast<int64_t>(*d);
}

std::optional<double> DoubleOf(const Value& v) {
  if (v.IsNumber()) return v.GetDouble();
  if (!IsRawNumber(v)) return std::nullopt;
  std::string text(RawNumberText(v));
  double d = std::strtod(text.c_str(), nullptr);
  if (!std::isfinite(d)) return std::nullopt;
  return d;
}

namespace {

const char* TypeName(const Value* v) {
  if (v == nullptr) return "nothing";
  if (IsRawNumber(*v)) return IsIntegerText(RawNumberText(*v)) ? "integer" : "number";
  switch (v->GetType()) {
    case rapidjson::kNullType:
      return "null";
    case rapidjson::kFalseType:
    case rapidjson::kTrueType:
      return "boolean";
    case rapidjson::kObjectType:
      return "object";
    case rapidjson::kArrayType:
      return "array";
    case rapidjson::kStringType:
      return "string";
    case rapidjson::kNumberType:
      return v->IsInt64() || v->IsUint64() ? "integer" : "number";
  }
  return "unknown";
}

}  // namespace

std::string_view TypeOf(const Value& v) {
  return TypeName(&v);
}

Reader::Reader(const Value* value, Errors* errors, std::string_view path)
    : value_(value), errors_(errors) {
  Append(path);
}

void Reader::Append(std::string_view part) {
  if (path_truncated_) return;
  size_t room = kPathCapacity - path_len_;
  if (part.size() > room) {
    std::memcpy(path_ + path_len_, part.data(), room);
    path_len_ = static_cast<uint8_t>(kPathCapacity);
    path_truncated_ = true;
    return;
  }
  std::memcpy(path_ + path_len_, part.data(), part.size());
  path_len_ = static_cast<uint8_t>(path_len_ + part.size());
}

std::string Reader::path() const {
  std::string p(path_, path_len_);
  if (path_truncated_) p += "...";
  return p;
}

bool Reader::present() const {
  return value_ != nullptr && !value_->IsNull();
}
bool Reader::is_object() const {
  return value_ != nullptr && value_->IsObject();
}
bool Reader::is_array() const {
  return value_ != nullptr && value_->IsArray();
}
bool Reader::is_string() const {
  return value_ != nullptr && IsString(*value_);
}

void Reader::Fail(std::string message) const {
  if (errors_ != nullptr) errors_->Add(path(), std::move(message));
}

bool Reader::Expect(bool ok, const char* what) const {
  if (ok) return true;
  Fail(std::string("expected ") + what + ", got " + TypeName(value_));
  return false;
}

Reader Reader::operator[](std::string_view key) const {
  const Value* child = nullptr;
  if (value_ != nullptr && value_->IsObject()) {
    auto it = value_->FindMember(
        rapidjson::StringRef(key.data(), static_cast<rapidjson::SizeType>(key.size())));
    if (it != value_->MemberEnd()) child = &it->value;
  } else if (present()) {
    Expect(false, "object");
  }
  return Member(key, child);
}

Reader Reader::Member(std::string_view key, const Value* child) const {
  Reader r(child, errors_);
  std::memcpy(r.path_, path_, path_len_);
  r.path_len_ = path_len_;
  r.path_truncated_ = path_truncated_;
  if (path_len_ > 0) r.Append(".");
  r.Append(key);
  return r;
}

Reader Reader::operator[](size_t index) const {
  const Value* child = nullptr;
  if (value_ != nullptr && value_->IsArray() && index < value_->Size()) {
    child = &(*value_)[static_cast<rapidjson::SizeType>(index)];
  }
  Reader r(child, errors_);
  std::memcpy(r.path_, path_, path_len_);
  r.path_len_ = path_len_;
  r.path_truncated_ = path_truncated_;
  char buf[24];
  int n = std::snprintf(buf, sizeof buf, "[%zu]", index);
  r.Append(std::string_view(buf, static_cast<size_t>(n)));
  return r;
}

std::string Reader::String(std::string_view fallback) const {
  if (!present() || !Expect(IsString(*value_), "string")) return std::string(fallback);
  return std::string(value_->GetString(), value_->GetStringLength());
}

int64_t Reader::Int(int64_t fallback) const {
  if (!present()) return fallback;
  // Some writers emit integral values as 3.0; accept those, reject 3.5 and overflow.
  if (std::optional<int64_t> v = IntegerOf(*value_)) return *v;
  if (value_->IsUint64() || (IsRawNumber(*value_) && IsIntegerText(RawNumberText(*value_)))) {
    Fail("value " + Write(*value_) + " does not fit in a 64-bit integer");
    return fallback;
  }
  Expect(false, "integer");
  return fallback;
}

int32_t Reader::Int32(int32_t fallback) const {
  if (!present()) return fallback;
  size_t before = errors_ != nullptr ? errors_->size() : 0;
  int64_t v = Int(fallback);
  if (errors_ != nullptr && errors_->size() != before) return fallback;
  if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
    Fail("value " + std::to_string(v) + " does not fit in a 32-bit integer");
    return fallback;
  }
  return static_cast<int32_t>(v);
}

double Reader::Double(double fallback) const {
  if (!present() || !Expect(IsNumber(*value_), "number")) return fallback;
  std::optional<double> d = DoubleOf(*value_);
  if (!d) {
    Fail("value " + Write(*value_) + " is out of range");
    return fallback;
  }
  return *d;
}

bool Reader::Bool(bool fallback) const {
  if (!present() || !Expect(value_->IsBool(), "boolean")) return fallback;
  return value_->GetBool();
}

std::optional<std::string> Reader::OptString() const {
  if (!present() || !Expect(IsString(*value_), "string")) return std::nullopt;
  return std::string(value_->GetString(), value_->GetStringLength());
}

std::optional<int64_t> Reader::OptInt() const {
  if (!present()) return std::nullopt;
  size_t before = errors_ != nullptr ? errors_->size() : 0;
  int64_t v = Int(0);
  if (errors_ != nullptr && errors_->size() != before) return std::nullopt;
  return v;
}

std::optional<int32_t> Reader::OptInt32() const {
  if (!present()) return std::nullopt;
  size_t before = errors_ != nullptr ? errors_->size() : 0;
  int32_t v = Int32(0);
  if (errors_ != nullptr && errors_->size() != before) return std::nullopt;
  return v;
}

std::optional<bool> Reader::OptBool() const {
  if (!present() || !Expect(value_->IsBool(), "boolean")) return std::nullopt;
  return value_->GetBool();
}

std::map<std::string, std::string> Reader::StringMap() const {
  std::map<std::string, std::string> out;
  if (!present() || !Expect(value_->IsObject(), "object")) return out;
  for (auto it = value_->MemberBegin(); it != value_->MemberEnd(); ++it) {
    std::string key(it->name.GetString(), it->name.GetStringLength());
    if (!IsString(it->value)) {
      Member(key, &it->value).Expect(false, "string");
      continue;
    }
    out.emplace(std::move(key), std::string(it->value.GetString(), it->value.GetStringLength()));
  }
  return out;
}

std::vector<std::string> Reader::StringList() const {
  std::vector<std::string> out;
  if (!present() || !Expect(value_->IsArray(), "array")) return out;
  out.reserve(value_->Size());
  for (size_t i = 0; i < value_->Size(); ++i) {
    Reader e = (*this)[i];
    if (e.Expect(IsString(*e.value_), "string")) {
      out.emplace_back(e.value_->GetString(), e.value_->GetStringLength());
    }
  }
  return out;
}

size_t Reader::size() const {
  return is_array() ? value_->Size() : 0;
}

void Reader::ForEach(const std::function<void(const Reader&)>& fn) const {
  if (!present() || !Expect(value_->IsArray(), "array")) return;
  for (size_t i = 0; i < value_->Size(); ++i) fn((*this)[i]);
}

void Reader::ForEachMember(const std::function<void(std::string_view, const Reader&)>& fn) const {
  if (!present() || !Expect(value_->IsObject(), "object")) return;
  for (auto it = value_->MemberBegin(); it != value_->MemberEnd(); ++it) {
    std::string_view key(it->name.GetString(), it->name.GetStringLength());
    fn(key, Member(key, &it->value));
  }
}

// ---------------------------------------------------------------------------------------------
// Parsing

namespace {

constexpr unsigned kParseFlags =
    rapidjson::kParseNumbersAsStringsFlag | rapidjson::kParseValidateEncodingFlag;

// Number tokens of `text` in document order: the first character is '-' or a digit outside
// strings, and the token runs over number characters. Only used after RapidJSON refused a
// number as too big, so its numbers can be replaced by placeholders it accepts.
std::vector<std::string_view> NumberTokens(std::string_view text) {
  std::vector<std::string_view> out;
  size_t skip_to = 0;
  ForEachOutsideStrings(text, [&](size_t i, char c) {
    if (i < skip_to || (c != '-' && (c < '0' || c > '9'))) return;
    size_t end = text.find_first_not_of("0123456789+-.eE", i);
    if (end == std::string_view::npos) end = text.size();
    out.push_back(text.substr(i, end - i));
    skip_to = end;
  });
  return out;
}

// How deep a DocumentBuilder may go, and what it does with a value beyond.
struct DepthLimit {
  size_t max = kMaxDepth;
  // Keep such values as null, and say where the first one was, instead of failing the parse.
  bool prune = false;
};

// Longest member name a pruned value's path keeps (cut at a UTF-8 character boundary).
constexpr size_t kMaxPathKeyBytes = 64;

// Builds a Document from RapidJSON's events: counts nesting against the limit and stores each
// number as a typed number when that keeps its text, else as a raw number. When pruning it also
// tracks the path of the value being read, so the first value cut can be named.
class DocumentBuilder {
 public:
  DocumentBuilder(Document* doc, const std::vector<std::string_view>* originals, DepthLimit limit)
      : doc_(doc), originals_(originals), limit_(limit) {}

  bool too_deep() const { return too_deep_; }
  const std::vector<std::string>& cut() const { return cut_; }

  bool Null() {
    return Scalar([&] { return doc_->Null(); });
  }
  bool Bool(bool b) {
    return Scalar([&] { return doc_->Bool(b); });
  }
  bool Int(int i) {
    return Scalar([&] { return doc_->Int(i); });
  }
  bool Uint(unsigned i) {
    return Scalar([&] { return doc_->Uint(i); });
  }
  bool Int64(int64_t i) {
    return Scalar([&] { return doc_->Int64(i); });
  }
  bool Uint64(uint64_t i) {
    return Scalar([&] { return doc_->Uint64(i); });
  }
  bool Double(double d) {
    return Scalar([&] { return doc_->Double(d); });
  }
  bool String(const char* s, rapidjson::SizeType n, bool) {
    return Scalar([&] { return doc_->String(s, n, true); });
  }
  bool Key(const char* s, rapidjson::SizeType n, bool) {
    if (skip_ > 0) return true;
    if (limit_.prune) frames_.back().key = KeyForPath(std::string_view(s, n));
    return doc_->Key(s, n, true);
  }
  bool StartObject() {
    Opened o = Open(false);
    return o == Opened::kForward ? doc_->StartObject() : o == Opened::kSwallowed;
  }
  bool EndObject(rapidjson::SizeType n) { return Close() || doc_->EndObject(n); }
  bool StartArray() {
    Opened o = Open(true);
    return o == Opened::kForward ? doc_->StartArray() : o == Opened::kSwallowed;
  }
  bool EndArray(rapidjson::SizeType n) { return Close() || doc_->EndArray(n); }

  bool RawNumber(const char* s, rapidjson::SizeType n, bool) {
    std::string_view text(s, n);
    if (originals_ != nullptr && number_ < originals_->size()) text = (*originals_)[number_];
    ++number_;
    if (skip_ > 0) return true;
    Began();
    if (IsIntegerText(text)) {
      if (text == "-0") return Raw(text);
      int64_t i = 0;
      if (std::from_chars(text.data(), text.data() + text.size(), i).ec == std::errc()) {
        return doc_->Int64(i);
      }
      uint64_t u = 0;
      if (std::from_chars(text.data(), text.data() + text.size(), u).ec == std::errc()) {
        return doc_->Uint64(u);
      }
      return Raw(text);
    }
    std::string copy(text);
    double d = std::strtod(copy.c_str(), nullptr);
    std::string written;
    if (DoubleText(d, &written) && written == text) return doc_->Double(d);
    return Raw(text);
  }

 private:
  enum class Opened { kForward, kSwallowed, kFailed };
  // One open container, while pruning: whether it is an array, the elements begun so far and
  // the last member name.
  struct Frame {
    bool array = false;
    size_t elements = 0;
    std::string key;
  };

  static std::string KeyForPath(std::string_view key) {
    if (key.size() <= kMaxPathKeyBytes) return std::string(key);
    size_t end = kMaxPathKeyBytes;
    // Back off continuation bytes (10xxxxxx) so the cut name stays valid UTF-8.
    while (end > 0 && (static_cast<unsigned char>(key[end]) & 0xC0) == 0x80) --end;
    return std::string(key.substr(0, end)) + "...";
  }

  // A scalar value: added unless it lies inside a value being cut.
  template <typename Add>
  bool Scalar(const Add& add) {
    if (skip_ > 0) return true;
    Began();
    return add();
  }

  // A value begins: it is the next element of the array it is in.
  void Began() {
    if (limit_.prune && !frames_.empty()) ++frames_.back().elements;
  }

  // A container begins: forwarded, swallowed (inside or as a cut value) or too deep.
  Opened Open(bool array) {
    if (skip_ > 0) {
      ++skip_;
      return Opened::kSwallowed;
    }
    if (depth_ >= limit_.max) {
      if (!limit_.prune) {
        too_deep_ = true;
        return Opened::kFailed;
      }
      Began();
      if (cut_.empty()) cut_ = CurrentPath();
      skip_ = 1;
      return doc_->Null() ? Opened::kSwallowed : Opened::kFailed;
    }
    Began();
    ++depth_;
    if (limit_.prune) frames_.push_back(Frame{array, 0, {}});
    return Opened::kForward;
  }

  // A container ends; true when it was swallowed, so nothing goes to the document.
  bool Close() {
    if (skip_ > 0) {
      --skip_;
      return true;
    }
    --depth_;
    if (limit_.prune) frames_.pop_back();
    return false;
  }

  // The path of the value being read: a member name or "[index]" per open container.
  std::vector<std::string> CurrentPath() const {
    std::vector<std::string> path;
    path.reserve(frames_.size());
    for (const Frame& f : frames_) {
      path.push_back(f.array ? "[" + std::to_string(f.elements - 1) + "]" : f.key);
    }
    return path;
  }

  bool Raw(std::string_view text) {
    std::string marked(1, kRawNumberMark);
    marked.append(text);
    return doc_->String(marked.data(), static_cast<rapidjson::SizeType>(marked.size()), true);
  }

  Document* doc_;
  const std::vector<std::string_view>* originals_;
  const DepthLimit limit_;
  size_t depth_ = 0;
  size_t number_ = 0;
  bool too_deep_ = false;
  size_t skip_ = 0;  // > 0 inside a value being cut: containers opened within it, plus one
  std::vector<Frame> frames_;     // while pruning
  std::vector<std::string> cut_;  // the path of the first value cut
};

struct ParseOutcome {
  rapidjson::ParseResult result;
  bool too_deep = false;
  std::vector<std::string> cut;
};

ParseOutcome ParseInto(std::string_view text, Document* doc,
                       const std::vector<std::string_view>* originals, DepthLimit limit) {
  ParseOutcome out;
  auto generate = [&](Document& handler) {
    DocumentBuilder builder(&handler, originals, limit);
    // Read as is: an encoding-detecting stream would skip a byte order mark, and even a lone
    // first byte of one (0xEF), which the same text embedded in another document would not.
    rapidjson::MemoryStream ms(text.data(), text.size());
    rapidjson::Reader reader;
    // RapidJSON's default parser recurses once per level, which the limit bounds when it stops
    // the parse; a pruning parse reads on past the limit, so it must not recurse.
    out.result = limit.prune
                     ? reader.Parse<kParseFlags | rapidjson::kParseIterativeFlag>(ms, builder)
                     : reader.Parse<kParseFlags>(ms, builder);
    // RapidJSON takes a NUL byte for the end of the text: whatever follows one is not JSON.
    if (!out.result.IsError() && ms.Tell() < text.size()) {
      out.result.Set(rapidjson::kParseErrorDocumentRootNotSingular, ms.Tell());
    }
    out.too_deep = builder.too_deep();
    out.cut = builder.cut();
    return !out.result.IsError();
  };
  doc->Populate(generate);
  return out;
}

// Parse and ParsePruned: the text into `doc` within `limit`.
Status ParseLimited(std::string_view text, Document* doc, DepthLimit limit,
                    std::vector<std::string>* cut) {
  ParseOutcome outcome = ParseInto(text, doc, nullptr, limit);
  if (outcome.result.Code() == rapidjson::kParseErrorNumberTooBig) {
    // RapidJSON refuses numbers beyond double's range even when asked for their text. Parse a
    // copy whose numbers are all "0" padded with spaces (so offsets stay the same) and take
    // each number's text from the original.
    std::vector<std::string_view> originals = NumberTokens(text);
    for (std::string_view token : originals) {
      if (!IsJsonNumber(token)) {
        return InvalidArgument("invalid JSON at offset " +
                               std::to_string(token.data() - text.data()) + ": invalid number \"" +
                               std::string(token.substr(0, 64)) + "\"");
      }
    }
    std::string masked(text);
    size_t offset = 0;
    for (std::string_view token : originals) {
      offset = static_cast<size_t>(token.data() - text.data());
      masked[offset] = '0';
      std::fill_n(masked.begin() + static_cast<std::ptrdiff_t>(offset) + 1, token.size() - 1, ' ');
    }
    outcome = ParseInto(masked, doc, &originals, limit);
  }
  const rapidjson::ParseResult& result = outcome.result;
  if (outcome.too_deep) {
    return InvalidArgument("invalid JSON at offset " + std::to_string(result.Offset()) +
                           ": nested more than " + std::to_string(limit.max) + " levels deep");
  }
  if (result.IsError()) {
    return InvalidArgument("invalid JSON at offset " + std::to_string(result.Offset()) + ": " +
                           rapidjson::GetParseError_En(result.Code()));
  }
  if (cut != nullptr) *cut = std::move(outcome.cut);
  return Status::Ok();
}

}  // namespace

Status Parse(std::string_view text, Document* doc) {
  return ParseLimited(text, doc, DepthLimit{}, nullptr);
}

Status ParsePruned(std::string_view text, size_t max_depth, Document* doc,
                   std::vector<std::string>* cut) {
  DepthLimit limit;
  limit.max = std::clamp<size_t>(max_depth, 1, kMaxDepth);
  limit.prune = true;
  std::vector<std::string> none;
  return ParseLimited(text, doc, limit, cut != nullptr ? cut : &none);
}

std::string JoinPath(const std::vector<std::string>& segments, size_t max_segments) {
  auto append = [](std::string& out, const std::string& segment) {
    if (!out.empty() && (segment.empty() || segment.front() != '[')) out += '.';
    out += segment;
  };
  std::string out;
  const size_t n = segments.size();
  if (max_segments < 4 || n <= max_segments) {
    for (const std::string& s : segments) append(out, s);
    return out;
  }
  // The start says where the nesting begins; the end how it goes on.
  const size_t tail = 2;
  const size_t head = max_segments - tail;
  for (size_t i = 0; i < head; ++i) append(out, segments[i]);
  out += " ...";
  std::string end;
  for (size_t i = n - tail; i < n; ++i) append(end, segments[i]);
  return out + " " + end;
}

// ---------------------------------------------------------------------------------------------
// Writing and comparing

namespace {

// Feeds `root` to a RapidJSON writer without recursion; raw numbers go out as their text.
template <typename W>
void Emit(const Value& root, W& w) {
  struct Frame {
    const Value* container;
    rapidjson::SizeType next;
  };
  std::vector<Frame> stack;
  auto scalar = [&](const Value& v) {
    // Only a valid number goes out unquoted, whatever a string built in code may hold.
    if (IsRawNumber(v) && IsJsonNumber(RawNumberText(v))) {
      std::string_view text = RawNumberText(v);
      w.RawValue(text.data(), text.size(), rapidjson::kNumberType);
    } else {
      v.Accept(w);  // a scalar: no recursion
    }
  };
  auto open = [&](const Value& v) {
    if (v.IsObject()) {
      w.StartObject();
      stack.push_back({&v, 0});
    } else if (v.IsArray()) {
      w.StartArray();
      stack.push_back({&v, 0});
    } else {
      scalar(v);
    }
  };
  open(root);
  while (!stack.empty()) {
    Frame& top = stack.back();
    const Value& c = *top.container;
    if (c.IsObject()) {
      if (top.next == c.MemberCount()) {
        w.EndObject(c.MemberCount());
        stack.pop_back();
        continue;
      }
      const auto& m = c.MemberBegin()[top.next++];
      w.Key(m.name.GetString(), m.name.GetStringLength());
      open(m.value);  // may invalidate `top`
    } else {
      if (top.next == c.Size()) {
        w.EndArray(c.Size());
        stack.pop_back();
        continue;
      }
      open(c[top.next++]);
    }
  }
}

// An object's members sorted by name (stable: repeated names keep their order).
std::vector<std::pair<std::string_view, const Value*>> SortedMembers(const Value& obj) {
  std::vector<std::pair<std::string_view, const Value*>> out;
  out.reserve(obj.MemberCount());
  for (auto m = obj.MemberBegin(); m != obj.MemberEnd(); ++m) {
    out.emplace_back(std::string_view(m->name.GetString(), m->name.GetStringLength()), &m->value);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

}  // namespace

std::string Write(const Value& value) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buf);
  Emit(value, writer);
  return std::string(buf.GetString(), buf.GetSize());
}

std::string WritePretty(const Value& value) {
  rapidjson::StringBuffer buf;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> writer(buf);
  writer.SetIndent(' ', 2);
  Emit(value, writer);
  return std::string(buf.GetString(), buf.GetSize());
}

bool Equal(const Value& a, const Value& b) {
  std::vector<std::pair<const Value*, const Value*>> pending{{&a, &b}};
  while (!pending.empty()) {
    auto [x, y] = pending.back();
    pending.pop_back();
    if (x->GetType() != y->GetType()) return false;  // a raw number is never a typed one
    if (x->IsObject()) {
      if (x->MemberCount() != y->MemberCount()) return false;
      bool same_order = true;
      for (auto mx = x->MemberBegin(), my = y->MemberBegin(); mx != x->MemberEnd(); ++mx, ++my) {
        if (mx->name != my->name) {
          same_order = false;
          break;
        }
      }
      if (same_order) {
        for (auto mx = x->MemberBegin(), my = y->MemberBegin(); mx != x->MemberEnd(); ++mx, ++my) {
          pending.emplace_back(&mx->value, &my->value);
        }
        continue;
      }
      auto sx = SortedMembers(*x);
      auto sy = SortedMembers(*y);
      for (size_t i = 0; i < sx.size(); ++i) {
        if (sx[i].first != sy[i].first) return false;
        pending.emplace_back(sx[i].second, sy[i].second);
      }
    } else if (x->IsArray()) {
      if (x->Size() != y->Size()) return false;
      for (rapidjson::SizeType i = 0; i < x->Size(); ++i) pending.emplace_back(&(*x)[i], &(*y)[i]);
    } else if (!(*x == *y)) {
      return false;
    }
  }
  return true;
}

MemberIndex::MemberIndex(const Value* object) : object_(object) {
  if (object == nullptr || !object->IsObject()) return;
  sorted_.reserve(object->MemberCount());
  size_t i = 0;
  for (auto m = object->MemberBegin(); m != object->MemberEnd(); ++m, ++i) {
    sorted_.emplace_back(std::string_view(m->name.GetString(), m->name.GetStringLength()), i);
  }
  std::stable_sort(sorted_.begin(), sorted_.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
}

std::optional<size_t> MemberIndex::Position(std::string_view name) const {
  auto it = std::lower_bound(sorted_.begin(), sorted_.end(), name,
                             [](const auto& entry, std::string_view n) { return entry.first < n; });
  if (it == sorted_.end() || it->first != name) return std::nullopt;
  return it->second;
}

const Value* MemberIndex::Find(std::string_view name) const {
  std::optional<size_t> at = Position(name);
  if (!at) return nullptr;
  return &object_->MemberBegin()[static_cast<rapidjson::SizeType>(*at)].value;
}

Value* MemberIndex::Find(std::string_view name, Value& object) const {
  std::optional<size_t> at = Position(name);
  if (!at) return nullptr;
  return &object.MemberBegin()[static_cast<rapidjson::SizeType>(*at)].value;
}

std::string Quote(std::string_view s) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buf);
  writer.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
  return std::string(buf.GetString(), buf.GetSize());
}

}  // namespace tephra::json

namespace tephra::json {

void Writer::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.empty()) {
    if (!first_.back()) out_ += ',';
    first_.back() = false;
  }
}

Writer& Writer::StartObject() {
  BeforeValue();
  out_ += '{';
  first_.push_back(true);
  return *this;
}

Writer& Writer::EndObject() {
  out_ += '}';
  first_.pop_back();
  return *this;
}

Writer& Writer::StartArray() {
  BeforeValue();
  out_ += '[';
  first_.push_back(true);
  return *this;
}

Writer& Writer::EndArray() {
  out_ += ']';
  first_.pop_back();
  return *this;
}

Writer& Writer::Key(std::string_view key) {
  BeforeValue();
  out_ += Quote(key);
  out_ += ':';
  after_key_ = true;
  return *this;
}

Writer& Writer::String(std::string_view value) {
  BeforeValue();
  out_ += Quote(value);
  return *this;
}

Writer& Writer::Int(int64_t value) {
  BeforeValue();
  out_ += std::to_string(value);
  return *this;
}

Writer& Writer::Double(double value) {
  BeforeValue();
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.Double(value);
  out_.append(buf.GetString(), buf.GetSize());
  return *this;
}

Writer& Writer::Bool(bool value) {
  BeforeValue();
  out_ += value ? "true" : "false";
  return *this;
}

Writer& Writer::Null() {
  BeforeValue();
  out_ += "null";
  return *this;
}

Writer& Writer::Raw(std::string_view json) {
  BeforeValue();
  out_ += json;
  return *this;
}

Writer& Writer::StringMap(std::string_view key, const std::map<std::string, std::string>& map) {
  Key(key).StartObject();
  for (const auto& [k, v] : map) Key(k).String(v);
  return EndObject();
}

Writer& Writer::StringList(std::string_view key, const std::vector<std::string>& list) {
  Key(key).StartArray();
  for (const auto& v : list) String(v);
  return EndArray();
}

namespace {

// Recursion follows the patch, which Parse bounds to kMaxDepth levels. Members are looked up
// through an index and the object is rebuilt once at the end when members were added or
// removed, so a patch of n members on an object of m costs (n + m) log m, not n * m. The
// target's member array is left alone until then: the index holds views of its names.
void MergeInto(Value& target, const Value& patch, Document::AllocatorType& alloc) {
  if (!patch.IsObject()) {
    target.CopyFrom(patch, alloc);
    return;
  }
  if (!target.IsObject()) target.SetObject();
  struct Added {
    const Value* name;  // the patch's
    Value value;
    char removed = 0;  // as `removed` below
  };
  MemberIndex index(&target);
  std::vector<char> removed(target.MemberCount(), 0);  // of the target's members
  std::vector<Added> added;                            // in patch order
  std::map<std::string_view, size_t> added_at;         // a name the patch repeats
  for (auto it = patch.MemberBegin(); it != patch.MemberEnd(); ++it) {
    std::string_view name(it->name.GetString(), it->name.GetStringLength());
    Value* value = nullptr;
    char* gone = nullptr;
    if (std::optional<size_t> at = index.Position(name)) {
      value = &target.MemberBegin()[static_cast<rapidjson::SizeType>(*at)].value;
      gone = &removed[*at];
    } else if (auto a = added_at.find(name); a != added_at.end()) {
      value = &added[a->second].value;
      gone = &added[a->second].removed;
    } else if (it->value.IsNull()) {
      continue;  // removing a member that is not there
    } else {
      added_at.emplace(name, added.size());
      added.push_back({&it->name, Value(), 0});
      value = &added.back().value;
      gone = &added.back().removed;
    }
    if (it->value.IsNull()) {
      *gone = 1;
      value->SetNull();  // set again later in the patch: starts afresh
      continue;
    }
    *gone = 0;
    MergeInto(*value, it->value, alloc);
  }
  if (added.empty() && std::find(removed.begin(), removed.end(), 1) == removed.end()) return;
  Value merged(rapidjson::kObjectType);
  for (size_t i = 0; i < removed.size(); ++i) {
    if (removed[i]) continue;
    auto& m = target.MemberBegin()[static_cast<rapidjson::SizeType>(i)];
    merged.AddMember(m.name, m.value, alloc);  // moves
  }
  for (Added& a : added) {
    if (a.removed) continue;
    Value key(*a.name, alloc);
    merged.AddMember(key, a.value, alloc);
  }
  target.Swap(merged);
}

}  // namespace

Status ApplyMergePatch(std::string_view target, std::string_view patch, std::string* out) {
  Document t;
  Document p;
  TEPHRA_RETURN_IF_ERROR(Parse(target, &t).WithContext("merge patch target"));
  TEPHRA_RETURN_IF_ERROR(Parse(patch, &p).WithContext("merge patch"));
  MergeInto(t, p, t.GetAllocator());
  *out = Write(t);
  return Status::Ok();
}

}  // namespace tephra::json
