#include "base/http_tls.h"

#include <sys/stat.h>

#include <boost/asio/ssl.hpp>
#include <glog/logging.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

namespace tephra::base::internal {
namespace {

namespace asio = boost::asio;
namespace ssl = asio::ssl;
using boost::system::error_code;

StatusOr<std::shared_ptr<ssl::context>> LoadTlsContext(const TlsOptions& tls) {
  try {
    auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
    error_code ec;
    ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                         ssl::context::no_sslv3 | ssl::context::no_tlsv1 |
                         ssl::context::no_tlsv1_1 | ssl::context::single_dh_use,
                     ec);
    if (ec) return Internal("setting TLS options: " + ec.message());
    if (SSL_CTX_set_min_proto_version(ctx->native_handle(), TLS1_2_VERSION) != 1) {
      return Internal("cannot require TLS 1.2");
    }
    // An idle connection gives its record buffers back (about 34 KiB each).
    SSL_CTX_set_mode(ctx->native_handle(), SSL_MODE_RELEASE_BUFFERS);
    // Sessions kept for resumption: bounded (OpenSSL's default is 20,480), as every new
    // connection adds one.
    SSL_CTX_sess_set_cache_size(ctx->native_handle(), 256);
    ctx->use_certificate_chain_file(tls.cert_file, ec);
    if (ec) return InvalidArgument("loading certificate " + tls.cert_file + ": " + ec.message());
    ctx->use_private_key_file(tls.key_file, ssl::context::pem, ec);
    const bool mismatch =
        ec && ec.category() == asio::error::get_ssl_category() &&
        ERR_GET_REASON(static_cast<unsigned long>(ec.value())) == X509_R_KEY_VALUES_MISMATCH;
    if (ec && !mismatch) {
      return InvalidArgument("loading private key " + tls.key_file + ": " + ec.message());
    }
    if (mismatch || SSL_CTX_check_private_key(ctx->native_handle()) != 1) {
      return InvalidArgument("private key " + tls.key_file + " does not match certificate " +
                             tls.cert_file);
    }
    if (!tls.client_ca_file.empty()) {
      ctx->load_verify_file(tls.client_ca_file, ec);
      if (ec) {
        return InvalidArgument("loading client CA " + tls.client_ca_file + ": " + ec.message());
      }
      // Tell clients which CAs are acceptable so they pick the right certificate.
      if (STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(tls.client_ca_file.c_str())) {
        SSL_CTX_set_client_CA_list(ctx->native_handle(), names);
      }
      ssl::verify_mode mode = ssl::verify_peer;
      if (tls.require_client_cert) mode |= ssl::verify_fail_if_no_peer_cert;
      ctx->set_verify_mode(mode, ec);
      if (ec) return Internal("setting client verification: " + ec.message());
    }
    return ctx;
  } catch (const std::exception& e) {
    return Internal(std::string("creating TLS context: ") + e.what());
  }
}

}  // namespace

TlsMaterial::TlsMaterial(TlsOptions options, std::string server_name)
    : options_(std::move(options)), server_name_(std::move(server_name)) {}

TlsMaterial::FileVersion TlsMaterial::StatFile(const std::string& path) {
  FileVersion v;
  struct stat st {};
  if (path.empty() || ::stat(path.c_str(), &st) != 0) return v;
  v.exists = true;
  v.device = st.st_dev;
  v.inode = st.st_ino;
  v.size = st.st_size;
  v.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  return v;
}

TlsMaterial::FilesVersion TlsMaterial::StatFiles() const {
  return {StatFile(options_.cert_file), StatFile(options_.key_file),
          StatFile(options_.client_ca_file)};
}

Status TlsMaterial::Reload() {
  sync::MutexLock reload(reload_mu_);
  // Stat before reading: if the files change in between, the next check loads them again.
  const FilesVersion version = StatFiles();
  StatusOr<std::shared_ptr<ssl::context>> context = LoadTlsContext(options_);
  if (!context.ok()) return context.status();
  sync::MutexLock lock(mu_);
  context_ = std::move(context).value();
  loaded_ = version;
  return Status::Ok();
}

void TlsMaterial::ReloadIfChanged() {
  const FilesVersion current = StatFiles();
  {
    sync::MutexLock lock(mu_);
    // Unchanged, or already tried and failed (wait for the next change instead of logging
    // the same error every interval).
    if (current == loaded_ || current == failed_) return;
  }
  Status status = Reload();
  if (status.ok()) {
    LOG(INFO) << server_name_ << " server: reloaded TLS certificate " << options_.cert_file;
  } else {
    LOG(WARNING) << server_name_
                 << " server: keeping the current TLS certificate: " << status.ToString();
    sync::MutexLock lock(mu_);
    failed_ = current;
  }
}

std::shared_ptr<ssl::context> TlsMaterial::Current() const {
  sync::MutexLock lock(mu_);
  return context_;
}

}  // namespace tephra::base::internal
