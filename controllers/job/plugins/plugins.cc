// The plugin registry, argument parsing, the API-server ObjectWriter and the small plugins
// (env, mpi, pytorch, tensorflow). svc and ssh have files of their own.
#include <algorithm>
#include <charconv>

#include <rapidjson/document.h>

#include "api/labels.h"
#include "base/strings.h"
#include "controllers/job/builders.h"
#include "controllers/job/plugins/plugin.h"
#include "json/json.h"

namespace tephra::controllers::job {
namespace {

constexpr std::string_view kKnownPlugins = "env, mpi, pytorch, ssh, svc, tensorflow";

// spec.<key> of a task template, read from its JSON (hostname and subdomain are not modelled).
std::string TemplateSpecString(const api::TaskSpec& task, const char* key) {
  if (task.template_.json.empty()) return "";
  json::Document doc;
  if (!json::Parse(task.template_.json, &doc).ok()) return "";
  json::Errors errors;
  return json::Reader(&doc, &errors)["spec"][key].String();
}

const api::TaskSpec* FindTask(const api::Job& job, std::string_view name) {
  return job.Task(name);
}

class EnvPlugin : public JobPlugin {
 public:
  std::string_view Name() const override { return "env"; }
  Status OnPodCreate(const api::Job&, const PodInfo& info, PodDraft* pod) override {
    const std::string index = std::to_string(info.index);
    pod->AddEnv("VK_TASK_INDEX", index);
    pod->AddEnv("VC_TASK_INDEX", index);
    return Status::Ok();
  }
};

class MpiPlugin : public JobPlugin {
 public:
  MpiPlugin(std::string master, std::string worker, int32_t port)
      : master_(std::move(master)), worker_(std::move(worker)), port_(port) {}
  std::string_view Name() const override { return "mpi"; }
  Status OnPodCreate(const api::Job& job, const PodInfo& info, PodDraft* pod) override {
    if (info.task != nullptr && info.task->name == master_) {
      std::vector<std::string> hosts;
      if (const api::TaskSpec* worker = FindTask(job, worker_)) hosts = TaskHosts(job, *worker);
      pod->AddEnv("MPI_HOST", base::Join(hosts, ","), false);
    }
    pod->AddContainerPort("mpijob-port", port_);
    return Status::Ok();
  }

 private:
  std::string master_, worker_;
  int32_t port_;
};

class PytorchPlugin : public JobPlugin {
 public:
  struct Options {
    std::string master, worker;
    int32_t port = 23456;
    bool wait_master = false;
    int32_t wait_timeout = 300;
    std::string wait_image;
  };
  explicit PytorchPlugin(Options o) : o_(std::move(o)) {}
  std::string_view Name() const override { return "pytorch"; }
  Status OnPodCreate(const api::Job& job, const PodInfo& info, PodDraft* pod) override {
    if (info.task == nullptr) return Status::Ok();
    const bool is_master = info.task->name == o_.master;
    const bool is_worker = info.task->name == o_.worker;
    if (!is_master && !is_worker) return Status::Ok();
    const api::TaskSpec* master = FindTask(job, o_.master);
    const api::TaskSpec* worker = FindTask(job, o_.worker);
    const int32_t masters = master ? master->replicas : 0;
    const int32_t workers = worker ? worker->replicas : 0;
    std::string master_addr;
    if (master) {
      std::vector<std::string> hosts = TaskHosts(job, *master);
      if (!hosts.empty()) master_addr = hosts.front();
    }
    const int32_t rank = is_master ? info.index : info.index + masters;
    pod->AddEnv("MASTER_ADDR", master_addr, false);
    pod->AddEnv("MASTER_PORT", std::to_string(o_.port), false);
    pod->AddEnv("WORLD_SIZE", std::to_string(masters + workers), false);
    pod->AddEnv("RANK", std::to_string(rank), false);
    pod->AddContainerPort("pytorchjob-port", o_.port);
    if (is_worker && o_.wait_master && !master_addr.empty()) {
      json::Writer c;
      std::string script = "timeout " + std::to_string(o_.wait_timeout) + " sh -c 'until nc -z " +
                           master_addr + " " + std::to_string(o_.port) +
                           "; do echo waiting for master; sleep 2; done'";
      c.StartObject().Field("name", "wait-for-master").Field("image", o_.wait_image);
      c.Key("command").StartArray().String("sh").String("-c").String(script).EndArray();
      c.EndObject();
      pod->AddInitContainer(c.str());
    }
    return Status::Ok();
  }

 private:
  Options o_;
};

class TensorflowPlugin : public JobPlugin {
 public:
  TensorflowPlugin(std::map<std::string, std::string> role_by_task, int32_t port)
      : role_by_task_(std::move(role_by_task)), port_(port) {}
  std::string_view Name() const override { return "tensorflow"; }
  Status OnPodCreate(const api::Job& job, const PodInfo& info, PodDraft* pod) override {
    if (info.task == nullptr) return Status::Ok();
    auto role = role_by_task_.find(info.task->name);
    if (role == role_by_task_.end()) return Status::Ok();
    json::Writer w;
    w.StartObject().Key("cluster").StartObject();
    for (std::string_view type : {"ps", "worker", "chief", "evaluator"}) {
      for (const auto& [task_name, task_role] : role_by_task_) {
        if (task_role != type) continue;
        const api::TaskSpec* task = FindTask(job, task_name);
        if (task == nullptr || task->replicas == 0) continue;
        w.Key(type).StartArray();
        for (const std::string& host : TaskHosts(job, *task)) {
          w.String(host + ":" + std::to_string(port_));
        }
        w.EndArray();
      }
    }
    w.EndObject();
    w.Key("task").StartObject().Field("type", role->second).Field("index", info.index).EndObject();
    w.EndObject();
    pod->AddEnv("TF_CONFIG", w.str(), false);
    return Status::Ok();
  }

 private:
  std::map<std::string, std::string> role_by_task_;  // task name → TF role
  int32_t port_;
};

}  // namespace

Status ClientObjectWriter::Ensure(const kube::Resource& resource, const std::string& namespace_,
                                  const std::string& name, const std::string& object,
                                  bool replace) {
  StatusOr<std::string> created = client_.Create(resource, namespace_, object);
  if (created.ok()) return Status::Ok();
  if (created.status().code() != StatusCode::kAlreadyExists) {
    return created.status().WithContext("creating " + resource.plural + " " + name);
  }
  if (!replace) return Status::Ok();
  StatusOr<std::string> patched =
      client_.Patch(resource, namespace_, name, kube::PatchType::kMerge, object);
  if (!patched.ok())
    return patched.status().WithContext("updating " + resource.plural + " " + name);
  return Status::Ok();
}

PluginArgs::PluginArgs(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view a = args[i];
    if (a.empty() || a[0] != '-') continue;
    a.remove_prefix(a.size() > 1 && a[1] == '-' ? 2 : 1);
    size_t eq = a.find('=');
    if (eq != std::string_view::npos) {
      values_[std::string(a.substr(0, eq))] = std::string(a.substr(eq + 1));
    } else if (i + 1 < args.size() && !args[i + 1].empty() && args[i + 1][0] != '-') {
      values_[std::string(a)] = args[++i];
    } else {
      values_[std::string(a)] = "true";
    }
  }
}

std::string PluginArgs::String(std::string_view name, std::string_view fallback) const {
  auto it = values_.find(name);
  return it == values_.end() ? std::string(fallback) : it->second;
}

StatusOr<int32_t> PluginArgs::Int(std::string_view plugin, std::string_view name,
                                  int32_t fallback) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  int32_t v = 0;
  const std::string& text = it->second;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return InvalidArgument("job plugin " + std::string(plugin) + ": --" + std::string(name) + "=" +
                           text + " is not an integer");
  }
  return v;
}

StatusOr<bool> PluginArgs::Bool(std::string_view plugin, std::string_view name,
                                bool fallback) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  if (it->second == "true" || it->second == "1") return true;
  if (it->second == "false" || it->second == "0") return false;
  return InvalidArgument("job plugin " + std::string(plugin) + ": --" + std::string(name) + "=" +
                         it->second + " is not a boolean");
}

std::vector<std::string> TaskHosts(const api::Job& job, const api::TaskSpec& task) {
  const std::string hostname = TemplateSpecString(task, "hostname");
  std::string subdomain = TemplateSpecString(task, "subdomain");
  if (subdomain.empty()) subdomain = job.metadata.name;
  std::vector<std::string> hosts;
  if (!hostname.empty()) {
    if (task.replicas > 0) hosts.push_back(hostname + "." + subdomain);
    return hosts;
  }
  for (int32_t i = 0; i < task.replicas; ++i) {
    hosts.push_back(PodName(job.metadata.name, task.name, i) + "." + subdomain);
  }
  return hosts;
}

std::unique_ptr<JobPlugin> NewEnvPlugin() {
  return std::make_unique<EnvPlugin>();
}

StatusOr<std::unique_ptr<JobPlugin>> NewMpiPlugin(const PluginArgs& args) {
  TEPHRA_ASSIGN_OR_RETURN(int32_t port, args.Int("mpi", "port", 22));
  return std::unique_ptr<JobPlugin>(std::make_unique<MpiPlugin>(
      args.String("master", "master"), args.String("worker", "worker"), port));
}

StatusOr<std::unique_ptr<JobPlugin>> NewPytorchPlugin(const PluginArgs& args) {
  PytorchPlugin::Options o;
  o.master = args.String("master", "master");
  o.worker = args.String("worker", "worker");
  TEPHRA_ASSIGN_OR_RETURN(o.port, args.Int("pytorch", "port", 23456));
  TEPHRA_ASSIGN_OR_RETURN(o.wait_master, args.Bool("pytorch", "wait-master-enabled", false));
  TEPHRA_ASSIGN_OR_RETURN(o.wait_timeout, args.Int("pytorch", "wait-master-timeout", 300));
  o.wait_image = args.String("wait-master-image", "busybox:1.36.1");
  return std::unique_ptr<JobPlugin>(std::make_unique<PytorchPlugin>(std::move(o)));
}

StatusOr<std::unique_ptr<JobPlugin>> NewTensorflowPlugin(const PluginArgs& args) {
  TEPHRA_ASSIGN_OR_RETURN(int32_t port, args.Int("tensorflow", "port", 2222));
  std::map<std::string, std::string> roles;
  roles[args.String("ps", "ps")] = "ps";
  roles[args.String("worker", "worker")] = "worker";
  roles[args.String("chief", "chief")] = "chief";
  roles[args.String("evaluator", "evaluator")] = "evaluator";
  return std::unique_ptr<JobPlugin>(std::make_unique<TensorflowPlugin>(std::move(roles), port));
}

StatusOr<std::unique_ptr<JobPlugin>> NewJobPlugin(std::string_view name,
                                                  const std::vector<std::string>& args) {
  PluginArgs parsed(args);
  if (name == "env") return NewEnvPlugin();
  if (name == "svc") return NewSvcPlugin(parsed);
  if (name == "ssh") return NewSshPlugin(parsed);
  if (name == "mpi") return NewMpiPlugin(parsed);
  if (name == "pytorch") return NewPytorchPlugin(parsed);
  if (name == "tensorflow") return NewTensorflowPlugin(parsed);
  return InvalidArgument("unknown job plugin \"" + std::string(name) +
                         "\"; known: " + std::string(kKnownPlugins));
}

StatusOr<std::vector<std::unique_ptr<JobPlugin>>> JobPlugins(const api::Job& job) {
  std::vector<std::unique_ptr<JobPlugin>> plugins;
  for (const auto& [name, args] : job.spec.plugins) {
    TEPHRA_ASSIGN_OR_RETURN(auto plugin, NewJobPlugin(name, args));
    plugins.push_back(std::move(plugin));
  }
  return plugins;
}

}  // namespace tephra::controllers::job
