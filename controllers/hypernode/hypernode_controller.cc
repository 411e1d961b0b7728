#include "controllers/hypernode/hypernode_controller.h"

#include <algorithm>
#include <map>
#include <vector>

#include <glog/logging.h>

#include "api/codec.h"
#include "api/informers/informers.h"
#include "api/kinds.h"
#include "api/topology.h"
#include "controllers/hypernode/label_topology.h"
#include "controllers/hypernode/node_count.h"
#include "json/json.h"
#include "kube/meta/object.h"
#include "kube/meta/resource.h"

namespace tephra::controllers::hypernode {
namespace {

constexpr char kKey[] = "discovery";
// Changes arriving together (a rack of nodes labelled at once) make one pass.
constexpr std::chrono::milliseconds kSettle{200};

struct ConfigMapData : public kube::Object {
  std::map<std::string, std::string> data;
};

kube::ObjectDecoder ConfigMapDecoder() {
  return [](const json::Value& value) -> StatusOr<kube::ObjectPtr> {
    auto cm = api::DecodeTypedObject<ConfigMapData>(
        value, {}, "ConfigMap",
        [](const json::Reader& r, ConfigMapData* c) { c->data = r["data"].StringMap(); });
    if (!cm.ok()) return cm.status();
    return kube::ObjectPtr(*std::move(cm));
  };
}

bool IsOwned(const kube::Object& o) {
  return o.metadata.Label(kSourceLabelKey) == kSourceLabel;
}

std::vector<api::TopologyNode> TopologyNodes(const std::vector<kube::ObjectPtr>& nodes) {
  std::vector<api::TopologyNode> out;
  out.reserve(nodes.size());
  for (const auto& n : nodes) out.push_back({n->metadata.name, &n->metadata.labels});
  return out;
}

// The desired object's spec and labels already hold on `have` (other labels may be there).
bool UpToDate(const api::HyperNode& have, const DesiredHyperNode& want) {
  if (have.spec.tier != want.tier || have.spec.tier_name != want.tier_name) return false;
  if (have.spec.members.size() != want.members.size()) return false;
  for (size_t i = 0; i < want.members.size(); ++i) {
    const api::HyperNodeMember& m = have.spec.members[i];
    const api::MemberSelector& s = m.selector;
    if (m.type != want.member_type || !s.exact_name || *s.exact_name != want.members[i] ||
        s.regex_pattern || s.label_match) {
      return false;
    }
  }
  for (const auto& [k, v] : want.labels) {
    auto it = have.metadata.labels.find(k);
    if (it == have.metadata.labels.end() || it->second != v) return false;
  }
  return true;
}

api::HyperNode ToObject(const DesiredHyperNode& want) {
  api::HyperNode hn;
  hn.api_version = std::string(api::kTopologyApiVersion);
  hn.kind = std::string(api::kHyperNodeKind);
  hn.metadata.name = want.name;
  hn.metadata.labels = want.labels;
  hn.spec.tier = want.tier;
  hn.spec.tier_name = want.tier_name;
  for (const std::string& m : want.members) {
    api::HyperNodeMember& member = hn.spec.members.emplace_back();
    member.type = want.member_type;
    member.selector.exact_name = m;
  }
  return hn;
}

// A merge patch that makes spec and the desired labels `want`'s (members replaced whole).
std::string SpecPatch(const DesiredHyperNode& want) {
  json::Writer w;
  w.StartObject();
  w.Key("metadata").StartObject().StringMap("labels", want.labels).EndObject();
  w.Key("spec").StartObject().Field("tier", want.tier).Field("tierName", want.tier_name);
  w.Key("members").StartArray();
  for (const std::string& m : want.members) {
    w.StartObject().Field("type", want.member_type);
    w.Key("selector").StartObject().Key("exactMatch").StartObject().Field("name", m);
    w.EndObject().EndObject().EndObject();
  }
  w.EndArray().EndObject().EndObject();
  return w.str();
}

}  // namespace

HyperNodeController::HyperNodeController() = default;
HyperNodeController::~HyperNodeController() {
  Stop();
}

Status HyperNodeController::Initialize(ControllerContext& context) {
  ctx_ = context;
  const std::string& cm = ctx_.options.controller_conf_configmap;
  if (!cm.empty()) {
    auto [ns, name] = kube::SplitObjectKey(cm);
    if (ns.empty() || name.empty()) {
      return InvalidArgument("--controller-conf-configmap: must be namespace/name, got \"" + cm +
                             "\"");
    }
    cm_namespace_ = std::string(ns);
    cm_name_ = std::string(name);
  }
  // HyperNodes and nodes are cluster-wide: a manager confined to a namespace (tests, several
  // managers on one cluster) leaves them alone unless it is given a discovery configuration.
  if (!ctx_.options.namespace_.empty() && cm.empty()) {
    idle_ = true;
    LOG(INFO) << "hyperNode-controller: idle with --namespace and no --controller-conf-configmap";
    return Status::Ok();
  }
  nodes_ = ctx_.informers->For(kube::resources::kNodes, api::NodeDecoder());
  hypernodes_ = ctx_.informers->For(api::kHyperNodes, api::HyperNodeDecoder());
  queue_ = std::make_unique<base::WorkQueue>(QueueOptions(ctx_, "hypernode-controller"));

  kube::EventHandlers nh;
  nh.on_add = [this](const kube::ObjectPtr&) { Trigger(); };
  nh.on_update = [this](const kube::ObjectPtr& old, const kube::ObjectPtr& o) {
    if (old->metadata.labels != o->metadata.labels) Trigger();
  };
  nh.on_delete = [this](const kube::ObjectPtr&, bool) { Trigger(); };
  nodes_->AddEventHandler(nh);

  kube::EventHandlers hh;
  hh.on_add = [this](const kube::ObjectPtr&) { Trigger(); };
  hh.on_update = [this](const kube::ObjectPtr& old, const kube::ObjectPtr& o) {
    const auto& a = static_cast<const api::HyperNode&>(*old);
    const auto& b = static_cast<const api::HyperNode&>(*o);
    if (a.metadata.resource_version != b.metadata.resource_version) Trigger();
  };
  hh.on_delete = [this](const kube::ObjectPtr&, bool) { Trigger(); };
  hypernodes_->AddEventHandler(hh);

  if (!cm_name_.empty()) {
    kube::InformerScope scope;
    scope.namespace_ = cm_namespace_;
    scope.field_selector = "metadata.name=" + cm_name_;
    configmaps_ = ctx_.informers->For(kube::resources::kConfigMaps, ConfigMapDecoder(), scope);
    kube::EventHandlers ch;
    ch.on_add = [this](const kube::ObjectPtr&) { Trigger(); };
    ch.on_update = [this](const kube::ObjectPtr&, const kube::ObjectPtr&) { Trigger(); };
    ch.on_delete = [this](const kube::ObjectPtr&, bool) { Trigger(); };
    configmaps_->AddEventHandler(ch);
  }
  return Status::Ok();
}

void HyperNodeController::Trigger() {
  queue_->AddAfter(kKey, kSettle);
}

void HyperNodeController::Start() {
  if (idle_) return;
  workers_.Start(queue_.get(), 1, "hypernode", [this](const std::string&) { return Sync(); });
  queue_->Add(kKey);
}

void HyperNodeController::Stop() {
  workers_.Stop();
}

void HyperNodeController::Report(const std::string& reason, const std::string& message) {
  if (!reported_.insert(reason + message).second) return;
  LOG(WARNING) << "hyperNode-controller: " << message;
  if (configmaps_ == nullptr || ctx_.recorder == nullptr) return;
  kube::ObjectPtr cm = configmaps_->store().Get(cm_namespace_ + "/" + cm_name_);
  if (cm) {
    kube::ObjectReference ref = kube::ObjectReference::To(*cm);
    ref.api_version = "v1";  // list items carry no apiVersion or kind
    ref.kind = "ConfigMap";
    ctx_.recorder->Record(ref, kube::EventType::kWarning, reason, message);
  }
}

std::optional<DiscoveryConfig> HyperNodeController::ReadConfig() {
  if (configmaps_ == nullptr) return std::nullopt;
  kube::ObjectPtr obj = configmaps_->store().Get(cm_namespace_ + "/" + cm_name_);
  if (!obj) {
    if (config_text_ != "\x01missing") {
      config_text_ = "\x01missing";
      reported_.clear();
      LOG(INFO) << "hyperNode-controller: ConfigMap " << cm_namespace_ << "/" << cm_name_
                << " not found: no discovery";
    }
    return std::nullopt;
  }
  const auto& cm = static_cast<const ConfigMapData&>(*obj);
  auto it = cm.data.find(std::string(kConfigKey));
  const std::string text = it == cm.data.end() ? "" : it->second;
  if (text != config_text_) {
    config_text_ = text;
    reported_.clear();
  }
  StatusOr<DiscoveryConfig> config = ParseDiscoveryConfig(text);
  if (!config.ok()) {
    // The HyperNodes made under the last good configuration stay as they are.
    Report(std::string(kReasonConfigInvalid), "ConfigMap " + cm_namespace_ + "/" + cm_name_ +
                                                  " key " + std::string(kConfigKey) + ": " +
                                                  config.status().message());
    return std::nullopt;
  }
  for (const std::string& source : config->unavailable) {
    Report(std::string(kReasonSourceUnavailable),
           "network topology discovery source \"" + source +
               "\" is enabled but not available in this build (only \"label\" is); it "
               "discovers nothing");
  }
  return *std::move(config);
}

Status HyperNodeController::Discover(const DiscoveryConfig& config) {
  const std::vector<DesiredHyperNode> desired =
      BuildLabelHyperNodes(config.label_topologies, TopologyNodes(nodes_->store().List()));
  std::map<std::string, kube::ObjectPtr> existing;
  for (const auto& o : hypernodes_->store().List()) existing.emplace(o->metadata.name, o);

  Status first_error = Status::Ok();
  auto note = [&](Status s) {
    if (!s.ok() && first_error.ok()) first_error = std::move(s);
  };
  std::set<std::string> wanted;
  for (const DesiredHyperNode& want : desired) {
    wanted.insert(want.name);
    auto it = existing.find(want.name);
    if (it == existing.end()) {
      auto r = ctx_.client->Create(api::kHyperNodes, "", api::EncodeHyperNode(ToObject(want)));
      if (!r.ok() && r.status().code() != StatusCode::kAlreadyExists) {
        note(r.status().WithContext("creating HyperNode " + want.name));
      } else if (r.ok()) {
        VLOG(1) << "hyperNode-controller: created " << want.name << " (tier " << want.tier << ", "
                << want.members.size() << " members)";
      }
      continue;
    }
    if (!IsOwned(*it->second)) {
      Report("DiscoveryNameTaken", "HyperNode " + want.name + " exists without the label " +
                                       std::string(kSourceLabelKey) + "=" +
                                       std::string(kSourceLabel) + ": left as it is");
      continue;
    }
    if (UpToDate(static_cast<const api::HyperNode&>(*it->second), want)) continue;
    auto r = ctx_.client->Patch(api::kHyperNodes, "", want.name, kube::PatchType::kMerge,
                                SpecPatch(want));
    if (!r.ok() && r.status().code() != StatusCode::kNotFound) {
      note(r.status().WithContext("updating HyperNode " + want.name));
    }
  }
  for (const auto& [name, obj] : existing) {
    if (!IsOwned(*obj) || wanted.count(name)) continue;
    kube::DeleteOptions once;
    once.precondition_uid = obj->metadata.uid;
    Status s = ctx_.client->Delete(api::kHyperNodes, "", name, once);
    if (!s.ok() && s.code() != StatusCode::kNotFound && s.code() != StatusCode::kConflict) {
      note(s.WithContext("deleting HyperNode " + name));
    } else if (s.ok()) {
      VLOG(1) << "hyperNode-controller: deleted " << name;
    }
  }
  return first_error;
}

Status HyperNodeController::WriteNodeCounts() {
  std::vector<std::shared_ptr<const api::HyperNode>> hns;
  for (const auto& o : hypernodes_->store().List()) hns.push_back(kube::As<api::HyperNode>(o));
  const std::map<std::string, int64_t> counts =
      CountNodes(hns, TopologyNodes(nodes_->store().List()));
  Status first_error = Status::Ok();
  for (const auto& hn : hns) {
    const int64_t count = counts.at(hn->metadata.name);
    if (hn->status.node_count == count) continue;
    const std::string patch = R"({"status":{"nodeCount":)" + std::to_string(count) + "}}";
    auto r = ctx_.client->Patch(api::kHyperNodes, "", hn->metadata.name, kube::PatchType::kMerge,
                                patch, {}, "status");
    if (!r.ok() && r.status().code() != StatusCode::kNotFound && first_error.ok()) {
      first_error = r.status().WithContext("writing status.nodeCount of " + hn->metadata.name);
    }
  }
  return first_error;
}

Status HyperNodeController::Sync() {
  if (idle_) return Status::Ok();
  std::optional<DiscoveryConfig> config = ReadConfig();
  Status discovered = Status::Ok();
  if (config && config->label_enabled) {
    discovered = Discover(*config);
    // Node events drive discovery; the interval only bounds how stale a missed one can get.
    queue_->AddAfter(kKey, config->label_interval);
  }
  Status counted = WriteNodeCounts();
  return discovered.ok() ? counted : discovered;
}

}  // namespace tephra::controllers::hypernode
