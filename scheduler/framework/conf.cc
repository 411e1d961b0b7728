#include "scheduler/framework/conf.h"

#include <algorithm>
#include <cstdlib>

#include <yaml-cpp/yaml.h>

#include "base/strings.h"
#include "base/suggest.h"
#include "base/time.h"

namespace tephra::scheduler {

bool Arguments::Has(const std::string& key) const {
  Ask(key);
  return values_.count(key) != 0;
}

std::string Arguments::GetString(const std::string& key, const std::string& fallback) const {
  Ask(key);
  auto it = values_.find(key);
  return it == values_.end() ? fallback : it->second;
}

int64_t Arguments::GetInt(const std::string& key, int64_t fallback) const {
  Ask(key);
  auto it = values_.find(key);
  if (it == values_.end()) return fallback;
  char* end = nullptr;
  long long v = std::strtoll(it->second.c_str(), &end, 10);
  if (end == it->second.c_str() || *end != '\0') {
    AddProblem(key + ": expected an integer, got \"" + it->second + "\"");
    return fallback;
  }
  return v;
}

double Arguments::GetDouble(const std::string& key, double fallback) const {
  Ask(key);
  auto it = values_.find(key);
  if (it == values_.end()) return fallback;
  char* end = nullptr;
  double v = std::strtod(it->second.c_str(), &end);
  if (end == it->second.c_str() || *end != '\0') {
    AddProblem(key + ": expected a number, got \"" + it->second + "\"");
    return fallback;
  }
  return v;
}

bool Arguments::GetBool(const std::string& key, bool fallback) const {
  Ask(key);
  auto it = values_.find(key);
  if (it == values_.end()) return fallback;
  const std::string& v = it->second;
  if (v == "true" || v == "True" || v == "TRUE") return true;
  if (v == "false" || v == "False" || v == "FALSE") return false;
  AddProblem(key + ": expected true or false, got \"" + v + "\"");
  return fallback;
}

std::string Arguments::GetChoice(const std::string& key,
                                 const std::vector<std::string>& choices) const {
  Ask(key);
  auto it = values_.find(key);
  if (it == values_.end()) return choices.front();
  if (std::find(choices.begin(), choices.end(), it->second) != choices.end()) return it->second;
  std::string all;
  for (const std::string& c : choices) all += (all.empty() ? "" : " or ") + c;
  AddProblem(key + ": expected " + all + ", got \"" + it->second + "\"");
  return choices.front();
}

std::string Arguments::GetValid(const std::string& key,
                                const std::function<bool(std::string_view)>& valid,
                                std::string_view expected, const std::string& fallback) const {
  Ask(key);
  auto it = values_.find(key);
  if (it == values_.end()) return fallback;
  if (valid(it->second)) return it->second;
  AddProblem(key + ": expected " + std::string(expected) + ", got \"" + it->second + "\"");
  return fallback;
}

std::map<std::string, std::string> Arguments::WithPrefix(const std::string& prefix) const {
  if (std::find(asked_prefixes_.begin(), asked_prefixes_.end(), prefix) == asked_prefixes_.end())
    asked_prefixes_.push_back(prefix);
  std::map<std::string, std::string> out;
  for (auto it = values_.lower_bound(prefix); it != values_.end(); ++it) {
    if (it->first.compare(0, prefix.size(), prefix) != 0) break;
    out.emplace(it->first.substr(prefix.size()), it->second);
  }
  return out;
}

std::optional<std::chrono::nanoseconds> Arguments::GetDuration(const std::string& key) const {
  Ask(key);
  auto it = values_.find(key);
  if (it == values_.end()) return std::nullopt;
  std::optional<std::chrono::nanoseconds> d = base::ParsePositiveDuration(it->second);
  if (!d)
    AddProblem(key + ": expected a positive duration such as 90m, got \"" + it->second + "\"");
  return d;
}

std::vector<std::string> Arguments::Problems() const {
  return problems_;
}

// Once per problem: plugins read their arguments every session.
void Arguments::AddProblem(std::string problem) const {
  if (std::find(problems_.begin(), problems_.end(), problem) == problems_.end())
    problems_.push_back(std::move(problem));
}

void Arguments::Ask(const std::string& key) const {
  asked_.insert(key);
}

std::vector<std::string> Arguments::AskedKeys() const {
  return {asked_.begin(), asked_.end()};
}

std::vector<std::string> Arguments::UnreadKeys() const {
  std::vector<std::string> out;
  for (const auto& entry : values_) {
    const std::string& key = entry.first;  // not a structured binding: the lambda captures it
    if (asked_.count(key) != 0) continue;
    const bool under_prefix =
        std::any_of(asked_prefixes_.begin(), asked_prefixes_.end(),
                    [&key](const std::string& prefix) { return key.rfind(prefix, 0) == 0; });
    if (!under_prefix) out.push_back(key);
  }
  return out;
}

const char* EnableFlagName(ExtensionPoint p) {
  switch (p) {
    case ExtensionPoint::kJobOrder:
      return "enableJobOrder";
    case ExtensionPoint::kJobReady:
      return "enableJobReady";
    case ExtensionPoint::kJobPipelined:
      return "enableJobPipelined";
    case ExtensionPoint::kTaskOrder:
      return "enableTaskOrder";
    case ExtensionPoint::kPreemptable:
      return "enablePreemptable";
    case ExtensionPoint::kReclaimable:
      return "enableReclaimable";
    case ExtensionPoint::kPreemptive:
      return "enablePreemptive";
    case ExtensionPoint::kQueueOrder:
      return "enableQueueOrder";
    case ExtensionPoint::kClusterOrder:
      return "enabledClusterOrder";
    case ExtensionPoint::kPredicate:
      return "enablePredicate";
    case ExtensionPoint::kBestNode:
      return "enableBestNode";
    case ExtensionPoint::kNodeOrder:
      return "enableNodeOrder";
    case ExtensionPoint::kTargetJob:
      return "enableTargetJob";
    case ExtensionPoint::kReservedNodes:
      return "enableReservedNodes";
    case ExtensionPoint::kJobEnqueued:
      return "enableJobEnqueued";
    case ExtensionPoint::kVictim:
      return "enabledVictim";
    case ExtensionPoint::kJobStarving:
      return "enableJobStarving";
    case ExtensionPoint::kOverused:
      return "enabledOverused";
    case ExtensionPoint::kAllocatable:
      return "enabledAllocatable";
    case ExtensionPoint::kHyperNodeOrder:
      return "enabledHyperNodeOrder";
    case ExtensionPoint::kSubJobReady:
      return "enabledSubJobReady";
    case ExtensionPoint::kSubJobPipelined:
      return "enabledSubJobPipelined";
    case ExtensionPoint::kSubJobOrder:
      return "enabledSubJobOrder";
    case ExtensionPoint::kHyperNodeGradient:
      return "enabledHyperNodeGradient";
  }
  return "";
}

bool PluginOption::Enabled(ExtensionPoint point) const {
  auto it = enabled.find(point);
  return it == enabled.end() || it->second;
}

const Arguments& SchedulerConf::ActionArguments(const std::string& action) const {
  static const Arguments kNone;
  auto it = configurations.find(action);
  return it == configurations.end() ? kNone : it->second.arguments;
}

bool SchedulerConf::HasAction(const std::string& action) const {
  return std::find(actions.begin(), actions.end(), action) != actions.end();
}

bool SchedulerConf::HasPlugin(const std::string& plugin) const {
  for (const auto& t : tiers) {
    for (const auto& p : t.plugins) {
      if (p.name == plugin) return true;
    }
  }
  return false;
}

std::vector<std::string> SchedulerConf::Warnings() const {
  std::vector<std::string> out;
  for (const auto& u : unsupported) {
    out.push_back(u.where + ": " + u.kind + " \"" + u.name + "\" (" + u.what +
                  ") is not implemented in Tephra; left out");
  }
  return out;
}

namespace {

// Arguments deeper than this are refused: Volcano's are a few levels at most, and the keys
// of deeper ones would cost time quadratic in the depth.
constexpr size_t kMaxArgumentDepth = 32;

// How many more YAML nodes the parser may visit. Every node of the text takes at least one
// character, but aliases can make a small text expand into exponentially many nodes; a budget
// of the text's size keeps the work linear.
struct NodeBudget {
  size_t left;
  Status Spend(size_t n, const std::string& where) {
    if (n > left) return InvalidArgument(where + ": too many values once aliases are expanded");
    left -= n;
    return Status::Ok();
  }
};

// Flattens an arguments mapping: scalars as text, nested maps as "a.b", lists joined by ",".
// Iterative.
Status Flatten(const YAML::Node& root, const std::string& where, NodeBudget* budget,
               std::map<std::string, std::string>* out) {
  struct Pending {
    YAML::Node node;
    std::string prefix;
    size_t depth;
  };
  std::vector<Pending> pending{{root, "", 0}};
  while (!pending.empty()) {
    Pending p = std::move(pending.back());
    pending.pop_back();
    const YAML::Node& node = p.node;
    TEPHRA_RETURN_IF_ERROR(
        budget->Spend(1 + (node.IsSequence() ? node.size() : 0), where + ".arguments"));
    if (node.IsScalar()) {
      (*out)[p.prefix] = node.Scalar();
    } else if (node.IsSequence()) {
      std::string joined;
      for (size_t i = 0; i < node.size(); ++i) {
        if (!node[i].IsScalar()) continue;
        if (!joined.empty()) joined += ",";
        joined += node[i].Scalar();
      }
      (*out)[p.prefix] = joined;
    } else if (node.IsMap()) {
      if (p.depth == kMaxArgumentDepth) {
        return InvalidArgument(where + ".arguments." + p.prefix + ": nested more than " +
                               std::to_string(kMaxArgumentDepth) + " levels deep");
      }
      // Pushed in reverse, so members are flattened in order and a later key still wins.
      // (Never assign YAML::Node values, e.g. by std::reverse: assignment rewrites the tree.)
      std::vector<Pending> members;
      for (const auto& kv : node) {
        std::string key = kv.first.Scalar();
        members.push_back({kv.second, p.prefix.empty() ? key : p.prefix + "." + key, p.depth + 1});
      }
      for (auto m = members.rbegin(); m != members.rend(); ++m) pending.push_back(*m);
    }
  }
  return Status::Ok();
}

StatusOr<Arguments> ParseArguments(const YAML::Node& node, const std::string& where,
                                   NodeBudget* budget) {
  if (!node || node.IsNull()) return Arguments();
  if (!node.IsMap()) return InvalidArgument(where + ".arguments: must be a mapping");
  std::map<std::string, std::string> values;
  TEPHRA_RETURN_IF_ERROR(Flatten(node, where, budget, &values));
  return Arguments(std::move(values));
}

StatusOr<bool> ParseBool(const YAML::Node& v, const std::string& where) {
  if (!v.IsScalar()) return InvalidArgument(where + ": must be true or false");
  const std::string& s = v.Scalar();
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  return InvalidArgument(where + ": must be true or false, got \"" + s + "\"");
}

bool Contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// How a name of `kind` fares: implemented (nullopt), recognised (recorded in `conf`, and the
// caller leaves it out: Ok), or unknown (the error, with the nearest known name).
std::optional<Status> ClassifyName(const std::string& kind, const std::string& name,
                                   const std::string& where,
                                   const std::vector<std::string>& implemented,
                                   const std::map<std::string, std::string>& recognised,
                                   SchedulerConf* conf) {
  if (implemented.empty() || Contains(implemented, name)) return std::nullopt;
  if (auto it = recognised.find(name); it != recognised.end()) {
    conf->unsupported.push_back({kind, name, where, it->second});
    return Status::Ok();
  }
  std::vector<std::string> known = implemented;
  for (const auto& [n, what] : recognised) known.push_back(n);
  std::string nearest = base::NearestName(name, known);
  return InvalidArgument(where + ": unknown " + kind + " \"" + name + "\"" +
                         (nearest.empty() ? "" : "; did you mean \"" + nearest + "\"?"));
}

StatusOr<SchedulerConf> ParseDocument(const YAML::Node& doc, const ConfNames& names,
                                      NodeBudget* budget) {
  if (!doc.IsMap()) return InvalidArgument("scheduler configuration: must be a mapping");
  SchedulerConf conf;
  const YAML::Node actions = doc["actions"];
  if (!actions || !actions.IsScalar()) {
    return InvalidArgument(
        "actions: required, a comma-separated list such as \"enqueue, allocate\"");
  }
  for (const std::string& a : base::SplitCommaList(actions.Scalar())) {
    std::optional<Status> verdict =
        ClassifyName("action", a, "actions", names.actions, names.recognised_actions, &conf);
    if (verdict && !verdict->ok()) return *verdict;
    if (!verdict) conf.actions.push_back(a);
  }
  if (conf.actions.empty()) {
    return InvalidArgument(conf.unsupported.empty()
                               ? "actions: at least one action is required"
                               : "actions: none of them is implemented in Tephra");
  }

  const YAML::Node tiers = doc["tiers"];
  if (tiers && !tiers.IsSequence()) return InvalidArgument("tiers: must be a list");
  for (size_t t = 0; tiers && t < tiers.size(); ++t) {
    std::string tw = "tiers[" + std::to_string(t) + "]";
    Tier tier;
    const YAML::Node plugins = tiers[t]["plugins"];
    if (!plugins || !plugins.IsSequence()) return InvalidArgument(tw + ".plugins: must be a list");
    TEPHRA_RETURN_IF_ERROR(budget->Spend(1 + plugins.size(), tw));
    for (size_t p = 0; p < plugins.size(); ++p) {
      std::string pw = tw + ".plugins[" + std::to_string(p) + "]";
      const YAML::Node pn = plugins[p];
      if (!pn.IsMap() || !pn["name"] || !pn["name"].IsScalar()) {
        return InvalidArgument(pw + ".name: required");
      }
      PluginOption opt;
      opt.name = pn["name"].Scalar();
      std::optional<Status> verdict = ClassifyName("plugin", opt.name, pw + ".name", names.plugins,
                                                   names.recognised_plugins, &conf);
      if (verdict && !verdict->ok()) return *verdict;
      const bool left_out = verdict.has_value();
      for (const auto& kv : pn) {
        const std::string key = kv.first.Scalar();
        if (key == "name") continue;
        if (key == "arguments") {
          TEPHRA_ASSIGN_OR_RETURN(opt.arguments, ParseArguments(kv.second, pw, budget));
          continue;
        }
        if (key == "enableHierarchy") {
          TEPHRA_ASSIGN_OR_RETURN(bool v, ParseBool(kv.second, pw + "." + key));
          opt.enable_hierarchy = v;
          continue;
        }
        bool matched = false;
        for (int e = 0; e < kExtensionPointCount; ++e) {
          auto point = static_cast<ExtensionPoint>(e);
          if (key != EnableFlagName(point)) continue;
          TEPHRA_ASSIGN_OR_RETURN(bool v, ParseBool(kv.second, pw + "." + key));
          opt.enabled[point] = v;
          matched = true;
          // Volcano's enableJobEnqueued also gates JobEnqueueable.
          break;
        }
        if (!matched) return InvalidArgument(pw + "." + key + ": unknown plugin option");
      }
      // Its options were still checked: they are Volcano's, and a typo there is a typo.
      if (!left_out) tier.plugins.push_back(std::move(opt));
    }
    conf.tiers.push_back(std::move(tier));
  }

  // Volcano refuses hierarchical drf next to proportion in one tier.
  for (size_t t = 0; t < conf.tiers.size(); ++t) {
    bool drf_hierarchy = false, proportion = false;
    for (const auto& p : conf.tiers[t].plugins) {
      if (p.name == "drf" && p.enable_hierarchy.value_or(false)) drf_hierarchy = true;
      if (p.name == "proportion") proportion = true;
    }
    if (drf_hierarchy && proportion) {
      return InvalidArgument("tiers[" + std::to_string(t) +
                             "]: drf with enableHierarchy cannot be used with proportion");
    }
  }

  const YAML::Node configurations = doc["configurations"];
  if (configurations && !configurations.IsSequence()) {
    return InvalidArgument("configurations: must be a list");
  }
  for (size_t i = 0; configurations && i < configurations.size(); ++i) {
    std::string cw = "configurations[" + std::to_string(i) + "]";
    TEPHRA_RETURN_IF_ERROR(budget->Spend(1, cw));
    const YAML::Node c = configurations[i];
    if (!c.IsMap() || !c["name"] || !c["name"].IsScalar())
      return InvalidArgument(cw + ".name: required");
    TEPHRA_ASSIGN_OR_RETURN(Arguments args, ParseArguments(c["arguments"], cw, budget));
    conf.configurations[c["name"].Scalar()] = ActionOption{i, std::move(args)};
  }
  return conf;
}

}  // namespace

StatusOr<SchedulerConf> ParseSchedulerConf(const std::string& yaml, const ConfNames& names) {
  try {
    YAML::Node doc = YAML::Load(yaml);
    NodeBudget budget{yaml.size() + 16};
    return ParseDocument(doc, names, &budget);
  } catch (const YAML::Exception& e) {
    return InvalidArgument(std::string("scheduler configuration: ") + e.what());
  }
}

const char* DefaultSchedulerConfYaml() {
  return R"(actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
)";
}

}  // namespace tephra::scheduler
