#include "webhooks/daemon.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

#include <glog/logging.h>

#include "kube/daemon.h"
#include "kube/informer.h"
#include "metrics/metrics.h"
#include "webhooks/admission/cluster_cache.h"
#include "webhooks/admission/files.h"
#include "webhooks/admission/handlers.h"
#include "webhooks/certs/ca_bundle_patcher.h"
#include "webhooks/certs/cert_manager.h"
#include "webhooks/server/server.h"

namespace tephra::webhooks {
namespace {

constexpr auto kMaintenanceInterval = std::chrono::seconds(10);

// A private directory for generated certificate files, removed with its files at exit.
class CertDir {
 public:
  static StatusOr<std::unique_ptr<CertDir>> Make(const std::string& requested) {
    if (!requested.empty()) {
      if (::mkdir(requested.c_str(), 0700) != 0 && errno != EEXIST) {
        return Internal("creating " + requested + ": " + std::strerror(errno));
      }
      return std::unique_ptr<CertDir>(new CertDir(requested, false));
    }
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern =
        std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/tephra-admission-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
      return Internal("creating a certificate directory: " + std::string(std::strerror(errno)));
    }
    return std::unique_ptr<CertDir>(new CertDir(pattern, true));
  }
  ~CertDir() {
    if (!temporary_) return;
    for (const char* f : {"tls.crt", "tls.key", "ca.crt"}) ::unlink((path_ + "/" + f).c_str());
    ::rmdir(path_.c_str());
  }
  const std::string& path() const { return path_; }

 private:
  CertDir(std::string path, bool temporary) : path_(std::move(path)), temporary_(temporary) {}
  std::string path_;
  bool temporary_;
};

// Handler options and the union of what the enabled paths need.
HandlerOptions MakeHandlerOptions(const AdmissionOptions& options,
                                  std::shared_ptr<const ResourceGroupSource> groups) {
  HandlerOptions h;
  h.job_defaults.scheduler_name = options.scheduler_names.front();
  h.queue_validation.max_queue_depth = options.max_queue_depth;
  h.queue_validation.enable_queue_allocated_pods_check = options.enable_queue_allocated_pods_check;
  h.queue_validation.enable_root_queue_protection = options.enable_root_queue_protection;
  h.scheduler_names = options.scheduler_names;
  h.resource_groups = std::move(groups);
  return h;
}

PathNeeds NeedsOfAll(const std::vector<std::string>& paths) {
  PathNeeds all;
  for (const std::string& path : paths) {
    StatusOr<PathNeeds> needs = NeedsOf(path);
    if (!needs.ok()) continue;  // Finish() rejected unknown paths already
    all.queues = all.queues || needs->queues;
    all.namespaces = all.namespaces || needs->namespaces;
  }
  return all;
}

class Daemon {
 public:
  Daemon(const AdmissionOptions& options, base::ShutdownSignal& shutdown)
      : options_(options), shutdown_(shutdown), registry_(metrics::DefaultRegistry()) {}

  int Run() {
    if (Status s = StartHealthServer(); !s.ok()) return Fail(s);
    StatusOr<std::shared_ptr<kube::Client>> client =
        kube::ConnectFromFlags(options_.client, "tephra-admission");
    if (!client.ok()) return Fail(client.status());
    client_ = *client;
    factory_ = std::make_unique<kube::InformerFactory>(client_);

    if (Status s = BuildRouter(); !s.ok()) return Fail(s);
    if (Status s = PrepareCertificates(); !s.ok()) {
      if (shutdown_.Requested()) return Stop();
      return Fail(s);
    }
    if (Status s = StartWebhookServer(); !s.ok()) return Fail(s);
    if (patcher_ != nullptr) patcher_->Start(*factory_);
    if (cert_manager_ != nullptr) cert_manager_->Start(*factory_);
    factory_->Start();
    PublishCaBundle();
    std::thread maintenance([this] { Maintain(); });
    shutdown_.Wait();
    LOG(INFO) << "shutting down: " << shutdown_.Reason();
    maintenance.join();
    return Stop();
  }

 private:
  int Fail(const Status& s) {
    LOG(ERROR) << "tephra-admission cannot start: " << s.ToString();
    Stop();
    return kube::kExitFailure;
  }

  int Stop() {
    if (server_ != nullptr) {
      server_->Stop(options_.graceful_shutdown_time);
      if (const size_t stuck = server_->abandoned_reviews(); stuck > 0) {
        // Their clients got 503 already; the reviews still use the caches, which must not be
        // destroyed under them. Shutdown is bounded: leave now.
        LOG(WARNING) << "exiting with " << stuck << " admission reviews still running";
        cert_dir_.reset();
        google::FlushLogFiles(google::GLOG_INFO);
        std::_Exit(0);
      }
    }
    if (patcher_ != nullptr) patcher_->Stop();
    if (cert_manager_ != nullptr) cert_manager_->Stop();
    if (factory_ != nullptr) factory_->Stop();
    return 0;
  }

  Status StartHealthServer() {
    AdmissionServerOptions server;
    server.address = options_.address;
    server.port = static_cast<uint16_t>(options_.port);
    server.threads = options_.threads;
    server.max_queued_requests = options_.max_queued_requests;
    server.max_connections = options_.max_connections;
    server.max_buffered_bytes = int64_t{options_.max_buffered_request_mib} << 20;
    server.idle_timeout = options_.idle_timeout;
    server.request_timeout = options_.request_timeout;
    server.health_address = options_.healthz_address;
    server_ = std::make_unique<AdmissionServer>(server, registry_);
    TEPHRA_RETURN_IF_ERROR(server_->AddReadinessCheck("serving", [this] {
      return serving_.load() ? Status::Ok() : Unavailable("the webhook server has not started");
    }));
    TEPHRA_RETURN_IF_ERROR(server_->AddReadinessCheck("informers-synced", [this] {
      return cache_ == nullptr ? Unavailable("caches not created yet") : cache_->Synced();
    }));
    return server_->StartHealth();
  }

  Status BuildRouter() {
    std::shared_ptr<const ResourceGroupSource> groups;
    if (!options_.admission_conf.empty()) {
      StatusOr<std::shared_ptr<ResourceGroupFile>> file =
          ResourceGroupFile::Open(options_.admission_conf);
      if (!file.ok()) return file.status().WithContext("--admission-conf");
      group_file_ = *file;
      groups = group_file_;
    }
    cache_ = std::make_unique<ClusterCache>(*factory_, NeedsOfAll(options_.enabled_admission),
                                            registry_);
    HandlerOptions handler_options = MakeHandlerOptions(options_, std::move(groups));
    for (const std::string& path : options_.enabled_admission) {
      TEPHRA_ASSIGN_OR_RETURN(auto handler, NewHandler(path, handler_options, cache_->view()));
      TEPHRA_ASSIGN_OR_RETURN(PathNeeds needs, NeedsOf(path));
      std::function<Status()> ready;
      if (needs.queues || needs.namespaces) {
        ready = [cache = cache_.get(), needs] {
          if (needs.queues) TEPHRA_RETURN_IF_ERROR(cache->QueuesSynced());
          return needs.namespaces ? cache->NamespacesSynced() : Status::Ok();
        };
      }
      TEPHRA_RETURN_IF_ERROR(server_->AddAdmission(path, std::move(handler), std::move(ready)));
    }
    return Status::Ok();
  }

  Status PrepareCertificates() {
    WebhookConfigSelector selector =
        SelectorForPaths(options_.webhook_config_name_prefix, options_.enabled_admission,
                         options_.webhook_config_label_selector);
    if (!options_.generates_certificates()) {
      cert_file_ = options_.tls_cert_file;
      key_file_ = options_.tls_private_key_file;
      if (!options_.ca_cert_file.empty()) {
        patcher_ = std::make_unique<CaBundlePatcher>(client_, std::move(selector));
      }
      return Status::Ok();
    }
    TEPHRA_ASSIGN_OR_RETURN(cert_dir_, CertDir::Make(options_.cert_dir));
    CertManagerOptions cert;
    cert.namespace_ = options_.namespace_;
    cert.secret_name = options_.secret_name;
    cert.cert_dir = cert_dir_->path();
    cert.policy.sans = ServiceDnsNames(options_.service_name, options_.namespace_);
    for (const std::string& san : options_.extra_sans) {
      TEPHRA_RETURN_IF_ERROR(AddSubjectAltName(san, &cert.policy.sans));
    }
    cert_manager_ = std::make_unique<CertManager>(client_, std::move(cert));
    patcher_ = std::make_unique<CaBundlePatcher>(client_, std::move(selector));
    cert_file_ = cert_manager_->cert_file();
    key_file_ = cert_manager_->key_file();
    // No serving without certificates: keep trying (the API server may still be coming up, or
    // RBAC not yet granted) until they are there or shutdown is requested.
    LOG(INFO) << "obtaining certificates from Secret " << options_.namespace_ << "/"
              << options_.secret_name;
    while (true) {
      Status s = cert_manager_->SyncUntilReady(std::chrono::seconds(5));
      if (s.ok() || shutdown_.Requested()) return s;
    }
  }

  Status StartWebhookServer() {
    server_->SetCertificateFiles(cert_file_, key_file_);
    TEPHRA_RETURN_IF_ERROR(server_->StartWebhooks());
    if (cert_manager_ != nullptr) {
      // Renewed material (ours or another replica's): serve it and publish its CA bundle.
      cert_manager_->AddListener([this](const CertificateMaterial& material) {
        if (Status s = server_->ReloadTls(); !s.ok()) {
          LOG(WARNING) << "reloading the serving certificate: " << s.ToString();
        }
        if (patcher_ != nullptr) patcher_->SetCaBundle(material.ca_bundle);
      });
    }
    serving_ = true;
    return Status::Ok();
  }

  void PublishCaBundle() {
    if (patcher_ == nullptr) return;
    if (cert_manager_ != nullptr) {
      patcher_->SetCaBundle(cert_manager_->current().ca_bundle);
      return;
    }
    std::string stamp = FileStamp(options_.ca_cert_file);
    if (stamp == ca_file_stamp_) return;
    StatusOr<std::string> bundle = ReadWholeFile(options_.ca_cert_file);
    if (!bundle.ok()) {
      LOG(WARNING) << "--ca-cert-file: " << bundle.status().message();
      return;
    }
    ca_file_stamp_ = stamp;
    patcher_->SetCaBundle(*bundle);
  }

  // Files that change under us: the resource-group configuration and a given CA bundle.
  void Maintain() {
    while (!shutdown_.WaitFor(kMaintenanceInterval)) {
      if (group_file_ != nullptr) {
        StatusOr<bool> reloaded = group_file_->ReloadIfChanged();
        if (!reloaded.ok()) {
          LOG(WARNING) << "--admission-conf not reloaded: " << reloaded.status().message();
        } else if (*reloaded) {
          LOG(INFO) << "reloaded resource groups from " << options_.admission_conf;
        }
      }
      if (cert_manager_ == nullptr) PublishCaBundle();
    }
  }

  const AdmissionOptions& options_;
  base::ShutdownSignal& shutdown_;
  metrics::Registry& registry_;
  std::atomic<bool> serving_{false};

  std::shared_ptr<kube::Client> client_;
  std::unique_ptr<kube::InformerFactory> factory_;
  std::unique_ptr<ClusterCache> cache_;
  std::shared_ptr<ResourceGroupFile> group_file_;
  std::unique_ptr<CertDir> cert_dir_;
  std::unique_ptr<CertManager> cert_manager_;
  std::unique_ptr<CaBundlePatcher> patcher_;
  std::string cert_file_;
  std::string key_file_;
  std::string ca_file_stamp_;
  // Last, so that it stops first: its handlers use the caches above.
  std::unique_ptr<AdmissionServer> server_;
};

}  // namespace

int RunAdmission(const AdmissionOptions& options, base::ShutdownSignal& shutdown) {
  Daemon daemon(options, shutdown);
  return daemon.Run();
}

}  // namespace tephra::webhooks
