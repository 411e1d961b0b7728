// How tephractl prints: kubectl-style tables, and objects as YAML or JSON; and the YAML <-> JSON
// conversions behind `-o yaml` and `job run -f manifest.yaml`.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "base/time.h"

namespace tephra::cli {

enum class OutputFormat { kTable, kYaml, kJson };

// "table" (also "" and "wide"), "yaml", "json"; the error names --output and the choices.
StatusOr<OutputFormat> ParseOutputFormat(std::string_view text);

// Columns padded to the widest cell plus three spaces, as kubectl prints them.
class Table {
 public:
  explicit Table(std::vector<std::string> headers) : headers_(std::move(headers)) {}
  void Add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  bool empty() const { return rows_.empty(); }
  std::string Render() const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

// JSON text -> YAML block text (strings that would read back as another type are quoted).
StatusOr<std::string> JsonToYaml(std::string_view json);
// The first YAML document -> compact JSON. Plain scalars become numbers, booleans or null when
// they read as one; quoted scalars stay strings.
StatusOr<std::string> YamlToJson(std::string_view yaml);
// Indented JSON (two spaces), with a final newline.
StatusOr<std::string> PrettyJson(std::string_view json);

// kubectl's age format: 45s, 12m, 5h, 3d, 2y.
std::string Age(base::Time since, base::Time now);

}  // namespace tephra::cli
