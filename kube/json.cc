#include "kube/json.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
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

namespace {

const char* TypeName(const Value* v) {
  if (v == nullptr) return "nothing";
  switch (v->GetType()) {
    case rapidjson::kNullType: return "null";
    case rapidjson::kFalseType:
    case rapidjson::kTrueType: return "boolean";
    case rapidjson::kObjectType: return "object";
    case rapidjson::kArrayType: return "array";
    case rapidjson::kStringType: return "string";
    case rapidjson::kNumberType: return v->IsInt64() || v->IsUint64() ? "integer" : "number";
  }
  return "unknown";
}

}  // namespace

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

bool Reader::present() const { return value_ != nullptr && !value_->IsNull(); }
bool Reader::is_object() const { return value_ != nullptr && value_->IsObject(); }
bool Reader::is_array() const { return value_ != nullptr && value_->IsArray(); }
bool Reader::is_string() const { return value_ != nullptr && value_->IsString(); }

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
  if (!present() || !Expect(value_->IsString(), "string")) return std::string(fallback);
  return std::string(value_->GetString(), value_->GetStringLength());
}

int64_t Reader::Int(int64_t fallback) const {
  if (!present()) return fallback;
  if (value_->IsInt64()) return value_->GetInt64();
  // Some writers emit integral values as 3.0; accept those, reject 3.5 and overflow.
  if (value_->IsDouble()) {
    double d = value_->GetDouble();
    if (std::floor(d) == d && std::fabs(d) < 9.2e18) return static_cast<int64_t>(d);
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
  if (!present() || !Expect(value_->IsNumber(), "number")) return fallback;
  return value_->GetDouble();
}

bool Reader::Bool(bool fallback) const {
  if (!present() || !Expect(value_->IsBool(), "boolean")) return fallback;
  return value_->GetBool();
}

std::optional<std::string> Reader::OptString() const {
  if (!present() || !Expect(value_->IsString(), "string")) return std::nullopt;
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
    if (!it->value.IsString()) {
      (*this)[key].Expect(false, "string");
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
    if (e.Expect(e.value_->IsString(), "string")) {
      out.emplace_back(e.value_->GetString(), e.value_->GetStringLength());
    }
  }
  return out;
}

size_t Reader::size() const { return is_array() ? value_->Size() : 0; }

void Reader::ForEach(const std::function<void(const Reader&)>& fn) const {
  if (!present() || !Expect(value_->IsArray(), "array")) return;
  for (size_t i = 0; i < value_->Size(); ++i) fn((*this)[i]);
}

void Reader::ForEachMember(
    const std::function<void(std::string_view, const Reader&)>& fn) const {
  if (!present() || !Expect(value_->IsObject(), "object")) return;
  for (auto it = value_->MemberBegin(); it != value_->MemberEnd(); ++it) {
    std::string_view key(it->name.GetString(), it->name.GetStringLength());
    fn(key, (*this)[key]);
  }
}

Status Parse(std::string_view text, Document* doc) {
  doc->Parse(text.data(), text.size());
  if (doc->HasParseError()) {
    return InvalidArgument("invalid JSON at offset " + std::to_string(doc->GetErrorOffset()) +
                           ": " + rapidjson::GetParseError_En(doc->GetParseError()));
  }
  return Status::Ok();
}

std::string Write(const Value& value) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buf);
  value.Accept(writer);
  return std::string(buf.GetString(), buf.GetSize());
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

void MergeInto(Value& target, const Value& patch, Document::AllocatorType& alloc) {
  if (!patch.IsObject()) {
    target.CopyFrom(patch, alloc);
    return;
  }
  if (!target.IsObject()) target.SetObject();
  for (auto it = patch.MemberBegin(); it != patch.MemberEnd(); ++it) {
    auto existing = target.FindMember(it->name);
    if (it->value.IsNull()) {
      if (existing != target.MemberEnd()) target.RemoveMember(existing);
      continue;
    }
    if (existing == target.MemberEnd()) {
      Value key(it->name, alloc);
      Value empty;
      target.AddMember(key, empty, alloc);
      existing = target.FindMember(it->name);
    }
    MergeInto(existing->value, it->value, alloc);
  }
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
