#include "webhooks/certs/cert_manager.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

#include <glog/logging.h>
#include <rapidjson/document.h>

#include "base/base64.h"
#include "base/strings.h"
#include "base/time.h"

namespace tephra::webhooks {
namespace {

constexpr const char* kCaCertKey = "ca.crt";
constexpr const char* kCaKeyKey = "ca.key";
constexpr const char* kCertKey = "tls.crt";
constexpr const char* kKeyKey = "tls.key";
constexpr int kMaxWriteAttempts = 5;

struct ParsedCa {
  std::string pem;
  CertificateInfo info;
};

// The CA certificates still worth trusting: readable, CAs, not expired.
std::vector<ParsedCa> LiveCas(const std::string& bundle, SystemTime now) {
  std::vector<ParsedCa> out;
  if (bundle.empty()) return out;
  StatusOr<std::vector<std::string>> pems = SplitCertificates(bundle);
  if (!pems.ok()) return out;
  for (std::string& pem : *pems) {
    StatusOr<CertificateInfo> info = InspectCertificate(pem);
    if (info.ok() && info->is_ca && info->not_after > now) out.push_back({std::move(pem), *info});
  }
  return out;
}

std::string Bundle(const std::vector<ParsedCa>& cas) {
  std::string out;
  for (const auto& ca : cas) out += ca.pem;
  return out;
}

// Why the serving certificate must be replaced now ("" when it may stay). Problems that make
// it unusable count at once; age and issuer only once the newest CA has been published for
// `ca_grace`, so that the API server trusts the CA before it meets a certificate it signed.
std::string ServingCertificateProblem(const CertificateMaterial& m,
                                      const std::vector<ParsedCa>& cas,
                                      const CertificatePolicy& policy, SystemTime now) {
  if (m.cert.empty() || m.key.empty()) return "no serving certificate yet";
  StatusOr<CertificateInfo> info = InspectCertificate(m.cert);
  if (!info.ok()) return "the serving certificate is unreadable (" + info.status().message() + ")";
  if (!KeyMatchesCertificate(m.cert, m.key)) return "tls.key does not belong to tls.crt";
  if (cas.empty()) return "no valid CA";
  Status verified = VerifyServingCertificate(m.cert, Bundle(cas), now);
  if (!verified.ok()) return "the serving certificate " + verified.message();
  if (!info->sans.Covers(policy.sans)) return "the serving certificate lacks required names";
  bool newest_ca_published =
      now - cas.front().info.not_before >= policy.ca_grace + kCertificateBackdate;
  if (!newest_ca_published) return "";
  if (info->not_after - now < policy.renew_before) {
    return "the serving certificate expires at " + base::FormatTime(info->not_after);
  }
  if (!VerifyServingCertificate(m.cert, cas.front().pem, now).ok()) {
    return "the serving certificate was issued by an older CA";
  }
  return "";
}

std::string CaName(SystemTime now) {
  return "tephra-admission-ca@" +
         std::to_string(
             std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count());
}

// Writes `content` to `path` through a temporary file and a rename, so a reader sees the old
// or the new file, never half of one.
Status WriteFileAtomically(const std::string& path, const std::string& content, mode_t mode) {
  std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return Internal("creating " + tmp + ": " + std::strerror(errno));
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::string error = std::strerror(errno);
      ::close(fd);
      return Internal("writing " + tmp + ": " + error);
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    return Internal("closing " + tmp + ": " + std::strerror(errno));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return Internal("renaming " + tmp + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace

StatusOr<CertificatePlan> PlanCertificates(const std::optional<CertificateMaterial>& current,
                                           const CertificatePolicy& policy, SystemTime now) {
  CertificateMaterial m = current.value_or(CertificateMaterial{});
  std::vector<std::string> reasons;
  std::vector<ParsedCa> cas = LiveCas(m.ca_bundle, now);
  bool can_sign = !cas.empty() && KeyMatchesCertificate(cas.front().pem, m.ca_key);
  bool ca_expiring = !cas.empty() && cas.front().info.not_after - now < policy.ca_renew_before;
  std::string problem = ServingCertificateProblem(m, cas, policy, now);

  if (cas.empty() || ca_expiring || (!problem.empty() && !can_sign)) {
    if (cas.empty()) {
      reasons.push_back("no valid CA");
    } else if (ca_expiring) {
      reasons.push_back("the CA expires at " + base::FormatTime(cas.front().info.not_after));
    } else {
      reasons.push_back("the CA's key is unknown");
    }
    TEPHRA_ASSIGN_OR_RETURN(CertificateAndKey ca, GenerateCa(CaName(now), policy.ca_validity, now));
    TEPHRA_ASSIGN_OR_RETURN(CertificateInfo info, InspectCertificate(ca.cert_pem));
    cas.insert(cas.begin(), ParsedCa{ca.cert_pem, info});
    m.ca_key = ca.key_pem;
    // A serving certificate that is fine stays until the new CA is published.
    problem = ServingCertificateProblem(m, cas, policy, now);
  }
  m.ca_bundle = Bundle(cas);

  if (!problem.empty()) {
    reasons.push_back(problem);
    // Names another replica asked for stay, so replicas with different flags do not take turns.
    SubjectAltNames sans = policy.sans;
    if (StatusOr<CertificateInfo> old = InspectCertificate(m.cert); old.ok()) sans.Merge(old->sans);
    TEPHRA_ASSIGN_OR_RETURN(CertificateAndKey serving,
                            IssueServingCertificate({cas.front().pem, m.ca_key}, policy.common_name,
                                                    sans, policy.cert_validity, now));
    m.cert = std::move(serving.cert_pem);
    m.key = std::move(serving.key_pem);
  }
  CertificatePlan plan;
  plan.changed = !current.has_value() || m != *current;
  if (plan.changed && reasons.empty()) reasons.push_back("expired CAs left the bundle");
  plan.reason = base::Join(reasons, "; ");
  plan.material = std::move(m);
  return plan;
}

std::optional<CertificateMaterial> MaterialFromSecret(std::string_view secret_json) {
  json::Document doc;
  if (!json::Parse(secret_json, &doc).ok()) return std::nullopt;
  json::Errors errors;
  json::Reader data = json::Reader(&doc, &errors)["data"];
  auto field = [&](const char* key) {
    std::optional<std::string> decoded = base::Base64Decode(data[key].String());
    return decoded.value_or("");
  };
  CertificateMaterial m;
  m.ca_bundle = field(kCaCertKey);
  m.ca_key = field(kCaKeyKey);
  m.cert = field(kCertKey);
  m.key = field(kKeyKey);
  return m;
}

std::string SecretDataJson(const CertificateMaterial& material) {
  json::Writer w;
  w.StartObject()
      .Field(kCaCertKey, base::Base64Encode(material.ca_bundle))
      .Field(kCertKey, base::Base64Encode(material.cert))
      .Field(kKeyKey, base::Base64Encode(material.key));
  if (!material.ca_key.empty()) w.Field(kCaKeyKey, base::Base64Encode(material.ca_key));
  w.EndObject();
  return w.Take();
}

CertManager::CertManager(std::shared_ptr<kube::Client> client, CertManagerOptions options,
                         base::ClockInterface& clock)
    : client_(std::move(client)), options_(std::move(options)), clock_(clock) {}

CertManager::~CertManager() {
  Stop();
}

void CertManager::AddListener(Listener listener) {
  sync::MutexLock lock(mu_);
  listeners_.push_back(std::move(listener));
}

std::string CertManager::cert_file() const {
  return options_.cert_dir + "/" + kCertKey;
}
std::string CertManager::key_file() const {
  return options_.cert_dir + "/" + kKeyKey;
}
std::string CertManager::ca_file() const {
  return options_.cert_dir + "/" + kCaCertKey;
}

CertificateMaterial CertManager::current() const {
  sync::MutexLock lock(mu_);
  return written_;
}

StatusOr<CertificateMaterial> CertManager::Reconcile() {
  const std::string& ns = options_.namespace_;
  const std::string& name = options_.secret_name;
  for (int attempt = 0; attempt < kMaxWriteAttempts; ++attempt) {
    StatusOr<std::string> secret = client_->Get(kube::resources::kSecrets, ns, name);
    if (!secret.ok() && secret.status().code() != StatusCode::kNotFound) {
      return secret.status().WithContext("reading Secret " + ns + "/" + name);
    }
    std::optional<CertificateMaterial> current;
    if (secret.ok()) current = MaterialFromSecret(*secret).value_or(CertificateMaterial{});
    TEPHRA_ASSIGN_OR_RETURN(CertificatePlan plan,
                            PlanCertificates(current, options_.policy, clock_.Now()));
    if (!plan.changed) return plan.material;
    std::string data = SecretDataJson(plan.material);
    if (!secret.ok()) {
      json::Writer w;
      w.StartObject()
          .Field("apiVersion", "v1")
          .Field("kind", "Secret")
          .Key("metadata")
          .StartObject()
          .Field("name", name)
          .Field("namespace", ns)
          .StringMap("labels", {{"app.kubernetes.io/managed-by", "tephra-admission"}})
          .EndObject()
          .Field("type", "Opaque")
          .Key("data")
          .Raw(data)
          .EndObject();
      StatusOr<std::string> created = client_->Create(kube::resources::kSecrets, ns, w.str());
      if (created.ok()) {
        LOG(INFO) << "created Secret " << ns << "/" << name << ": " << plan.reason;
        return plan.material;
      }
      if (created.status().code() == StatusCode::kAlreadyExists) continue;  // a replica won
      return created.status().WithContext("creating Secret " + ns + "/" + name);
    }
    // Replace only the data keys; metadata.resourceVersion makes the update conditional.
    std::string updated_json;
    TEPHRA_RETURN_IF_ERROR(
        json::ApplyMergePatch(*secret, "{\"data\":" + data + "}", &updated_json));
    StatusOr<std::string> updated =
        client_->Update(kube::resources::kSecrets, ns, name, updated_json);
    if (updated.ok()) {
      LOG(INFO) << "updated Secret " << ns << "/" << name << ": " << plan.reason;
      return plan.material;
    }
    if (updated.status().code() == StatusCode::kConflict) continue;  // re-read and re-plan
    return updated.status().WithContext("updating Secret " + ns + "/" + name);
  }
  return Conflict("Secret " + ns + "/" + name + " kept changing under " +
                  std::to_string(kMaxWriteAttempts) + " attempts to update it");
}

Status CertManager::WriteFiles(const CertificateMaterial& material) {
  std::vector<Listener> listeners;
  {
    sync::MutexLock lock(mu_);
    if (material == written_) return Status::Ok();
  }
  TEPHRA_RETURN_IF_ERROR(WriteFileAtomically(ca_file(), material.ca_bundle, 0644));
  TEPHRA_RETURN_IF_ERROR(WriteFileAtomically(key_file(), material.key, 0600));
  TEPHRA_RETURN_IF_ERROR(WriteFileAtomically(cert_file(), material.cert, 0644));
  {
    sync::MutexLock lock(mu_);
    written_ = material;
    listeners = listeners_;
  }
  if (StatusOr<CertificateInfo> info = InspectCertificate(material.cert); info.ok()) {
    LOG(INFO) << "serving certificate " << info->fingerprint.substr(0, 16) << " for "
              << base::Join(info->sans.dns_names, ",")
              << (info->sans.ip_addresses.empty() ? "" : ",")
              << base::Join(info->sans.ip_addresses, ",") << " valid until "
              << base::FormatTime(info->not_after);
  }
  for (const Listener& listener : listeners) listener(material);
  return Status::Ok();
}

Status CertManager::Sync() {
  sync::MutexLock lock(sync_mu_);
  TEPHRA_ASSIGN_OR_RETURN(CertificateMaterial material, Reconcile());
  return WriteFiles(material);
}

Status CertManager::SyncUntilReady(std::chrono::milliseconds timeout) {
  const auto deadline = clock_.Monotonic() + timeout;
  while (true) {
    Status s = Sync();
    if (s.ok()) return s;
    LOG(WARNING) << "certificates not ready: " << s.ToString();
    sync::MutexLock lock(mu_);
    auto next = std::min(deadline, clock_.Monotonic() + options_.retry_interval);
    clock_.WaitUntil(mu_, cv_, next, [&]() REQUIRES(mu_) { return stopped_; });
    if (stopped_) return Cancelled("stopped while waiting for certificates");
    if (clock_.Monotonic() >= deadline) return s;
  }
}

void CertManager::Start(kube::InformerFactory& factory) {
  std::shared_ptr<kube::Informer> informer = factory.For(
      kube::resources::kSecrets, kube::RawObjectDecoder(),
      kube::InformerScope{options_.namespace_, "", "metadata.name=" + options_.secret_name});
  kube::EventHandlers handlers;
  handlers.on_add = [this](const kube::ObjectPtr&) { Wake(); };
  handlers.on_update = [this](const kube::ObjectPtr&, const kube::ObjectPtr&) { Wake(); };
  handlers.on_delete = [this](const kube::ObjectPtr&, bool) { Wake(); };
  informer->AddEventHandler(std::move(handlers));
  sync::MutexLock lock(mu_);
  if (!thread_.joinable() && !stopped_) thread_ = std::thread([this] { Loop(); });
}

void CertManager::Stop() {
  {
    sync::MutexLock lock(mu_);
    stopped_ = true;
  }
  cv_.NotifyAll();
  if (thread_.joinable()) thread_.join();
}

void CertManager::Wake() {
  {
    sync::MutexLock lock(mu_);
    wake_ = true;
  }
  cv_.NotifyAll();
}

void CertManager::Loop() {
  auto interval = options_.check_interval;
  while (true) {
    {
      sync::MutexLock lock(mu_);
      clock_.WaitUntil(mu_, cv_, clock_.Monotonic() + interval,
                       [&]() REQUIRES(mu_) { return stopped_ || wake_; });
      if (stopped_) return;
      wake_ = false;
    }
    Status s = Sync();
    if (!s.ok()) LOG(WARNING) << "certificate check failed, retrying: " << s.ToString();
    interval = s.ok() ? options_.check_interval : options_.retry_interval;
  }
}

}  // namespace tephra::webhooks
