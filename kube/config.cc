#include "kube/config.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "base/base64.h"

namespace tephra::kube {
namespace {

namespace fs = std::filesystem;

StatusOr<std::string> ReadFile(const std::string& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(std::string(what) + ": cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Resolve(const std::string& path, const std::string& base_dir) {
  if (path.empty() || fs::path(path).is_absolute() || base_dir.empty()) return path;
  return (fs::path(base_dir) / path).string();
}

std::string Scalar(const YAML::Node& node, const char* key) {
  const YAML::Node v = node[key];
  if (!v || !v.IsScalar()) return "";
  return v.as<std::string>();
}

// One kubeconfig file, reduced to the entries Tephra uses; values that name files are already
// resolved against the file's directory.
struct NamedEntries {
  std::map<std::string, YAML::Node> clusters, users, contexts;
  std::string current_context;
  std::string base_dir;
};

Status CollectEntries(const YAML::Node& doc, const std::string& base_dir, NamedEntries* into,
                      std::map<std::string, std::string>* entry_dirs) {
  if (!doc.IsMap()) return InvalidArgument("kubeconfig: top level must be a mapping");
  auto collect = [&](const char* list_key, const char* item_key,
                     std::map<std::string, YAML::Node>* out) -> Status {
    const YAML::Node list = doc[list_key];
    if (!list) return Status::Ok();
    if (!list.IsSequence()) {
      return InvalidArgument(std::string("kubeconfig: ") + list_key + " must be a list");
    }
    for (size_t i = 0; i < list.size(); ++i) {
      const YAML::Node entry = list[i];
      std::string name = Scalar(entry, "name");
      if (name.empty()) {
        return InvalidArgument(std::string("kubeconfig: ") + list_key + "[" + std::to_string(i) +
                               "].name is required");
      }
      const YAML::Node body = entry[item_key];
      // The first file that defines a name wins, as kubectl merges KUBECONFIG.
      if (out->emplace(name, body ? body : YAML::Node(YAML::NodeType::Map)).second) {
        (*entry_dirs)[std::string(list_key) + "/" + name] = base_dir;
      }
    }
    return Status::Ok();
  };
  TEPHRA_RETURN_IF_ERROR(collect("clusters", "cluster", &into->clusters));
  TEPHRA_RETURN_IF_ERROR(collect("users", "user", &into->users));
  TEPHRA_RETURN_IF_ERROR(collect("contexts", "context", &into->contexts));
  if (into->current_context.empty()) into->current_context = Scalar(doc, "current-context");
  return Status::Ok();
}

// Reads "<key>-data" (base64) or "<key>" (a file path) into *out.
Status DataOrFile(const YAML::Node& node, const std::string& key, const std::string& base_dir,
                  const std::string& where, std::string* out) {
  std::string data = Scalar(node, (key + "-data").c_str());
  if (!data.empty()) {
    std::optional<std::string> decoded = base::Base64Decode(data);
    if (!decoded) return InvalidArgument(where + "." + key + "-data: not valid base64");
    *out = std::move(*decoded);
    return Status::Ok();
  }
  std::string file = Scalar(node, key.c_str());
  if (file.empty()) return Status::Ok();
  TEPHRA_ASSIGN_OR_RETURN(*out, ReadFile(Resolve(file, base_dir), where + "." + key));
  return Status::Ok();
}

StatusOr<RestConfig> BuildFromEntries(const NamedEntries& e,
                                      const std::map<std::string, std::string>& dirs,
                                      const std::string& context_override) {
  std::string context_name = context_override.empty() ? e.current_context : context_override;
  if (context_name.empty()) {
    return InvalidArgument("kubeconfig: no current-context is set and no --context was given");
  }
  auto ctx = e.contexts.find(context_name);
  if (ctx == e.contexts.end()) {
    return NotFound("kubeconfig: context \"" + context_name + "\" does not exist");
  }
  std::string cluster_name = Scalar(ctx->second, "cluster");
  std::string user_name = Scalar(ctx->second, "user");
  auto cluster = e.clusters.find(cluster_name);
  if (cluster == e.clusters.end()) {
    return NotFound("kubeconfig: context \"" + context_name + "\" names cluster \"" + cluster_name +
                    "\", which does not exist");
  }
  RestConfig cfg;
  cfg.context_name = context_name;
  cfg.namespace_ = Scalar(ctx->second, "namespace");
  const YAML::Node& c = cluster->second;
  std::string where = "clusters[" + cluster_name + "]";
  cfg.server = Scalar(c, "server");
  if (cfg.server.empty()) return InvalidArgument("kubeconfig: " + where + ".server is empty");
  cfg.tls_server_name = Scalar(c, "tls-server-name");
  if (c["insecure-skip-tls-verify"] && c["insecure-skip-tls-verify"].IsScalar()) {
    cfg.insecure_skip_tls_verify = c["insecure-skip-tls-verify"].as<bool>();
  }
  const std::string& cluster_dir = dirs.at("clusters/" + cluster_name);
  TEPHRA_RETURN_IF_ERROR(
      DataOrFile(c, "certificate-authority", cluster_dir, "kubeconfig: " + where, &cfg.ca_pem));
  if (!user_name.empty()) {
    auto user = e.users.find(user_name);
    if (user == e.users.end()) {
      return NotFound("kubeconfig: context \"" + context_name + "\" names user \"" + user_name +
                      "\", which does not exist");
    }
    const YAML::Node& u = user->second;
    std::string uwhere = "kubeconfig: users[" + user_name + "]";
    const std::string& user_dir = dirs.at("users/" + user_name);
    if (u["exec"] || u["auth-provider"]) {
      return FailedPrecondition(uwhere +
                                " uses an exec or auth-provider credential plugin, which Tephra "
                                "does not run; use a client certificate or a token");
    }
    TEPHRA_RETURN_IF_ERROR(
        DataOrFile(u, "client-certificate", user_dir, uwhere, &cfg.client_cert_pem));
    TEPHRA_RETURN_IF_ERROR(DataOrFile(u, "client-key", user_dir, uwhere, &cfg.client_key_pem));
    if (cfg.client_cert_pem.empty() != cfg.client_key_pem.empty()) {
      return InvalidArgument(uwhere + ": client certificate and client key must be given together");
    }
    cfg.bearer_token = Scalar(u, "token");
    std::string token_file = Scalar(u, "tokenFile");
    if (cfg.bearer_token.empty() && !token_file.empty()) {
      cfg.bearer_token_file = Resolve(token_file, user_dir);
    }
    if (!Scalar(u, "username").empty() || !Scalar(u, "password").empty()) {
      return FailedPrecondition(uwhere + " uses basic authentication, which Kubernetes removed");
    }
    cfg.impersonate_user = Scalar(u, "as");
  }
  return cfg;
}

StatusOr<YAML::Node> LoadYaml(const std::string& text, const std::string& source) {
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return InvalidArgument("kubeconfig " + source + ": " + e.what());
  }
}

std::string Getenv(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

}  // namespace

StatusOr<RestConfig> ParseKubeconfig(const std::string& text, const std::string& base_dir,
                                     const std::string& context) {
  TEPHRA_ASSIGN_OR_RETURN(YAML::Node doc, LoadYaml(text, "(inline)"));
  NamedEntries entries;
  std::map<std::string, std::string> dirs;
  try {
    TEPHRA_RETURN_IF_ERROR(CollectEntries(doc, base_dir, &entries, &dirs));
    return BuildFromEntries(entries, dirs, context);
  } catch (const YAML::Exception& e) {
    return InvalidArgument(std::string("kubeconfig: ") + e.what());
  }
}

StatusOr<RestConfig> LoadKubeconfig(const KubeconfigOptions& options) {
  std::vector<std::string> paths;
  if (!options.path.empty()) {
    paths.push_back(options.path);
  } else if (std::string env = Getenv("KUBECONFIG"); !env.empty()) {
    std::stringstream ss(env);
    for (std::string p; std::getline(ss, p, ':');) {
      if (!p.empty()) paths.push_back(p);
    }
  } else {
    std::string home = Getenv("HOME");
    if (home.empty()) return NotFound("kubeconfig: no --kubeconfig, KUBECONFIG or HOME");
    paths.push_back(home + "/.kube/config");
  }
  NamedEntries entries;
  std::map<std::string, std::string> dirs;
  int loaded = 0;
  for (const auto& path : paths) {
    StatusOr<std::string> text = ReadFile(path, "kubeconfig");
    if (!text.ok()) {
      // Like kubectl, a missing file in a KUBECONFIG list is skipped; an explicit one is not.
      if (!options.path.empty()) return text.status();
      continue;
    }
    TEPHRA_ASSIGN_OR_RETURN(YAML::Node doc, LoadYaml(*text, path));
    std::string dir = fs::absolute(fs::path(path)).parent_path().string();
    try {
      TEPHRA_RETURN_IF_ERROR(CollectEntries(doc, dir, &entries, &dirs).WithContext(path));
    } catch (const YAML::Exception& e) {
      return InvalidArgument("kubeconfig " + path + ": " + e.what());
    }
    ++loaded;
  }
  if (loaded == 0) return NotFound("kubeconfig: none of the files exist");
  try {
    return BuildFromEntries(entries, dirs, options.context);
  } catch (const YAML::Exception& e) {
    return InvalidArgument(std::string("kubeconfig: ") + e.what());
  }
}

StatusOr<RestConfig> InClusterConfig(const InClusterOptions& options) {
  std::string host = Getenv("KUBERNETES_SERVICE_HOST");
  std::string port = Getenv("KUBERNETES_SERVICE_PORT");
  if (host.empty() || port.empty()) {
    return NotFound("in-cluster config: KUBERNETES_SERVICE_HOST/PORT are not set");
  }
  RestConfig cfg;
  // IPv6 service hosts need brackets in the URL.
  bool v6 = host.find(':') != std::string::npos;
  cfg.server = "https://" + (v6 ? "[" + host + "]" : host) + ":" + port;
  TEPHRA_ASSIGN_OR_RETURN(std::string token, ReadFile(options.token_file, "in-cluster token"));
  (void)token;
  cfg.bearer_token_file = options.token_file;
  TEPHRA_ASSIGN_OR_RETURN(cfg.ca_pem, ReadFile(options.ca_file, "in-cluster CA"));
  StatusOr<std::string> ns = ReadFile(options.namespace_file, "in-cluster namespace");
  if (ns.ok()) {
    cfg.namespace_ = *ns;
    while (!cfg.namespace_.empty() &&
           std::isspace(static_cast<unsigned char>(cfg.namespace_.back()))) {
      cfg.namespace_.pop_back();
    }
  }
  cfg.context_name = "in-cluster";
  return cfg;
}

StatusOr<RestConfig> BuildConfig(const ClientFlags& flags) {
  StatusOr<RestConfig> cfg = InvalidArgument("unset");
  if (!flags.kubeconfig.empty() || !Getenv("KUBECONFIG").empty()) {
    cfg = LoadKubeconfig({flags.kubeconfig, flags.context});
  } else {
    cfg = InClusterConfig();
    if (!cfg.ok() && cfg.status().code() == StatusCode::kNotFound) {
      StatusOr<RestConfig> home = LoadKubeconfig({"", flags.context});
      if (home.ok()) {
        cfg = std::move(home);
      } else if (flags.master.empty()) {
        return NotFound("no Kubernetes configuration: not in a cluster (" + cfg.status().message() +
                        ") and " + home.status().message() + "; pass --kubeconfig or --master");
      } else {
        cfg = RestConfig{};
      }
    }
  }
  if (!cfg.ok()) return cfg.status();
  if (!flags.master.empty()) cfg->server = flags.master;
  if (flags.qps > 0) cfg->qps = flags.qps;
  if (flags.burst > 0) cfg->burst = flags.burst;
  return cfg;
}

}  // namespace tephra::kube
