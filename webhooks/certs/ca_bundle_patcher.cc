#include "webhooks/certs/ca_bundle_patcher.h"

#include <algorithm>

#include <glog/logging.h>
#include <rapidjson/document.h>

#include "base/base64.h"
#include "kube/meta/object.h"

namespace tephra::webhooks {
namespace {

constexpr std::string_view kMutatingPrefix = "mutating/";
constexpr std::string_view kValidatingPrefix = "validating/";

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

base::WorkQueueOptions QueueOptions() {
  base::WorkQueueOptions options;
  options.name = "admission_cabundle";
  return options;
}

}  // namespace

bool WebhookConfigSelector::Wants(bool mutating, std::string_view name) const {
  if (!label_selector.empty()) return true;
  const auto& names = mutating ? mutating_names : validating_names;
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string WebhookConfigName(std::string_view prefix, std::string_view path) {
  std::string name(prefix);
  for (char c : path) name += c == '/' ? '-' : c;
  return name;
}

WebhookConfigSelector SelectorForPaths(std::string_view prefix,
                                       const std::vector<std::string>& paths,
                                       std::string label_selector) {
  WebhookConfigSelector selector;
  for (const std::string& path : paths) {
    auto& names = EndsWith(path, "/mutate") ? selector.mutating_names : selector.validating_names;
    names.push_back(WebhookConfigName(prefix, path));
  }
  selector.label_selector = std::move(label_selector);
  return selector;
}

StatusOr<std::optional<std::string>> CaBundlePatch(std::string_view config_json,
                                                   std::string_view ca_bundle_b64) {
  json::Document doc;
  TEPHRA_RETURN_IF_ERROR(json::Parse(config_json, &doc));
  if (!doc.IsObject()) return InvalidArgument("a webhook configuration must be a JSON object");
  auto webhooks = doc.FindMember("webhooks");
  if (webhooks == doc.MemberEnd() || webhooks->value.IsNull()) return std::optional<std::string>();
  if (!webhooks->value.IsArray()) return InvalidArgument("webhooks: expected an array");
  auto& alloc = doc.GetAllocator();
  bool changed = false;
  for (auto& webhook : webhooks->value.GetArray()) {
    if (!webhook.IsObject()) return InvalidArgument("webhooks[]: expected objects");
    auto client_config = webhook.FindMember("clientConfig");
    if (client_config == webhook.MemberEnd()) {
      webhook.AddMember("clientConfig", json::Value(rapidjson::kObjectType), alloc);
      client_config = webhook.FindMember("clientConfig");
    }
    if (!client_config->value.IsObject()) {
      return InvalidArgument("webhooks[].clientConfig: expected an object");
    }
    json::Value& cc = client_config->value;
    auto bundle = cc.FindMember("caBundle");
    if (bundle != cc.MemberEnd() && bundle->value.IsString() &&
        std::string_view(bundle->value.GetString(), bundle->value.GetStringLength()) ==
            ca_bundle_b64) {
      continue;
    }
    json::Value value(ca_bundle_b64.data(), static_cast<rapidjson::SizeType>(ca_bundle_b64.size()),
                      alloc);
    if (bundle == cc.MemberEnd()) {
      cc.AddMember("caBundle", value, alloc);
    } else {
      bundle->value = value;
    }
    changed = true;
  }
  if (!changed) return std::optional<std::string>();
  std::string resource_version;
  json::Errors errors;
  resource_version = json::Reader(&doc, &errors)["metadata"]["resourceVersion"].String();
  json::Writer w;
  w.StartObject();
  if (!resource_version.empty()) {
    w.Key("metadata").StartObject().Field("resourceVersion", resource_version).EndObject();
  }
  w.Key("webhooks").Raw(json::Write(webhooks->value));
  w.EndObject();
  return std::optional<std::string>(w.Take());
}

CaBundlePatcher::CaBundlePatcher(std::shared_ptr<kube::Client> client,
                                 WebhookConfigSelector selector)
    : client_(std::move(client)), selector_(std::move(selector)), queue_(QueueOptions()) {}

CaBundlePatcher::~CaBundlePatcher() {
  Stop();
}

void CaBundlePatcher::Start(kube::InformerFactory& factory) {
  kube::InformerScope scope{"", selector_.label_selector, ""};
  mutating_ =
      factory.For(kube::resources::kMutatingWebhookConfigurations, kube::RawObjectDecoder(), scope);
  validating_ = factory.For(kube::resources::kValidatingWebhookConfigurations,
                            kube::RawObjectDecoder(), scope);
  for (bool mutating : {true, false}) {
    std::string prefix(mutating ? kMutatingPrefix : kValidatingPrefix);
    auto enqueue = [this, mutating, prefix](const kube::ObjectPtr& object) {
      if (selector_.Wants(mutating, object->metadata.name)) {
        queue_.Add(prefix + object->metadata.name);
      }
    };
    kube::EventHandlers handlers;
    handlers.on_add = enqueue;
    handlers.on_update = [enqueue](const kube::ObjectPtr&, const kube::ObjectPtr& now) {
      enqueue(now);
    };
    (mutating ? mutating_ : validating_)->AddEventHandler(std::move(handlers));
  }
  if (!worker_.joinable()) worker_ = std::thread([this] { Run(); });
  if (selector_.label_selector.empty()) {
    std::string names;
    for (const auto& n : selector_.mutating_names) names += " " + n;
    for (const auto& n : selector_.validating_names) names += " " + n;
    LOG(INFO) << "keeping caBundle current in webhook configurations:" << names;
  } else {
    LOG(INFO) << "keeping caBundle current in webhook configurations labelled "
              << selector_.label_selector;
  }
}

void CaBundlePatcher::Stop() {
  queue_.ShutDown();
  if (worker_.joinable()) worker_.join();
}

void CaBundlePatcher::SetCaBundle(const std::string& pem) {
  {
    sync::MutexLock lock(mu_);
    std::string b64 = base::Base64Encode(pem);
    if (b64 == bundle_b64_) return;
    bundle_b64_ = std::move(b64);
  }
  EnqueueAll();
}

int64_t CaBundlePatcher::patches() const {
  sync::MutexLock lock(mu_);
  return patches_;
}

void CaBundlePatcher::EnqueueAll() {
  for (bool mutating : {true, false}) {
    const auto& informer = mutating ? mutating_ : validating_;
    if (informer == nullptr) continue;
    for (const auto& object : informer->store().List()) {
      if (selector_.Wants(mutating, object->metadata.name)) {
        queue_.Add(std::string(mutating ? kMutatingPrefix : kValidatingPrefix) +
                   object->metadata.name);
      }
    }
  }
}

void CaBundlePatcher::Run() {
  while (std::optional<std::string> key = queue_.Get()) {
    Status s = Reconcile(*key);
    if (s.ok()) {
      queue_.Forget(*key);
    } else {
      LOG(WARNING) << "caBundle of " << *key << ": " << s.ToString() << "; retrying";
      queue_.AddRateLimited(*key);
    }
    queue_.Done(*key);
  }
}

Status CaBundlePatcher::Reconcile(const std::string& key) {
  bool mutating = key.rfind(kMutatingPrefix, 0) == 0;
  std::string name = key.substr(mutating ? kMutatingPrefix.size() : kValidatingPrefix.size());
  const auto& informer = mutating ? mutating_ : validating_;
  kube::ObjectPtr object = informer->store().Get(name);
  if (object == nullptr) return Status::Ok();  // deleted meanwhile
  const std::string& version = object->metadata.resource_version;
  std::string bundle;
  {
    sync::MutexLock lock(mu_);
    bundle = bundle_b64_;
    auto written = patched_from_.find(key);
    if (written != patched_from_.end() && written->second == std::make_pair(version, bundle)) {
      return Status::Ok();  // our patch of this version is done; its watch event comes next
    }
  }
  if (bundle.empty()) return Status::Ok();
  const auto& raw = static_cast<const kube::RawObject&>(*object);
  TEPHRA_ASSIGN_OR_RETURN(std::optional<std::string> patch, CaBundlePatch(raw.json, bundle));
  if (!patch) return Status::Ok();
  const kube::Resource& resource = mutating ? kube::resources::kMutatingWebhookConfigurations
                                            : kube::resources::kValidatingWebhookConfigurations;
  StatusOr<std::string> patched =
      client_->Patch(resource, "", name, kube::PatchType::kMerge, *patch);
  if (!patched.ok()) return patched.status();
  {
    sync::MutexLock lock(mu_);
    ++patches_;
    patched_from_[key] = {version, bundle};
  }
  LOG(INFO) << "set caBundle in " << resource.kind << " " << name;
  return Status::Ok();
}

}  // namespace tephra::webhooks
