#include "api/json_patch.h"

#include <rapidjson/document.h>

#include "json/json.h"

namespace tephra::api {
namespace {

using rapidjson::SizeType;

// The operations turning `a` into `b`, in document order: for an object, its removed members,
// then each member of `b` (added, or compared in depth); arrays of equal length element by
// element; anything else different is replaced. Iterative, with an index per object pair and
// each path spelled out only for an operation, so n log n in the documents' size whatever
// their shape.
void Diff(const json::Value& a, const json::Value& b, JsonPatch* out) {
  // One visited position: its parent's position and its own token.
  struct Position {
    size_t parent;
    std::string_view name;  // a member's name, or empty for an array index
    SizeType index;
  };
  std::vector<Position> positions{{0, {}, 0}};  // the root
  auto path_of = [&](size_t at) {
    std::vector<size_t> chain;
    for (; at != 0; at = positions[at].parent) chain.push_back(at);
    std::string path;
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      const Position& p = positions[*it];
      path += '/';
      path += p.name.data() != nullptr ? EscapeJsonPointer(p.name) : std::to_string(p.index);
    }
    return path;
  };
  auto name_of = [](const json::Value& name) {
    return std::string_view(name.GetString(), name.GetStringLength());
  };
  struct Step {
    const json::Value* a;  // null: b is a member to add
    const json::Value* b;
    size_t at;
  };
  std::vector<Step> pending{{&a, &b, 0}};
  while (!pending.empty()) {
    Step step = pending.back();
    pending.pop_back();
    const json::Value* x = step.a;
    const json::Value* y = step.b;
    if (x == nullptr) {
      out->push_back({"add", path_of(step.at), json::Write(*y)});
    } else if (x->IsObject() && y->IsObject()) {
      json::MemberIndex in_x(x);
      json::MemberIndex in_y(y);
      for (auto m = x->MemberBegin(); m != x->MemberEnd(); ++m) {
        if (in_y.Find(name_of(m->name)) == nullptr) {
          positions.push_back({step.at, name_of(m->name), 0});
          out->push_back({"remove", path_of(positions.size() - 1), ""});
        }
      }
      // Reversed, so that the first member is diffed first.
      for (auto m = y->MemberEnd(); m != y->MemberBegin();) {
        --m;
        positions.push_back({step.at, name_of(m->name), 0});
        pending.push_back({in_x.Find(name_of(m->name)), &m->value, positions.size() - 1});
      }
    } else if (x->IsArray() && y->IsArray() && x->Size() == y->Size()) {
      for (SizeType i = x->Size(); i-- > 0;) {
        positions.push_back({step.at, {}, i});
        pending.push_back({&(*x)[i], &(*y)[i], positions.size() - 1});
      }
    } else if (!json::Equal(*x, *y)) {
      out->push_back({"replace", path_of(step.at), json::Write(*y)});
    }
  }
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
    if (op.op == "test") {
      return json::Equal(*doc, value) ? Status::Ok() : PatchError(op, "test failed");
    }
    if (op.op == "remove") return PatchError(op, "cannot remove the whole document");
    static_cast<json::Value*>(doc)->Swap(value);
    return Status::Ok();
  }
  json::Value* parent = doc;
  for (size_t i = 0; i + 1 < tokens.size(); ++i) {
    if (parent->IsObject()) {
      auto it = parent->FindMember(
          json::Value(tokens[i].data(), static_cast<SizeType>(tokens[i].size())));
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
    } else if (!json::Equal(it->value, value)) {
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
    } else if (!json::Equal((*parent)[index], value)) {
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
  Diff(a, b, &patch);
  return patch;
}

StatusOr<std::string> ApplyJsonPatch(std::string_view document, const JsonPatch& patch) {
  json::Document doc;
  TEPHRA_RETURN_IF_ERROR(json::Parse(document, &doc).WithContext("json patch target"));
  for (const PatchOp& op : patch) TEPHRA_RETURN_IF_ERROR(ApplyOne(&doc, op));
  return json::Write(doc);
}

}  // namespace tephra::api
