// Certificate generation (checked with OpenSSL directly), subject alternative names,
// verification, and the renewal plan over time.
#include "webhooks/certs/certificates.h"

#include <chrono>
#include <memory>
#include <string>

#include <catch2/catch.hpp>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "webhooks/certs/cert_manager.h"

namespace tephra::webhooks {
namespace {

using std::chrono::hours;
constexpr auto kDay = hours(24);

SystemTime Now() {
  return std::chrono::system_clock::from_time_t(1'800'000'000);
}

SubjectAltNames Sans() {
  SubjectAltNames sans = ServiceDnsNames("volcano-admission-service", "tephra-system");
  REQUIRE(AddSubjectAltName("IP:127.0.0.1", &sans).ok());
  return sans;
}

// OpenSSL's own view of a PEM certificate, independent of InspectCertificate.
struct Parsed {
  explicit Parsed(const std::string& pem) {
    BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
    cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
    BIO_free(bio);
  }
  ~Parsed() { X509_free(cert); }
  X509* cert = nullptr;
};

TEST_CASE("A generated CA signs a serving certificate that OpenSSL accepts for its names") {
  auto ca = GenerateCa("test-ca", kDay * 3650, Now());
  REQUIRE(ca.ok());
  auto serving = IssueServingCertificate(*ca, "tephra-admission", Sans(), kDay * 365, Now());
  REQUIRE(serving.ok());

  Parsed ca_cert(ca->cert_pem);
  Parsed leaf(serving->cert_pem);
  REQUIRE(ca_cert.cert != nullptr);
  REQUIRE(leaf.cert != nullptr);
  CHECK(X509_check_ca(ca_cert.cert) > 0);
  CHECK(X509_check_ca(leaf.cert) == 0);
  CHECK(X509_check_purpose(leaf.cert, X509_PURPOSE_SSL_SERVER, 0) == 1);
  // Host and IP matching as a TLS client does it.
  for (const char* host : {"volcano-admission-service", "volcano-admission-service.tephra-system",
                           "volcano-admission-service.tephra-system.svc",
                           "volcano-admission-service.tephra-system.svc.cluster.local"}) {
    INFO(host);
    CHECK(X509_check_host(leaf.cert, host, 0, 0, nullptr) == 1);
  }
  CHECK(X509_check_host(leaf.cert, "elsewhere.example.com", 0, 0, nullptr) == 0);
  CHECK(X509_check_ip_asc(leaf.cert, "127.0.0.1", 0) == 1);
  CHECK(X509_check_ip_asc(leaf.cert, "10.0.0.1", 0) == 0);
  // The CA's key signed the leaf.
  EVP_PKEY* ca_key = X509_get0_pubkey(ca_cert.cert);
  CHECK(X509_verify(leaf.cert, ca_key) == 1);

  CHECK(VerifyServingCertificate(serving->cert_pem, ca->cert_pem, Now()).ok());
  CHECK(KeyMatchesCertificate(serving->cert_pem, serving->key_pem));
  CHECK_FALSE(KeyMatchesCertificate(serving->cert_pem, ca->key_pem));

  auto info = InspectCertificate(serving->cert_pem);
  REQUIRE(info.ok());
  CHECK(info->subject == "tephra-admission");
  CHECK(info->issuer == "test-ca");
  CHECK_FALSE(info->is_ca);
  CHECK(info->sans == Sans());
  CHECK(info->not_after == Now() + kDay * 365);
  CHECK(info->not_before == Now() - hours(1));
  CHECK(info->fingerprint.size() == 64);
}

TEST_CASE("Verification fails for another CA, expiry and garbage") {
  auto ca = GenerateCa("ca-1", kDay * 10, Now());
  auto other = GenerateCa("ca-2", kDay * 10, Now());
  REQUIRE(ca.ok());
  REQUIRE(other.ok());
  auto leaf = IssueServingCertificate(*ca, "x", Sans(), kDay * 365, Now());
  REQUIRE(leaf.ok());
  // A serving certificate never outlives its CA.
  CHECK(InspectCertificate(leaf->cert_pem)->not_after ==
        InspectCertificate(ca->cert_pem)->not_after);
  CHECK(VerifyServingCertificate(leaf->cert_pem, other->cert_pem, Now()).message() ==
        "certificate does not verify: unable to get local issuer certificate");
  CHECK(VerifyServingCertificate(leaf->cert_pem, ca->cert_pem, Now() + kDay * 11).message() ==
        "certificate does not verify: certificate has expired");
  // A bundle with both CAs verifies.
  CHECK(VerifyServingCertificate(leaf->cert_pem, other->cert_pem + ca->cert_pem, Now()).ok());
  CHECK(SplitCertificates(other->cert_pem + ca->cert_pem)->size() == 2);
  CHECK_FALSE(InspectCertificate("garbage").ok());
  CHECK_FALSE(SplitCertificates("").ok());
  CHECK(IssueServingCertificate({ca->cert_pem, other->key_pem}, "x", Sans(), kDay, Now())
            .status()
            .message() == "the CA key does not belong to the CA certificate");
}

TEST_CASE("Subject alternative names parse with or without a type") {
  SubjectAltNames sans;
  CHECK(AddSubjectAltName("IP:127.0.0.1", &sans).ok());
  CHECK(AddSubjectAltName("::1", &sans).ok());
  CHECK(AddSubjectAltName("DNS:webhook.example.com", &sans).ok());
  CHECK(AddSubjectAltName("localhost", &sans).ok());
  CHECK(AddSubjectAltName("127.0.0.1", &sans).ok());  // already there
  CHECK(sans.ip_addresses == std::vector<std::string>{"127.0.0.1", "::1"});
  CHECK(sans.dns_names == std::vector<std::string>{"webhook.example.com", "localhost"});
  CHECK(AddSubjectAltName("IP:not-an-ip", &sans).message() ==
        "subject alternative name \"IP:not-an-ip\": not an IP address");
  CHECK(AddSubjectAltName("DNS:a,IP:1.2.3.4", &sans).message() ==
        "subject alternative name \"DNS:a,IP:1.2.3.4\": a DNS name has letters, digits, '-', '.' "
        "or a leading '*'");
  CHECK(sans.Covers({{"localhost"}, {"::1"}}));
  CHECK_FALSE(sans.Covers({{"other"}, {}}));
}

CertificatePolicy Policy() {
  CertificatePolicy p;
  p.sans = Sans();
  return p;
}

TEST_CASE("Plan: nothing yet makes a CA and a serving certificate, a good state stays") {
  auto first = PlanCertificates(std::nullopt, Policy(), Now());
  REQUIRE(first.ok());
  CHECK(first->changed);
  CHECK(first->reason == "no valid CA; no serving certificate yet");
  const CertificateMaterial& m = first->material;
  CHECK(VerifyServingCertificate(m.cert, m.ca_bundle, Now()).ok());
  CHECK(KeyMatchesCertificate(m.cert, m.key));
  CHECK(KeyMatchesCertificate(m.ca_bundle, m.ca_key));

  // Months later, still fine.
  auto later = PlanCertificates(m, Policy(), Now() + kDay * 200);
  REQUIRE(later.ok());
  CHECK_FALSE(later->changed);
  CHECK(later->material == m);

  // Round trip through the Secret's data.
  auto back = MaterialFromSecret(R"({"data":)" + SecretDataJson(m) + "}");
  REQUIRE(back.has_value());
  CHECK(*back == m);
}

TEST_CASE("Plan: the serving certificate is renewed 30 days before expiry, same CA") {
  auto first = PlanCertificates(std::nullopt, Policy(), Now());
  REQUIRE(first.ok());
  const CertificateMaterial& m = first->material;
  auto renewed = PlanCertificates(m, Policy(), Now() + kDay * 340);
  REQUIRE(renewed.ok());
  CHECK(renewed->changed);
  CHECK(renewed->reason.rfind("the serving certificate expires at ", 0) == 0);
  CHECK(renewed->material.ca_bundle == m.ca_bundle);  // the caBundle does not change
  CHECK(renewed->material.cert != m.cert);
  CHECK(InspectCertificate(renewed->material.cert)->not_after == Now() + kDay * 340 + kDay * 365);
}

TEST_CASE("Plan: new names, a foreign key or a broken certificate renew at once") {
  auto first = PlanCertificates(std::nullopt, Policy(), Now());
  REQUIRE(first.ok());
  CertificateMaterial m = first->material;

  CertificatePolicy more = Policy();
  REQUIRE(AddSubjectAltName("DNS:extra.example.com", &more.sans).ok());
  auto wider = PlanCertificates(m, more, Now() + kDay);
  REQUIRE(wider.ok());
  CHECK(wider->reason == "the serving certificate lacks required names");
  CHECK(InspectCertificate(wider->material.cert)->sans.Covers(more.sans));
  // A replica with the narrower flags accepts the wider certificate.
  CHECK_FALSE(PlanCertificates(wider->material, Policy(), Now() + kDay)->changed);

  CertificateMaterial wrong_key = m;
  wrong_key.key = m.ca_key;
  CHECK(PlanCertificates(wrong_key, Policy(), Now())->reason ==
        "tls.key does not belong to tls.crt");

  CertificateMaterial broken = m;
  broken.cert = "not a certificate";
  auto fixed = PlanCertificates(broken, Policy(), Now());
  CHECK(fixed->reason.rfind("the serving certificate is unreadable", 0) == 0);
  CHECK(fixed->material.ca_bundle == m.ca_bundle);
}

TEST_CASE("Plan: a Secret without the CA key serves until renewal, then starts a new CA") {
  // As made by Volcano's gen-admission-secret.sh: ca.crt, tls.crt, tls.key, no ca.key.
  auto first = PlanCertificates(std::nullopt, Policy(), Now());
  REQUIRE(first.ok());
  CertificateMaterial volcano = first->material;
  volcano.ca_key.clear();
  CHECK_FALSE(PlanCertificates(volcano, Policy(), Now() + kDay * 100)->changed);

  // Renewal is due: a new CA joins the bundle first, the old certificate still serves.
  SystemTime t = Now() + kDay * 340;
  auto published = PlanCertificates(volcano, Policy(), t);
  REQUIRE(published.ok());
  CHECK(published->reason == "the CA's key is unknown");
  auto cas = SplitCertificates(published->material.ca_bundle);
  REQUIRE(cas.ok());
  REQUIRE(cas->size() == 2);  // the new CA first, the old one kept
  CHECK((*cas)[1] == volcano.ca_bundle);
  CHECK(published->material.cert == volcano.cert);

  // After the grace the serving certificate is renewed by the new CA.
  auto renewed = PlanCertificates(published->material, Policy(), t + hours(2));
  REQUIRE(renewed.ok());
  CHECK(renewed->reason.rfind("the serving certificate expires at ", 0) == 0);
  CHECK(VerifyServingCertificate(renewed->material.cert, (*cas)[0], t + hours(2)).ok());
}

TEST_CASE("Plan: a CA near its end is replaced, the serving certificate follows after the grace") {
  auto first = PlanCertificates(std::nullopt, Policy(), Now());
  REQUIRE(first.ok());
  // Eight and a half years later the CA has less than two years left.
  SystemTime t = Now() + kDay * 3100;
  CertificateMaterial m = first->material;
  // Keep the serving certificate fresh so only the CA ages.
  auto fresh = IssueServingCertificate({m.ca_bundle, m.ca_key}, "tephra-admission", Sans(),
                                       kDay * 365, t - kDay);
  REQUIRE(fresh.ok());
  m.cert = fresh->cert_pem;
  m.key = fresh->key_pem;

  auto rotated = PlanCertificates(m, Policy(), t);
  REQUIRE(rotated.ok());
  CHECK(rotated->reason.rfind("the CA expires at ", 0) == 0);
  CHECK(SplitCertificates(rotated->material.ca_bundle)->size() == 2);
  CHECK(rotated->material.cert == m.cert);  // not yet: the new CA must be published first

  // Within the grace nothing more happens; after it the serving certificate moves to the new CA.
  CHECK_FALSE(PlanCertificates(rotated->material, Policy(), t + std::chrono::minutes(30))->changed);
  auto moved = PlanCertificates(rotated->material, Policy(), t + hours(2));
  REQUIRE(moved.ok());
  CHECK(moved->reason == "the serving certificate was issued by an older CA");
  std::string newest = SplitCertificates(rotated->material.ca_bundle)->front();
  CHECK(VerifyServingCertificate(moved->material.cert, newest, t + hours(2)).ok());

  // Once the old CA expires it leaves the bundle.
  auto pruned = PlanCertificates(moved->material, Policy(), Now() + kDay * 3651);
  REQUIRE(pruned.ok());
  CHECK(SplitCertificates(pruned->material.ca_bundle)->size() == 1);
}

}  // namespace
}  // namespace tephra::webhooks
