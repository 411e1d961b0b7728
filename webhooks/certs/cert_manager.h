// The webhook's serving certificates, shared by every replica through one Secret:
//
//   ca.crt   CA certificates the API server should trust, newest first (the caBundle)
//   ca.key   the newest CA's key, so any replica can renew the serving certificate
//   tls.crt  the serving certificate
//   tls.key  its key
//
// A Secret made by Volcano's gen-admission-secret.sh (no ca.key) is used as it is while its
// serving certificate is good; renewing it then starts a new CA.
//
// Renewal is planned by a pure function (PlanCertificates) and carried out by CertManager:
//   * the serving certificate is renewed when it is missing, does not verify against the
//     bundle, lacks a required name, expires within `renew_before`, or was issued by an older
//     CA than the newest one for longer than `ca_grace` (the time the API server gets to pick up
//     a new caBundle before the serving certificate switches to it);
//   * a new CA is made when it expires within `ca_renew_before`, or when a serving certificate
//     must be issued and the newest CA's key is unknown; older CAs stay in the bundle until they
//     expire, so certificates they signed keep verifying.
//
// CertManager creates the Secret if absent (AlreadyExists: another replica won; its Secret is
// read back), updates it with optimistic concurrency (Conflict: re-read and re-plan), writes the
// files the HTTPS server serves, and calls its listeners when the material changes. It re-checks
// when the Secret changes (another replica renewed) and every `check_interval`.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "kube/client.h"
#include "kube/informer.h"
#include "sync/mutex.h"
#include "webhooks/certs/certificates.h"

namespace tephra::webhooks {

struct CertificateMaterial {
  std::string ca_bundle;  // ca.crt
  std::string ca_key;     // ca.key ("" when unknown)
  std::string cert;       // tls.crt
  std::string key;        // tls.key
  bool operator==(const CertificateMaterial&) const = default;
};

struct CertificatePolicy {
  std::string common_name = "tephra-admission";
  SubjectAltNames sans;  // every name the serving certificate must carry
  std::chrono::seconds ca_validity = std::chrono::hours(24 * 365 * 10);
  std::chrono::seconds ca_renew_before = std::chrono::hours(24 * 365 * 2);
  std::chrono::seconds cert_validity = std::chrono::hours(24 * 365);
  std::chrono::seconds renew_before = std::chrono::hours(24 * 30);
  std::chrono::seconds ca_grace = std::chrono::hours(1);
};

struct CertificatePlan {
  CertificateMaterial material;
  bool changed = false;
  std::string reason;  // why it changed, for the log
};

// What the Secret should hold at `now`, given what it holds (nullopt: no Secret yet).
StatusOr<CertificatePlan> PlanCertificates(const std::optional<CertificateMaterial>& current,
                                           const CertificatePolicy& policy, SystemTime now);

// Secret data (base64 values) <-> material.
std::optional<CertificateMaterial> MaterialFromSecret(std::string_view secret_json);
std::string SecretDataJson(const CertificateMaterial& material);

struct CertManagerOptions {
  std::string namespace_;
  std::string secret_name = "volcano-admission-secret";
  CertificatePolicy policy;
  std::string cert_dir;  // tls.crt, tls.key and ca.crt are written here
  std::chrono::milliseconds check_interval = std::chrono::minutes(10);
  std::chrono::milliseconds retry_interval = std::chrono::seconds(2);
};

class CertManager {
 public:
  using Listener = std::function<void(const CertificateMaterial&)>;

  CertManager(std::shared_ptr<kube::Client> client, CertManagerOptions options,
              base::ClockInterface& clock = base::RealClock());
  ~CertManager();
  CertManager(const CertManager&) = delete;
  CertManager& operator=(const CertManager&) = delete;

  // Called (on the manager's thread, or in Sync) after new material was written to the files.
  void AddListener(Listener listener);

  // One round: read the Secret, renew what needs renewing, store and write. Errors are the API
  // server's (retry later) or the file system's.
  Status Sync();
  // Sync until it succeeds or `timeout` passes (start-up: the files must exist before serving).
  Status SyncUntilReady(std::chrono::milliseconds timeout);

  // Watches the Secret (through `factory`) and syncs on its changes and every check_interval.
  void Start(kube::InformerFactory& factory);
  void Stop();

  std::string cert_file() const;
  std::string key_file() const;
  std::string ca_file() const;
  // The material last written (empty before the first successful Sync).
  CertificateMaterial current() const;

 private:
  StatusOr<CertificateMaterial> Reconcile();
  Status WriteFiles(const CertificateMaterial& material);
  void Loop();
  void Wake();

  std::shared_ptr<kube::Client> client_;
  const CertManagerOptions options_;
  base::ClockInterface& clock_;

  mutable sync::Mutex mu_;
  sync::CondVar cv_;
  bool stopped_ GUARDED_BY(mu_) = false;
  bool wake_ GUARDED_BY(mu_) = false;
  CertificateMaterial written_ GUARDED_BY(mu_);
  std::vector<Listener> listeners_ GUARDED_BY(mu_);
  sync::Mutex sync_mu_;  // one Sync at a time
  std::thread thread_;
};

}  // namespace tephra::webhooks
