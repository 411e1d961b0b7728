// Keeps clientConfig.caBundle of the webhook's own Mutating/ValidatingWebhookConfigurations
// equal to the CA bundle the serving certificate verifies against. The configurations are
// found by name (<prefix>-<path with '/' as '-'>, Volcano's naming: /jobs/mutate ->
// volcano-admission-service-jobs-mutate) or by label selector, and watched, so one created or
// reset later (a Helm upgrade) is patched as soon as it appears.
//
// A patch is a JSON merge patch that rewrites the `webhooks` list with only the caBundle
// changed — every other field, known or not, is sent back as read — and carries the
// configuration's resourceVersion, so a concurrent change makes it fail with Conflict instead
// of being overwritten; the patch is then retried against the fresh object.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/workqueue.h"
#include "kube/client.h"
#include "kube/informer.h"
#include "sync/mutex.h"

namespace tephra::webhooks {

struct WebhookConfigSelector {
  std::vector<std::string> mutating_names;
  std::vector<std::string> validating_names;
  // When set, the configurations of either kind carrying these labels are ours, whatever
  // their names (the names above are then not used).
  std::string label_selector;

  // Whether a configuration the informers saw is ours (they already applied the selector).
  bool Wants(bool mutating, std::string_view name) const;
};

// The configuration name for a path: prefix + path with '/' replaced by '-'.
std::string WebhookConfigName(std::string_view prefix, std::string_view path);
// Names for every enabled path: */mutate paths are Mutating, the rest Validating.
WebhookConfigSelector SelectorForPaths(std::string_view prefix,
                                       const std::vector<std::string>& paths,
                                       std::string label_selector);

// The merge patch that sets clientConfig.caBundle of every webhook in `config_json` to
// `ca_bundle_b64`; nullopt when all already carry it. InvalidArgument when the text is not a
// webhook configuration.
StatusOr<std::optional<std::string>> CaBundlePatch(std::string_view config_json,
                                                   std::string_view ca_bundle_b64);

class CaBundlePatcher {
 public:
  CaBundlePatcher(std::shared_ptr<kube::Client> client, WebhookConfigSelector selector);
  ~CaBundlePatcher();
  CaBundlePatcher(const CaBundlePatcher&) = delete;
  CaBundlePatcher& operator=(const CaBundlePatcher&) = delete;

  // Creates the informers through `factory` (start the factory afterwards) and the worker.
  void Start(kube::InformerFactory& factory);
  void Stop();

  // The CA bundle (PEM) to install; every wanted configuration that differs is patched.
  void SetCaBundle(const std::string& pem);

  // Patches written so far (for logs and tests).
  int64_t patches() const;

 private:
  Status Reconcile(const std::string& key);
  void EnqueueAll();
  void Run();

  std::shared_ptr<kube::Client> client_;
  const WebhookConfigSelector selector_;
  base::WorkQueue queue_;
  std::shared_ptr<kube::Informer> mutating_;
  std::shared_ptr<kube::Informer> validating_;

  mutable sync::Mutex mu_;
  std::string bundle_b64_ GUARDED_BY(mu_);
  int64_t patches_ GUARDED_BY(mu_) = 0;
  // Per key, the resourceVersion we last patched from and the bundle we wrote. Until the watch
  // brings the patched object, the store still holds that version; patching it again would
  // only repeat the write (or conflict on a real server).
  std::map<std::string, std::pair<std::string, std::string>> patched_from_ GUARDED_BY(mu_);
  std::thread worker_;
};

}  // namespace tephra::webhooks
