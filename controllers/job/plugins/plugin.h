// Job plugins (docs/compatibility.md §2.6): env, svc, ssh, mpi, pytorch, tensorflow.
// A plugin mutates each pod before it is created and may own objects of its own (a Service, a
// ConfigMap, a Secret) that it creates when the job starts and refreshes when it changes. Every
// hook is idempotent: the job controller calls them on every pass that needs them.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/batch.h"
#include "base/status.h"
#include "controllers/job/pod_draft.h"
#include "kube/client.h"

namespace tephra::controllers::job {

// Where plugins write their objects. The controller's implementation talks to the API server;
// tests record.
class ObjectWriter {
 public:
  virtual ~ObjectWriter() = default;
  // Creates the object (JSON). If it exists already: keeps it when `replace` is false, else
  // merge-patches it with `object` so it matches.
  virtual Status Ensure(const kube::Resource& resource, const std::string& namespace_,
                        const std::string& name, const std::string& object, bool replace) = 0;
};

// ObjectWriter over a kube::Client.
class ClientObjectWriter : public ObjectWriter {
 public:
  explicit ClientObjectWriter(kube::Client& client) : client_(client) {}
  Status Ensure(const kube::Resource& resource, const std::string& namespace_,
                const std::string& name, const std::string& object, bool replace) override;

 private:
  kube::Client& client_;
};

// The pod a plugin is looking at.
struct PodInfo {
  const api::TaskSpec* task = nullptr;
  int32_t index = 0;
};

class JobPlugin {
 public:
  virtual ~JobPlugin() = default;
  virtual std::string_view Name() const = 0;
  virtual Status OnPodCreate(const api::Job& job, const PodInfo& info, PodDraft* pod) = 0;
  // Creates the plugin's objects when the job starts (and again after a restart).
  virtual Status OnJobAdd(const api::Job& /*job*/, ObjectWriter& /*writer*/) {
    return Status::Ok();
  }
  // Brings them in line with a changed job (e.g. host lists after a scale-up).
  virtual Status OnJobUpdate(const api::Job& /*job*/, ObjectWriter& /*writer*/) {
    return Status::Ok();
  }
};

// Go-flag-style plugin arguments: "--name=value", "--name value", "-name=value", and bare
// "--flag" (true for booleans). Values of unknown names are kept and ignored.
class PluginArgs {
 public:
  explicit PluginArgs(const std::vector<std::string>& args);
  std::string String(std::string_view name, std::string_view fallback) const;
  // InvalidArgument naming the plugin and flag when the value is not an integer / bool.
  StatusOr<int32_t> Int(std::string_view plugin, std::string_view name, int32_t fallback) const;
  StatusOr<bool> Bool(std::string_view plugin, std::string_view name, bool fallback) const;

 private:
  std::map<std::string, std::string, std::less<>> values_;
};

// The plugin called `name` with its arguments; InvalidArgument for an unknown name or bad
// arguments ("unknown job plugin \"foo\"; known: env, mpi, ...").
StatusOr<std::unique_ptr<JobPlugin>> NewJobPlugin(std::string_view name,
                                                  const std::vector<std::string>& args);
// Every plugin of the job, in name order; the first error.
StatusOr<std::vector<std::unique_ptr<JobPlugin>>> JobPlugins(const api::Job& job);

// Hosts of a task: "<pod>.<subdomain>" for each replica, where pod is "<job>-<task>-<i>" and
// subdomain the job name, unless the template sets a hostname (then only that host) or a
// subdomain.
std::vector<std::string> TaskHosts(const api::Job& job, const api::TaskSpec& task);

// Individual plugins, for tests.
std::unique_ptr<JobPlugin> NewEnvPlugin();
StatusOr<std::unique_ptr<JobPlugin>> NewSvcPlugin(const PluginArgs& args);
StatusOr<std::unique_ptr<JobPlugin>> NewSshPlugin(const PluginArgs& args);
StatusOr<std::unique_ptr<JobPlugin>> NewMpiPlugin(const PluginArgs& args);
StatusOr<std::unique_ptr<JobPlugin>> NewPytorchPlugin(const PluginArgs& args);
StatusOr<std::unique_ptr<JobPlugin>> NewTensorflowPlugin(const PluginArgs& args);

// svc: the ConfigMap "<job>-svc" data — per task T (T' = T with '-' → '_'): "T'.host" (hosts,
// one per line), "VC_<T' upper>_HOSTS" (comma list) and "VC_<T' upper>_NUM" (count).
std::map<std::string, std::string> SvcConfigMapData(const api::Job& job);
// The headless Service "<job>" and the NetworkPolicy "<job>" (JSON).
std::string SvcService(const api::Job& job, bool publish_not_ready_addresses);
std::string SvcNetworkPolicy(const api::Job& job);

// ssh: the "config" file: no strict host key checking, known hosts /dev/null, and one Host
// entry per pod with its HostName "<host>.<subdomain>" and Port.
std::string SshConfig(const api::Job& job, int32_t port);
struct SshKeyPair {
  std::string private_pem;     // PKCS#1 "RSA PRIVATE KEY"
  std::string public_openssh;  // "ssh-rsa AAAA..."
};
// A fresh 2048-bit RSA key pair (OpenSSL).
StatusOr<SshKeyPair> GenerateSshKeyPair();
// The public key of a PEM private key, in OpenSSH format.
StatusOr<std::string> OpenSshPublicKey(std::string_view private_pem);

}  // namespace tephra::controllers::job
