// The HyperNode discovery configuration: the `networkTopologyDiscovery` list of Volcano's
// controller configuration file (docs/compatibility.md §2.10). Parsing is pure and linear in
// the text (aliases included); errors name the field and the rule.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace tephra::controllers::hypernode {

// The ConfigMap key Volcano's controller reads its configuration from.
inline constexpr std::string_view kConfigKey = "volcano-controller.conf";

inline constexpr std::string_view kSourceLabel = "label";
inline constexpr std::string_view kSourceUfm = "ufm";
inline constexpr std::string_view kSourceRoce = "roce";

// Volcano's default when `interval` is not given.
inline constexpr std::chrono::hours kDefaultInterval{1};

// One entry of config.networkTopologyTypes: node label keys from the highest tier down to the
// leaf (usually kubernetes.io/hostname). At least two keys, each once; no two topology names
// equal once lowercased.
struct LabelTopology {
  std::string name;
  std::vector<std::string> node_labels;
};

struct DiscoverySource {
  std::string source;  // ufm, roce or label
  bool enabled = false;
  std::chrono::nanoseconds interval{kDefaultInterval};
};

struct DiscoveryConfig {
  std::vector<DiscoverySource> sources;  // in file order
  // The label source, when present and enabled.
  bool label_enabled = false;
  std::chrono::nanoseconds label_interval{kDefaultInterval};
  std::vector<LabelTopology> label_topologies;  // sorted by name
  // Enabled sources this build does not implement (ufm, roce).
  std::vector<std::string> unavailable;
};

// Parses the text of `volcano-controller.conf`. Keys other than networkTopologyDiscovery are
// ignored (the file is shared with other controller settings); an empty text or a missing list
// means no discovery. The label source's config is checked only when it is enabled.
StatusOr<DiscoveryConfig> ParseDiscoveryConfig(std::string_view yaml);

}  // namespace tephra::controllers::hypernode
