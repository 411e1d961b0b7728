#include "webhooks/certs/certificates.h"

#include <algorithm>
#include <arpa/inet.h>
#include <array>
#include <ctime>
#include <memory>

#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

namespace tephra::webhooks {
namespace {

template <typename T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const { Free(p); }
};
using BioPtr = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;
using X509Ptr = std::unique_ptr<X509, Deleter<X509, X509_free>>;
using KeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using ExtPtr = std::unique_ptr<X509_EXTENSION, Deleter<X509_EXTENSION, X509_EXTENSION_free>>;
using StorePtr = std::unique_ptr<X509_STORE, Deleter<X509_STORE, X509_STORE_free>>;
using StoreCtxPtr = std::unique_ptr<X509_STORE_CTX, Deleter<X509_STORE_CTX, X509_STORE_CTX_free>>;
using BnPtr = std::unique_ptr<BIGNUM, Deleter<BIGNUM, BN_free>>;

void FreeGeneralNames(GENERAL_NAMES* names) {
  GENERAL_NAMES_free(names);
}
using NamesPtr = std::unique_ptr<GENERAL_NAMES, Deleter<GENERAL_NAMES, FreeGeneralNames>>;

// The oldest error on OpenSSL's queue (the queue is cleared), with context.
Status OpenSslError(std::string_view what) {
  unsigned long code = ERR_get_error();
  ERR_clear_error();
  std::array<char, 256> buf{};
  if (code != 0) ERR_error_string_n(code, buf.data(), buf.size());
  return Internal(std::string(what) + (code != 0 ? std::string(": ") + buf.data() : ""));
}

BioPtr MemoryBio(std::string_view text) {
  return BioPtr(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
}

std::string Drain(BIO* bio) {
  std::string out;
  std::array<char, 4096> buf{};
  int n = 0;
  while ((n = BIO_read(bio, buf.data(), static_cast<int>(buf.size()))) > 0) {
    out.append(buf.data(), static_cast<size_t>(n));
  }
  return out;
}

StatusOr<X509Ptr> ReadCertificate(std::string_view pem) {
  BioPtr bio = MemoryBio(pem);
  if (bio == nullptr) return OpenSslError("reading certificate");
  X509Ptr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (cert == nullptr) {
    ERR_clear_error();
    return InvalidArgument("no PEM certificate found");
  }
  return cert;
}

StatusOr<KeyPtr> ReadKey(std::string_view pem) {
  BioPtr bio = MemoryBio(pem);
  if (bio == nullptr) return OpenSslError("reading key");
  KeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (key == nullptr) {
    ERR_clear_error();
    return InvalidArgument("no PEM private key found");
  }
  return key;
}

StatusOr<std::string> WriteCertificate(X509* cert) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (bio == nullptr || PEM_write_bio_X509(bio.get(), cert) != 1) {
    return OpenSslError("encoding certificate");
  }
  return Drain(bio.get());
}

StatusOr<std::string> WriteKey(EVP_PKEY* key) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (bio == nullptr ||
      PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    return OpenSslError("encoding private key");
  }
  return Drain(bio.get());
}

StatusOr<KeyPtr> NewKey() {
  KeyPtr key(EVP_EC_gen("P-256"));
  if (key == nullptr) return OpenSslError("generating an ECDSA P-256 key");
  return key;
}

SystemTime FromAsn1(const ASN1_TIME* t) {
  std::tm tm{};
  if (t == nullptr || ASN1_TIME_to_tm(t, &tm) != 1) return SystemTime{};
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

std::string CommonName(const X509_NAME* name) {
  int index = X509_NAME_get_index_by_NID(name, NID_commonName, -1);
  if (index < 0) return "";
  const ASN1_STRING* data = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, index));
  const unsigned char* bytes = ASN1_STRING_get0_data(data);
  return std::string(reinterpret_cast<const char*>(bytes),
                     static_cast<size_t>(ASN1_STRING_length(data)));
}

Status AddExtension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  ExtPtr ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value));
  if (ext == nullptr || X509_add_ext(cert, ext.get(), -1) != 1) {
    return OpenSslError(std::string("adding extension ") + OBJ_nid2sn(nid));
  }
  return Status::Ok();
}

// The subjectAltName extension built from typed entries (no string parsing, so names cannot
// inject further entries).
Status AddSubjectAltNames(X509* cert, const SubjectAltNames& sans) {
  NamesPtr names(GENERAL_NAMES_new());
  if (names == nullptr) return OpenSslError("allocating subjectAltName");
  for (const std::string& dns : sans.dns_names) {
    ASN1_IA5STRING* text = ASN1_IA5STRING_new();
    if (text == nullptr || ASN1_STRING_set(text, dns.data(), static_cast<int>(dns.size())) != 1) {
      ASN1_IA5STRING_free(text);
      return OpenSslError("encoding DNS name");
    }
    GENERAL_NAME* name = GENERAL_NAME_new();
    GENERAL_NAME_set0_value(name, GEN_DNS, text);
    sk_GENERAL_NAME_push(names.get(), name);
  }
  for (const std::string& ip : sans.ip_addresses) {
    std::array<unsigned char, 16> bytes{};
    int length = 0;
    if (inet_pton(AF_INET, ip.c_str(), bytes.data()) == 1) {
      length = 4;
    } else if (inet_pton(AF_INET6, ip.c_str(), bytes.data()) == 1) {
      length = 16;
    } else {
      return InvalidArgument("\"" + ip + "\" is not an IP address");
    }
    ASN1_OCTET_STRING* octets = ASN1_OCTET_STRING_new();
    if (octets == nullptr || ASN1_OCTET_STRING_set(octets, bytes.data(), length) != 1) {
      ASN1_OCTET_STRING_free(octets);
      return OpenSslError("encoding IP address");
    }
    GENERAL_NAME* name = GENERAL_NAME_new();
    GENERAL_NAME_set0_value(name, GEN_IPADD, octets);
    sk_GENERAL_NAME_push(names.get(), name);
  }
  if (X509_add1_ext_i2d(cert, NID_subject_alt_name, names.get(), 0, X509V3_ADD_DEFAULT) != 1) {
    return OpenSslError("adding subjectAltName");
  }
  return Status::Ok();
}

// Version 3, a random 127-bit serial, subject CN, public key and validity.
StatusOr<X509Ptr> NewCertificate(std::string_view common_name, EVP_PKEY* key, SystemTime from,
                                 SystemTime until) {
  X509Ptr cert(X509_new());
  if (cert == nullptr || X509_set_version(cert.get(), 2) != 1) return OpenSslError("X509_new");
  BnPtr serial(BN_new());
  if (serial == nullptr || BN_rand(serial.get(), 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) != 1 ||
      BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert.get())) == nullptr) {
    return OpenSslError("choosing a serial number");
  }
  if (ASN1_TIME_set(X509_getm_notBefore(cert.get()), std::chrono::system_clock::to_time_t(from)) ==
          nullptr ||
      ASN1_TIME_set(X509_getm_notAfter(cert.get()), std::chrono::system_clock::to_time_t(until)) ==
          nullptr) {
    return OpenSslError("setting validity");
  }
  X509_NAME* subject = X509_get_subject_name(cert.get());
  std::string cn(common_name.substr(0, 64));  // the CN attribute's upper bound
  if (X509_NAME_add_entry_by_NID(subject, NID_commonName, MBSTRING_UTF8,
                                 reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1,
                                 0) != 1 ||
      X509_set_pubkey(cert.get(), key) != 1) {
    return OpenSslError("setting subject");
  }
  return cert;
}

}  // namespace

bool SubjectAltNames::Covers(const SubjectAltNames& other) const {
  auto has = [](const std::vector<std::string>& list, const std::string& v) {
    return std::find(list.begin(), list.end(), v) != list.end();
  };
  for (const auto& d : other.dns_names) {
    if (!has(dns_names, d)) return false;
  }
  for (const auto& ip : other.ip_addresses) {
    if (!has(ip_addresses, ip)) return false;
  }
  return true;
}

void SubjectAltNames::Merge(const SubjectAltNames& other) {
  for (const auto& d : other.dns_names) {
    if (std::find(dns_names.begin(), dns_names.end(), d) == dns_names.end()) dns_names.push_back(d);
  }
  for (const auto& ip : other.ip_addresses) {
    if (std::find(ip_addresses.begin(), ip_addresses.end(), ip) == ip_addresses.end()) {
      ip_addresses.push_back(ip);
    }
  }
}

Status AddSubjectAltName(std::string_view spec, SubjectAltNames* sans) {
  std::string value(spec);
  enum { kAuto, kIp, kDns } type = kAuto;
  if (spec.rfind("IP:", 0) == 0) {
    type = kIp;
    value = std::string(spec.substr(3));
  } else if (spec.rfind("DNS:", 0) == 0) {
    type = kDns;
    value = std::string(spec.substr(4));
  }
  std::array<unsigned char, 16> bytes{};
  bool is_ip = inet_pton(AF_INET, value.c_str(), bytes.data()) == 1 ||
               inet_pton(AF_INET6, value.c_str(), bytes.data()) == 1;
  if (type == kIp || (type == kAuto && is_ip)) {
    if (!is_ip)
      return InvalidArgument("subject alternative name \"" + std::string(spec) +
                             "\": not an IP address");
    // Normalise the text form so that comparisons with parsed certificates work.
    std::array<char, INET6_ADDRSTRLEN> text{};
    bool v4 = inet_pton(AF_INET, value.c_str(), bytes.data()) == 1;
    inet_ntop(v4 ? AF_INET : AF_INET6, bytes.data(), text.data(), text.size());
    SubjectAltNames one;
    one.ip_addresses.push_back(text.data());
    sans->Merge(one);
    return Status::Ok();
  }
  bool ok =
      !value.empty() && value.size() <= 253 && std::all_of(value.begin(), value.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '-' || c == '.' || c == '*';
      });
  if (!ok) {
    return InvalidArgument("subject alternative name \"" + std::string(spec) +
                           "\": a DNS name has letters, digits, '-', '.' or a leading '*'");
  }
  SubjectAltNames one;
  one.dns_names.push_back(value);
  sans->Merge(one);
  return Status::Ok();
}

SubjectAltNames ServiceDnsNames(std::string_view service, std::string_view namespace_) {
  std::string svc(service);
  std::string ns(namespace_);
  return {{svc, svc + "." + ns, svc + "." + ns + ".svc", svc + "." + ns + ".svc.cluster.local"},
          {}};
}

StatusOr<CertificateAndKey> GenerateCa(std::string_view common_name, std::chrono::seconds validity,
                                       SystemTime now) {
  TEPHRA_ASSIGN_OR_RETURN(KeyPtr key, NewKey());
  TEPHRA_ASSIGN_OR_RETURN(X509Ptr cert, NewCertificate(common_name, key.get(),
                                                       now - kCertificateBackdate, now + validity));
  if (X509_set_issuer_name(cert.get(), X509_get_subject_name(cert.get())) != 1) {
    return OpenSslError("setting issuer");
  }
  TEPHRA_RETURN_IF_ERROR(
      AddExtension(cert.get(), cert.get(), NID_basic_constraints, "critical,CA:TRUE,pathlen:0"));
  TEPHRA_RETURN_IF_ERROR(
      AddExtension(cert.get(), cert.get(), NID_key_usage, "critical,keyCertSign,cRLSign"));
  TEPHRA_RETURN_IF_ERROR(AddExtension(cert.get(), cert.get(), NID_subject_key_identifier, "hash"));
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) return OpenSslError("signing the CA");
  CertificateAndKey out;
  TEPHRA_ASSIGN_OR_RETURN(out.cert_pem, WriteCertificate(cert.get()));
  TEPHRA_ASSIGN_OR_RETURN(out.key_pem, WriteKey(key.get()));
  return out;
}

StatusOr<CertificateAndKey> IssueServingCertificate(const CertificateAndKey& ca,
                                                    std::string_view common_name,
                                                    const SubjectAltNames& sans,
                                                    std::chrono::seconds validity, SystemTime now) {
  StatusOr<X509Ptr> ca_cert = ReadCertificate(ca.cert_pem);
  if (!ca_cert.ok()) return ca_cert.status().WithContext("CA certificate");
  StatusOr<KeyPtr> ca_key = ReadKey(ca.key_pem);
  if (!ca_key.ok()) return ca_key.status().WithContext("CA key");
  if (X509_check_private_key(ca_cert->get(), ca_key->get()) != 1) {
    ERR_clear_error();
    return InvalidArgument("the CA key does not belong to the CA certificate");
  }
  SystemTime until = std::min(now + validity, FromAsn1(X509_get0_notAfter(ca_cert->get())));
  TEPHRA_ASSIGN_OR_RETURN(KeyPtr key, NewKey());
  TEPHRA_ASSIGN_OR_RETURN(
      X509Ptr cert, NewCertificate(common_name, key.get(), now - kCertificateBackdate, until));
  if (X509_set_issuer_name(cert.get(), X509_get_subject_name(ca_cert->get())) != 1) {
    return OpenSslError("setting issuer");
  }
  TEPHRA_RETURN_IF_ERROR(
      AddExtension(cert.get(), ca_cert->get(), NID_basic_constraints, "critical,CA:FALSE"));
  TEPHRA_RETURN_IF_ERROR(
      AddExtension(cert.get(), ca_cert->get(), NID_key_usage, "critical,digitalSignature"));
  TEPHRA_RETURN_IF_ERROR(AddExtension(cert.get(), ca_cert->get(), NID_ext_key_usage, "serverAuth"));
  TEPHRA_RETURN_IF_ERROR(
      AddExtension(cert.get(), ca_cert->get(), NID_authority_key_identifier, "keyid:always"));
  TEPHRA_RETURN_IF_ERROR(AddSubjectAltNames(cert.get(), sans));
  if (X509_sign(cert.get(), ca_key->get(), EVP_sha256()) == 0) {
    return OpenSslError("signing the serving certificate");
  }
  CertificateAndKey out;
  TEPHRA_ASSIGN_OR_RETURN(out.cert_pem, WriteCertificate(cert.get()));
  TEPHRA_ASSIGN_OR_RETURN(out.key_pem, WriteKey(key.get()));
  return out;
}

StatusOr<CertificateInfo> InspectCertificate(std::string_view pem) {
  TEPHRA_ASSIGN_OR_RETURN(X509Ptr cert, ReadCertificate(pem));
  CertificateInfo info;
  info.subject = CommonName(X509_get_subject_name(cert.get()));
  info.issuer = CommonName(X509_get_issuer_name(cert.get()));
  info.not_before = FromAsn1(X509_get0_notBefore(cert.get()));
  info.not_after = FromAsn1(X509_get0_notAfter(cert.get()));
  info.is_ca = X509_check_ca(cert.get()) > 0;
  NamesPtr names(static_cast<GENERAL_NAMES*>(
      X509_get_ext_d2i(cert.get(), NID_subject_alt_name, nullptr, nullptr)));
  for (int i = 0; names != nullptr && i < sk_GENERAL_NAME_num(names.get()); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(names.get(), i);
    int type = 0;
    const void* value = GENERAL_NAME_get0_value(name, &type);
    const auto* data = static_cast<const ASN1_STRING*>(value);
    const unsigned char* bytes = ASN1_STRING_get0_data(data);
    const auto length = static_cast<size_t>(ASN1_STRING_length(data));
    if (type == GEN_DNS) {
      info.sans.dns_names.emplace_back(reinterpret_cast<const char*>(bytes), length);
    } else if (type == GEN_IPADD && (length == 4 || length == 16)) {
      std::array<char, INET6_ADDRSTRLEN> text{};
      inet_ntop(length == 4 ? AF_INET : AF_INET6, bytes, text.data(), text.size());
      info.sans.ip_addresses.emplace_back(text.data());
    }
  }
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int digest_length = 0;
  if (X509_digest(cert.get(), EVP_sha256(), digest.data(), &digest_length) == 1) {
    static constexpr char kHex[] = "0123456789abcdef";
    for (unsigned int i = 0; i < digest_length; ++i) {
      info.fingerprint += kHex[digest[i] >> 4];
      info.fingerprint += kHex[digest[i] & 0xf];
    }
  }
  ERR_clear_error();
  return info;
}

StatusOr<std::vector<std::string>> SplitCertificates(std::string_view bundle_pem) {
  BioPtr bio = MemoryBio(bundle_pem);
  if (bio == nullptr) return OpenSslError("reading certificates");
  std::vector<std::string> out;
  while (true) {
    X509Ptr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
    if (cert == nullptr) break;
    TEPHRA_ASSIGN_OR_RETURN(std::string pem, WriteCertificate(cert.get()));
    out.push_back(std::move(pem));
  }
  ERR_clear_error();  // the read that ended the loop
  if (out.empty()) return InvalidArgument("no PEM certificate found");
  return out;
}

Status VerifyServingCertificate(std::string_view leaf_pem, std::string_view ca_bundle_pem,
                                SystemTime now) {
  TEPHRA_ASSIGN_OR_RETURN(X509Ptr leaf, ReadCertificate(leaf_pem));
  TEPHRA_ASSIGN_OR_RETURN(std::vector<std::string> cas, SplitCertificates(ca_bundle_pem));
  StorePtr store(X509_STORE_new());
  if (store == nullptr) return OpenSslError("X509_STORE_new");
  for (const std::string& pem : cas) {
    TEPHRA_ASSIGN_OR_RETURN(X509Ptr ca, ReadCertificate(pem));
    if (X509_STORE_add_cert(store.get(), ca.get()) != 1) return OpenSslError("adding a CA");
  }
  StoreCtxPtr ctx(X509_STORE_CTX_new());
  if (ctx == nullptr || X509_STORE_CTX_init(ctx.get(), store.get(), leaf.get(), nullptr) != 1) {
    return OpenSslError("X509_STORE_CTX_init");
  }
  X509_STORE_CTX_set_time(ctx.get(), 0, std::chrono::system_clock::to_time_t(now));
  X509_STORE_CTX_set_purpose(ctx.get(), X509_PURPOSE_SSL_SERVER);
  if (X509_verify_cert(ctx.get()) != 1) {
    int error = X509_STORE_CTX_get_error(ctx.get());
    ERR_clear_error();
    return InvalidArgument(std::string("certificate does not verify: ") +
                           X509_verify_cert_error_string(error));
  }
  return Status::Ok();
}

bool KeyMatchesCertificate(std::string_view cert_pem, std::string_view key_pem) {
  StatusOr<X509Ptr> cert = ReadCertificate(cert_pem);
  StatusOr<KeyPtr> key = ReadKey(key_pem);
  bool match = cert.ok() && key.ok() && X509_check_private_key(cert->get(), key->get()) == 1;
  ERR_clear_error();
  return match;
}

}  // namespace tephra::webhooks
