#include "controllers/hypernode/discovery_config.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include <yaml-cpp/yaml.h>

#include "api/validation.h"
#include "base/time.h"

namespace tephra::controllers::hypernode {
namespace {

constexpr std::string_view kList = "networkTopologyDiscovery";

// YAML aliases can make a short text name the same long list many times; every value visited
// spends from a budget of the text's size, so the work stays linear in the text.
struct Budget {
  size_t left;
  Status Spend(size_t n, const std::string& where) {
    if (n > left) return InvalidArgument(where + ": too many values once aliases are expanded");
    left -= n;
    return Status::Ok();
  }
};

StatusOr<bool> ParseBool(const YAML::Node& v, const std::string& where) {
  if (v.IsScalar()) {
    const std::string& s = v.Scalar();
    if (s == "true" || s == "True" || s == "TRUE") return true;
    if (s == "false" || s == "False" || s == "FALSE") return false;
  }
  return InvalidArgument(where + ": must be true or false");
}

StatusOr<LabelTopology> ParseTopology(const std::string& name, const YAML::Node& levels,
                                      const std::string& where, Budget* budget) {
  if (levels.IsMap()) {
    return InvalidArgument(where +
                           ": the profile form (nodeSelector, levels) is not supported by this "
                           "build; give the list of {nodeLabel: ...} from the highest tier down");
  }
  if (!levels.IsSequence()) return InvalidArgument(where + ": must be a list of {nodeLabel: KEY}");
  TEPHRA_RETURN_IF_ERROR(budget->Spend(levels.size(), where));
  if (levels.size() < 2) {
    return InvalidArgument(where +
                           ": needs at least two entries, the tiers from the highest down and "
                           "then the node level (e.g. kubernetes.io/hostname)");
  }
  LabelTopology topology;
  topology.name = name;
  std::set<std::string> seen;
  for (size_t i = 0; i < levels.size(); ++i) {
    const std::string at = where + "[" + std::to_string(i) + "].nodeLabel";
    const YAML::Node level = levels[i];
    if (!level.IsMap())
      return InvalidArgument(where + "[" + std::to_string(i) + "]: must be a mapping");
    const YAML::Node key = level["nodeLabel"];
    if (!key || !key.IsScalar() || key.Scalar().empty())
      return InvalidArgument(at + ": is required");
    if (auto problems = api::QualifiedNameProblems(key.Scalar()); !problems.empty()) {
      return InvalidArgument(at + ": \"" + key.Scalar() +
                             "\" is not a label key: " + problems.front());
    }
    if (!seen.insert(key.Scalar()).second) {
      return InvalidArgument(at + ": \"" + key.Scalar() + "\" appears twice in the topology");
    }
    topology.node_labels.push_back(key.Scalar());
  }
  return topology;
}

Status ParseLabelConfig(const YAML::Node& config, const std::string& where, Budget* budget,
                        DiscoveryConfig* out) {
  if (!config || !config.IsMap()) {
    return InvalidArgument(where + ": must be a mapping with networkTopologyTypes");
  }
  const YAML::Node types = config["networkTopologyTypes"];
  const std::string types_at = where + ".networkTopologyTypes";
  if (!types || types.IsNull()) return InvalidArgument(types_at + ": is required");
  if (!types.IsMap()) return InvalidArgument(types_at + ": must map topology names to lists");
  TEPHRA_RETURN_IF_ERROR(budget->Spend(types.size(), types_at));
  for (const auto& kv : types) {
    if (!kv.first.IsScalar() || kv.first.Scalar().empty()) {
      return InvalidArgument(types_at + ": topology names must be non-empty strings");
    }
    const std::string name = kv.first.Scalar();
    StatusOr<LabelTopology> topology =
        ParseTopology(name, kv.second, types_at + "." + name, budget);
    if (!topology.ok()) return topology.status();
    out->label_topologies.push_back(*std::move(topology));
  }
  if (out->label_topologies.empty()) return InvalidArgument(types_at + ": names no topology");
  std::map<std::string, std::string> lowered;  // HyperNode names use the lowercased name
  for (const LabelTopology& t : out->label_topologies) {
    std::string lower = t.name;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    auto [it, fresh] = lowered.emplace(lower, t.name);
    if (!fresh) {
      return InvalidArgument(types_at + "." + t.name + ": differs from \"" + it->second +
                             "\" only in case; their HyperNode names would clash");
    }
  }
  std::sort(out->label_topologies.begin(), out->label_topologies.end(),
            [](const LabelTopology& a, const LabelTopology& b) { return a.name < b.name; });
  return Status::Ok();
}

StatusOr<DiscoveryConfig> ParseDocument(const YAML::Node& doc, Budget* budget) {
  DiscoveryConfig out;
  if (!doc || doc.IsNull()) return out;
  if (!doc.IsMap()) return InvalidArgument(std::string(kConfigKey) + ": must be a mapping");
  const YAML::Node list = doc[std::string(kList)];
  if (!list || list.IsNull()) return out;
  if (!list.IsSequence()) return InvalidArgument(std::string(kList) + ": must be a list");
  TEPHRA_RETURN_IF_ERROR(budget->Spend(list.size(), std::string(kList)));
  std::set<std::string> seen;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string where = std::string(kList) + "[" + std::to_string(i) + "]";
    const YAML::Node entry = list[i];
    if (!entry.IsMap()) return InvalidArgument(where + ": must be a mapping");
    DiscoverySource source;
    const YAML::Node name = entry["source"];
    if (!name || !name.IsScalar() || name.Scalar().empty()) {
      return InvalidArgument(where + ".source: is required (ufm, roce or label)");
    }
    source.source = name.Scalar();
    if (source.source != kSourceLabel && source.source != kSourceUfm &&
        source.source != kSourceRoce) {
      return InvalidArgument(where + ".source: unknown source \"" + source.source +
                             "\" (ufm, roce or label)");
    }
    if (!seen.insert(source.source).second) {
      return InvalidArgument(where + ".source: \"" + source.source + "\" is listed twice");
    }
    if (const YAML::Node enabled = entry["enabled"]; enabled && !enabled.IsNull()) {
      StatusOr<bool> b = ParseBool(enabled, where + ".enabled");
      if (!b.ok()) return b.status();
      source.enabled = *b;
    }
    if (const YAML::Node interval = entry["interval"]; interval && !interval.IsNull()) {
      const std::string at = where + ".interval";
      if (!interval.IsScalar()) return InvalidArgument(at + ": must be a duration such as 10m");
      StatusOr<std::chrono::nanoseconds> d = base::ParseDuration(interval.Scalar());
      if (!d.ok()) return InvalidArgument(at + ": " + d.status().message());
      if (d->count() <= 0) return InvalidArgument(at + ": must be above zero");
      source.interval = *d;
    }
    if (const YAML::Node creds = entry["credentials"]; creds && !creds.IsNull() && !creds.IsMap()) {
      return InvalidArgument(where + ".credentials: must be a mapping (secretRef)");
    }
    if (source.enabled && source.source == kSourceLabel) {
      TEPHRA_RETURN_IF_ERROR(ParseLabelConfig(entry["config"], where + ".config", budget, &out));
      out.label_enabled = true;
      out.label_interval = source.interval;
    } else if (source.enabled) {
      out.unavailable.push_back(source.source);
    }
    out.sources.push_back(std::move(source));
  }
  return out;
}

}  // namespace

StatusOr<DiscoveryConfig> ParseDiscoveryConfig(std::string_view yaml) {
  try {
    YAML::Node doc = YAML::Load(std::string(yaml));
    Budget budget{yaml.size() + 16};
    return ParseDocument(doc, &budget);
  } catch (const YAML::Exception& e) {
    return InvalidArgument(std::string(kConfigKey) + ": " + e.what());
  }
}

}  // namespace tephra::controllers::hypernode
