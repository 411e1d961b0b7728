// The svc plugin: stable DNS names for every pod of a job (headless Service, hostname and
// subdomain), a ConfigMap with each task's host list, and a NetworkPolicy that admits only the
// job's own pods.
#include <algorithm>
#include <cctype>

#include "api/labels.h"
#include "controllers/job/builders.h"
#include "controllers/job/plugins/plugin.h"
#include "json/json.h"

namespace tephra::controllers::job {
namespace {

constexpr std::string_view kMountPath = "/etc/volcano";

std::string ConfigMapName(const api::Job& job) {
  return job.metadata.name + "-svc";
}

// T with '-' → '_' (and upper-cased for env names).
std::string KeyBase(std::string_view task) {
  std::string out(task);
  std::replace(out.begin(), out.end(), '-', '_');
  return out;
}
std::string EnvBase(std::string_view task) {
  std::string out = KeyBase(task);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return "VC_" + out;
}

void JobSelector(json::Writer& w, const api::Job& job) {
  w.StartObject()
      .Field(api::kJobNameKey, job.metadata.name)
      .Field(api::kJobNamespaceKey, job.metadata.namespace_)
      .EndObject();
}

class SvcPlugin : public JobPlugin {
 public:
  SvcPlugin(bool publish_not_ready, bool disable_network_policy, bool inject_env)
      : publish_not_ready_(publish_not_ready),
        disable_network_policy_(disable_network_policy),
        inject_env_(inject_env) {}

  std::string_view Name() const override { return "svc"; }

  Status OnPodCreate(const api::Job& job, const PodInfo&, PodDraft* pod) override {
    pod->SetSpecStringIfEmpty("hostname", pod->Name());
    pod->SetSpecStringIfEmpty("subdomain", job.metadata.name);
    const std::string cm = ConfigMapName(job);
    json::Writer volume;
    volume.StartObject()
        .Field("name", cm)
        .Key("configMap")
        .StartObject()
        .Field("name", cm)
        .EndObject()
        .EndObject();
    pod->AddVolume(volume.str());
    json::Writer mount;
    mount.StartObject().Field("name", cm).Field("mountPath", kMountPath).EndObject();
    pod->AddVolumeMount(mount.str(), true);
    if (inject_env_) {
      for (const api::TaskSpec& task : job.spec.tasks) {
        const std::string env = EnvBase(task.name);
        pod->AddEnvFromConfigMap(env + "_HOSTS", cm, env + "_HOSTS");
        pod->AddEnvFromConfigMap(env + "_NUM", cm, env + "_NUM");
      }
    }
    return Status::Ok();
  }

  Status OnJobAdd(const api::Job& job, ObjectWriter& writer) override {
    TEPHRA_RETURN_IF_ERROR(WriteConfigMap(job, writer, false));
    TEPHRA_RETURN_IF_ERROR(writer.Ensure(kube::resources::kServices, job.metadata.namespace_,
                                         job.metadata.name, SvcService(job, publish_not_ready_),
                                         false));
    if (!disable_network_policy_) {
      TEPHRA_RETURN_IF_ERROR(writer.Ensure(kube::resources::kNetworkPolicies,
                                           job.metadata.namespace_, job.metadata.name,
                                           SvcNetworkPolicy(job), false));
    }
    return Status::Ok();
  }

  Status OnJobUpdate(const api::Job& job, ObjectWriter& writer) override {
    return WriteConfigMap(job, writer, true);
  }

 private:
  static Status WriteConfigMap(const api::Job& job, ObjectWriter& writer, bool replace) {
    json::Writer w;
    w.StartObject().Field("apiVersion", "v1").Field("kind", "ConfigMap");
    kube::EncodeObjectMeta(JobOwnedMetadata(job, ConfigMapName(job)), &w);
    w.StringMap("data", SvcConfigMapData(job));
    w.EndObject();
    return writer.Ensure(kube::resources::kConfigMaps, job.metadata.namespace_, ConfigMapName(job),
                         w.str(), replace);
  }

  bool publish_not_ready_;
  bool disable_network_policy_;
  bool inject_env_;
};

}  // namespace

std::map<std::string, std::string> SvcConfigMapData(const api::Job& job) {
  std::map<std::string, std::string> data;
  for (const api::TaskSpec& task : job.spec.tasks) {
    std::vector<std::string> hosts = TaskHosts(job, task);
    // One host per line with no newline after the last, byte for byte Volcano's file.
    std::string lines, commas;
    for (size_t i = 0; i < hosts.size(); ++i) {
      lines += (i ? "\n" : "") + hosts[i];
      commas += (i ? "," : "") + hosts[i];
    }
    const std::string env = EnvBase(task.name);
    data[KeyBase(task.name) + ".host"] = lines;
    data[env + "_HOSTS"] = commas;
    data[env + "_NUM"] = std::to_string(hosts.size());
  }
  return data;
}

std::string SvcService(const api::Job& job, bool publish_not_ready_addresses) {
  json::Writer w;
  w.StartObject().Field("apiVersion", "v1").Field("kind", "Service");
  kube::EncodeObjectMeta(JobOwnedMetadata(job, job.metadata.name), &w);
  w.Key("spec").StartObject().Field("clusterIP", "None");
  w.Key("selector");
  JobSelector(w, job);
  w.Field("publishNotReadyAddresses", publish_not_ready_addresses);
  // No ports, as Volcano's: a headless Service with a selector publishes its pods' DNS
  // records without any.
  w.EndObject().EndObject();
  return w.str();
}

std::string SvcNetworkPolicy(const api::Job& job) {
  json::Writer w;
  w.StartObject().Field("apiVersion", "networking.k8s.io/v1").Field("kind", "NetworkPolicy");
  kube::EncodeObjectMeta(JobOwnedMetadata(job, job.metadata.name), &w);
  w.Key("spec").StartObject();
  w.Key("podSelector").StartObject().Key("matchLabels");
  JobSelector(w, job);
  w.EndObject();
  w.Key("ingress")
      .StartArray()
      .StartObject()
      .Key("from")
      .StartArray()
      .StartObject()
      .Key("podSelector")
      .StartObject()
      .Key("matchLabels");
  JobSelector(w, job);
  w.EndObject().EndObject().EndArray().EndObject().EndArray();
  w.Key("policyTypes").StartArray().String("Ingress").EndArray();
  w.EndObject().EndObject();
  return w.str();
}

StatusOr<std::unique_ptr<JobPlugin>> NewSvcPlugin(const PluginArgs& args) {
  TEPHRA_ASSIGN_OR_RETURN(bool publish, args.Bool("svc", "publish-not-ready-addresses", false));
  TEPHRA_ASSIGN_OR_RETURN(bool no_policy, args.Bool("svc", "disable-network-policy", false));
  TEPHRA_ASSIGN_OR_RETURN(bool inject, args.Bool("svc", "inject-hosts-env", true));
  return std::unique_ptr<JobPlugin>(std::make_unique<SvcPlugin>(publish, no_policy, inject));
}

}  // namespace tephra::controllers::job
