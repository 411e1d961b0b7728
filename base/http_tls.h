// The HTTP server's TLS material (http_server.h): the certificate, key and client CA files of
// TlsOptions loaded into an SSL context, and loaded again when they change, so rotated
// certificates are served without a restart. A private header of base/: only the server's
// files include it, and Boost.Asio's SSL context stays a forward declaration here.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <sys/types.h>

#include "base/http_server.h"
#include "base/status.h"
#include "sync/mutex.h"

namespace boost::asio::ssl {
class context;
}  // namespace boost::asio::ssl

namespace tephra::base::internal {

// Thread-safe. Each connection takes the context current when it is accepted and keeps it
// for its life, so a reload never disturbs a connection already open.
class TlsMaterial {
 public:
  // `server_name` names the server in log lines ("webhook server: ...").
  TlsMaterial(TlsOptions options, std::string server_name);

  const TlsOptions& options() const { return options_; }
  // Loads the files now (TLS 1.2 or later; client certificates verified against the client CA
  // when one is given). On error the context being served stays in place.
  Status Reload();
  // Reloads when the files changed since they were last loaded, and since the last attempt
  // that failed (so a bad file is reported once, not every interval); logs what happened.
  void ReloadIfChanged();
  // The context new connections get; nullptr until a load succeeded.
  std::shared_ptr<boost::asio::ssl::context> Current() const;

 private:
  // Identifies one version of a file: a rotated file has a new inode (atomic rename,
  // Kubernetes secret volumes) or a new size or modification time (rewritten in place).
  struct FileVersion {
    bool exists = false;
    dev_t device = 0;
    ino_t inode = 0;
    off_t size = 0;
    int64_t mtime_ns = 0;

    bool operator==(const FileVersion&) const = default;
  };
  using FilesVersion = std::array<FileVersion, 3>;  // certificate, key, client CA

  static FileVersion StatFile(const std::string& path);
  FilesVersion StatFiles() const;

  const TlsOptions options_;
  const std::string server_name_;
  sync::Mutex reload_mu_;  // serialises Reload
  mutable sync::Mutex mu_;
  std::shared_ptr<boost::asio::ssl::context> context_ GUARDED_BY(mu_);
  FilesVersion loaded_ GUARDED_BY(mu_) = {};  // the files behind context_
  FilesVersion failed_ GUARDED_BY(mu_) = {};  // the last version that failed to load
};

}  // namespace tephra::base::internal
