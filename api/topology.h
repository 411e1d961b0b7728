// Volcano's topology.volcano.sh/v1alpha1 HyperNode: a named group of nodes or of other
// HyperNodes at one tier of the network (docs/compatibility.md §1.7), and its admission rules
// (§3.8).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/codec.h"
#include "api/core.h"
#include "api/validation.h"
#include "base/status.h"
#include "json/json.h"
#include "kube/meta/object.h"

namespace tephra::api {

inline constexpr std::string_view kTopologyApiVersion = "topology.volcano.sh/v1alpha1";
inline constexpr std::string_view kHyperNodeKind = "HyperNode";
inline constexpr std::string_view kHyperNodeMemberNode = "Node";
inline constexpr std::string_view kHyperNodeMemberHyperNode = "HyperNode";

// Which nodes (or HyperNodes) a member stands for: exactly one of the three.
struct MemberSelector {
  std::optional<std::string> exact_name;     // exactMatch.name
  std::optional<std::string> regex_pattern;  // regexMatch.pattern (Go regexp syntax)
  std::optional<LabelSelector> label_match;  // labelMatch (Node members only)
};

struct HyperNodeMember {
  std::string type;  // Node or HyperNode
  MemberSelector selector;
};

struct HyperNode : public kube::Object {
  struct Spec {
    int64_t tier = 0;
    std::string tier_name;
    std::vector<HyperNodeMember> members;
  } spec;
  struct Status {
    int64_t node_count = 0;
  } status;
};

StatusOr<std::shared_ptr<HyperNode>> DecodeHyperNode(const json::Value& value,
                                                     const DecodeOptions& options = {});
StatusOr<std::shared_ptr<HyperNode>> DecodeHyperNode(std::string_view text,
                                                     const DecodeOptions& options = {});

// The object as JSON: its raw text (unknown fields, status.conditions kept) with the modelled
// fields written over it.
std::string EncodeHyperNode(const HyperNode& hn);

// CREATE and UPDATE (Volcano's /hypernodes/validate, with its CRD's rules): at least one member;
// each member of type Node or HyperNode with exactly one selector; an exactMatch name that is a
// qualified name; a regexMatch pattern that compiles (Go syntax). A HyperNode member named by
// a pattern or labels is accepted, as Volcano does, though only exactMatch names HyperNodes.
FieldErrors ValidateHyperNode(const HyperNode& hn);

// A node as HyperNode members select it: by name or by labels.
struct TopologyNode {
  std::string name;
  const std::map<std::string, std::string>* labels = nullptr;
};

// The nodes under each of `hypernodes` (indexes into `nodes`, ascending). Node members select
// by exactMatch name, regexMatch pattern (Go's MatchString: it may match anywhere in the name;
// one that does not compile selects nothing) or labelMatch; HyperNode members are followed by
// exactMatch name only, down to the nodes, cycles cut. A member that names nothing adds
// nothing. Work: one pass of each pattern or label member over the nodes, then one walk per
// HyperNode over what lies beneath it, with an explicit stack.
std::vector<std::vector<uint32_t>> NodesUnder(
    const std::vector<std::shared_ptr<const HyperNode>>& hypernodes,
    const std::vector<TopologyNode>& nodes);

}  // namespace tephra::api
