#include "kube/daemon.h"

#include <charconv>
#include <cstdlib>
#include <fstream>
#include <random>
#include <unistd.h>

#include <glog/logging.h>

#include "kube/informer.h"
#include "metrics/metrics.h"

namespace tephra::kube {

void AddClientFlags(base::FlagSet& set, ClientFlags* flags) {
  set.AddString("kubeconfig", &flags->kubeconfig,
                "Path to a kubeconfig (default: $KUBECONFIG, in-cluster, ~/.kube/config).");
  set.AddString("context", &flags->context, "kubeconfig context (default: the current one).");
  set.AddString("master", &flags->master, "API server address; overrides the kubeconfig's.");
  set.AddDouble("kube-api-qps", &flags->qps, "Requests per second towards the API server.");
  set.AddInt("kube-api-burst", &flags->burst, "Burst of requests towards the API server.");
}

StatusOr<std::shared_ptr<Client>> ConnectFromFlags(const ClientFlags& flags,
                                                   const std::string& user_agent) {
  StatusOr<RestConfig> config = BuildConfig(flags);
  if (!config.ok()) {
    return Status(config.status().code(), "API server configuration: " + config.status().message());
  }
  config->user_agent = user_agent;
  return Client::FromConfig(*config);
}

std::string ProcessIdentity() {
  static const std::string identity = [] {
    char host[256] = {0};
    if (gethostname(host, sizeof host - 1) != 0) std::snprintf(host, sizeof host, "unknown");
    std::random_device rd;
    return std::string(host) + "_" + std::to_string(rd() % 1000000);
  }();
  return identity;
}

std::string DefaultDaemonNamespace() {
  for (const char* name : {"TEPHRA_NAMESPACE", "POD_NAMESPACE"}) {
    if (const char* ns = std::getenv(name); ns != nullptr && *ns != '\0') return ns;
  }
  std::ifstream in("/var/run/secrets/kubernetes.io/serviceaccount/namespace");
  std::string ns;
  if (in && std::getline(in, ns) && !ns.empty()) return ns;
  return "tephra-system";
}

void LeaderElectionFlags::Register(base::FlagSet& set) {
  set.AddBool("leader-elect", &enabled, "Act only while holding the leader lease.");
  set.AddString(
      "leader-elect-resource-namespace", &resource_namespace,
      "Namespace of the lease (default: $TEPHRA_NAMESPACE, the pod's, or tephra-system).");
  set.AddString("leader-elect-resource-name", &resource_name, "Name of the lease.");
  set.AddDuration("leader-elect-lease-duration", &lease_duration,
                  "How long a lease lasts unrenewed before a standby may take it.");
  set.AddDuration("leader-elect-renew-deadline", &renew_deadline,
                  "How long the leader keeps trying to renew before it stops acting.");
  set.AddDuration("leader-elect-retry-period", &retry_period, "Time between lease attempts.");
}

StatusOr<LeaderElectionConfig> LeaderElectionFlags::Config(const std::string& identity) const {
  LeaderElectionConfig config;
  config.namespace_ = resource_namespace.empty() ? DefaultDaemonNamespace() : resource_namespace;
  config.name = resource_name;
  config.identity = identity;
  config.lease_duration = lease_duration;
  config.renew_deadline = renew_deadline;
  config.retry_period = retry_period;
  if (config.name.empty())
    return InvalidArgument("--leader-elect-resource-name: must not be empty");
  TEPHRA_RETURN_IF_ERROR(LeaderElector::Validate(config));
  return config;
}

StatusOr<std::pair<std::string, uint16_t>> SplitHostPort(const std::string& flag,
                                                         const std::string& address) {
  size_t colon = address.rfind(':');
  if (colon == std::string::npos) {
    return InvalidArgument("--" + flag + " " + address + ": want host:port");
  }
  std::string host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host.empty()) host = "0.0.0.0";
  unsigned port = 0;
  const char* begin = address.data() + colon + 1;
  const char* end = address.data() + address.size();
  auto [last, ec] = std::from_chars(begin, end, port);
  if (begin == end || ec != std::errc() || last != end || port > 65535) {
    return InvalidArgument("--" + flag + " " + address + ": port must be a number from 0 to 65535");
  }
  return std::make_pair(host, static_cast<uint16_t>(port));
}

StatusOr<std::unique_ptr<base::HttpServer>> ServeHealth(const HealthServing& serving,
                                                        const base::HealthChecks& checks,
                                                        const metrics::Registry& registry) {
  if (serving.address == "0") return std::unique_ptr<base::HttpServer>();
  TEPHRA_ASSIGN_OR_RETURN(auto host_port, SplitHostPort(serving.flag, serving.address));
  if (host_port.second == 0 && !serving.allow_ephemeral) return std::unique_ptr<base::HttpServer>();
  base::HttpServerOptions options;
  options.address = host_port.first;
  options.port = host_port.second;
  options.threads = 1;
  // Probes and scrapes: GET requests from a few clients.
  options.max_connections = 64;
  options.max_body_bytes = 64 * 1024;
  options.max_buffered_bytes = 1024 * 1024;
  options.name = "health server";
  auto server = std::make_unique<base::HttpServer>(options);
  TEPHRA_RETURN_IF_ERROR(base::MountHealthEndpoints(*server, checks, registry));
  Status started = server->Start();
  if (!started.ok()) {
    return Status(started.code(),
                  "--" + serving.flag + " " + serving.address + ": " + started.message());
  }
  LOG(INFO) << "serving /healthz, /readyz and /metrics on " << options.address << ":"
            << server->port();
  return server;
}

StatusOr<std::unique_ptr<LeaseRunner>> LeaseRunner::Create(std::shared_ptr<Client> client,
                                                           const LeaderElectionFlags& flags,
                                                           const std::string& identity) {
  std::unique_ptr<LeaseRunner> runner(new LeaseRunner());
  if (!flags.enabled) return runner;
  TEPHRA_ASSIGN_OR_RETURN(LeaderElectionConfig config, flags.Config(identity));
  LeaseRunner* self = runner.get();
  LeaderCallbacks lc;
  lc.on_started_leading = [self, config] {
    LOG(INFO) << "leading " << config.namespace_ << "/" << config.name << " as " << config.identity;
    self->leading_ = true;
    self->callbacks_.lead();
  };
  lc.on_stopped_leading = [self] {
    if (self->leading_) self->callbacks_.stop_leading();
    self->leading_ = false;
  };
  lc.on_new_leader = [](const std::string& id) { LOG(INFO) << "leader is " << id; };
  runner->elector_ = std::make_unique<LeaderElector>(std::move(client), config, std::move(lc));
  return runner;
}

bool LeaseRunner::IsLeader() const {
  return elector_ == nullptr || elector_->IsLeader();
}

int LeaseRunner::Run(base::ShutdownSignal& shutdown, LeaseCallbacks callbacks) {
  callbacks_ = std::move(callbacks);
  if (elector_ == nullptr) {
    callbacks_.lead();
    shutdown.Wait();
    callbacks_.stop_leading();
    return 0;
  }
  shutdown.OnShutdown([this] { elector_->Stop(); });
  Status s = elector_->Run();
  if (!s.ok() && !shutdown.Requested()) {
    LOG(ERROR) << "leader election: " << s.ToString() << "; exiting";
    return 1;
  }
  return 0;
}

bool StartAndSyncInformers(InformerFactory& informers, const std::function<bool()>& keep_going) {
  informers.Start();
  for (int waited = 1; !informers.WaitForCacheSync(std::chrono::seconds(1)); ++waited) {
    if (!keep_going()) return false;
    if (waited % 5 == 0) LOG(INFO) << "waiting for caches to sync";
  }
  return keep_going();
}

DaemonRunner::DaemonRunner(DaemonOptions options, base::ShutdownSignal& shutdown,
                           metrics::Registry* registry)
    : options_(std::move(options)),
      shutdown_(shutdown),
      registry_(registry != nullptr ? registry : &metrics::DefaultRegistry()) {}

DaemonRunner::~DaemonRunner() {
  if (starter_.joinable()) starter_.join();
}

bool DaemonRunner::Ready() const {
  return running_.load() || !lease_->IsLeader();
}

bool DaemonRunner::KeepLeading() const {
  return !shutdown_.Requested() && leading_.load();
}

int DaemonRunner::Run(std::unique_ptr<Daemon> daemon) {
  StatusOr<std::shared_ptr<Client>> client = ConnectFromFlags(options_.client, options_.component);
  if (!client.ok()) {
    LOG(ERROR) << client.status().ToString();
    return kExitFailure;
  }
  return Run(std::move(daemon), *std::move(client));
}

int DaemonRunner::Run(std::unique_ptr<Daemon> parts, std::shared_ptr<Client> client) {
  const std::string identity = ProcessIdentity();
  StatusOr<std::unique_ptr<LeaseRunner>> lease =
      LeaseRunner::Create(client, options_.leader, identity);
  if (!lease.ok()) {
    LOG(ERROR) << lease.status().message();
    return kExitBadConfiguration;
  }
  lease_ = std::move(*lease);

  EventRecorderOptions event_options;
  event_options.component = options_.component;
  event_options.instance = identity;
  event_options.registry = registry_;
  event_options.source = options_.event_source;
  EventRecorder events(client, event_options);
  base::HealthChecks checks;
  // Declared after the recorder and the checks, so destroyed before them: its work records
  // events, and its checks read it.
  std::unique_ptr<Daemon> daemon = std::move(parts);
  auto fail = [](const StartStatus& s) {
    LOG(ERROR) << s.status().message();
    return s.exit_code();
  };

  DaemonContext context;
  context.client = client;
  context.events = &events;
  context.registry = registry_;
  context.identity = identity;
  context.shutdown = &shutdown_;
  context.runner = this;
  if (StartStatus s = daemon->Build(context, checks); !s.ok()) return fail(s);
  StatusOr<std::unique_ptr<base::HttpServer>> health =
      ServeHealth(options_.health, checks, *registry_);
  if (!health.ok()) {
    LOG(ERROR) << health.status().message();
    return kExitFailure;
  }
  if (StartStatus s = daemon->Start(); !s.ok()) return fail(s);

  LeaseCallbacks callbacks;
  callbacks.lead = [this, work = daemon.get()] {
    leading_ = true;
    starter_ = std::thread([this, work] {
      if (work->Lead([this] { return KeepLeading(); })) running_ = true;
    });
  };
  callbacks.stop_leading = [this, work = daemon.get()] {
    leading_ = false;
    if (starter_.joinable()) starter_.join();
    work->StopLeading();
    running_ = false;
  };
  int exit_code = lease_->Run(shutdown_, std::move(callbacks));
  daemon->Stop();
  events.Flush(std::chrono::seconds(2));
  events.Stop();
  if (*health) (*health)->Stop(std::chrono::seconds(2));
  LOG(INFO) << "stopped";
  return exit_code;
}

}  // namespace tephra::kube
