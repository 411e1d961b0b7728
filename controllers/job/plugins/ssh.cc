// The ssh plugin: one RSA key pair per job in Secret "<job>-ssh" (generated with OpenSSL, or
// given by the user), with authorized_keys and an ssh config naming every pod, mounted into
// every container so the pods of an MPI job can reach each other without passwords.
#include <memory>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include "base/base64.h"
#include "controllers/job/builders.h"
#include "controllers/job/plugins/plugin.h"
#include "json/json.h"

namespace tephra::controllers::job {
namespace {

constexpr std::string_view kDefaultKeyPath = "/root/.ssh";
constexpr std::string_view kRelativePath = ".ssh";
constexpr const char* kKeys[] = {"id_rsa", "id_rsa.pub", "authorized_keys", "config"};

struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct BnFree {
  void operator()(BIGNUM* b) const { BN_free(b); }
};
using Pkey = std::unique_ptr<EVP_PKEY, PkeyFree>;
using Bio = std::unique_ptr<BIO, BioFree>;
using Bn = std::unique_ptr<BIGNUM, BnFree>;

Status OpenSslError(std::string_view what) {
  unsigned long code = ERR_get_error();
  char buf[256] = {0};
  if (code != 0) ERR_error_string_n(code, buf, sizeof(buf));
  ERR_clear_error();
  return Internal(std::string(what) + (code != 0 ? std::string(": ") + buf : std::string()));
}

std::string BioText(BIO* bio) {
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  return n > 0 ? std::string(data, static_cast<size_t>(n)) : std::string();
}

// An SSH wire-format string: 4-byte big-endian length, then the bytes.
void PutString(std::string* out, std::string_view bytes) {
  uint32_t n = static_cast<uint32_t>(bytes.size());
  for (int shift = 24; shift >= 0; shift -= 8)
    out->push_back(static_cast<char>((n >> shift) & 0xff));
  out->append(bytes);
}

// An SSH mpint: big-endian magnitude with a leading zero byte when the top bit is set.
void PutMpint(std::string* out, const BIGNUM* bn) {
  std::string bytes(static_cast<size_t>(BN_num_bytes(bn)), '\0');
  BN_bn2bin(bn, reinterpret_cast<unsigned char*>(bytes.data()));
  if (!bytes.empty() && (static_cast<unsigned char>(bytes[0]) & 0x80)) bytes.insert(0, 1, '\0');
  PutString(out, bytes);
}

StatusOr<std::string> PublicKeyOf(EVP_PKEY* key) {
  BIGNUM* n_raw = nullptr;
  BIGNUM* e_raw = nullptr;
  if (EVP_PKEY_get_bn_param(key, OSSL_PKEY_PARAM_RSA_N, &n_raw) != 1 ||
      EVP_PKEY_get_bn_param(key, OSSL_PKEY_PARAM_RSA_E, &e_raw) != 1) {
    BN_free(n_raw);
    return OpenSslError("reading the RSA public key");
  }
  Bn n(n_raw), e(e_raw);
  std::string blob;
  PutString(&blob, "ssh-rsa");
  PutMpint(&blob, e.get());
  PutMpint(&blob, n.get());
  return "ssh-rsa " + base::Base64Encode(blob);
}

class SshPlugin : public JobPlugin {
 public:
  SshPlugin(std::string key_path, std::string private_key, std::string public_key, int32_t port)
      : key_path_(std::move(key_path)),
        private_key_(std::move(private_key)),
        public_key_(std::move(public_key)),
        port_(port) {}

  std::string_view Name() const override { return "ssh"; }

  Status OnPodCreate(const api::Job& job, const PodInfo&, PodDraft* pod) override {
    const std::string secret = SecretName(job);
    // 0600 under /root/.ssh as sshd demands; a custom path may belong to another user.
    const int mode = key_path_ == kDefaultKeyPath ? 0600 : 0644;
    json::Writer v;
    v.StartObject()
        .Field("name", secret)
        .Key("secret")
        .StartObject()
        .Field("secretName", secret)
        .Field("defaultMode", mode)
        .Key("items")
        .StartArray();
    for (const char* key : kKeys) {
      v.StartObject()
          .Field("key", key)
          .Field("path", std::string(kRelativePath) + "/" + key)
          .EndObject();
    }
    v.EndArray().EndObject().EndObject();
    pod->AddVolume(v.str());
    json::Writer m;
    m.StartObject()
        .Field("name", secret)
        .Field("mountPath", key_path_)
        .Field("subPath", kRelativePath)
        .EndObject();
    pod->AddVolumeMount(m.str(), true);
    return Status::Ok();
  }

  // The key pair is made once: an existing Secret is kept, so pods of every generation of the
  // job share one identity.
  Status OnJobAdd(const api::Job& job, ObjectWriter& writer) override {
    std::string private_pem = private_key_;
    std::string public_key = public_key_;
    if (private_pem.empty()) {
      TEPHRA_ASSIGN_OR_RETURN(SshKeyPair pair, GenerateSshKeyPair());
      private_pem = std::move(pair.private_pem);
      public_key = std::move(pair.public_openssh);
    } else if (public_key.empty()) {
      TEPHRA_ASSIGN_OR_RETURN(public_key, OpenSshPublicKey(private_pem));
    }
    std::map<std::string, std::string> data = {
        {"id_rsa", base::Base64Encode(private_pem)},
        {"id_rsa.pub", base::Base64Encode(public_key)},
        {"authorized_keys", base::Base64Encode(public_key)},
        {"config", base::Base64Encode(SshConfig(job, port_))},
    };
    json::Writer w;
    w.StartObject().Field("apiVersion", "v1").Field("kind", "Secret");
    kube::EncodeObjectMeta(JobOwnedMetadata(job, SecretName(job)), &w);
    w.StringMap("data", data);
    w.EndObject();
    return writer.Ensure(kube::resources::kSecrets, job.metadata.namespace_, SecretName(job),
                         w.str(), false);
  }

 private:
  static std::string SecretName(const api::Job& job) { return job.metadata.name + "-ssh"; }

  std::string key_path_;
  std::string private_key_;
  std::string public_key_;
  int32_t port_;
};

}  // namespace

std::string SshConfig(const api::Job& job, int32_t port) {
  std::string config = "StrictHostKeyChecking no\nUserKnownHostsFile /dev/null\n";
  for (const api::TaskSpec& task : job.spec.tasks) {
    for (const std::string& host : TaskHosts(job, task)) {
      const std::string short_name = host.substr(0, host.find('.'));
      config += "Host " + short_name + "\n";
      config += "  HostName " + host + "\n";
      config += "  Port " + std::to_string(port) + "\n";
    }
  }
  return config;
}

StatusOr<SshKeyPair> GenerateSshKeyPair() {
  Pkey key(EVP_RSA_gen(2048));
  if (!key) return OpenSslError("generating an RSA key");
  Bio bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_PrivateKey_traditional(bio.get(), key.get(), nullptr, nullptr, 0,
                                                   nullptr, nullptr) != 1) {
    return OpenSslError("encoding the RSA private key");
  }
  SshKeyPair pair;
  pair.private_pem = BioText(bio.get());
  TEPHRA_ASSIGN_OR_RETURN(pair.public_openssh, PublicKeyOf(key.get()));
  return pair;
}

StatusOr<std::string> OpenSshPublicKey(std::string_view private_pem) {
  Bio bio(BIO_new_mem_buf(private_pem.data(), static_cast<int>(private_pem.size())));
  if (!bio) return OpenSslError("reading the private key");
  Pkey key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (!key) return OpenSslError("ssh plugin: --ssh-private-key is not a PEM private key");
  if (EVP_PKEY_get_base_id(key.get()) != EVP_PKEY_RSA) {
    return InvalidArgument("ssh plugin: --ssh-private-key must be an RSA key");
  }
  return PublicKeyOf(key.get());
}

StatusOr<std::unique_ptr<JobPlugin>> NewSshPlugin(const PluginArgs& args) {
  TEPHRA_ASSIGN_OR_RETURN(int32_t port, args.Int("ssh", "ssh-port", 22));
  return std::unique_ptr<JobPlugin>(std::make_unique<SshPlugin>(
      args.String("ssh-key-file-path", kDefaultKeyPath), args.String("ssh-private-key", ""),
      args.String("ssh-public-key", ""), port));
}

}  // namespace tephra::controllers::job
