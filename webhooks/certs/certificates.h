// X.509 certificates for the webhook's TLS, made with OpenSSL's C API: a self-signed CA and a
// serving certificate it signs (ECDSA P-256, SHA-256), and the inspection and verification the
// certificate manager needs to decide when to renew. All PEM in, PEM out; OpenSSL types stay in
// the .cc file.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace tephra::webhooks {

using SystemTime = std::chrono::system_clock::time_point;

struct SubjectAltNames {
  std::vector<std::string> dns_names;
  std::vector<std::string> ip_addresses;  // textual IPv4 or IPv6

  // Every name and address of `other` is also here.
  bool Covers(const SubjectAltNames& other) const;
  // Adds what `other` has and this lacks.
  void Merge(const SubjectAltNames& other);
  bool operator==(const SubjectAltNames&) const = default;
};

// "IP:10.0.0.1", "DNS:example.com", or a bare address or name (an address if it parses as one).
// InvalidArgument names the entry and the rule.
Status AddSubjectAltName(std::string_view spec, SubjectAltNames* sans);

// The DNS names a Service is reached by: svc, svc.ns, svc.ns.svc, svc.ns.svc.cluster.local.
SubjectAltNames ServiceDnsNames(std::string_view service, std::string_view namespace_);

struct CertificateAndKey {
  std::string cert_pem;
  std::string key_pem;
};

// Certificates are valid from this long before they are made, so that a peer whose clock is a
// little behind accepts them.
inline constexpr std::chrono::hours kCertificateBackdate{1};

// A self-signed CA valid from kCertificateBackdate before `now` for `validity`.
StatusOr<CertificateAndKey> GenerateCa(std::string_view common_name, std::chrono::seconds validity,
                                       SystemTime now);
// A server certificate (EKU serverAuth) for `sans`, signed by `ca`. Its validity ends no later
// than the CA's.
StatusOr<CertificateAndKey> IssueServingCertificate(const CertificateAndKey& ca,
                                                    std::string_view common_name,
                                                    const SubjectAltNames& sans,
                                                    std::chrono::seconds validity, SystemTime now);

struct CertificateInfo {
  std::string subject;  // common name
  std::string issuer;   // common name
  SystemTime not_before;
  SystemTime not_after;
  bool is_ca = false;
  SubjectAltNames sans;
  std::string fingerprint;  // SHA-256 of the DER, hex
};

// The first certificate of a PEM text.
StatusOr<CertificateInfo> InspectCertificate(std::string_view pem);
// Every certificate in a PEM bundle, each as its own PEM text, in order.
StatusOr<std::vector<std::string>> SplitCertificates(std::string_view bundle_pem);
// Verifies `leaf_pem` against the CA certificates in `ca_bundle_pem` at `now`, for TLS server
// use. The error says why (expired, unknown issuer, ...).
Status VerifyServingCertificate(std::string_view leaf_pem, std::string_view ca_bundle_pem,
                                SystemTime now);
// Whether `key_pem` is the private key of `cert_pem`.
bool KeyMatchesCertificate(std::string_view cert_pem, std::string_view key_pem);

}  // namespace tephra::webhooks
