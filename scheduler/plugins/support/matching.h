// Matching rules shared by predicates and scoring: label selectors, node selector terms,
// taints and tolerations, exactly as Kubernetes defines them.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "api/core.h"

namespace tephra::scheduler {

using Labels = std::map<std::string, std::string>;

// metav1.LabelSelector matching lives in api/ (the controllers resolve HyperNode members too).
using api::MatchesLabelSelector;

// One NodeSelectorTerm: every matchExpression (In, NotIn, Exists, DoesNotExist, Gt, Lt) on the
// node's labels and every matchField (metadata.name) must hold. An empty term matches nothing.
bool MatchesNodeSelectorTerm(const api::NodeSelectorTerm& term, const Labels& node_labels,
                             const std::string& node_name);

// spec.nodeSelector and the required node affinity (terms are ORed).
bool MatchesNodeSelectorAndAffinity(const std::map<std::string, std::string>& node_selector,
                                    const std::optional<api::Affinity>& affinity,
                                    const Labels& node_labels, const std::string& node_name);

bool Tolerates(const api::Toleration& toleration, const api::Taint& taint);
// The first taint with one of `effects` that no toleration tolerates, or nullptr.
const api::Taint* UntoleratedTaint(const std::vector<api::Taint>& taints,
                                   const std::vector<api::Toleration>& tolerations,
                                   const std::vector<std::string_view>& effects);

}  // namespace tephra::scheduler
