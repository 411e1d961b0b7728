#include "api/json_patch.h"

#include <rapidjson/document.h>

#include "kube/json.h"

namespace tephra::api {
namespace {

using rapidjson::SizeType;

void Diff(const json::Value& a, const json::Value& b, const std::string& path, JsonPatch* out) {
  if (a == b) return;
  if (a.IsObject() && b.IsObject()) {
    for (auto m = a.MemberBegin(); m != a.MemberEnd(); ++m) {
      if (!b.HasMember(m->name)) {
        out->push_back({"remove",
                        path + "/" + EscapeJsonPointer({m->name.GetString(), m->name.GetStringLength()}),
                        ""});
      }
    }
    for (auto m = b.MemberBegin(); m != b.MemberEnd(); ++m) {
      std::string child =
          path + "/" + EscapeJsonPointer({m->name.GetString(), m->name.GetStringLength()});
      auto old = a.FindMember(m->name);
      if (old == a.MemberEnd()) {
        out->push_back({"add", child, json::Write(m->value)});
      } else {
        Diff(old->value, m->value, child, out);
      }
    }
    return;
  }
  if (a.IsArray() && b.IsArray() && a.Size() == b.Size()) {
    for (SizeType i = 0; i < a.Size(); ++i) Diff(a[i], b[i], path + "/" + std::to_string(i), out);
    return;
  }
  out->push_back({"replace", path, json::Write(b)});
}

Status PatchError(const PatchOp& op, std::string_view why) {
  return InvalidArgument("json patch " + op.op + " " + op.path + ": " + std::string(why));
}

// Splits a JSON Pointer into unescaped reference tokens.
StatusOr<std::vector<std::string>> ParsePointer(const PatchOp& op) {
  std::vector<std::string> tokens;
  if (op.path.empty()) return tokens;
  if (op.path[0] != '/') return PatchError(op, "a JSON pointer starts with '/'");
  size_t start = 1;
  while (true) {
    size_t slash = op.path.find('/', start);
    std::string raw = op.path.substr(start, slash == std::string::npos ? slash : slash - start);
    std::string token;
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '~' && i + 1 < raw.size() && (raw[i + 1] == '0' || raw[i + 1] == '1')) {
        token += raw[i + 1] == '0' ? '~' : '/';
        ++i;
      } else if (raw[i] == '~') {
        return PatchError(op, "'~' must be followed by 0 or 1");
      } else {
        token += raw[i];
      }
    }
    tokens.push_back(std::move(token));
    if (slash == std::string::npos) return tokens;
    start = slash + 1;
  }
}

bool ArrayIndex(const std::string& token, SizeType size, bool allow_end, SizeType* out) {
  if (allow_end && token == "-") {
    *out = size;
    return true;
  }
  if (token.empty() || token.size() > 9 || (token.size() > 1 && token[0] == '0')) return false;
  SizeType v = 0;
  for (char c : token) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<SizeType>(c - '0');
  }
  *out = v;
  return allow_end ? v <= size : v < size;
}

Status ApplyOne(json::Document* doc, const PatchOp& op) {
  TEPHRA_ASSIGN_OR_RETURN(std::vector<std::string> tokens, ParsePointer(op));
  auto& alloc = doc->GetAllocator();
  json::Value value;
  if (op.op == "add" || op.op == "replace" || op.op == "test") {
    json::Document parsed;
    if (!json::Parse(op.value_json, &parsed).ok()) return PatchError(op, "invalid value");
    value.CopyFrom(parsed, alloc);
  } else if (op.op != "remove") {
    return PatchError(op, "unsupported operation");
  }
  if (tokens.empty()) {
    if (op.op == "test") return *doc == value ? Status::Ok() : PatchError(op, "test failed");
    if (op.op == "remove") return PatchError(op, "cannot remove the whole document");
    static_cast<json::Value*>(doc)->Swap(value);
    return Status::Ok();
  }
  json::Value* parent = doc;
  for (size_t i = 0; i + 1 < tokens.size(); ++i) {
    if (parent->IsObject()) {
      auto it = parent->FindMember(json::Value(tokens[i].data(),
                                               static_cast<SizeType>(tokens[i].size())));
      if (it == parent->MemberEnd()) return PatchError(op, "\"" + tokens[i] + "\" not found");
      parent = &it->value;
    } else if (parent->IsArray()) {
      SizeType index;
      if (!ArrayIndex(tokens[i], parent->Size(), false, &index)) {
        return PatchError(op, "bad array index \"" + tokens[i] + "\"");
      }
      parent = &(*parent)[index];
    } else {
      return PatchError(op, "\"" + tokens[i] + "\" is not inside an object or array");
    }
  }
  const std::string& last = tokens.back();
  if (parent->IsObject()) {
    json::Value key(last.data(), static_cast<SizeType>(last.size()), alloc);
    auto it = parent->FindMember(key);
    bool exists = it != parent->MemberEnd();
    if (op.op == "add") {
      if (exists) {
        it->value = value;
      } else {
        parent->AddMember(key, value, alloc);
      }
      return Status::Ok();
    }
    if (!exists) return PatchError(op, "\"" + last + "\" not found");
    if (op.op == "remove") {
      parent->EraseMember(it);
    } else if (op.op == "replace") {
      it->value = value;
    } else if (!(it->value == value)) {
      return PatchError(op, "test failed");
    }
    return Status::Ok();
  }
  if (parent->IsArray()) {
    SizeType index;
    bool add = op.op == "add";
    if (!ArrayIndex(last, parent->Size(), add, &index)) {
      return PatchError(op, "bad array index \"" + last + "\"");
    }
    if (add) {
      parent->PushBack(json::Value(), alloc);
      for (SizeType i = parent->Size() - 1; i > index; --i) (*parent)[i].Swap((*parent)[i - 1]);
      (*parent)[index] = value;
    } else if (op.op == "remove") {
      parent->Erase(parent->Begin() + index);
    } else if (op.op == "replace") {
      (*parent)[index] = value;
    } else if (!((*parent)[index] == value)) {
      return PatchError(op, "test failed");
    }
    return Status::Ok();
  }
  return PatchError(op, "the parent is not an object or array");
}

}  // namespace

std::string EscapeJsonPointer(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

std::string RenderJsonPatch(const JsonPatch& patch) {
  json::Writer w;
  w.StartArray();
  for (const PatchOp& op : patch) {
    w.StartObject().Field("op", op.op).Field("path", op.path);
    if (!op.value_json.empty()) w.Key("value").Raw(op.value_json);
    w.EndObject();
  }
  w.EndArray();
  return w.Take();
}

StatusOr<JsonPatch> DiffJson(std::string_view before, std::string_view after) {
  json::Document a;
  json::Document b;
  TEPHRA_RETURN_IF_ERROR(json::Parse(before, &a).WithContext("diff: before"));
  TEPHRA_RETURN_IF_ERROR(json::Parse(after, &b).WithContext("diff: after"));
  JsonPatch patch;
  Diff(a, b, "", &patch);
  return patch;
}

StatusOr<std::string> ApplyJsonPatch(std::string_view document, const JsonPatch& patch) {
  json::Document doc;
  TEPHRA_RETURN_IF_ERROR(json::Parse(document, &doc).WithContext("json patch target"));
  for (const PatchOp& op : patch) TEPHRA_RETURN_IF_ERROR(ApplyOne(&doc, op));
  return json::Write(doc);
}

}  // namespace tephra::api
