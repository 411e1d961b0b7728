#include "cli/output.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include <rapidjson/document.h>
#include <yaml-cpp/yaml.h>

#include "json/json.h"

namespace tephra::cli {
namespace {

// Whether a plain YAML scalar with this text would read back as something other than a string.
bool NeedsQuotes(const std::string& s) {
  if (s.empty()) return true;
  static const char* kSpecial[] = {"true", "false", "True", "False", "TRUE", "FALSE", "yes",
                                   "no",   "Yes",   "No",   "YES",   "NO",   "on",    "off",
                                   "On",   "Off",   "ON",   "OFF",   "null", "Null",  "NULL",
                                   "~",    "y",     "n",    "Y",     "N"};
  for (const char* k : kSpecial) {
    if (s == k) return true;
  }
  char* end = nullptr;
  std::strtod(s.c_str(), &end);
  if (end != nullptr && *end == '\0') return true;  // a number
  if (s.front() == ' ' || s.back() == ' ') return true;
  return false;
}

void EmitJson(YAML::Emitter& out, const json::Value& v) {
  if (v.IsObject()) {
    out << YAML::BeginMap;
    for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
      out << YAML::Key << std::string(it->name.GetString(), it->name.GetStringLength())
          << YAML::Value;
      EmitJson(out, it->value);
    }
    out << YAML::EndMap;
  } else if (v.IsArray()) {
    out << YAML::BeginSeq;
    for (const auto& e : v.GetArray()) EmitJson(out, e);
    out << YAML::EndSeq;
  } else if (json::IsRawNumber(v)) {
    out << std::string(json::RawNumberText(v));
  } else if (v.IsString()) {
    std::string s(v.GetString(), v.GetStringLength());
    if (NeedsQuotes(s)) {
      out << YAML::DoubleQuoted << s;
    } else {
      out << s;
    }
  } else if (v.IsBool()) {
    out << (v.GetBool() ? "true" : "false");
  } else if (v.IsNull()) {
    out << YAML::Null;
  } else if (v.IsInt64()) {
    out << v.GetInt64();
  } else if (v.IsUint64()) {
    out << v.GetUint64();
  } else {
    out << v.GetDouble();
  }
}

// A plain scalar that is a YAML 1.2 core-schema integer, float, boolean or null.
void WriteScalar(json::Writer& w, const YAML::Node& node) {
  const std::string& s = node.Scalar();
  if (node.Tag() == "!") {  // quoted
    w.String(s);
    return;
  }
  if (s == "true" || s == "True" || s == "TRUE") {
    w.Bool(true);
    return;
  }
  if (s == "false" || s == "False" || s == "FALSE") {
    w.Bool(false);
    return;
  }
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") {
    w.Null();
    return;
  }
  char* end = nullptr;
  errno = 0;
  long long i = std::strtoll(s.c_str(), &end, 10);
  if (end != nullptr && *end == '\0' && errno == 0) {
    w.Int(i);
    return;
  }
  double d = std::strtod(s.c_str(), &end);
  if (end != nullptr && *end == '\0' && std::isfinite(d) &&
      s.find_first_of("0123456789") != std::string::npos &&
      s.find_first_not_of("0123456789.eE+-") == std::string::npos) {
    w.Double(d);
    return;
  }
  w.String(s);
}

void WriteYamlNode(json::Writer& w, const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      w.StartObject();
      for (const auto& kv : node) {
        w.Key(kv.first.Scalar());
        WriteYamlNode(w, kv.second);
      }
      w.EndObject();
      break;
    case YAML::NodeType::Sequence:
      w.StartArray();
      for (const auto& e : node) WriteYamlNode(w, e);
      w.EndArray();
      break;
    case YAML::NodeType::Scalar:
      WriteScalar(w, node);
      break;
    default:
      w.Null();
  }
}

}  // namespace

StatusOr<OutputFormat> ParseOutputFormat(std::string_view text) {
  if (text.empty() || text == "table" || text == "wide") return OutputFormat::kTable;
  if (text == "yaml") return OutputFormat::kYaml;
  if (text == "json") return OutputFormat::kJson;
  return InvalidArgument("--output: must be one of table, yaml, json; got \"" + std::string(text) +
                         "\"");
}

std::string Table::Render() const {
  std::vector<size_t> width(headers_.size(), 0);
  auto measure = [&](const std::vector<std::string>& row) {
    for (size_t i = 0; i < row.size() && i < width.size(); ++i)
      width[i] = std::max(width[i], row[i].size());
  };
  measure(headers_);
  for (const auto& r : rows_) measure(r);
  std::string out;
  auto line = [&](const std::vector<std::string>& row) {
    std::string l;
    for (size_t i = 0; i < width.size(); ++i) {
      std::string cell = i < row.size() ? row[i] : "";
      l += cell;
      if (i + 1 < width.size()) l += std::string(width[i] - cell.size() + 3, ' ');
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l + "\n";
  };
  line(headers_);
  for (const auto& r : rows_) line(r);
  return out;
}

StatusOr<std::string> JsonToYaml(std::string_view text) {
  json::Document doc;
  TEPHRA_RETURN_IF_ERROR(json::Parse(text, &doc));
  YAML::Emitter out;
  EmitJson(out, doc);
  if (!out.good()) return Internal("yaml: " + out.GetLastError());
  return std::string(out.c_str()) + "\n";
}

StatusOr<std::string> YamlToJson(std::string_view text) {
  try {
    YAML::Node node = YAML::Load(std::string(text));
    if (!node.IsMap()) return InvalidArgument("expected a YAML or JSON object");
    json::Writer w;
    WriteYamlNode(w, node);
    return w.Take();
  } catch (const YAML::Exception& e) {
    return InvalidArgument("line " + std::to_string(e.mark.line + 1) + ", column " +
                           std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
}

StatusOr<std::string> PrettyJson(std::string_view text) {
  json::Document doc;
  TEPHRA_RETURN_IF_ERROR(json::Parse(text, &doc));
  return json::WritePretty(doc) + "\n";
}

std::string Age(base::Time since, base::Time now) {
  auto s = std::chrono::duration_cast<std::chrono::seconds>(now - since).count();
  if (s < 0) s = 0;
  if (s < 120) return std::to_string(s) + "s";
  if (s < 120 * 60) return std::to_string(s / 60) + "m";
  if (s < 48 * 3600) return std::to_string(s / 3600) + "h";
  if (s < 365LL * 86400 * 2) return std::to_string(s / 86400) + "d";
  return std::to_string(s / (365LL * 86400)) + "y";
}

}  // namespace tephra::cli
